"""A study's table and plots, from its `record/` folders (each run's metrics.jsonl and summary.json).

Per run, a metric's value is its mean over the run's logged steps. Per seed, the method's value minus
the baseline's (GRPO, then the ablation) is one paired difference; the table gives their mean and a 95 %
t-interval over seeds. The verdict reads the first metric against GRPO: shown when the interval excludes
zero in the direction the paper gives, reversed when it excludes zero the other way, not shown otherwise
(one seed gives no interval: not shown). Where GRPO has no such metric (AZR's proposer: GRPO proposes
nothing), the verdict reads it against the ablation and says so. A metric that says whether the
mechanism, or the regime it needs, is there at all (`Study.engaged`: DMMPT's trigger rate, SPAE's
saturated steps, Arena's routed groups, AZR's valid induction proposals and non-zero advantages) says
instead whether it fired: "engaged" when it logged above 0 in some step of every seed, "not engaged" when
in none, and then the study's verdict is "not engaged" too.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness import HarnessError
from harness.core.io.read import RECORDS_BYTES, Missing, Unfit, json_lines, read_bytes, read_json
from trainers.studies.catalog import Study, study
from trainers.studies.run import STUDY_FILE


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    n: int
    seeds: tuple[float, ...] = ()  # the values it was made of, seed by seed

    @classmethod
    def of(cls, values: list[float]) -> Interval:
        values = [float(v) for v in values if not math.isnan(v)]
        if not values:
            return cls(math.nan, math.nan, math.nan, 0)
        mean = float(np.mean(values))
        if len(values) < 2:
            return cls(mean, math.nan, math.nan, len(values), tuple(values))
        from scipy.stats import t

        half = float(t.ppf(0.975, len(values) - 1) * np.std(values, ddof=1) / math.sqrt(len(values)))
        return cls(mean, mean - half, mean + half, len(values), tuple(values))

    def text(self, digits: int = 3, per_seed: bool = False) -> str:
        """`mean [low, high]`; with `per_seed`, the seeds' own values after it."""
        if math.isnan(self.mean):
            return "-"
        shown = f"{self.mean:.{digits}f}"
        if not math.isnan(self.low):
            shown += f" [{self.low:.{digits}f}, {self.high:.{digits}f}]"
        if per_seed and len(self.seeds) > 1:
            shown += " (" + ", ".join(f"{v:.{digits}f}" for v in self.seeds) + ")"
        return shown


def engaged(fired: int, seeds: int) -> str:
    """Whether the mechanism fired (logged above 0 in some step) in every seed."""
    if fired == seeds:
        return "engaged"
    return "not engaged" if fired == 0 else f"engaged in {fired} of {seeds} seeds"


def verdict(diff: Interval, better: int) -> str:
    if math.isnan(diff.low):
        return "not shown"
    if diff.low > 0 or diff.high < 0:
        return "shown" if (diff.low > 0) == (better > 0) else "reversed"
    return "not shown"


@dataclass(frozen=True)
class Runs:
    """One study's recorded runs: per arm, per seed, the metrics' per-step curves and the summary."""

    study: Study
    settings: dict
    curves: dict[tuple[str, int, str], tuple[np.ndarray, np.ndarray]]  # (arm, seed, key) -> steps, values
    summaries: dict[tuple[str, int], dict]

    @property
    def seeds(self) -> list[int]:
        return sorted({seed for _, seed in self.summaries})

    def value(self, arm: str, seed: int, key: str) -> float:
        """The metric's mean over the run's logged steps (nan: never logged)."""
        steps, values = self.curves.get((arm, seed, key), (np.array([]), np.array([])))
        return float(values.mean()) if len(values) else math.nan

    def paired(self, key: str, baseline: str) -> Interval:
        return Interval.of([self.value("method", s, key) - self.value(baseline, s, key) for s in self.seeds])


