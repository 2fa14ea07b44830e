"""The backend interface: turn requests into completions, however the model is served."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from harness.core.types import Completion, Request


class Backend(Protocol):
    """A model behind some engine: hf (transformers), vllm (offline engine), openai (a server)."""

    name: str

    def describe(self) -> dict[str, Any]:
        """Model and engine facts recorded in run.json (path, revision, dtype, versions...)."""
        ...

    def context_length(self) -> int | None:
        """The model's maximum sequence length, if known."""
        ...

    def prompt_tokens(self, messages: Sequence[dict[str, str]]) -> int | None:
        """Token count of the rendered prompt, if the backend can count it locally."""
        ...

    def generate(self, requests: Sequence[Request]) -> Iterator[list[Completion]]:
        """Generate every request; yield completions in batches as they finish (any order)."""
        ...

    def close(self) -> None:
        """Release the engine (processes, memory, connections)."""
        ...


def cut_at_stop(text: str, stops: Sequence[str]) -> str | None:
    """The text before the earliest stop string, or None when none occurs."""
    found = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    return text[: min(found)] if found else None
