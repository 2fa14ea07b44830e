"""The numbers behind the plots, read from run directories (no matplotlib here).

Samples are counted as `finalize` counts them for results.json (upstream_compat filtering included),
so a plotted pass@k at a power of two equals the run's results.json value.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness import HarnessError
from harness.core.io.read import RECORDS_BYTES, Missing, Unfit, json_lines, read_bytes
from harness.core.metrics import bootstrap_ci, k_values, pass_at_k
from harness.core.store import GENERATIONS, RESULTS, RUN, SCORES, RunDir, record_key
from harness.stages.score import upstream_samples

Pair = tuple[dict, dict]  # a generation record and its score record

_STEP = re.compile(r"(?:checkpoint|ckpt|step|iter)[-_]?(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class Curve:
    """y (and an optional 95% band) against x, in the units the plot shows."""

    x: np.ndarray
    y: np.ndarray
    low: np.ndarray | None = None
    high: np.ndarray | None = None


def run_labels(run_dirs: Sequence[str | Path]) -> list[str]:
    """Each run's directory name; the paths as given when two names collide."""
    if not run_dirs:
        raise HarnessError("no run directories given")
    names = [Path(p).resolve().name for p in run_dirs]
    return names if len(set(names)) == len(names) else [str(p) for p in run_dirs]


def pick_benchmarks(
    runs: Sequence[Collection[str]], labels: Sequence[str], benchmark: str | None
) -> list[str]:
    """`benchmark`, which every run must have; else every benchmark of any run, in first-seen order."""
    if benchmark is None:
        found = list(dict.fromkeys(b for run in runs for b in run))
        if not found:
            raise HarnessError(f"no benchmarks in runs {', '.join(labels)}")
        return found
    for run, label in zip(runs, labels, strict=True):
        if benchmark not in run:
            raise HarnessError(
                f"run {label} has no benchmark {benchmark!r} (it has: {', '.join(run) or 'none'})"
            )
    return [benchmark]


def generations_by_benchmark(path: Path) -> dict[str, list[dict]]:
    """Each benchmark's generation records (first per sample), in run.json's benchmark order."""
    run = RunDir(path)
    info = run.read_json(RUN)
    grouped: dict[str, dict[tuple, dict]] = {b: {} for b in info["config"]["benchmarks"]}
    for g in run.records(GENERATIONS):
        grouped.setdefault(g["benchmark"], {}).setdefault(record_key(g), g)
    return {b: list(records.values()) for b, records in grouped.items()}


def load_scored(
    run_dirs: Sequence[Path], benchmark: str | None
) -> tuple[list[str], list[str], list[dict[str, list[Pair]]]]:
    """Run labels, the benchmarks to plot (see pick_benchmarks) and each run's scored pairs of them."""
    labels = run_labels(run_dirs)
    declared = [RunDir(p).read_json(RUN)["config"]["benchmarks"] for p in run_dirs]
    chosen = pick_benchmarks(declared, labels, benchmark)
    return labels, chosen, [scored_pairs(p, chosen) for p in run_dirs]


def scored_pairs(path: Path, benchmarks: Collection[str] | None = None) -> dict[str, list[Pair]]:
    """Each benchmark's (generation, score) pairs (of `benchmarks` only, when given);
    HarnessError unless every such sample is scored."""
    run = RunDir(path)
    generations = generations_by_benchmark(path)
    hint = f"run `harness score {path}` first"
    if not run.file(RESULTS).is_file():
        raise HarnessError(f"{path} is not scored (no {RESULTS}); {hint}")
    scores = {record_key(s): s for s in run.records(SCORES)}
    upstream = run.read_json(RUN)["config"].get("upstream_compat")
    pairs = {}
    for benchmark, gens in generations.items():
        if benchmarks is not None and benchmark not in benchmarks:
            continue
        missing = sum(record_key(g) not in scores for g in gens)
        if missing or not gens:
            what = f"{missing} of its {len(gens)} samples are not scored" if gens else "no samples"
            raise HarnessError(f"{path}: benchmark {benchmark!r}: {what}; {hint}")
        kept = [(g, scores[record_key(g)]) for g in gens]
        pairs[benchmark] = upstream_samples(kept) if upstream else kept
    return pairs


