"""UloRL (its paper): DAPO-style GRPO on ultra-long outputs, decoded in segments across optimizer steps.

One step:

1. admission: new prompts join until `groups_in_flight` groups are in flight (our choice: a steady
   number); each decodes G samples. Prompts come from the dataset in a per-epoch order drawn from
   seed + epoch (each process takes every P-th), so a resume admits what the run it continues would;
2. segment rollout (Algorithm 1): every new or unfinished sample decodes at most L/S tokens with
   the current weights (`decode_segment`); EOS ends it, the global cap L truncates it, else it waits in
   the pool for the next step's policy;
3. rewards: a sample is scored when it ends, {0, 1} by the harness scorer (`math+judge` puts
   an LLM equivalence judge behind the rule, standing in for the paper's unreleased verifier); a
   truncated sample gets 0 without scoring;
4. group gating (our choice): a group trains only once all its samples ended; with dynamic sampling a
   group whose rewards are all equal is dropped (returned untrainable, so its rewards are still logged);
   at most one step's worth of groups trains, the ones complete longest first, the rest wait;
5. advantages: GRPO's group z-score (Eq. 4); the loss is TRL's (`loss_type: dapo`, token sum over the
   batch's tokens), with the importance ratio of `importance_sampling` (Eq. 8): POIS (TRL's recompute:
   every old log-prob is the current weights', ratio 1), SAIS (each segment's sampling log-probs as old
   log-probs, standard clipping) or TOIS (one segment, ratio 1);
6. DMMPT (Eq. 10): tokens of reward-1 samples with probability >= tau are zeroed in the
   advantages while the mean entropy is below sigma; they stay in the normaliser.

The pool (every sample's tokens, segment lengths, policy versions and sampling log-probs) and the
admission counter are the state saved in every checkpoint: a resume continues each sample exactly.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from harness import HarnessError
from harness.core.thinking import prompt_opens_think
from harness.scoring.rules import accepted_answers
from trainers.advantages import group_zscore
from trainers.data import RowOrder
from trainers.engine import Engine, Generation, decode_segment
from trainers.masks import dmmpt_mask, sample_entropy
from trainers.method import IDLE, Batch, Method, StageClock, readable
from trainers.methods.ulorl.options import UloRLOptions
from trainers.methods.ulorl.pool import InFlight, SegmentPool
from trainers.rewards import ScorerReward
from trainers.rollout import Rollout

if TYPE_CHECKING:
    from trainers.config import TrainConfig


class UloRLMethod(Method):
    """Rows carry `prompt` (chat messages), `answer` (the scorer's gold) and `id`."""

    name = "ulorl"
    options_class = UloRLOptions

    def __init__(
        self,
        reward: ScorerReward,
        options: UloRLOptions,
        order: RowOrder,
        num_generations: int,
        max_tokens: int,
    ):
        self.reward, self.options, self.G = reward, options, num_generations
        self.max_tokens, self.segment_tokens = max_tokens, _segment_tokens(max_tokens, options.segments)
        self.order = order  # the prompts this process admits, in order
        self.pool = SegmentPool(num_generations)
        self.admitted = 0  # prompts this process has admitted: the position in its row order
        self._clock = StageClock()
        self._metrics: dict[str, float] = {}
        self._samples: list[dict[str, Any]] = []

    @classmethod
    def from_config(cls, config: TrainConfig, reward: ScorerReward) -> UloRLMethod:
        options = cls.options_of(config)
        order = RowOrder.from_config(config)
        return cls(reward, options, order, config.num_generations, config.max_completion_length)

    @classmethod
    def options_of(cls, config: TrainConfig) -> UloRLOptions:
        """The options, and the TRL settings segment rollout and POIS rely on."""
        options = super().options_of(config)
        _segment_tokens(config.max_completion_length, options.segments)
        trl = config.trl
        if config.use_vllm and trl.get("vllm_importance_sampling_correction", True):
            raise HarnessError(
                "UloRL's importance sampling is its own: set trl: "
                "{vllm_importance_sampling_correction: false}, or vLLM's sampling log-probs of older "
                "segments re-introduce a staleness correction"
            )
        accumulation = trl.get("gradient_accumulation_steps", 1)
        if trl.get("num_iterations", 1) != 1 or trl.get("steps_per_generation", accumulation) != accumulation:
            raise HarnessError(
                "UloRL takes one optimizer step per rollout step (its paper, §4.1): leave trl.num_iterations "
                "at 1 and trl.steps_per_generation at gradient_accumulation_steps"
            )
        if trl.get("mask_truncated_completions"):
            raise HarnessError(
                "UloRL trains truncated samples with reward 0: drop mask_truncated_completions"
            )
        if config.scale_rewards != "group":
            raise HarnessError(
                "UloRL's advantages are GRPO's group z-score (Eq. 4): leave scale_rewards at group"
            )
        trained = config.prompts_per_step * accumulation
        if options.importance_sampling == "tois" and (options.groups_in_flight or trained) > trained:
            raise HarnessError(
                "TOIS trains every group in the step it was sampled: options.groups_in_flight must be at "
                f"most the {trained} groups a step trains, or groups wait and go stale"
            )
        reshaping = _sampling_filters(config)
        if options.importance_sampling == "sais" and reshaping:
            raise HarnessError(
                f"SAIS divides by the sampler's log-probs, which {reshaping} reshape (vLLM returns them "
                "after its filters): sample from the plain softmax (top_p 1, top_k 0) for SAIS"
            )
        return options

    @classmethod
    def resolved_options(cls, config: TrainConfig) -> dict[str, Any]:
        values = asdict(cls.options_of(config))
        values["segment_tokens"] = _segment_tokens(config.max_completion_length, values["segments"])
        return values

    # --- admission and segment rollout ---------------------------------------------------------------------

    def rollout(self, rows: Sequence[dict[str, Any]], engine: Engine) -> list[Rollout]:
        """This step's segment of every sample in flight; returns the groups released to training. `rows`
        (TRL's) only set how many groups one step trains: admission draws from the method's own order."""
        started = time.perf_counter()
        self._clock.seconds.clear()
        version = engine.policy_version
        in_flight = self.options.groups_in_flight or len(rows)
        admitted = 0
        while len(self.pool.groups) < in_flight:
            row = self.order[self.admitted]
            self.pool.admit(
                f"{self.admitted}:{row.get('id', '')}", row, engine.encode(row["prompt"]), version
            )
            self.admitted += 1
            admitted += 1
        groups = len(self.pool.groups)
        todo = self.pool.to_decode()
        prompts = [self.pool.groups[key].prompt_ids for key, _ in todo]
        prefixes = [self.pool.prefix(key, j) for key, j in todo]
        meter = EngineMeter(engine)
        with self._clock("generate"):
            # every prefix is a whole number of segments: one engine call, on every process alike
            gens = decode_segment(meter, prompts, prefixes, self.segment_tokens, self.max_tokens)
            if not todo and self.order.processes > 1:  # all waiting: still join the processes' engine call
                engine.generate([next(iter(self.pool.groups.values())).prompt_ids], self.segment_tokens)
        ended = []
        for (key, j), gen in zip(todo, gens, strict=True):
            sample = self.pool.record(key, j, gen, version)
            if sample.finished:
                ended.append((key, j, sample))
        with self._clock("score"):
            self._score_ended(ended, engine)
        released, dropped = self._release(len(rows), version)
        out = [s for g in released for s in g.samples] + [
            replace(s, trainable=False) for g in dropped for s in g.samples
        ]
        if not out:  # nothing ended this step: one sample stands in, untrainable and not logged
            stand_in = self.pool.unfinished()[0]
            out = [replace(stand_in, trainable=False, meta={IDLE: True}, reward=0.0)]
        self._metrics = self._step_metrics(gens, todo, prefixes, ended, released, dropped, admitted, meter)
        self._metrics["ulorl/groups_in_flight"] = float(groups)
        self._metrics["ulorl/seconds/step_rollout"] = time.perf_counter() - started
        self._samples = [_group_record(g, version) for g in released[: self.options.logged_groups]]
        return out

    def _score_ended(self, ended: list[tuple[str, int, Rollout]], engine: Engine) -> None:
        """{0, 1} rewards of the samples that ended this step; truncated ones get 0 unscored."""
        texts = [engine.decode(s.completion_ids) for _, _, s in ended]
        scored = [i for i, (_, _, s) in enumerate(ended) if not s.truncated]
        values = dict.fromkeys(range(len(ended)), 0.0)
        if scored:
            found = self.reward(
                [texts[i] for i in scored],
                [self.pool.groups[ended[i][0]].row["answer"] for i in scored],
                [prompt_opens_think(engine.tokenizer.decode(ended[i][2].prompt_ids)) for i in scored],
            )
            values.update(zip(scored, map(float, found), strict=True))
        for i, (key, j, _) in enumerate(ended):
            self.pool.scored(key, j, values[i], text=texts[i])

    def _release(self, budget: int, version: int) -> tuple[list[InFlight], list[InFlight]]:
        """Complete groups: up to `budget` diverse ones to train (complete longest first) and, with dynamic
        sampling, the uniform ones dropped; the rest of the diverse ones wait for the next step."""
        released, dropped = [], []
        for g in self.pool.complete():
            uniform = len({s.reward for s in g.samples}) == 1
            if uniform and self.options.dynamic_sampling:
                dropped.append(self.pool.pop(g.key))
            elif len(released) < budget:
                released.append(self.pool.pop(g.key))
        for g in released:  # the versions each sample waited for its siblings (staleness)
            for j, s in enumerate(g.samples):
                g.samples[j] = replace(s, meta={**s.meta, "waited": version - g.finished_at[j]})
        return released, dropped

    def advantages(self, rollouts: Sequence[Rollout], rewards: Tensor) -> Tensor:
        """GRPO's group z-score (Eq. 4); uniform groups get 0."""
        return group_zscore(rewards, [r.group for r in rollouts]).values

    # --- the loss: importance sampling and DMMPT ------------------------------------------------------------

    def old_logps(self, batch: Batch) -> Tensor | None:
        """SAIS (Eq. 8): each token's old log-prob is its segment's sampling log-prob, from the policy version
        that decoded it. POIS and TOIS: None, so TRL divides by the current weights' own (ratio 1)."""
        if self.options.importance_sampling != "sais":
            return None
        return segment_logps(batch.rollouts, batch.completion_ids.size(1))

    def advantage_weights(self, batch: Batch) -> Tensor | None:
        """DMMPT's mask (Eq. 10) as advantage weights, so masked tokens stay in the normaliser, with the
        entropy and mastered-token numbers; None without masking."""
        o = self.options
        if o.mpt_masking == "none":  # no extra forward pass; TRL logs the entropy itself
            return None
        logps, entropies = batch.policy_logps_and_entropies()  # on idle steps too: every process alike
        probs, mask = logps.exp().cpu(), batch.completion_mask.cpu()
        rewards, entropies = batch.rewards.cpu(), entropies.cpu()
        sigma = math.inf if o.mpt_masking == "static" else o.sigma
        kept = dmmpt_mask(
            probs, entropies, mask, rewards, tau=o.tau, sigma=sigma, entropy_scope=o.entropy_scope
        )
        valid = mask.bool()
        tokens = int(valid.sum())
        if not tokens:  # an idle step (nothing released): nothing to mask, nothing to log
            return None
        positive = (rewards == 1) & valid.any(dim=1)
        gate = sample_entropy(entropies, mask, o.entropy_scope) < sigma
        mastered = valid & (probs >= o.tau) & positive[:, None]
        self._metrics.update(
            {
                "ulorl/entropy": float((entropies.double() * valid).sum() / tokens),
                "ulorl/dmmpt/mpt_fraction": float(mastered.sum()) / tokens,
                "ulorl/dmmpt/masked_fraction": float((valid & ~kept.bool()).sum()) / tokens,
                "ulorl/dmmpt/trigger_rate": float((gate & positive).sum()) / max(int(positive.sum()), 1),
            }
        )
        return kept.to(batch.completion_mask.device)

    # --- what a step logs ----------------------------------------------------------------------------------

    def _step_metrics(
        self,
        gens: Sequence[Generation],
        todo: Sequence[tuple[str, int]],
        prefixes: Sequence[Sequence[int]],
        ended: Sequence[tuple[str, int, Rollout]],
        released: Sequence[InFlight],
        dropped: Sequence[InFlight],
        admitted: int,
        meter: EngineMeter,
    ) -> dict[str, float]:
        trained = [s for g in released for s in g.samples]
        waited = [s.meta["waited"] for s in trained]
        lag = [s.policy_versions[-1] - s.policy_versions[0] for s in trained]
        oldest = [
            w + g for w, g in zip(waited, lag, strict=True)
        ]  # the policy versions since the first token
        ready = len(released) + sum(1 for g in self.pool.groups.values() if g.complete)
        out = {
            "ulorl/admitted_groups": float(admitted),
            "ulorl/decoded_samples": float(len(todo)),
            "ulorl/continued_samples": float(sum(1 for p in prefixes if p)),
            "ulorl/decoded_tokens": float(sum(len(g.ids) for g in gens)),
            "ulorl/ended_samples": float(len(ended)),
            "ulorl/truncation_rate": sum(s.truncated for _, _, s in ended) / len(ended) if ended else 0.0,
            "ulorl/carried_samples": float(len(self.pool.unfinished())),
            "ulorl/waiting_samples": float(len(self.pool.waiting())),
            "ulorl/ready_groups": float(ready),
            "ulorl/released_groups": float(len(released)),
            "ulorl/dropped_groups": float(len(dropped)),
            "ulorl/trained_tokens": float(sum(len(s.completion_ids) for s in trained)),
            "ulorl/engine/idle_fraction": meter.idle_fraction,
            "ulorl/engine/calls": float(meter.calls),
        }
        if trained:
            out["ulorl/segments_per_sample"] = sum(len(s.segments) for s in trained) / len(trained)
            out["ulorl/staleness/mean"] = sum(waited) / len(waited)
            out["ulorl/staleness/max"] = float(max(waited))
            out["ulorl/policy_lag/max"] = float(max(lag))
            out["ulorl/oldest_token_age/mean"] = sum(oldest) / len(oldest)
            out["ulorl/oldest_token_age/max"] = float(max(oldest))
            out["ulorl/trained_truncation_rate"] = sum(s.truncated for s in trained) / len(trained)
        for stage, seconds in self._clock.seconds.items():
            out[f"ulorl/seconds/{stage}"] = seconds
        return out

    # --- state --------------------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        return {"admitted": self.admitted, "pool": self.pool.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.admitted = state["admitted"]
        self.pool.load_state_dict(state["pool"])


class EngineMeter:
    """An engine that counts what its `generate` calls decode: a batched call runs until its longest
    continuation ends, so a row that stopped earlier holds an idle slot for the remaining decode steps."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.calls = 0
        self.slot_steps = 0  # rows x decode steps of every call
        self.tokens = 0  # tokens decoded

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def generate(self, prompts: Sequence[Sequence[int]], max_tokens: int | None = None) -> list[Generation]:
        gens = self.engine.generate(prompts, max_tokens)
        self.calls += 1
        self.slot_steps += len(gens) * max((len(g.ids) for g in gens), default=0)
        self.tokens += sum(len(g.ids) for g in gens)
        return gens

    @property
    def idle_fraction(self) -> float:
        return 1 - self.tokens / self.slot_steps if self.slot_steps else 0.0


def _sampling_filters(config: TrainConfig) -> list[str]:
    """The sampling settings that make the sampler's log-probs differ from the policy's softmax."""
    trl = config.trl
    found = [k for k in ("min_p", "generation_kwargs") if trl.get(k)]
    if trl.get("top_k") not in (None, 0, -1):
        found.append("top_k")
    if trl.get("repetition_penalty", 1.0) != 1.0:
        found.append("repetition_penalty")
    if config.top_p < 1:
        found.append("top_p")
    return found


def _segment_tokens(max_tokens: int, segments: int) -> int:
    """L / S, the tokens one step decodes per sample (Algorithm 1)."""
    if max_tokens % segments:
        raise HarnessError(
            f"max_completion_length {max_tokens} is not a multiple of options.segments {segments}"
        )
    return max_tokens // segments


def segment_logps(rollouts: Sequence[Rollout], width: int) -> Tensor:
    """(B, width): each rollout's sampling log-probs, segment by segment as their policies decoded them,
    right-padded with 0 (SAIS's old log-probs, Eq. 8)."""
    out = torch.zeros(len(rollouts), width, dtype=torch.float32)
    for i, r in enumerate(rollouts):
        if r.sampling_logprobs is None:
            raise ValueError(
                f"SAIS needs the sampling log-probs of every rollout; group {r.group!r} has none"
            )
        values = r.sampling_logprobs[:width]
        out[i, : len(values)] = torch.tensor(values, dtype=torch.float32)
    return out


def _group_record(g: InFlight, version: int) -> dict[str, Any]:
    """A released group for samples.jsonl: each sample's segments, their policy versions and reward."""
    return {
        "group": g.key,
        "released_at": version,
        "admitted_at": g.admitted,
        "reference": " / ".join(accepted_answers(g.row["answer"])),
        "samples": [
            {
                "reward": s.reward,
                "finish_reason": s.finish_reason,
                "segments": s.segments,
                "policy_versions": s.policy_versions,
                "waited": s.meta["waited"],
                "text": readable(s.meta["text"]),
            }
            for s in g.samples
            if s is not None
        ],
    }
