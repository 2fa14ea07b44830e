"""The trainer's generation engines (`trainers.engine.Engine`).

Both read the sampling settings (temperature, top-p, top-k, `max_completion_length`) from the trainer's
`GRPOConfig` and sample from the trainer's current weights. `HFEngine` runs transformers' `generate`
(CPU or GPU, DDP and ZeRO-3 through TRL's unwrapping); `VLLMEngine` drives TRL's own vLLM client in
colocate or server mode (GPU).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from trainers.engine import Engine, Generation


class _TrainerEngine:
    """Tokenisation and bookkeeping shared by the engines; `trainer` is a TRL `GRPOTrainer`."""

    def __init__(self, trainer: Any):
        self.trainer = trainer
        self.tokenizer = trainer.processing_class
        self.eos_ids = set(trainer.eos_token_ids)

    @property
    def policy_version(self) -> int:
        return self.trainer.state.global_step

    def encode(self, messages: Sequence[dict[str, str]]) -> list[int]:
        """The chat-templated prompt with the generation header, as the trainer's template renders it."""
        return list(
            self.tokenizer.apply_chat_template(
                list(messages),
                chat_template=self.trainer.chat_template,
                add_generation_prompt=True,
                tokenize=True,
                return_dict=True,
                **self.trainer.chat_template_kwargs,
            )["input_ids"]
        )

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True)

    def logprobs(
        self, prompts: Sequence[Sequence[int]], continuations: Sequence[Sequence[int]], batch_size: int = 8
    ) -> list[list[float]]:
        """Log-probs of each continuation's tokens after its prompt under the current weights, by a
        teacher-forced forward pass at temperature 1 (the policy as its own judge or scorer)."""
        from trl.trainer.utils import pad

        model, device = self.trainer.model, self.trainer.accelerator.device
        out: list[list[float]] = []
        for start in range(0, len(prompts), batch_size):
            pairs = list(
                zip(
                    prompts[start : start + batch_size],
                    continuations[start : start + batch_size],
                    strict=True,
                )
            )
            seqs = [torch.tensor([*p, *c]) for p, c in pairs]
            ids = pad(seqs, padding_value=self.tokenizer.pad_token_id, padding_side="right").to(device)
            mask = pad([torch.ones_like(s) for s in seqs], padding_value=0, padding_side="right").to(device)
            with torch.no_grad():
                logits = model(input_ids=ids, attention_mask=mask).logits.float()
            logps = logits[:, :-1].log_softmax(-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1).cpu()
            out += [logps[i, len(p) - 1 : len(p) - 1 + len(c)].tolist() for i, (p, c) in enumerate(pairs)]
        return out

    @property
    def context_length(self) -> int | None:
        """None: transformers sets no limit of its own."""
        return None

    @contextlib.contextmanager
    def prober(self, n: int, max_tokens: int, entropy_mode: str = "full") -> Iterator[Any]:
        """The transformers prober on the trainer's model (gathered under ZeRO-3) in eval mode, its training
        mode restored after; it computes the full entropy whatever `entropy_mode` says."""
        from harness.probing.probe import HFProber

        with self.inference_model() as model:
            training = model.training
            model.eval()
            try:
                yield HFProber(_ProbedModel(model, self.tokenizer, self.eos_ids), n, max_tokens)  # type: ignore[arg-type]
            finally:
                model.train(training)

    @contextlib.contextmanager
    def inference_model(self) -> Iterator[Any]:
        """The trainer's model unwrapped for generation (DeepSpeed ZeRO-3 parameters gathered, as
        `ds3_gather_for_generation` says), without gradient: for generation and for SPAE's probes."""
        from trl.models import unwrap_model_for_generation

        trainer, args = self.trainer, self.trainer.args
        with (
            unwrap_model_for_generation(
                trainer.model_wrapped,
                trainer.accelerator,
                gather_deepspeed3_params=args.ds3_gather_for_generation,
                generation_kwargs=trainer.generation_kwargs,
                gradient_checkpointing_kwargs=args.gradient_checkpointing_kwargs,
            ) as model,
            torch.no_grad(),
            trainer._dist.summon_full_params(trainer.model_wrapped, recurse=False),
        ):
            yield model

    def _finish(self, ids: list[int], logprobs: list[float]) -> Generation:
        """Cut after the first EOS; no EOS means the call's token budget ran out."""
        for i, token in enumerate(ids):
            if token in self.eos_ids:
                return Generation(ids[: i + 1], logprobs[: i + 1], "stop")
        return Generation(ids, logprobs, "length")