def pass_at_k_curve(pairs: Sequence[Pair]) -> Curve:
    """Unbiased pass@k (%) at k = 1, 2, 4, ..., n (n: the smallest per-item sample count) with
    a percentile-bootstrap 95% band over items."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for _, s in pairs:
        n_c = counts[s["item_id"]]
        n_c[0] += 1
        n_c[1] += s["value"] >= 1.0
    ks = k_values(min(n for n, _ in counts.values()))
    y, low, high = [], [], []
    for k in ks:
        per_item = np.array([pass_at_k(n, c, k) for n, c in counts.values()])
        y.append(per_item.mean())
        lo, hi = bootstrap_ci(per_item)
        low.append(lo)
        high.append(hi)
    return Curve(np.array(ks), 100 * np.array(y), 100 * np.array(low), 100 * np.array(high))


def accuracy_by_length(pairs: Sequence[Pair], bins: int, where: str) -> Curve:
    """Mean correctness (%) per completion-length quantile bin, at each bin's mean length (tokens).
    Equal quantiles (many equal lengths) merge their bins."""
    known = [(g["completion_tokens"], s["value"]) for g, s in pairs if g["completion_tokens"] is not None]
    if not known:
        raise HarnessError(f"{where} has no completion_tokens in {GENERATIONS}")
    lengths, values = np.array(known, dtype=float).T
    edges = np.unique(np.quantile(lengths, np.linspace(0, 1, bins + 1)))
    which = np.searchsorted(edges[1:-1], lengths, side="right")
    used = np.unique(which)
    x = np.array([lengths[which == b].mean() for b in used])
    return Curve(x, np.array([100 * values[which == b].mean() for b in used]))


def truncation_counts(generations: Sequence[dict]) -> tuple[int, int]:
    """(truncated, samples whose finish reason is known)."""
    known = [g["truncated"] for g in generations if g["truncated"] is not None]
    return sum(known), len(known)


def checkpoint_step(model: str | None) -> int | None:
    """The training step in a model path: ".../checkpoint-200" -> 200 (also ckpt, step, iter)."""
    found = _STEP.findall(model or "")
    return int(found[-1]) if found else None


def expand_training_runs(run_dirs: Sequence[Path]) -> list[Path]:
    """A `harness train` folder stands for its evaluations OUT/evals/step-N, in step order."""
    out = []
    for path in map(Path, run_dirs):
        evals = sorted((path / "evals").glob("step-*"), key=lambda p: checkpoint_step(p.name) or 0)
        out += evals if evals else [path]
    return out


def trajectory_points(
    run_dirs: Sequence[Path], labels: Sequence[str], steps: Sequence[int] | None
) -> list[tuple[int, str, dict]]:
    """(step, label, results.json) per run, sorted by step: the given steps, else the step in the run's
    model path (checkpoint-N), else the one in the run folder's name (step-N)."""
    if steps is not None and len(steps) != len(run_dirs):
        raise HarnessError(f"{len(steps)} steps given for {len(run_dirs)} runs")
    points = []
    for i, (path, label) in enumerate(zip(run_dirs, labels, strict=True)):
        run = RunDir(path)
        model = run.read_json(RUN)["config"].get("model")
        step = steps[i] if steps is not None else checkpoint_step(model)
        if step is None:  # `harness train --eval-every` names its evaluations OUT/evals/step-N
            step = checkpoint_step(Path(path).name)
        if step is None:
            raise HarnessError(f"no checkpoint step in run {label}'s model {model!r}; give the steps")
        if not run.file(RESULTS).is_file():
            raise HarnessError(f"{path} is not scored (no {RESULTS}); run `harness score {path}` first")
        points.append((step, label, run.read_json(RESULTS)))
    taken = [step for step, _, _ in points]
    if len(set(taken)) != len(taken):
        raise HarnessError(f"two runs share a checkpoint step ({sorted(taken)}); give distinct steps")
    return sorted(points, key=lambda p: p[0])


def recorded_curve(
    points: Sequence[tuple[int, str, dict]], benchmark: str, key: str
) -> tuple[Curve, list[str]]:
    """`key` of `benchmark` (%) against step where results.json records it, and the labels of the runs
    with the benchmark but without `key` (scored before it was recorded: `harness score RUN` adds it)."""
    found = [
        (step, label, results[benchmark].get(key)) for step, label, results in points if benchmark in results
    ]
    kept = [(step, 100 * value) for step, _, value in found if value is not None]
    curve = Curve(np.array([x for x, _ in kept]), np.array([y for _, y in kept]))
    return curve, [label for _, label, value in found if value is None]


def metric_value(metrics: dict, metric: str, where: str) -> tuple[str, float, tuple[float, float] | None]:
    """(name, value %, 95% CI % or None) of "avg" (avg@N with its CI) or a named metric."""
    if not metrics.get("n_items"):
        raise HarnessError(f"{where} has no scored samples")
    if metric == "avg":
        name = next(k for k in metrics if k.startswith("avg@"))
        low, high = metrics["ci95"]
        return name, 100 * metrics[name], (100 * low, 100 * high)
    if metric not in metrics:
        have = ", ".join(k for k, v in metrics.items() if "@" in k and isinstance(v, float))
        raise HarnessError(f"{where} has no {metric} (it has: {have})")
    return metric, 100 * metrics[metric], None


def training_series(out_dir: Path, key: str) -> Curve:
    """`key` per logged step of a `harness train` folder's metrics.jsonl (steps that did not log it are
    skipped; after a resume the last line of a step counts)."""
    path = Path(out_dir) / "metrics.jsonl"
    try:
        data = read_bytes(path, limit=RECORDS_BYTES)
    except Missing:
        raise HarnessError(f"{path} is missing: is {out_dir} a `harness train` output folder?") from None
    by_step: dict[int, float] = {}
    for number, record in json_lines(data[: data.rfind(b"\n") + 1]):  # a torn last line: dropped
        if isinstance(record, Unfit) or not isinstance(record, dict):
            raise HarnessError(f"{path}:{number}: not a record of a step ({record})")
        step, value = record.get("step"), record.get(key)
        if isinstance(step, int) and isinstance(value, int | float) and not isinstance(value, bool):
            by_step[step] = float(value)
    steps = sorted(by_step)
    return Curve(np.array(steps, dtype=float), np.array([by_step[s] for s in steps], dtype=float))
