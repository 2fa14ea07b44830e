"""Transformers backend: batched generation on CPU or GPU with per-sample seeds.

Sampling happens in a logits processor that draws each row's token from that row's own
torch.Generator (seeded per sample) and hands a one-hot choice to greedy search. A sample's
tokens therefore depend only on its seed and its logits, not on its neighbours in the batch.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from importlib.metadata import version
from itertools import groupby
from typing import Any

from harness import HarnessError
from harness.backends.base import cut_at_stop
from harness.backends.chat import ChatPrompt, chosen_options, load_error, prompt_hash
from harness.core.thinking import prompt_opens_think
from harness.core.types import Completion, Request


class SeededSampler:
    """Temperature / top-p sampling with one generator per batch row; greedy when temperature is 0."""

    def __init__(self, seeds: Sequence[int], temperature: float, top_p: float, top_k: int = -1):
        import torch

        self.temperature, self.top_p, self.top_k = temperature, top_p, top_k
        self.generators = [torch.Generator().manual_seed(seed) for seed in seeds]

    def __call__(self, input_ids, scores):
        import torch

        if self.temperature == 0:
            return scores
        probs = torch.softmax(scores.float().cpu() / self.temperature, dim=-1)
        if 0 < self.top_k < probs.shape[-1]:  # top-k first, then top-p, as vLLM does
            kth = probs.topk(self.top_k, dim=-1).values[..., -1:]
            probs = torch.where(probs >= kth, probs, torch.zeros_like(probs))
            probs = probs / probs.sum(dim=-1, keepdim=True)
        if self.top_p < 1.0:
            sorted_probs, order = probs.sort(dim=-1, descending=True)
            outside = sorted_probs.cumsum(dim=-1) - sorted_probs > self.top_p  # keeps at least the top token
            sorted_probs[outside] = 0.0
            probs = torch.zeros_like(probs).scatter(-1, order, sorted_probs)
        chosen = torch.stack(
            [torch.multinomial(p, 1, generator=g) for p, g in zip(probs, self.generators, strict=True)]
        )
        out = torch.full_like(scores, float("-inf"))
        return out.scatter(-1, chosen.to(scores.device), 0.0)


class HFBackend:
    name = "hf"
    # EngineConfig's fields this engine takes, by their own names (make_backend passes them)
    ENGINE_FIELDS = ("revision", "dtype", "batch_size", "trust_remote_code", "raw_prompt", "model_args")
    SET_BY_ENGINE = frozenset({"pretrained_model_name_or_path"})  # keywords --model-arg may not give
    server = False  # a model this process loads

    @staticmethod
    def gpus(engine, cluster_gpus: float) -> float:
        """What one engine of it needs: a GPU where the cluster has any, else it runs on a CPU."""
        return 1.0 if cluster_gpus else 0.0

    def __init__(
        self,
        model: str,
        *,
        revision: str | None = None,
        dtype: str = "auto",
        batch_size: int | None = None,
        trust_remote_code: bool = False,
        raw_prompt: bool = False,
        model_args: dict[str, Any] | tuple = (),
    ):
        import torch
        from transformers import AutoModelForCausalLM

        self.model_name, self.revision = model, revision
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        if dtype == "auto":
            dtype = "bfloat16" if self.device == "cuda" else "float32"
        self.dtype = dtype
        self.chat = ChatPrompt(model, revision, trust_remote_code=trust_remote_code, raw=raw_prompt)
        self.tokenizer = self.chat.tokenizer
        model_args = dict(model_args)
        self.options = chosen_options(trust_remote_code, raw_prompt, model_args)
        try:
            self.model = AutoModelForCausalLM.from_pretrained(
                model,
                revision=revision,
                dtype=getattr(torch, dtype),
                trust_remote_code=trust_remote_code,
                **model_args,
            )
        except Exception as e:
            raise load_error(model, e) from None
        self.model.to(self.device).eval()
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.batch_size = batch_size or (32 if self.device == "cuda" else 8)
        self.eos_ids = self._eos_ids()

    def _eos_ids(self) -> list[int]:
        ids = self.model.generation_config.eos_token_id
        ids = [ids] if isinstance(ids, int) else list(ids or [])
        if self.tokenizer.eos_token_id is not None and self.tokenizer.eos_token_id not in ids:
            ids.append(self.tokenizer.eos_token_id)
        if not ids:
            raise HarnessError(f"model {self.model_name!r} declares no EOS token")
        return ids

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": self.model_name,
            "revision": self.revision,
            "dtype": self.dtype,
            "device": self.device,
            "batch_size": self.batch_size,
            **self.options,
            "chat_template_sha256": self.chat.template_sha256,
            "transformers": version("transformers"),
            "torch": version("torch"),
        }

    def context_length(self) -> int | None:
        return getattr(self.model.config, "max_position_embeddings", None)

    def prompt_tokens(self, messages: Sequence[dict[str, str]]) -> int:
        return self.chat.count(messages)

    def close(self) -> None:
        del self.model

    def generate(self, requests: Sequence[Request]) -> Iterator[list[Completion]]:
        """Consecutive requests with the same sampling settings, in batches of `batch_size`."""
        for _, group in groupby(
            requests, key=lambda r: (r.temperature, r.top_p, r.top_k, r.max_tokens, r.stop)
        ):
            group = list(group)
            for start in range(0, len(group), self.batch_size):
                yield self._generate_batch(group[start : start + self.batch_size])

    def _generate_batch(self, batch: Sequence[Request]) -> list[Completion]:
        import torch
        from transformers import GenerationConfig, LogitsProcessorList

        temperature, top_p, max_tokens = batch[0].temperature, batch[0].top_p, batch[0].max_tokens
        prompts = [self.chat.render(r.messages) for r in batch]
        cut = [self.chat.tokens(p, r.max_input_tokens) for p, r in zip(prompts, batch, strict=True)]
        lengths = [length for _, length in cut]
        encoded = self.tokenizer.pad({"input_ids": [ids for ids, _ in cut]}, return_tensors="pt").to(
            self.device
        )
        config = GenerationConfig(
            do_sample=False,
            max_new_tokens=max_tokens,
            eos_token_id=self.eos_ids,
            pad_token_id=self.tokenizer.pad_token_id,
            stop_strings=list(batch[0].stop) or None,
        )
        sampler = SeededSampler([r.seed for r in batch], temperature, top_p, batch[0].top_k)
        with torch.inference_mode():
            output = self.model.generate(
                **encoded,
                generation_config=config,
                logits_processor=LogitsProcessorList([sampler]),
                tokenizer=self.tokenizer,  # matches stop strings
            )
        new_tokens = output[:, encoded["input_ids"].shape[1] :].tolist()
        prompt_lengths = encoded["attention_mask"].sum(dim=1).tolist()
        return [
            self._completion(request, prompt, tokens, prompt_len, max_tokens, length)
            for request, prompt, tokens, prompt_len, length in zip(
                batch, prompts, new_tokens, prompt_lengths, lengths, strict=True
            )
        ]

    def _tokens_to_stop(self, tokens: list[int], stops: tuple[str, ...]) -> int:
        """The fewest leading tokens whose text holds a stop string (the tokens generated)."""
        low, high = 1, len(tokens)
        while low < high:
            middle = (low + high) // 2
            if cut_at_stop(self.tokenizer.decode(tokens[:middle], skip_special_tokens=True), stops) is None:
                low = middle + 1
            else:
                high = middle
        return high

    def _completion(
        self, request: Request, prompt: str, tokens: list[int], prompt_len: int, max_tokens: int, length: int
    ):
        stop = next((i for i, t in enumerate(tokens) if t in self.eos_ids), None)
        kept = tokens[:stop] if stop is not None else tokens[:max_tokens]
        used = len(kept) + (1 if stop is not None else 0)
        # a half character left at the end is dropped, as vLLM's detokenizer does
        text = self.tokenizer.decode(kept, skip_special_tokens=True).rstrip("\ufffd")
        cut = cut_at_stop(text, request.stop)
        if cut is not None:  # the text ends before the stop string, as vLLM returns it
            text, used = cut, self._tokens_to_stop(kept, request.stop)
        return Completion(
            request=request,
            text=text,
            prompt_tokens=int(prompt_len),
            completion_tokens=used,
            finish_reason="stop" if stop is not None or cut is not None else "length",
            prompt_hash=prompt_hash(prompt),
            think_opened=prompt_opens_think(prompt),
            prompt_cut_from=length if length > prompt_len else None,
        )
