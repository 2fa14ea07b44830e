"""Reasoning Arena (its paper, §3-4): CISPO on verifiable rewards, with the groups the verifier cannot
separate re-scored by an LLM judge. One step:

1. rollout: G samples of each prompt, scored by the harness verifier (`ScorerReward`, binary);
   with `refill` (the RLVR baseline's dynamic sampling) groups with no reward variance
   are discarded and more prompts drawn until the step has its prompts' worth of diverse groups;
2. routing (Eqs. 3-5): a group whose verifier rewards have no variance (all correct, all wrong) goes
   to the judge (`route: zero_variance`); `route: all` judges every group (RLAIF, ArenaRL), `none`
   none (RLVR);
3. the judge's rewards (Eqs. 7-10): the live tournament against the best / worst / median anchors of
   the group's leaderboard, replayed in arrival order (the deferred mode), then a Bradley-Terry fit
   min-max scaled (Arena-Live); the round robin's win-rates (Reasoning Arena, ArenaRL); or pointwise
   rubric scores (Adaptive Pointwise, RLAIF). The main process judges and broadcasts;
4. advantages (Eq. 2): each group standardised on its own reward (verifier or judge) with the
   population std and eps 1e-6. A trace the judge could not rate (its matches all failed to parse)
   gets 0, as does a routed group the judge could not separate (all ties);
5. the loss: TRL's CISPO (`loss_type: cispo`, `epsilon_high: 3.0`: the stop-gradient IS weight
   clipped to [0, 3]), with the paper's per-group token normalisation (Eq. 1) as advantage weights.

The judge's order generator and its cache, and the method's generator, are the state saved in every
checkpoint. The tournaments themselves never outlive a step: in the deferred mode a group's anchor
pool is built from its own leaderboard and is complete when the step's judging is.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from harness import HarnessError
from harness.core.thinking import prompt_opens_think
from harness.scoring.rules import accepted_answers
from trainers.advantages import group_zscore
from trainers.data import dataset_rows
from trainers.engine import Engine
from trainers.method import Batch, Method, StageClock, readable
from trainers.methods.arena import bt, tournament
from trainers.methods.arena.judge import (
    ArenaJudge,
    JudgeGenerate,
    PairAsk,
    PointAsk,
    PolicyJudge,
    ServedJudge,
)
from trainers.methods.arena.options import ArenaOptions
from trainers.rewards import ScorerReward
from trainers.rollout import Rollout

if TYPE_CHECKING:
    from trainers.config import TrainConfig

TOKEN_SUM_LOSSES = ("cispo", "dapo")  # TRL's losses normalised by the batch's token count
JUDGE_DECODING = ("prompt", "repeats", "temperature", "max_tokens")  # the YES/NO judge's; ours are options


@dataclass
class Group:
    """One prompt's G traces: what the verifier and (when routed) the judge made of them."""

    key: str
    problem: str
    reference: str
    texts: list[str]
    lengths: list[int]
    verifier: list[float]
    route: str | None = None  # None (verifier), "all_correct", "all_incorrect"; "diverse" under route: all
    judged: list[float | None] | None = None  # R_j per trace, None where unrated
    matches: list[tournament.Match] | None = None
    calls: int = 0
    bt_iterations: int | None = None
    uninformative: bool = False

    def record(self) -> dict[str, Any]:
        return {
            "group": self.key,
            "route": self.route,
            "problem": self.problem,
            "reference": self.reference,
            "verifier": self.verifier,
            "judge": self.judged,
            "matches": [list(m) for m in self.matches or []],
            "calls": self.calls,
            "uninformative": self.uninformative,
            "responses": [readable(t) for t in self.texts],
        }