class HFEngine(_TrainerEngine):
    """transformers `generate` on the trainer's model, with the trainer's generation config."""

    def generate(self, prompts: Sequence[Sequence[int]], max_tokens: int | None = None) -> list[Generation]:
        from trl.trainer.utils import pad

        trainer = self.trainer
        if not prompts:  # nothing of ours: still join the call (ZeRO-3 gathers the weights in it)
            with self.inference_model():
                return []
        prompt_tensors = [torch.tensor(list(p)) for p in prompts]
        input_ids = pad(prompt_tensors, padding_value=self.tokenizer.pad_token_id, padding_side="left")
        attention_mask = pad(
            [torch.ones_like(t) for t in prompt_tensors], padding_value=0, padding_side="left"
        )
        device = trainer.accelerator.device
        config = copy.deepcopy(trainer.generation_config)
        config.return_dict_in_generate, config.output_logits = True, True
        if max_tokens is not None:
            config.max_new_tokens = max_tokens
        with self.inference_model() as model:
            out = model.generate(
                input_ids=input_ids.to(device),
                attention_mask=attention_mask.to(device),
                generation_config=config,
            )
        new = out.sequences[:, input_ids.size(1) :]
        logits = torch.stack(out.logits, dim=1).float() / (config.temperature or 1.0)
        logprobs = logits.log_softmax(-1).gather(-1, new.unsqueeze(-1)).squeeze(-1)
        return [
            self._finish(ids.tolist(), lps.tolist())
            for ids, lps in zip(new.cpu(), logprobs.cpu(), strict=True)
        ]


class VLLMEngine(_TrainerEngine):
    """TRL's vLLM generation (`use_vllm=True`, colocate or server mode); weights are synced per step."""

    @property
    def context_length(self) -> int | None:
        """The colocated engine's context (it refuses longer prompts); None in server mode (unknown here)."""
        vllm = self.trainer.vllm_generation
        return vllm.llm.llm_engine.model_config.max_model_len if vllm.mode == "colocate" else None

    def probes_on_vllm(self, entropy_mode: str) -> bool:
        """Whether probes can run on this vLLM engine: colocated, one GPU, awake, and the entropy from the
        top K log-probs (TRL's engine returns at most 20 a position; `full` needs the transformers prober)."""
        vllm = self.trainer.vllm_generation
        return (
            entropy_mode != "full"
            and vllm.mode == "colocate"
            and vllm.tensor_parallel_size == 1
            and not vllm.enable_sleep_mode
        )

    @contextlib.contextmanager
    def prober(self, n: int, max_tokens: int, entropy_mode: str = "full") -> Iterator[Any]:
        """vLLM's prober (prefix caching; the weights were synced when this step generated) where
        `probes_on_vllm`, else the transformers prober."""
        if not self.probes_on_vllm(entropy_mode):
            with super().prober(n, max_tokens, entropy_mode) as prober:
                yield prober
            return
        from harness.probing.probe import VLLMProber

        yield VLLMProber(_ColocatedLLM(self.trainer.vllm_generation.llm), entropy_mode, n, max_tokens)

    def generate(self, prompts: Sequence[Sequence[int]], max_tokens: int | None = None) -> list[Generation]:
        trainer = self.trainer
        vllm = trainer.vllm_generation
        if trainer.state.global_step != trainer._last_loaded_step:
            vllm.sync_weights()
            trainer._last_loaded_step = trainer.state.global_step
        sent = self._same_count_as_peers(prompts)
        if not sent:  # no process has a prompt (or a colocated engine without any): nothing to call
            return []
        budget = vllm.max_completion_length
        vllm.max_completion_length = max_tokens or budget
        try:
            _, ids, logprobs, _ = vllm.generate(prompts=sent, images=None, num_generations=1)
        finally:
            vllm.max_completion_length = budget
        pairs = list(zip(ids, logprobs, strict=True))[: len(prompts)]
        return [self._finish(list(i), [lp[0] for lp in lps]) for i, lps in pairs]

    def _same_count_as_peers(self, prompts: Sequence[Sequence[int]]) -> list[list[int]]:
        """The prompts, padded with copies to the largest count any process sends: TRL's server and
        tensor-parallel modes gather the processes' prompts and hand each an equal slice back, which
        mixes samples up when the counts differ (UloRL's pools differ per process). Colocated engines
        without tensor parallelism gather nothing, and get the prompts as they are."""
        from accelerate.utils import gather_object

        sent = [list(p) for p in prompts]
        vllm = self.trainer.vllm_generation
        gathers = vllm.mode == "server" or vllm.tensor_parallel_size > 1
        if self.trainer.accelerator.num_processes == 1 or not gathers:
            return sent
        most = max(gather_object([len(sent)]))
        filler = sent[0] if sent else [self.tokenizer.eos_token_id]
        return sent + [filler] * (most - len(sent))


def make_engine(trainer: Any) -> Engine:
    return VLLMEngine(trainer) if trainer.use_vllm else HFEngine(trainer)


class _ProbedModel:
    """The trainer's model as `HFProber` reads a backend: model, tokenizer, device, EOS ids."""

    def __init__(self, model: Any, tokenizer: Any, eos_ids: Sequence[int]):
        self.model, self.tokenizer, self.eos_ids = model, tokenizer, sorted(eos_ids)
        self.device = next(model.parameters()).device


class _ColocatedLLM:
    """TRL's colocated vLLM engine as `VLLMProber` reads a backend."""

    def __init__(self, llm: Any):
        self.llm = llm
