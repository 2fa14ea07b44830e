"""SPAE (SPAE paper, §3): DAPO + RF-B with step-potential advantages from training-free probes.

One step:

1. rollout: G samples of each of TRL's prompts with the run's decoding settings, scored by the harness
   scorer (`math`, or `math+judge` for the paper's verifier fallback on rejected answers, App. D.4);
2. dynamic sampling with refill (DAPO, §4.1): groups whose rewards are all equal are
   dropped (returned untrainable, so their rewards are still logged), and new prompts, drawn from the
   method's own seeded order, are sampled in their place for up to `max_refill_rounds` rounds; groups
   beyond the batch are returned untrainable too;
3. probes (§3.1-3.2, after the filter as the paper's pipeline figure shows): every m-th step boundary of
   every kept sample is probed on the current policy (`probes.py`), giving Phi per step;
4. advantages: `spae` (Eq. 11-17, `advantage.py`); the paper's baselines `rfb` (group mean subtracted,
   then every token of the batch standardised: SPAE with alpha = xi = 0) and `dapo` (GRPO's group
   z-score). The loss is TRL's: `loss_type: dapo` (token sum over the batch's tokens) with
   `epsilon` / `epsilon_high` (clip-higher), no KL.

The method's own state is the number of refill prompts it has drawn: a resume continues the same walk, and
probe seeds depend only on the run's seed, the step and the sample.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from harness import HarnessError
from harness.probing.probe import Decoding, VLLMProber, entropy_top_k
from trainers.advantages import group_zscore
from trainers.data import RowOrder
from trainers.engine import Engine, any_process
from trainers.method import Method, StageClock, readable
from trainers.methods.spae.advantage import SpaeSettings, spae_terms
from trainers.methods.spae.options import SpaeOptions
from trainers.methods.spae.probes import (
    Probed,
    ProbeSettings,
    Target,
    probe_rollouts,
    probe_seed,
)
from trainers.rewards import ScorerReward
from trainers.rollout import Rollout
from trainers.solver import solver_groups

if TYPE_CHECKING:
    from trainers.config import TrainConfig

TRL_VLLM_LOGPROBS = 20  # vLLM's default max_logprobs, which TRL's colocated engine keeps


class SpaeMethod(Method):
    """Rows carry `prompt` (chat messages), `answer` (the scorer's gold) and `id`."""

    name = "spae"
    options_class = SpaeOptions

    def __init__(
        self,
        reward: ScorerReward,
        options: SpaeOptions,
        order: RowOrder,
        num_generations: int,
        decoding: Decoding,
        seed: int = 0,
    ):
        self.reward, self.options, self.G, self.decoding = reward, options, num_generations, decoding
        self.order, self.seed = order, seed  # the refill prompts; the run's seed (probe seeds)
        self.drawn = 0  # refill prompts this process has drawn: the position in its row order
        self._clock = StageClock()
        self._metrics: dict[str, float] = {}
        self._samples: list[dict[str, Any]] = []

    @classmethod
    def from_config(cls, config: TrainConfig, reward: ScorerReward) -> SpaeMethod:
        decoding = Decoding(config.temperature, config.top_p, config.trl.get("top_k") or -1)
        order = RowOrder.from_config(config, seed_offset=1)  # refills walk apart from TRL's sampler
        return cls(reward, cls.options_of(config), order, config.num_generations, decoding, config.seed)

    @classmethod
    def options_of(cls, config: TrainConfig) -> SpaeOptions:
        options = super().options_of(config)
        top_k = entropy_top_k(options.entropy_mode)
        if top_k is not None and not (config.use_vllm and config.vllm_mode == "colocate"):
            raise HarnessError(
                "options.entropy_mode topk=K approximates the entropy from vLLM's top-K log-probs: it needs "
                "use_vllm with vllm_mode colocate; the transformers prober computes the full entropy"
            )
        if top_k is not None and top_k > TRL_VLLM_LOGPROBS:
            raise HarnessError(
                f"options.entropy_mode: TRL's vLLM engine returns at most {TRL_VLLM_LOGPROBS} log-probs a "
                f"position, not {top_k}"
            )
        trl = config.trl
        if top_k is not None:
            split = [k for k in ("vllm_enable_sleep_mode",) if trl.get(k)]
            split += [k for k in ("vllm_tensor_parallel_size",) if trl.get(k, 1) > 1]
            reshaped = [k for k in ("top_k", "min_p") if trl.get(k) not in (None, 0, -1)]
            reshaped += ["temperature"] * (config.temperature != 1.0) + ["top_p"] * (config.top_p < 1)
            if split:
                raise HarnessError(
                    f"options.entropy_mode topk=K probes on the colocated vLLM engine, which {split} take "
                    "away (asleep between generations, or split over GPUs): use entropy_mode full"
                )
            if reshaped:
                raise HarnessError(
                    f"options.entropy_mode topk=K reads TRL's vLLM log-probs, which come after {reshaped}: "
                    "Conf's entropy would not be the model's (Eq. 5); sample at temperature 1, top-p 1, "
                    "no top-k or min-p, or use entropy_mode full"
                )
        elif options.probing and (trl.get("ds3_gather_for_generation") is False or trl.get("fsdp")):
            raise HarnessError(
                "the transformers prober runs forward passes whose number differs between processes: it "
                "needs the whole model on each (DeepSpeed ZeRO-3 with ds3_gather_for_generation, not FSDP)"
            )
        return options

    @classmethod
    def resolved_options(cls, config: TrainConfig) -> dict[str, Any]:
        options = cls.options_of(config)
        return {**asdict(options), "probes": options.probing}

    # --- rollout: sample, score, filter and refill, probe ------------------------------------------------

    def rollout(self, rows: Sequence[dict[str, Any]], engine: Engine) -> list[Rollout]:
        self._clock.seconds.clear()
        step = engine.policy_version
        sampled = self._sample(rows, engine, f"{step}:0")
        kept, dropped = self._split(sampled)
        rounds = 0
        while rounds < self.options.max_refill_rounds and self._any_short(len(rows) - len(kept)):
            rounds += 1
            missing = max(len(rows) - len(kept), 1)  # a process already full still joins the round
            extra = [self.order[self.drawn + j] for j in range(missing)]
            self.drawn += missing
            more_kept, more_dropped = self._split(self._sample(extra, engine, f"{step}:{rounds}"))
            kept, dropped = kept + more_kept, dropped + more_dropped
        trained, surplus = kept[: len(rows)], kept[len(rows) :]
        probed = self._probe([s for g in trained for s in g], engine, step)
        out = probed + [replace(s, trainable=False) for g in dropped + surplus for s in g]
        self._metrics = {
            "spae/refill_rounds": float(rounds),
            "spae/sampled_groups": float(len(kept) + len(dropped)),
            "spae/dropped_groups": float(len(dropped)),
            "spae/trained_groups": float(len(trained)),
            "spae/surplus_groups": float(len(surplus)),
            **{f"spae/seconds/{stage}": seconds for stage, seconds in self._clock.seconds.items()},
        }
        self._samples = [_group_record(g) for g in _groups(probed)[: self.options.logged_groups]]
        return out

    def _any_short(self, missing: int) -> bool:
        """Whether any process still lacks groups (every process runs the same refill rounds: under
        ZeRO-3 and vLLM's server mode a generation is a collective call)."""
        return any_process(missing > 0 and self.options.dynamic_sampling)

    def _sample(self, rows: Sequence[dict[str, Any]], engine: Engine, tag: str) -> list[list[Rollout]]:
        """G scored samples of each row, as one group per row."""
        with self._clock("generate"):
            groups = solver_groups(rows, engine, self.G, f"{tag}:")
        samples = [r for group in groups for r in group]
        with self._clock("score"):
            rewards = self.reward(
                [r.meta["text"] for r in samples],
                [r.meta["answer"] for r in samples],
                [r.meta["think_opened"] for r in samples],
            )
        scored = iter(rewards)
        return [
            [
                replace(r, meta={**r.meta, "sample": f"{r.group}:{j}"}, reward=float(next(scored)))
                for j, r in enumerate(group)
            ]
            for group in groups
        ]

    def _split(self, groups: list[list[Rollout]]) -> tuple[list[list[Rollout]], list[list[Rollout]]]:
        """(kept, dropped): with dynamic sampling a group whose rewards are all equal is dropped."""
        if not self.options.dynamic_sampling:
            return groups, []
        diverse = [len({s.reward for s in g}) > 1 for g in groups]
        return [g for g, d in zip(groups, diverse, strict=True) if d], [
            g for g, d in zip(groups, diverse, strict=True) if not d
        ]

    def _probe(self, samples: list[Rollout], engine: Engine, step: int) -> list[Rollout]:
        """The samples with their probed steps in meta (`steps`: boundaries, Acc, Conf, Phi, accounting).
        Every process enters the prober once per step, probes or not (ZeRO-3 gathers the weights)."""
        if not self.options.probing:
            return samples
        targets = [
            Target(
                s.prompt_ids,
                s.completion_ids,
                s.meta["answer"],
                s.reward >= 1.0,
                probe_seed(self.seed, step, s.meta["sample"]),
            )
            for s in samples
        ]
        settings = probe_settings(self.options)
        probing = engine.prober(settings.n_probe, settings.max_tokens, settings.entropy_mode)
        with self._clock("probe"), probing as prober:
            limit = engine.context_length if isinstance(prober, VLLMProber) else None  # vLLM refuses longer
            found = probe_rollouts(prober, engine.tokenizer, targets, settings, self.decoding, limit)
        return [replace(s, meta={**s.meta, "probed": p}) for s, p in zip(samples, found, strict=True)]

    # --- advantages ----------------------------------------------------------------------------------------

    def advantages(self, rollouts: Sequence[Rollout], rewards: Tensor) -> Tensor:
        """`dapo`: (N,) group z-scores. `spae` and `rfb`: (N, T) per-token advantages built over the
        trained rollouts of every process together (Eq. 15's batch min-max, Eq. 17's batch statistics);
        rollouts not trained get 0."""
        groups = [r.group for r in rollouts]
        if self.options.advantage == "dapo":
            out = group_zscore(rewards, groups).values
            self._metrics.update(_probe_metrics([r for r in rollouts if r.trainable], self.options.tau_sat))
            return out
        train = [i for i, r in enumerate(rollouts) if r.trainable]
        chosen = [rollouts[i] for i in train]
        steps = [_probed(r) for r in chosen]
        terms = spae_terms(
            rewards[train],
            [groups[i] for i in train],
            [p.phi for p in steps],
            [p.step_ends for p in steps],
            [len(r.completion_ids) for r in chosen],
            advantage_settings(self.options),
        )
        width = max((len(r.completion_ids) for r in rollouts), default=0)
        out = torch.zeros(len(rollouts), width, dtype=torch.float32)
        if train:
            out[train, : terms.advantages.size(1)] = terms.advantages.float()
            self._metrics["spae/f/mean"], self._metrics["spae/g/mean"] = terms.f_mean, terms.g_mean
        self._metrics.update(_probe_metrics(chosen, self.options.tau_sat))
        return out

    def state_dict(self) -> dict[str, Any]:
        return {"drawn": self.drawn}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.drawn = state["drawn"]


def _probed(rollout: Rollout) -> Probed:
    """A rollout's probe results; unprobed (a baseline without probes): no steps."""
    return rollout.meta.get("probed") or Probed([], 0)


def _probe_metrics(trained: Sequence[Rollout], tau_sat: float) -> dict[str, float]:
    """Mean Phi, saturation, the check-token share and R2W over the trained rollouts of all processes
    (check share and R2W as the SPAE paper's Table 3 defines them: over correct and incorrect
    trajectories respectively)."""
    probed = [(r, r.meta["probed"]) for r in trained if "probed" in r.meta]
    if not probed:
        return {}
    phis = [v for _, p in probed for v in p.phi]
    correct = [p.accounting for r, p in probed if r.reward >= 1.0]
    wrong = [p.accounting for r, p in probed if r.reward < 1.0]
    solve_check = sum(a["solve_tokens"] + a["check_tokens"] for a in correct)
    out = {
        "spae/probes": float(len(phis)),
        "spae/boundaries/found": float(sum(p.found for _, p in probed)),
        "spae/saturated_rollouts": sum(p.accounting["saturated"] for _, p in probed) / len(probed),
    }
    if wrong:  # a share with nothing to count is left out, not logged as 0
        out["spae/r2w_rate"] = sum(a["r2w"] for a in wrong) / len(wrong)
    if solve_check:
        out["spae/check_share"] = sum(a["check_tokens"] for a in correct) / solve_check
    if phis:
        out["spae/phi/mean"] = sum(phis) / len(phis)
        out["spae/saturated_steps"] = sum(v > tau_sat for v in phis) / len(phis)
    return out


def _groups(rollouts: Sequence[Rollout]) -> list[list[Rollout]]:
    by_key: dict[str, list[Rollout]] = {}
    for r in rollouts:
        by_key.setdefault(r.group, []).append(r)
    return list(by_key.values())


def _group_record(group: Sequence[Rollout]) -> dict[str, Any]:
    """A trained group for samples.jsonl: each sample's text, reward, potentials and token accounting."""
    first = group[0]
    return {
        "id": first.meta["id"],
        "answer": first.meta["answer"],
        "samples": [
            {
                "text": readable(s.meta["text"]),
                "reward": s.reward,
                "tokens": len(s.completion_ids),
                **(
                    {"phi": [round(v, 4) for v in s.meta["probed"].phi], **s.meta["probed"].accounting}
                    if "probed" in s.meta
                    else {}
                ),
            }
            for s in group
        ],
    }


def advantage_settings(options: SpaeOptions) -> SpaeSettings:
    """The advantage builder's settings; RF-B is SPAE with alpha = xi = 0."""
    rfb = options.advantage == "rfb"
    return SpaeSettings(
        alpha=0.0 if rfb else options.alpha,
        xi=0.0 if rfb else options.xi,
        tau_sat=options.tau_sat,
        penalty=options.penalty,
        kappa=options.kappa,
        shaping_mean=options.shaping_mean,
        penalty_on_positive_only=options.penalty_on_positive_only,
    )


def probe_settings(options: SpaeOptions) -> ProbeSettings:
    """The probes' settings."""
    return ProbeSettings(
        n_probe=options.n_probe,
        max_tokens=options.probe_max_tokens,
        every_m=options.probe_every_m,
        batch_size=options.probe_batch_size,
        delimiter=options.delimiter,
        entropy_mode=options.entropy_mode,
        tau_sat=options.tau_sat,
    )
