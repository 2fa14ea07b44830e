"""Reasoning Arena's anchored ranking against the full round robin, training-free (`harness study rank`).

From a study's warm start, N responses are sampled to each of G held-out sums; the policy then judges each
group three times with the method's own tournaments: the live one (each arrival plays the best, worst
and median so far: 3N - 6 calls), the round robin (every pair once: N(N - 1)/2 calls) and the round robin
again with other presentation orders and judge samples. Each is ranked by its Bradley-Terry fit (Eq. 10).
Per group: Kendall's tau-b of the live ranking against the round robin's (what the cheaper schedule
keeps), of the round robin against its repeat (how far the judge agrees with itself: the ceiling of any
schedule), and of each ranking against the rule verdicts where a group holds right and wrong answers
(whether the judge prefers the right ones). Tau per judge call divides by the schedule's calls.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from harness import HarnessError
from harness.scoring.integer import IntegerScorer
from trainers.engine import Generation
from trainers.methods.arena import bt
from trainers.methods.arena.method import ArenaMethod, Group
from trainers.methods.arena.options import ArenaOptions

SCHEDULES = ("live", "round_robin", "round_robin_again")


class LocalPolicy:
    """The `Engine` part the policy judge uses (encode, decode, generate), over a model folder, sampling
    at `temperature` from torch's seeded generator."""

    def __init__(self, model: str, temperature: float, batch_size: int = 16):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(model).eval()
        self.temperature, self.batch_size = temperature, batch_size

    def encode(self, messages: Sequence[dict[str, str]]) -> list[int]:
        rendered = self.tokenizer.apply_chat_template(
            list(messages), add_generation_prompt=True, tokenize=True, return_dict=True
        )
        return list(rendered["input_ids"])

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True)

    def generate(self, prompts: Sequence[Sequence[int]], max_tokens: int | None = None) -> list[Generation]:
        import torch

        out: list[Generation] = []
        eos, pad = self.tokenizer.eos_token_id, self.tokenizer.pad_token_id
        for start in range(0, len(prompts), self.batch_size):
            batch = [list(p) for p in prompts[start : start + self.batch_size]]
            width = max(map(len, batch))
            ids = torch.tensor([[pad] * (width - len(p)) + p for p in batch])
            mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in batch])
            with torch.no_grad():
                new = self.model.generate(
                    input_ids=ids, attention_mask=mask, do_sample=True, temperature=self.temperature,
                    top_p=1.0, top_k=0, max_new_tokens=max_tokens or 64, pad_token_id=pad,
                )[:, width:]  # fmt: skip
            for row in new.tolist():
                cut = row.index(eos) + 1 if eos in row else len(row)
                out.append(Generation(row[:cut], [], "stop" if eos in row else "length"))
        return out


def sample_groups(policy: LocalPolicy, rows: Sequence[dict], n: int, max_tokens: int) -> list[Group]:
    """N responses to each row, each with the integer rule's verdict (1 right, 0 wrong)."""
    prompts = [policy.encode([{"role": "user", "content": row["problem"]}]) for row in rows for _ in range(n)]
    texts = [policy.decode(g.ids) for g in policy.generate(prompts, max_tokens)]
    lengths = [len(policy.tokenizer.encode(t, add_special_tokens=False)) for t in texts]
    scorer = IntegerScorer()
    golds = [row["answer"] for row in rows for _ in range(n)]
    verdicts = [0.0] * len(texts)
    for index, score in scorer.score(texts, golds):
        verdicts[index] = float(score.value)
    return [
        Group(
            key=str(row["id"]),
            problem=row["problem"],
            reference=row["answer"],
            texts=texts[k * n : (k + 1) * n],
            lengths=lengths[k * n : (k + 1) * n],
            verifier=verdicts[k * n : (k + 1) * n],
            route="ranked",
        )
        for k, row in enumerate(rows)
    ]


def judge_groups(
    policy: LocalPolicy, groups: Sequence[Group], options: ArenaOptions, schedule: str, seed: int
) -> tuple[list[Group], dict[str, int]]:
    """The groups judged by one schedule, each with its matches, calls and BT strengths (`judged`), and
    the judge's counters."""
    tournament = "live" if schedule == "live" else "round_robin"
    options = dataclasses.replace(options, tournament=tournament, rating="bt", route="all")
    method = ArenaMethod(None, options, len(groups[0].texts), seed=seed)  # type: ignore[arg-type]
    method._engine = policy  # type: ignore[assignment]
    method.judge.tokenizer = policy.tokenizer
    judged = [dataclasses.replace(g, judged=None, matches=None, calls=0) for g in groups]
    method.rate_groups(judged)
    return judged, method.judge.take_counters()


def strengths(group: Group, l2: float) -> np.ndarray:
    """The group's Bradley-Terry log-strengths from its matches (0 for every trace without one)."""
    return bt.fit_bt(group.matches or [], len(group.texts), l2=l2).beta


def tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-b; nan where either side ranks every trace the same."""
    from scipy.stats import kendalltau

    if len(set(np.round(a, 9))) < 2 or len(set(np.round(b, 9))) < 2:
        return math.nan
    return float(kendalltau(a, b).statistic)


@dataclass(frozen=True)
class Agreement:
    """Mean and spread of one tau over the groups where it is defined."""

    mean: float
    std: float
    defined: int  # groups where both rankings separate some traces

    @classmethod
    def of(cls, values: Sequence[float]) -> Agreement:
        kept = [v for v in values if not math.isnan(v)]
        if not kept:
            return cls(math.nan, math.nan, 0)
        return cls(float(np.mean(kept)), float(np.std(kept)), len(kept))


def compare(judged: dict[str, list[Group]], l2: float) -> dict[str, Any]:
    """Per-group taus between the schedules and against the rule verdicts, and their summary."""
    per_group = []
    for k, group in enumerate(judged["live"]):
        beta = {s: strengths(judged[s][k], l2) for s in SCHEDULES}
        rule = group.verifier
        mixed = 0 < sum(rule) < len(rule)
        per_group.append(
            {
                "group": group.key,
                "rule_right": sum(rule) / len(rule),
                "calls": {s: judged[s][k].calls for s in SCHEDULES},
                "live_vs_round_robin": tau(beta["live"], beta["round_robin"]),
                "round_robin_vs_again": tau(beta["round_robin"], beta["round_robin_again"]),
                "live_vs_rule": tau(beta["live"], rule) if mixed else math.nan,
                "round_robin_vs_rule": tau(beta["round_robin"], rule) if mixed else math.nan,
            }
        )
    summary = {
        key: dataclasses.asdict(Agreement.of([g[key] for g in per_group]))
        for key in ("live_vs_round_robin", "round_robin_vs_again", "live_vs_rule", "round_robin_vs_rule")
    }
    calls = {s: float(np.mean([g["calls"][s] for g in per_group])) for s in SCHEDULES}
    summary["calls_per_group"] = calls
    summary["tau_per_call"] = {
        "live": summary["live_vs_round_robin"]["mean"] / calls["live"],
        "round_robin_again": summary["round_robin_vs_again"]["mean"] / calls["round_robin_again"],
    }
    return {"summary": summary, "groups": per_group}


def rank_study(folder: Path, groups: int, n: int, seed: int, model: Path | None = None) -> dict[str, Any]:
    """Sample and judge `groups` held-out sums of the Arena study in `folder` with `model` (default: the
    study's warm start) as policy and judge, with the method arm's judge options, sampling temperature and
    response length."""
    import torch

    from harness.core.data import read_rows
    from harness.core.io.read import read_bytes, read_json
    from trainers.studies.run import STUDY_FILE

    record = read_json(folder / STUDY_FILE)  # Missing: a one-line error naming the file
    settings = record.get("settings", {}) if isinstance(record, dict) else {}
    if not isinstance(settings, dict) or settings.get("study") != "arena":
        raise HarnessError(f"{folder} holds no Reasoning Arena study (study rank ranks arena's judge)")
    if n < 3:
        raise HarnessError("--responses must be at least 3 (the live schedule's anchors)")
    config = yaml.safe_load(read_bytes(folder / "configs" / "method.yaml", folder))
    rows = [row for _, row in read_rows(folder / "data" / "heldout.jsonl", folder)][:groups]
    torch.manual_seed(seed)
    model = model or folder / "warm-start"
    if not model.is_dir():
        raise HarnessError(f"no model folder {model} (run the study, or pass --model)")
    policy = LocalPolicy(str(model), config["temperature"])
    options = ArenaOptions(**config["options"])
    sampled = sample_groups(policy, rows, n, config["max_completion_length"])
    judged, counters = {}, {}
    for k, schedule in enumerate(SCHEDULES):
        judged[schedule], counters[schedule] = judge_groups(policy, sampled, options, schedule, seed + k)
    result = compare(judged, options.l2)
    result["summary"]["judge"] = {s: _rates(c) for s, c in counters.items()}
    result["settings"] = {
        "study": str(folder),
        "model": str(model),
        "groups": len(rows),
        "responses": n,
        "seed": seed,
    }
    result["samples"] = [g.record() for g in judged["round_robin"][:2]]
    return _nan_to_none(result)


def _nan_to_none(value: Any) -> Any:
    """JSON has no NaN: an undefined tau is written as null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _nan_to_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nan_to_none(v) for v in value]
    return value


def _rates(counters: dict[str, int]) -> dict[str, float]:
    """Position-A share of decided verdicts, tie and parse-failure shares of the calls."""
    decided = counters.get("presented_a", 0) + counters.get("presented_b", 0)
    calls = max(1, counters.get("calls", 0))
    return {
        "position_a_rate": counters.get("presented_a", 0) / decided if decided else math.nan,
        "tie_rate": counters.get("ties", 0) / calls,
        "parse_failure_rate": counters.get("parse_failures", 0) / calls,
    }


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def markdown(result: dict[str, Any]) -> str:
    """One table: per schedule, its calls per group, tau against the round robin and the rule, the judge's
    position and tie rates."""
    s = result["summary"]

    def cell(key: str) -> str:
        a = s[key]
        return "-" if not a["defined"] else f"{a['mean']:.3f} ± {a['std']:.3f} ({a['defined']})"

    rows = {
        "live": ("live_vs_round_robin", "live_vs_rule"),
        "round_robin": (None, "round_robin_vs_rule"),
        "round_robin_again": ("round_robin_vs_again", None),
    }
    lines = [
        "| schedule | judge calls per group | τ against the round robin (groups) | τ against the rule (mixed "
        "groups) | τ per call | position A | ties | unparsed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for schedule, (versus, rule) in rows.items():
        judge, calls = s["judge"][schedule], s["calls_per_group"][schedule]
        per_call = s["tau_per_call"].get(schedule)  # None: no group defined it
        lines.append(
            f"| {schedule.replace('_', ' ')} | {calls:.1f} | {cell(versus) if versus else '1 (itself)'} | "
            f"{cell(rule) if rule else '-'} | {'-' if per_call is None else f'{per_call:.4f}'} | "
            f"{_number(judge['position_a_rate'])} | {_number(judge['tie_rate'])} | "
            f"{_number(judge['parse_failure_rate'])} |"
        )
    return "\n".join(lines) + "\n"
