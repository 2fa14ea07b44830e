"""SPAE's training-free probe (SPAE paper, Eq. 4-7): with transformers, batched with left padding, or
with vLLM and prefix caching.

For each probe context (prompt + response prefix up to a boundary + `**Final Answer**\\n\\boxed{`):
- Acc = the mean teacher-forced probability of the gold answer's tokens;
- Conf = the mean over N sampled continuations (<= 10 tokens, the run's decoding settings) of
  exp(-mean per-position entropy), the entropy taken over the model's full next-token distribution.

One forward pass per batch reads the gold probabilities and fills the KV cache; the cache is cut back to
the contexts, and the N sampled continuations decode from it in turn.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from harness import HarnessError
from harness.backends.hf import HFBackend, SeededSampler

PROBE_TEXT = "**Final Answer**\n\\boxed{"
N_PROBE = 5
PROBE_MAX_TOKENS = 10


@dataclass(frozen=True)
class ProbeJob:
    context: list[int]  # prompt + response prefix + probe text, as token ids
    gold: list[int]  # the gold answer's token ids (no special tokens)
    seed: int  # sample n of this probe draws from seed + n


@dataclass(frozen=True)
class Decoding:
    temperature: float
    top_p: float
    top_k: int = -1


@dataclass(frozen=True)
class ProbeResult:
    acc: float
    conf: float


class HFProber:
    """Probes with the run's model loaded once through the hf backend."""

    def __init__(
        self,
        backend: HFBackend,
        n_probe: int = N_PROBE,
        max_tokens: int = PROBE_MAX_TOKENS,
    ):
        self.backend, self.n_probe, self.max_tokens = backend, n_probe, max_tokens

    def probe(self, jobs: Sequence[ProbeJob], decoding: Decoding) -> list[ProbeResult]:
        """Acc and Conf of each job, from one batched forward pass and N short sampled continuations."""
        import torch

        with torch.inference_mode():
            acc, first_logits, cache, mask = self._teacher_forced(jobs)
            conf = self._sampled_confidence(jobs, decoding, first_logits, cache, mask)
        return [ProbeResult(float(a), float(c)) for a, c in zip(acc, conf, strict=True)]

    def _teacher_forced(self, jobs: Sequence[ProbeJob]):
        """Rows [pad, context, gold, pad]: every context ends at column C. Returns the per-row mean gold
        probability, the logits after each context, and the cache and mask cut back to the contexts."""
        import torch

        width = max(len(j.context) for j in jobs)
        gold_width = max(len(j.gold) for j in jobs)
        ids = torch.full((len(jobs), width + gold_width), self.backend.tokenizer.pad_token_id)
        mask = torch.zeros_like(ids)
        gold_mask = torch.zeros((len(jobs), gold_width))
        for row, job in enumerate(jobs):
            ids[row, width - len(job.context) : width] = torch.tensor(job.context)
            ids[row, width : width + len(job.gold)] = torch.tensor(job.gold)
            mask[row, width - len(job.context) : width + len(job.gold)] = 1
            gold_mask[row, : len(job.gold)] = 1
        device = self.backend.device
        ids, mask = ids.to(device), mask.to(device)
        out = self.backend.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
            use_cache=True,
            logits_to_keep=gold_width + 1,  # the positions that predict gold tokens 1..G
        )
        logits = out.logits.float()
        gold_logprobs = logits[:, :-1].log_softmax(-1).gather(-1, ids[:, width:, None])[..., 0].cpu()
        acc = (gold_logprobs.exp() * gold_mask).sum(-1) / gold_mask.sum(-1)
        cache = out.past_key_values
        cache.crop(-gold_width)  # negative: tokens to remove (every transformers version)
        return acc, logits[:, 0], cache, mask[:, :width]

    def _sampled_confidence(self, jobs, decoding: Decoding, first_logits, cache, mask):
        """Conf per job: the mean over its N continuations of exp(-mean entropy)."""
        import torch

        samples = [
            self._continuation(jobs, decoding, n, first_logits, cache, mask) for n in range(self.n_probe)
        ]
        return torch.stack(samples).mean(0)

    def _continuation(self, jobs, decoding: Decoding, n: int, logits, cache, mask):
        """exp(-mean entropy) over continuation n of every job: up to max_tokens, stopped after an EOS
        (which counts). The cache is cut back to the contexts afterwards, so the N continuations take
        turns instead of N copies of the cache."""
        import torch

        device = self.backend.device
        sampler = SeededSampler(
            [j.seed + n for j in jobs], decoding.temperature, decoding.top_p, decoding.top_k
        )
        positions = mask.sum(-1, keepdim=True)
        eos = torch.tensor(self.backend.eos_ids, device=device)
        alive = torch.ones(len(jobs), dtype=torch.bool, device=device)
        entropy_sum = torch.zeros(len(jobs), device=device)
        steps = torch.zeros(len(jobs), device=device)
        fed = 0
        for step in range(self.max_tokens):
            entropy_sum += torch.special.entr(logits.softmax(-1)).sum(-1) * alive
            steps += alive
            token = sampler(None, logits).argmax(-1).to(device)
            alive &= ~torch.isin(token, eos)
            if step == self.max_tokens - 1 or not alive.any():
                break
            mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=-1)
            out = self.backend.model(
                input_ids=token[:, None],
                attention_mask=mask,
                position_ids=positions + fed,
                past_key_values=cache,
                use_cache=True,
            )
            fed += 1
            logits = out.logits[:, -1].float()
        if fed:
            cache.crop(-fed)
        return torch.exp(-entropy_sum / steps).cpu()