class ArenaMethod(Method):
    """Rows carry `prompt` (chat messages), `answer` (the verifier's gold) and `id`."""

    name = "arena"
    options_class = ArenaOptions

    def __init__(
        self,
        reward: ScorerReward,
        options: ArenaOptions,
        num_generations: int,
        judge: JudgeGenerate | None = None,
        *,
        pool: Sequence[dict[str, Any]] = (),
        seed: int = 0,
    ):
        self.reward, self.options, self.G = reward, options, num_generations
        self.pool = list(pool)  # rows refills draw from
        self.rng = random.Random(seed)
        self._engine: Engine | None = None
        self._served = judge is not None
        self.judge = ArenaJudge(
            judge or PolicyJudge(self._policy, options.judge_max_tokens, options.judge_prefill),
            tokenizer=None,
            context_tokens=options.judge_context,
            max_tokens=options.judge_max_tokens,
            keep_tail_tokens=options.keep_tail_tokens,
            temperature=options.judge_temperature,
            retry_temperature=options.retry_temperature,
            seed=seed,
            cache_size=options.judge_cache,
        )
        self._clock = StageClock()
        self._started = 0.0
        self._generations = 0
        self._metrics: dict[str, float] = {}
        self._samples: list[dict[str, Any]] = []

    @classmethod
    def from_config(cls, config: TrainConfig, reward: ScorerReward) -> ArenaMethod:
        from accelerate import PartialState

        options = cls.options_of(config)
        processes = PartialState().num_processes
        if processes > 1 and options.refill:
            raise HarnessError("options.refill runs on one process (processes would disagree on its rounds)")
        if processes > 1 and not config.judge and options.route != "none":
            raise HarnessError(
                "the policy judges on one process only; for several, serve the judge (judge: model, base_url)"
            )
        judge, tokenizer = None, None
        if config.judge:
            from harness.scoring.judge import JudgeConfig

            engine = JudgeConfig.from_settings(dict(config.judge)).engine
            judge, tokenizer = ServedJudge(engine, options.judge_max_tokens), _tokenizer(engine.model)
        pool = dataset_rows(config)[0] if options.refill else ()
        method = cls(reward, options, config.num_generations, judge, pool=pool, seed=config.seed)
        method.judge.tokenizer = tokenizer
        return method

    @classmethod
    def options_of(cls, config: TrainConfig) -> ArenaOptions:
        """The options; the judge's settings may name any servable model, but its decoding is ours."""
        owned = sorted(set(config.judge or {}) & set(JUDGE_DECODING))
        if owned:
            raise HarnessError(
                f"judge: {owned} are the YES/NO judge's settings; the arena's judge takes options.judge_*"
            )
        options = super().options_of(config)
        if config.judge and options.judge_prefill:
            raise HarnessError("options.judge_prefill is for the policy judging itself, not a served judge")
        sampled = [k for k in ("judge_temperature", "retry_temperature") if k in config.options]
        if not config.judge and sampled and options.route != "none":
            raise HarnessError(
                f"options {sampled} need a served judge; the policy judges at its own temperature"
            )
        if options.normalise == "group" and config.loss_type not in TOKEN_SUM_LOSSES:
            raise HarnessError(
                f"options.normalise: group is for {' or '.join(TOKEN_SUM_LOSSES)}, whose loss sums "
                f"tokens; with loss_type {config.loss_type!r} use normalise: batch"
            )
        return options

    @classmethod
    def resolved_options(cls, config: TrainConfig) -> dict[str, Any]:
        values = asdict(cls.options_of(config))
        values["judge"] = f"served: {config.judge['model']}" if config.judge else "the policy"
        return values

    def _policy(self) -> Engine:
        if self._engine is None:
            raise RuntimeError("the policy judges only after a rollout gave it its engine")
        return self._engine

    # --- rollouts and the verifier -----------------------------------------------------------------------

    def rollout(self, rows: Sequence[dict[str, Any]], engine: Engine) -> list[Rollout]:
        self._engine, self._started = engine, time.perf_counter()
        self._clock.seconds.clear()
        if self.judge.tokenizer is None:  # the judge's own when it loads, else the policy's
            self.judge.tokenizer = engine.tokenizer
        self._generations = self._groups_made = 0
        made = self._sample(rows, engine)
        if not self.options.refill:
            return made
        out: list[Rollout] = []
        for round_ in range(1, self.options.max_refill_rounds + 1):
            groups = [made[k : k + self.G] for k in range(0, len(made), self.G)]
            out += [r for group in groups if _diverse(group) for r in group]
            missing = len(rows) - len(out) // self.G
            if missing == 0 or round_ == self.options.max_refill_rounds:
                break
            made = self._sample(
                [self.pool[self.rng.randrange(len(self.pool))] for _ in range(missing)], engine
            )
        return out or made  # no diverse group in any round: the last round's, all with advantage 0

    def _sample(self, rows: Sequence[dict[str, Any]], engine: Engine) -> list[Rollout]:
        """G samples of each row, each with its verifier reward in `meta`."""
        prompts = [engine.encode(row["prompt"]) for row in rows]
        with self._clock("generate"):
            gens = engine.generate([p for p in prompts for _ in range(self.G)])
        self._generations += len(gens)
        texts = [engine.decode(g.ids) for g in gens]
        opened = [prompt_opens_think(engine.tokenizer.decode(p)) for p in prompts for _ in range(self.G)]
        answers = [row["answer"] for row in rows for _ in range(self.G)]
        with self._clock("verify"):
            rewards = self.reward(texts, answers, opened)
        out = []
        for j, (gen, text, value) in enumerate(zip(gens, texts, rewards, strict=True)):
            k = j // self.G
            row = rows[k]
            out.append(
                Rollout(
                    prompt_ids=prompts[k],
                    completion_ids=gen.ids,
                    role="solver",
                    group=f"{self._groups_made + k}:{row.get('id', '')}",
                    task=str(row.get("task", "math")),
                    finish_reason=gen.finish_reason,
                    sampling_logprobs=gen.logprobs,
                    meta={
                        "problem": _problem(row),
                        "answer": row["answer"],
                        "reference": " / ".join(accepted_answers(row["answer"])),
                        "text": text,
                    },
                    reward=float(value),
                )
            )
        self._groups_made += len(rows)
        return out

    # --- routing, the judge, advantages -------------------------------------------------------------------

    def advantages(self, rollouts: Sequence[Rollout], rewards: Tensor) -> Tensor:
        groups = self._groups(rollouts, rewards)
        routed = [g for g in groups.values() if g.route is not None]
        with self._clock("judge"):
            self._judge_on_main(routed)
        adv = self._standardised(rollouts, groups)
        signal = {r.group for r, a in zip(rollouts, adv.tolist(), strict=True) if a != 0}
        for g in routed:
            g.uninformative = g.key not in signal
        self._metrics = self._step_metrics(list(groups.values()), adv)
        self._samples = [g.record() for g in routed[: self.options.logged_groups]]
        replies = self.judge.take_raw()
        if replies:
            self._samples.append({"judge_replies": replies})
        return adv

    def _standardised(self, rollouts: Sequence[Rollout], groups: dict[str, Group]) -> Tensor:
        """Eq. 2 per group on R* (Eq. 5): the verifier's reward, or the judge's for a routed group. Traces
        the judge left unrated sit out of their group's statistics with advantage 0."""
        seen: Counter[str] = Counter()
        values: list[float | None] = []
        for r in rollouts:
            g = groups[r.group]
            values.append((g.verifier if g.route is None else g.judged)[seen[r.group]])
            seen[r.group] += 1
        rated = [i for i, v in enumerate(values) if v is not None]
        adv = torch.zeros(len(rollouts), dtype=torch.float32)
        if rated:
            reward = torch.tensor([values[i] for i in rated], dtype=torch.float32)
            keys = [rollouts[i].group for i in rated]
            adv[rated] = group_zscore(reward, keys, unbiased=False, eps=self.options.eps).values
        return adv

    def _groups(self, rollouts: Sequence[Rollout], rewards: Tensor) -> dict[str, Group]:
        groups: dict[str, Group] = {}
        for r, value in zip(rollouts, rewards.tolist(), strict=True):
            g = groups.setdefault(r.group, Group(r.group, r.meta["problem"], r.meta["reference"], [], [], []))
            g.texts.append(r.meta["text"])
            g.lengths.append(len(r.completion_ids))
            g.verifier.append(value)
        for g in groups.values():
            kind = tournament.route(g.verifier)
            if self.options.route == "all":
                g.route = kind or "diverse"
            elif self.options.route == "zero_variance":
                g.route = kind
        return groups

    def _judge_on_main(self, routed: list[Group]) -> None:
        """Judge the routed groups on the main process and broadcast what it found."""
        from accelerate import PartialState
        from accelerate.utils import broadcast_object_list

        state = PartialState()
        found: list[Any] = [None]
        if state.is_main_process and routed:
            try:
                self.rate_groups(routed)
                found = [[(g.judged, g.matches, g.calls, g.bt_iterations) for g in routed]]
            except Exception as e:  # every process stops with the main one's error, none waits for it
                found = [e]
        if state.num_processes > 1:
            broadcast_object_list(found)
        if isinstance(found[0], Exception):
            raise found[0]
        if state.num_processes > 1:
            if not state.is_main_process and routed:
                for g, (judged, matches, calls, iterations) in zip(routed, found[0], strict=True):
                    g.judged, g.matches, g.calls, g.bt_iterations = judged, matches, calls, iterations

    def rate_groups(self, routed: list[Group]) -> None:
        """Each group's judge rewards (`judged`), comparison graph and call count, by the configured judge."""
        o = self.options
        if o.tournament == "pointwise":
            asks = [PointAsk(g.problem, g.reference, t) for g in routed for t in g.texts]
            scores = iter(self.judge.rate(asks))
            for g in routed:
                g.judged = [next(scores) for _ in g.texts]
                g.calls = len(g.texts)
            return
        if o.tournament == "round_robin":
            self._round_robin(routed)
        else:
            self._live(routed)
        for g in routed:
            n = len(g.texts)
            if o.uses_bt:
                played = {k for m in g.matches for k in (m.i, m.j)}
                fit = bt.fit_bt(g.matches, n, l2=o.l2)
                g.bt_iterations = fit.iterations
                rated = sorted(played)
                scaled, _ = bt.minmax([fit.beta[k] for k in rated]) if rated else ([], True)
                values = dict(zip(rated, scaled, strict=True))
                g.judged = [values.get(k) for k in range(n)]
            else:
                g.judged = tournament.win_rates(g.matches, n)

    def _round_robin(self, routed: list[Group]) -> None:
        """Every pair of every routed group, asked in one batch (Eq. 8)."""
        pairs = [(g, i, j) for g in routed for i, j in tournament.round_robin_pairs(len(g.texts))]
        verdicts = self.judge.compare(
            [PairAsk(g.problem, g.reference, g.texts[i], g.texts[j]) for g, i, j in pairs]
        )
        for g in routed:
            g.matches, g.calls = [], 0
        for (g, i, j), verdict in zip(pairs, verdicts, strict=True):
            g.calls += 1
            if verdict is not None:
                g.matches.append(tournament.Match(i, j, tournament.soft_outcome(verdict, self.options.gamma)))

    def _live(self, routed: list[Group]) -> None:
        """Each group's live schedule in its arrival order; the groups' next arrivals batched together."""
        o = self.options
        tours = [
            tournament.LiveTournament(
                tournament.arrival_order(g.lengths, o.arrival, self.rng), o.anchors, o.ties
            )
            for g in routed
        ]
        while not all(t.finished for t in tours):
            asks, owners = [], []
            for g, t in zip(routed, tours, strict=True):
                pairs = [] if t.finished else t.next_pairs()
                owners.append(len(pairs))
                asks += [PairAsk(g.problem, g.reference, g.texts[new], g.texts[old]) for new, old in pairs]
            verdicts = iter(self.judge.compare(asks) if asks else [])
            for t, count in zip(tours, owners, strict=True):
                if not t.finished:
                    found = [next(verdicts) for _ in range(count)]
                    t.record([None if v is None else tournament.soft_outcome(v, o.gamma) for v in found])
        for g, t in zip(routed, tours, strict=True):
            g.matches, g.calls = list(t.matches), t.calls

    # --- the loss's token weights -------------------------------------------------------------------------

    def advantage_weights(self, batch: Batch) -> Tensor | None:
        """Eq. 1's per-group normaliser: each group's tokens weigh 1 / (its token count), groups equally,
        rescaled so TRL's global token mean becomes the mean over groups (exact on one process)."""
        if self.options.normalise == "batch":
            return None
        mask = batch.completion_mask.float()
        keys = [r.group for r in batch.rollouts]
        tokens: Counter[str] = Counter()
        for key, row in zip(keys, mask.sum(1).tolist(), strict=True):
            tokens[key] += row
        live = [k for k, n in tokens.items() if n > 0]
        if not live:
            return None
        total = float(mask.sum())
        scale = torch.tensor(
            [total / (len(live) * tokens[k]) if tokens[k] > 0 else 0.0 for k in keys], dtype=mask.dtype
        )
        return scale[:, None].to(mask.device) * mask

    # --- what a step logs ---------------------------------------------------------------------------------

    def _step_metrics(self, groups: list[Group], adv: Tensor) -> dict[str, float]:
        n = len(groups)
        routed = [g for g in groups if g.route is not None]
        counters = self.judge.take_counters()
        decided = counters.get("presented_a", 0) + counters.get("presented_b", 0)
        parsed = decided + counters.get("ties", 0)
        out = {
            "arena/routed_fraction": len(routed) / n,
            "arena/routed/all_correct": sum(g.route == "all_correct" for g in groups) / n,
            "arena/routed/all_incorrect": sum(g.route == "all_incorrect" for g in groups) / n,
            "arena/routed/uninformative": float(sum(g.uninformative for g in routed)),
            "arena/judge/calls": float(sum(g.calls for g in routed)),
            "arena/judge/calls_per_routed_group": sum(g.calls for g in routed) / len(routed)
            if routed
            else 0.0,
            "arena/judge/requests": float(counters.get("requests", 0)),
            "arena/judge/cache_hits": float(counters.get("cache_hits", 0)),
            "arena/judge/retries": float(counters.get("retries", 0)),
            "arena/judge/parse_failures": float(counters.get("parse_failures", 0)),
            "arena/judge/truncated": float(counters.get("truncated", 0)),
            "arena/nonzero_advantage": float((adv != 0).float().mean()),
            "arena/advantage_abs_mean": float(adv.abs().mean()),
            "arena/generations": float(self._generations),
            "arena/step_seconds": time.perf_counter() - self._started,
        }
        if parsed:  # rates of verdicts are logged on steps that had some
            out["arena/judge/tie_rate"] = counters.get("ties", 0) / parsed
        if decided:
            out["arena/judge/position_a_rate"] = counters.get("presented_a", 0) / decided
        fits = [g.bt_iterations for g in routed if g.bt_iterations is not None]
        if fits:
            out["arena/bt_iterations"] = sum(fits) / len(fits)
        for stage, seconds in self._clock.seconds.items():
            out[f"arena/seconds/{stage}"] = seconds
        return out

    # --- state --------------------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        return {"rng": self.rng.getstate(), "judge": self.judge.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.setstate(state["rng"])
        self.judge.load_state_dict(state["judge"])


def _tokenizer(model: str) -> Any:
    """The served judge's tokenizer, to size its prompts; None where it cannot be loaded here."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(model)
    except Exception:  # a Hub id offline, a server-only name, a broken folder: any of them
        return None


def _diverse(group: Sequence[Rollout]) -> bool:
    return tournament.route([r.reward for r in group]) is None


def _problem(row: dict[str, Any]) -> str:
    """The problem as the judge reads it: the row's own text, else the prompt's last user message."""
    if row.get("problem"):
        return str(row["problem"])
    users = [m["content"] for m in row["prompt"] if m.get("role") == "user"]
    return users[-1] if users else ""