def load(folder: Path) -> Runs:
    """Read a study folder (or its `results/` copy) through the one reader."""
    folder = Path(folder)
    try:
        record = read_json(folder / STUDY_FILE)
    except Missing:
        raise HarnessError(f"{folder} is not a study folder (no {STUDY_FILE})") from None
    settings = record.get("settings") if isinstance(record, dict) else None
    if not isinstance(settings, dict) or not isinstance(settings.get("study"), str):
        raise HarnessError(f"{folder / STUDY_FILE}: no study settings")
    s = study(settings["study"])
    curves, summaries = {}, {}
    for arm in s.arms:
        for seed in range(int(settings.get("seeds", 0))):
            run = folder / "record" / f"{arm.name}-seed{seed}"
            if not (run / "summary.json").is_file():
                continue
            summary = read_json(run / "summary.json")
            if not isinstance(summary, dict):
                raise HarnessError(f"{run / 'summary.json'}: not a summary")
            summaries[arm.name, seed] = summary
            steps = logged_steps(run / "metrics.jsonl")
            trained = [(n, m) for n, m in sorted(steps.items()) if not s.active or m.get(s.active, 1) > 0]
            for metric in s.metrics:
                points = [(n, m[metric.key]) for n, m in trained if metric.key in m]
                curves[arm.name, seed, metric.key] = (
                    np.array([n for n, _ in points], dtype=float),
                    np.array([v for _, v in points], dtype=float),
                )
    if not summaries:
        raise HarnessError(f"{folder} has no recorded runs yet (record/ARM-seedS/summary.json)")
    return Runs(s, settings, curves, summaries)


def logged_steps(path: Path) -> dict[int, dict[str, float]]:
    """Step -> its numeric values, from a run's metrics.jsonl (a torn last line is dropped; a step logged
    twice, as after a resume or by TRL's closing line, keeps the later value of each key)."""
    data = read_bytes(path, limit=RECORDS_BYTES)
    steps: dict[int, dict[str, float]] = {}
    for number, record in json_lines(data[: data.rfind(b"\n") + 1]):
        if isinstance(record, Unfit) or not isinstance(record, dict):
            raise HarnessError(f"{path}:{number}: not a record of a step ({record})")
        step = record.get("step")
        if isinstance(step, int) and not isinstance(step, bool):
            numbers = {
                k: float(v)
                for k, v in record.items()
                if isinstance(v, int | float) and not isinstance(v, bool)
            }
            steps[step] = {**steps.get(step, {}), **numbers}
    return steps


def rows(runs: Runs) -> list[dict]:
    """The table's rows: one per metric, the first carrying the study's verdict."""
    s, out = runs.study, []
    for index, metric in enumerate(s.metrics):
        per_arm = {
            a.name: Interval.of([runs.value(a.name, seed, metric.key) for seed in runs.seeds]) for a in s.arms
        }
        vs_grpo, vs_ablation = runs.paired(metric.key, "grpo"), runs.paired(metric.key, "ablation")
        fired = [
            (c[1] > 0).any()
            for (arm, _, key), c in runs.curves.items()
            if arm == "method" and key == metric.key
        ]
        engagement = engaged(sum(fired), len(runs.seeds))
        if metric.key in s.engaged:  # did the mechanism (or its regime) fire, not how it compares
            verdicts = (engagement, engagement)
        elif vs_grpo.n == 0 and vs_ablation.n:  # GRPO does not have it: the ablation is the control
            against = verdict(vs_ablation, metric.better)
            verdicts = (f"{against} (against the ablation)", against)
        else:
            verdicts = (verdict(vs_grpo, metric.better), verdict(vs_ablation, metric.better))
        out.append(
            {
                "metric": metric.label,
                "key": metric.key,
                "better": "higher" if metric.better > 0 else "lower",
                **{arm: iv for arm, iv in per_arm.items()},
                "method_minus_grpo": vs_grpo,
                "method_minus_ablation": vs_ablation,
                "verdict": verdicts[0],
                "verdict_vs_ablation": verdicts[1],
                "primary": index == 0,
            }
        )
    if any(r["key"] in s.engaged and r["verdict"] == "not engaged" for r in out):
        out[0]["verdict"] = out[0]["verdict_vs_ablation"] = "not engaged"  # nothing for it to compare
    return out


def accuracy(runs: Runs) -> dict:
    """Held-out accuracy per arm, the paired difference with GRPO, and what a constant would score."""
    s, seeds = runs.study, runs.seeds
    value = {(a, seed): runs.summaries[a, seed]["accuracy"] for a, seed in runs.summaries}
    any_summary = next(iter(runs.summaries.values()))
    return {
        "warm_start": any_summary["warm_start_accuracy"],
        "constant_baseline": any_summary["constant_baseline"],
        **{a.name: Interval.of([value.get((a.name, x), math.nan) for x in seeds]) for a in s.arms},
        "method_minus_grpo": Interval.of(
            [value.get(("method", x), math.nan) - value.get(("grpo", x), math.nan) for x in seeds]
        ),
        "mode_answer_share": max(r["mode_answer_share"] for r in runs.summaries.values()),
        "distinct_answers": min(r["distinct_answers"] for r in runs.summaries.values()),
        "collapsed": sorted(f"{a}-seed{x}" for (a, x), r in runs.summaries.items() if r["collapse"]),
    }


