"""A model's tokenizer and chat template: render messages into the prompt every backend sends."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.hub import check_model_source


def load_error(model: str, error: Exception) -> HarnessError:
    """A clear message for a model (or tokenizer) that cannot be loaded."""
    hint = "" if Path(model).exists() else " (not a local folder; offline, the Hub cannot be reached)"
    reason = str(error).splitlines()[0] if str(error) else ""
    return HarnessError(
        f"cannot load model {model!r}{hint}: {type(error).__name__}: {reason}\n"
        f"Pass --model with a local Hugging Face model folder or a cached Hub id "
        f"(offline, also --data-dir with local benchmark files)."
    )


def chosen_options(trust_remote_code: bool, raw_prompt: bool, model_args: dict[str, Any] | None) -> dict:
    """How the model was loaded and prompted, where it differs from the defaults (an engine describes
    it in run.json; older runs without these keys read the same)."""
    chosen = {"trust_remote_code": trust_remote_code, "raw_prompt": raw_prompt, "model_args": model_args}
    return {key: value for key, value in chosen.items() if value}


def prompt_hash(prompt: str) -> str:
    return hashlib.sha256(prompt.encode()).hexdigest()


class ChatPrompt:
    """Renders chat messages with the model's own template (or, `raw`, as plain text) and counts their
    tokens."""

    def __init__(
        self, model: str, revision: str | None = None, *, trust_remote_code: bool = False, raw: bool = False
    ):
        from transformers import AutoTokenizer

        check_model_source(model, revision, needs="")
        self.model, self.raw = model, raw
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(
                model, revision=revision, trust_remote_code=trust_remote_code
            )
        except Exception as e:
            raise load_error(model, e) from None
        if not raw and not self.tokenizer.chat_template:
            raise HarnessError(
                f"model {model!r} has no chat template; pass --raw-prompt to send the prompt text as it is"
            )
        self.bos = self._bos_text() if raw else ""

    def _bos_text(self) -> str:
        """The BOS token's text when the tokenizer starts every text with it (a template would hold it)."""
        bos, bos_id = self.tokenizer.bos_token, self.tokenizer.bos_token_id
        if not bos or bos_id is None:
            return ""
        return bos if self.tokenizer("x")["input_ids"][:1] == [bos_id] else ""

    @property
    def template_sha256(self) -> str | None:
        """The chat template's hash; None in raw mode, which uses none."""
        return None if self.raw else hashlib.sha256(self.tokenizer.chat_template.encode()).hexdigest()

    def render(self, messages: Sequence[dict[str, str]]) -> str:
        if self.raw:  # the system prompt, then the user's text, as they are
            return self.bos + "\n\n".join(m["content"] for m in messages)
        return self.tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)

    def encode(self, prompt: str) -> list[int]:
        """Token ids of a rendered prompt; the template already holds any BOS token."""
        return self.tokenizer(prompt, add_special_tokens=False)["input_ids"]

    def count(self, messages: Sequence[dict[str, str]]) -> int:
        return len(self.encode(self.render(messages)))

    def tokens(self, prompt: str, max_input: int | None) -> tuple[list[int], int]:
        """The prompt's token ids, cut in the middle to `max_input`; and its length before the cut."""
        ids = self.encode(prompt)
        return middle_truncate(ids, max_input), len(ids)


def middle_truncate(ids: list[int], max_input: int | None) -> list[int]:
    """Keep the first and the last floor(max_input / 2) tokens of a longer sequence (LongBench's rule,
    applied to the whole chat-formatted prompt as SPELL does, so the instructions at the start and
    the question at the end survive). Shorter sequences are unchanged."""
    if max_input is None or len(ids) <= max_input:
        return ids
    half = max_input // 2
    return ids[:half] + ids[len(ids) - half :]
