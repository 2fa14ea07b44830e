"""vLLM's offline engine: all samples of an item in one request, per-sample seeds, prefix caching.

What vLLM guarantees (0.31, V1 engine), and what we rely on:

- A request with `n` samples and seed `s` fans out into `n` child requests seeded `s, s+1, ...,
  s+n-1`, each exactly like a lone request with that seed. `derive_seed` gives an item's samples
  consecutive seeds, so samples 3..15 of an item resumed after a crash go out as one request seeded
  `seed(3)` and come back identical to an uninterrupted run.
- A seeded request draws its random numbers from its own generator, so which other requests share
  its batch does not change its draws. The logits themselves can still change in the last bits with
  batch composition on a GPU; `VLLM_BATCH_INVARIANT=1` makes them batch invariant at some speed cost.
  On the CPU (and with greedy decoding in float32) we measure identical texts to the hf backend.
- With prefix caching, the children of a request share the prompt's KV blocks, so the prompt is
  prefilled once per item and reused by every sample.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from importlib.metadata import version
from typing import Any

from harness import HarnessError
from harness.backends.chat import ChatPrompt, chosen_options, load_error, prompt_hash
from harness.core.thinking import prompt_opens_think
from harness.core.types import Completion, Request

CPU_MEMORY_UTILIZATION = 0.2  # of the machine's RAM; vLLM's GPU default of 0.9 fails on the CPU


def sample_runs(requests: Sequence[Request]) -> list[list[Request]]:
    """Split requests into runs that one vLLM request with `n` samples can generate.

    A run is consecutive samples of one item with the same sampling settings, and consecutive
    sample indices and seeds: child i of the request then carries exactly its own seed.
    """
    runs: list[list[Request]] = []
    for r in requests:
        last = runs[-1][-1] if runs else None
        if (
            last is not None
            and (r.benchmark, r.item_id, r.messages) == (last.benchmark, last.item_id, last.messages)
            and (r.temperature, r.top_p, r.top_k, r.max_tokens, r.max_input_tokens, r.stop)
            == (last.temperature, last.top_p, last.top_k, last.max_tokens, last.max_input_tokens, last.stop)
            and r.sample_idx == last.sample_idx + 1
            and r.seed == last.seed + 1
        ):
            runs[-1].append(r)
        else:
            runs.append([r])
    return runs


class VLLMBackend:
    name = "vllm"
    ENGINE_FIELDS = (
        "revision", "dtype", "tensor_parallel_size", "max_model_len", "gpu_memory_utilization",
        "prefix_caching", "enforce_eager", "max_num_seqs", "trust_remote_code", "raw_prompt", "model_args",
    )  # fmt: skip
    SET_BY_ENGINE = frozenset(
        {"tokenizer_revision", "enable_prefix_caching", "enable_chunked_prefill", "max_logprobs"}
    )
    server = False

    @staticmethod
    def gpus(engine, cluster_gpus: float) -> float:
        """Its tensor x data parallel GPUs."""
        return float(engine.tensor_parallel_size * engine.data_parallel_size)

    def __init__(
        self,
        model: str,
        *,
        revision: str | None = None,
        dtype: str = "auto",
        tensor_parallel_size: int = 1,
        max_model_len: int | None = None,
        gpu_memory_utilization: float | None = None,
        prefix_caching: bool = True,
        enforce_eager: bool = False,
        max_num_seqs: int | None = None,
        max_logprobs: int | None = None,  # -1: every token's (solve/check probes)
        trust_remote_code: bool = False,
        raw_prompt: bool = False,
        model_args: dict[str, Any] | tuple = (),
    ):
        import torch
        from vllm import LLM

        self.model_name, self.revision = model, revision
        self.chat = ChatPrompt(model, revision, trust_remote_code=trust_remote_code, raw=raw_prompt)
        model_args = dict(model_args)
        self.options = chosen_options(trust_remote_code, raw_prompt, model_args)
        on_gpu = torch.cuda.is_available()
        if gpu_memory_utilization is None:
            gpu_memory_utilization = 0.9 if on_gpu else CPU_MEMORY_UTILIZATION
        try:
            self.llm = LLM(
                model=model,
                revision=revision,
                tokenizer_revision=revision,
                dtype=dtype,
                tensor_parallel_size=tensor_parallel_size,
                max_model_len=max_model_len,
                gpu_memory_utilization=gpu_memory_utilization,
                enable_prefix_caching=prefix_caching,
                enforce_eager=enforce_eager,
                # On the CPU, a seeded request whose prefill is split across steps kills the engine
                # ("CPU Generator does not use offset", vLLM 0.31): prefill prompts whole there.
                enable_chunked_prefill=on_gpu,
                **({"max_num_seqs": max_num_seqs} if max_num_seqs else {}),
                **({"max_logprobs": max_logprobs} if max_logprobs is not None else {}),
                trust_remote_code=trust_remote_code,
                **model_args,
            )
        except Exception as e:
            raise load_error(model, e) from None
        config = self.llm.llm_engine.model_config
        self.settings = {
            "dtype": str(config.dtype).removeprefix("torch."),
            "tensor_parallel_size": tensor_parallel_size,
            "data_parallel_size": 1,  # the sharded run records its own count
            "max_model_len": config.max_model_len,
            "gpu_memory_utilization": gpu_memory_utilization,
            "enable_prefix_caching": prefix_caching,
            "enforce_eager": enforce_eager,
            "max_num_seqs": self.llm.llm_engine.vllm_config.scheduler_config.max_num_seqs,
        }
        self.request_ids = itertools.count()

    @property
    def tokenizer(self):
        return self.chat.tokenizer

    def describe(self) -> dict[str, Any]:
        import vllm
        import vllm.envs

        return {
            "backend": self.name,
            "model": self.model_name,
            "revision": self.revision,
            **self.settings,
            **self.options,
            "batch_invariant": bool(vllm.envs.VLLM_BATCH_INVARIANT),
            "chat_template_sha256": self.chat.template_sha256,
            "vllm": vllm.__version__,
            "torch": version("torch"),
        }

    def context_length(self) -> int | None:
        return self.settings["max_model_len"]

    def prompt_tokens(self, messages: Sequence[dict[str, str]]) -> int:
        return self.chat.count(messages)

    def close(self) -> None:
        """Stop the engine's processes now; a process that exits with them still running waits forever."""
        self.llm.llm_engine.engine_core.shutdown()

    def generate(self, requests: Sequence[Request]) -> Iterator[list[Completion]]:
        """Queue every run as one request with `n` samples; yield each run's samples as it finishes."""
        from vllm import SamplingParams, TokensPrompt
        from vllm.sampling_params import RequestOutputKind

        engine = self.llm.llm_engine
        queued = {}
        for run in sample_runs(requests):
            prompt = self.chat.render(run[0].messages)
            params = SamplingParams(
                n=len(run),
                seed=run[0].seed,
                temperature=run[0].temperature,
                top_p=run[0].top_p,
                top_k=max(run[0].top_k, 0),  # 0: no cut
                max_tokens=run[0].max_tokens,
                stop=list(run[0].stop) or None,
                output_kind=RequestOutputKind.FINAL_ONLY,
            )
            request_id = f"harness-{next(self.request_ids)}"
            ids, length = self.chat.tokens(prompt, run[0].max_input_tokens)
            engine.add_request(request_id, TokensPrompt(prompt_token_ids=ids), params)
            queued[request_id] = (run, prompt, length if length > len(ids) else None)
        while engine.has_unfinished_requests():
            for output in engine.step():
                if output.finished:
                    run, prompt, cut_from = queued.pop(output.request_id)
                    yield self._completions(run, prompt, output, cut_from)
        if queued:
            raise HarnessError(f"vLLM finished without answering {len(queued)} requests")

    def _completions(self, run: list[Request], prompt: str, output, cut_from: int | None) -> list[Completion]:
        by_index = {sample.index: sample for sample in output.outputs}
        if sorted(by_index) != list(range(len(run))):
            raise HarnessError(f"vLLM returned samples {sorted(by_index)} for a request of {len(run)}")
        opened, digest = prompt_opens_think(prompt), prompt_hash(prompt)
        return [
            Completion(
                request=request,
                text=by_index[i].text,
                prompt_tokens=len(output.prompt_token_ids),
                completion_tokens=len(by_index[i].token_ids),
                finish_reason=by_index[i].finish_reason,
                prompt_hash=digest,
                think_opened=opened,
                prompt_cut_from=cut_from,
            )
            for i, request in enumerate(run)
        ]