def markdown(all_runs: list[Runs]) -> str:
    """The paper-style table: a block of rows per study."""
    head = (
        "| study | metric (better) | method | ablation | GRPO | method − GRPO [95 % CI] (per seed) | "
        "method − ablation [95 % CI] (per seed) | verdict |\n|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for runs in all_runs:
        for row in rows(runs):
            lines.append(
                f"| {runs.study.name if row['primary'] else ''} | {row['metric']} ({row['better']}) | "
                f"{row['method'].text()} | {row['ablation'].text()} | {row['grpo'].text()} | "
                f"{row['method_minus_grpo'].text(per_seed=True)} | "
                f"{row['method_minus_ablation'].text(per_seed=True)} | "
                f"{'**' + row['verdict'] + '**' if row['primary'] else row['verdict']} |"
            )
        acc = accuracy(runs)
        constant = acc["constant_baseline"]  # None: the scorer's golds are not answers (no constant)
        lines.append(
            f"| | held-out accuracy (warm start {acc['warm_start']:.3f}, best constant "
            f"{'-' if constant is None else f'{constant:.3f}'}) | {acc['method'].text()} | "
            f"{acc['ablation'].text()} | "
            f"{acc['grpo'].text()} | {acc['method_minus_grpo'].text(per_seed=True)} | | "
            f"{verdict(acc['method_minus_grpo'], +1)} |"
        )
    return head + "\n".join(lines) + "\n"


def diversity(all_runs: list[Runs]) -> str:
    """Per study: the largest share of one answer and the fewest distinct answers over its runs."""
    lines = [
        "| study | seeds | steps | most common answer's share (max) | distinct answers (min) | collapsed "
        "runs | regress vs GRPO, per seed (method; ablation) |",
        "|---|---|---|---|---|---|---|",
    ]
    for runs in all_runs:
        acc = accuracy(runs)
        lines.append(
            f"| {runs.study.name} | {len(runs.seeds)} | {runs.settings.get('steps')} | "
            f"{acc['mode_answer_share']:.3f} | {acc['distinct_answers']} | "
            f"{', '.join(acc['collapsed']) or 'none'} | {gates(runs)} |"
        )
    return "\n".join(lines) + "\n"


def gates(runs: Runs) -> str:
    """`harness regress`'s verdicts against GRPO, seed by seed."""

    def verdicts(arm: str) -> str:
        found = [
            runs.summaries.get((arm, seed), {}).get("vs_grpo", {}).get("verdict", "-") for seed in runs.seeds
        ]
        return ", ".join(found)

    return f"{verdicts('method')}; {verdicts('ablation')}"


# one style per arm, so that an arm whose curve coincides with another's (the same samples) still shows
ARM_STYLES = ("o-", "s--", "^:")


def figure(runs: Runs):
    """Per-step curves of each metric, one line per arm (mean over seeds) with a band (min to max)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = runs.study.metrics
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.2), squeeze=False)
    for ax, metric in zip(axes[0], metrics, strict=True):
        for index, (arm, style) in enumerate(zip(runs.study.arms, itertools.cycle(ARM_STYLES), strict=False)):
            series = [runs.curves.get((arm.name, seed, metric.key)) for seed in runs.seeds]
            series = [c for c in series if c is not None and len(c[0])]
            if not series:
                continue
            steps = sorted(set().union(*(set(c[0].tolist()) for c in series)))
            table = np.full((len(series), len(steps)), np.nan)
            for i, (x, y) in enumerate(series):
                for step, v in zip(x.tolist(), y.tolist(), strict=True):
                    table[i, steps.index(step)] = v
            mean = np.nanmean(table, axis=0)
            color = f"C{index}"  # an arm's colour on every panel, whichever arms a panel lacks
            ax.plot(steps, mean, style, label=arm.label, color=color)
            ax.fill_between(steps, np.nanmin(table, axis=0), np.nanmax(table, axis=0), alpha=0.2, color=color)
        ax.set_title(metric.label, fontsize=9)
        ax.set_xlabel("step")
    # one legend naming every arm drawn on any panel (GRPO logs no proposer metric, so not the first)
    drawn = {
        label: line for ax in axes[0] for line, label in zip(*ax.get_legend_handles_labels(), strict=True)
    }
    axes[0][0].legend(list(drawn.values()), list(drawn), fontsize=7)
    fig.suptitle(f"{runs.study.name}: mean over {len(runs.seeds)} seeds, band min-max", fontsize=10)
    fig.tight_layout()
    return fig