class VLLMProber:
    """Probes through vLLM with prefix caching. Acc: one prompt-logprob pass over context + gold (vLLM
    scores every prompt row itself, so these passes write the cache but do not read it). Conf: the N
    continuations of each probe as one seeded request (child n draws from seed + n) from the cached
    prefix, with the per-position entropy from the returned logprobs: every token's (`full`, exact)
    or the top k's (`topk=K`, the authors' approximation, not renormalised)."""

    def __init__(
        self, backend, entropy_mode: str = "full", n_probe: int = N_PROBE, max_tokens=PROBE_MAX_TOKENS
    ):
        self.backend, self.n_probe, self.max_tokens = backend, n_probe, max_tokens
        self.top_k = entropy_top_k(entropy_mode)

    def probe(self, jobs: Sequence[ProbeJob], decoding: Decoding) -> list[ProbeResult]:
        from vllm import SamplingParams, TokensPrompt

        scoring = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0)
        prompts = [TokensPrompt(prompt_token_ids=j.context + j.gold) for j in jobs]
        prompts += [TokensPrompt(prompt_token_ids=j.context) for j in jobs]
        params = [scoring] * len(jobs) + [
            SamplingParams(
                n=self.n_probe if decoding.temperature > 0 else 1,  # greedy: N identical continuations
                seed=j.seed,
                temperature=decoding.temperature,
                top_p=decoding.top_p,
                top_k=max(decoding.top_k, 0),
                max_tokens=self.max_tokens,
                logprobs=-1 if self.top_k is None else self.top_k,
            )
            for j in jobs
        ]
        outputs = self.backend.llm.generate(prompts, params, use_tqdm=False)
        return [
            ProbeResult(self._acc(job, scored), self._conf(sampled))
            for job, scored, sampled in zip(jobs, outputs[: len(jobs)], outputs[len(jobs) :], strict=True)
        ]

    @staticmethod
    def _acc(job: ProbeJob, output) -> float:
        """The mean teacher-forced probability of the gold tokens."""
        start = len(job.context)
        rows = output.prompt_logprobs[start : start + len(job.gold)]
        return sum(math.exp(row[token].logprob) for row, token in zip(rows, job.gold, strict=True)) / len(
            job.gold
        )

    def _conf(self, output) -> float:
        """The mean over continuations of exp(-mean entropy) over their positions (an EOS counts)."""
        values = []
        for sample in output.outputs:
            entropies = [self._entropy(position) for position in sample.logprobs]
            values.append(math.exp(-sum(entropies) / len(entropies)))
        return sum(values) / len(values)

    def _entropy(self, position: dict) -> float:
        kept = [lp.logprob for lp in position.values() if self.top_k is None or lp.rank <= self.top_k]
        return -sum(math.exp(lp) * lp for lp in kept if lp > -math.inf)


def entropy_top_k(mode: str) -> int | None:
    """None for `full`, K for `topk=K`."""
    if mode == "full":
        return None
    if mode.startswith("topk=") and mode[5:].isdigit() and int(mode[5:]) > 0:
        return int(mode[5:])
    raise HarnessError(f"unknown --entropy-mode {mode!r}; choose full or topk=K (e.g. topk=20)")
