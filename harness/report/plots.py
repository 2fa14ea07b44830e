"""Figures from run directories: pass@k curves, accuracy against length, truncation, checkpoints (with
the share of samples giving the most common answer, where a collapse shows).

Each public function writes `<out>.png` and `<out>.pdf` and returns their paths; the matching
`*_figure` function builds the Figure on an Agg canvas (no pyplot, no display) for other callers
and tests. Runs are labelled with their directory names; y values are percentages.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from math import ceil
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator, PercentFormatter

from harness import HarnessError
from harness.core.io.write import OutDir
from harness.core.metrics import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from harness.report.plotdata import (
    accuracy_by_length,
    expand_training_runs,
    generations_by_benchmark,
    load_scored,
    metric_value,
    pass_at_k_curve,
    pick_benchmarks,
    recorded_curve,
    run_labels,
    training_series,
    trajectory_points,
    truncation_counts,
)

RunPaths = Sequence[str | Path]
CI_NOTE = f"95% CI: percentile bootstrap over items ({BOOTSTRAP_RESAMPLES} resamples, seed {BOOTSTRAP_SEED})"


def pass_at_k_curves(run_dirs: RunPaths, out: str | Path, benchmark: str | None = None) -> list[Path]:
    """pass@k against k per run, one panel per benchmark."""
    return save(pass_at_k_figure(run_dirs, benchmark), out)


def accuracy_vs_length(
    run_dirs: RunPaths, out: str | Path, benchmark: str | None = None, bins: int = 10
) -> list[Path]:
    """Accuracy per completion-length quantile bin per run, one panel per benchmark."""
    return save(accuracy_vs_length_figure(run_dirs, benchmark, bins), out)


def truncation_rates(run_dirs: RunPaths, out: str | Path) -> list[Path]:
    """Truncated share of samples per benchmark (groups) and run (bars)."""
    return save(truncation_figure(run_dirs), out)


def trajectory(
    run_dirs: RunPaths, out: str | Path, metric: str = "avg", steps: Sequence[int] | None = None
) -> list[Path]:
    """A metric over training checkpoints, one line per benchmark; a `harness train` folder stands for
    its evaluations (OUT/evals/step-N)."""
    return save(trajectory_figure(expand_training_runs(run_dirs), metric, steps), out)


def training_metrics(run_dirs: RunPaths, out: str | Path, keys: Sequence[str]) -> list[Path]:
    """Logged training metrics (metrics.jsonl) against the step, one panel per key, one line per run."""
    return save(training_figure(run_dirs, keys), out)


def save(fig: Figure, out: str | Path) -> list[Path]:
    """Write `<out>.png` and `<out>.pdf` (a .png/.pdf suffix on `out` is dropped)."""
    stem = Path(out)
    if stem.suffix in (".png", ".pdf"):
        stem = stem.with_suffix("")
    png, pdf = stem.with_name(stem.name + ".png"), stem.with_name(stem.name + ".pdf")
    with OutDir.open(stem.parent) as folder:  # the one writer: a link at either name is replaced
        for path, options in ((png, {"dpi": 150}), (pdf, {"metadata": {"CreationDate": None}})):
            image = io.BytesIO()  # the PDF without a timestamp: same runs, same bytes
            fig.savefig(image, format=path.suffix[1:], **options)
            folder.write(path.name, image.getvalue())
    return [png, pdf]


def pass_at_k_figure(run_dirs: RunPaths, benchmark: str | None = None) -> Figure:
    labels, benchmarks, runs = load_scored([Path(p) for p in run_dirs], benchmark)
    fig, axes = _panels(len(benchmarks), f"Unbiased pass@k per run\n{CI_NOTE}")
    for ax, name in zip(axes, benchmarks, strict=True):
        ks: set[int] = set()
        for i, (label, run) in enumerate(zip(labels, runs, strict=True)):
            if name in run:
                curve = pass_at_k_curve(run[name])
                ax.plot(curve.x, curve.y, marker="o", color=f"C{i}", label=label)
                ax.fill_between(curve.x, curve.low, curve.high, color=f"C{i}", alpha=0.2, linewidth=0)
                ks.update(curve.x.tolist())
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(ks), labels=[str(k) for k in sorted(ks)])
        ax.xaxis.set_minor_locator(NullLocator())
        _finish(ax, name, "k (samples per item, log scale)", "pass@k (%)", "run")
    return fig


def accuracy_vs_length_figure(run_dirs: RunPaths, benchmark: str | None = None, bins: int = 10) -> Figure:
    if bins < 1:
        raise HarnessError(f"--bins must be at least 1, got {bins}")
    labels, benchmarks, runs = load_scored([Path(p) for p in run_dirs], benchmark)
    title = f"Accuracy against completion length ({bins} length-quantile bins per run)"
    fig, axes = _panels(len(benchmarks), title)
    for ax, name in zip(axes, benchmarks, strict=True):
        for i, (label, run) in enumerate(zip(labels, runs, strict=True)):
            if name in run:
                curve = accuracy_by_length(run[name], bins, f"run {label} ({name})")
                ax.plot(curve.x, curve.y, marker="o", color=f"C{i}", label=label)
        _finish(ax, name, "completion length (tokens, bin mean)", "mean correctness (%)", "run")
    return fig


def truncation_figure(run_dirs: RunPaths) -> Figure:
    labels = run_labels(run_dirs)
    runs = [generations_by_benchmark(Path(p)) for p in run_dirs]
    for label, run in zip(labels, runs, strict=True):
        if not any(run.values()):
            raise HarnessError(f"run {label} has no generations")
    benchmarks = pick_benchmarks(runs, labels, None)
    fig = _figure(max(6.0, 1.1 * len(benchmarks) * len(runs) + 2), 4.2)
    ax = fig.subplots()
    width = 0.8 / len(runs)
    for i, (label, run) in enumerate(zip(labels, runs, strict=True)):
        counts = [truncation_counts(run.get(name, [])) for name in benchmarks]
        heights = [100 * t / n if n else 0.0 for t, n in counts]
        x = np.arange(len(benchmarks)) + (i - (len(runs) - 1) / 2) * width
        bars = ax.bar(x, heights, width, color=f"C{i}", label=label)
        ax.bar_label(bars, labels=[f"{t}/{n}" if n else "n/a" for t, n in counts], fontsize=7, padding=2)
    ax.set_xticks(np.arange(len(benchmarks)), labels=benchmarks)
    ax.margins(y=0.15)
    title = "Truncated completions (finish_reason = length)\nbar labels: truncated / samples"
    _finish(ax, title, "benchmark", "truncated samples (%)", "run")
    return fig


def trajectory_figure(run_dirs: RunPaths, metric: str = "avg", steps: Sequence[int] | None = None) -> Figure:
    """The metric per benchmark over checkpoints (with the constant-answer baseline, dotted, for an
    accuracy), and below it the share of samples that give the most common answer."""
    points = trajectory_points([Path(p) for p in run_dirs], run_labels(run_dirs), steps)
    benchmarks = pick_benchmarks([r for _, _, r in points], [label for _, label, _ in points], None)
    fig = _figure(max(7.5, 0.8 * len(points) + 3), 6.8)
    ax, shares = fig.subplots(2, 1, sharex=True, height_ratios=[2, 1])
    names: set[str] = set()
    for j, name in enumerate(benchmarks):
        rows = [
            (step, *metric_value(results[name], metric, f"run {label} ({name})"))
            for step, label, results in points
            if name in results
        ]
        names.update(row[1] for row in rows)
        xs, ys = [row[0] for row in rows], [row[2] for row in rows]
        ax.plot(xs, ys, marker="o", color=f"C{j}", label=name)
        if metric == "avg":
            lows, highs = zip(*(row[3] for row in rows), strict=True)
            ax.fill_between(xs, lows, highs, color=f"C{j}", alpha=0.2, linewidth=0)
        constant, _ = recorded_curve(points, name, "constant_baseline")
        if len(constant.x) and (metric == "avg" or "@" in metric):
            ax.plot(constant.x, constant.y, ":", color=f"C{j}", label=f"{name}: constant answer")
    shown = names.pop() if len(names) == 1 else "avg@N" if metric == "avg" else metric
    steps_taken = [step for step, _, _ in points]
    ax.set_xticks(steps_taken)
    top = ax.secondary_xaxis("top")
    top.set_xticks(steps_taken, labels=[label for _, label, _ in points], rotation=30, ha="left", fontsize=7)
    top.set_xlabel("run")
    title = f"{shown} over training checkpoints" + (f"\n{CI_NOTE}" if metric == "avg" else "")
    _finish(ax, title, "", f"{shown} (%)", "benchmark")
    _answer_shares(shares, points, benchmarks)
    return fig


def training_figure(run_dirs: RunPaths, keys: Sequence[str]) -> Figure:
    if not keys:
        raise HarnessError("name the metrics to plot, e.g. --keys rewards/responder/mean")
    fig, axes = _panels(len(keys), "Training metrics per step (metrics.jsonl)")
    labels = run_labels(run_dirs)
    for ax, key in zip(axes, keys, strict=True):
        plotted = 0
        for j, (run, label) in enumerate(zip(run_dirs, labels, strict=True)):
            curve = training_series(Path(run), key)
            if len(curve.x):
                ax.plot(curve.x, curve.y, marker="o", markersize=3, color=f"C{j}", label=label)
                plotted += 1
        ax.set(
            title=key if plotted else f"{key}: not logged", xlabel="training step", ylabel=key.split("/")[-1]
        )
        ax.grid(alpha=0.3)
        if plotted:
            ax.legend(title="run", fontsize=8)
    return fig


def _answer_shares(ax: Axes, points: Sequence[tuple[int, str, dict]], benchmarks: Sequence[str]) -> None:
    """Each benchmark's most common answer's share of samples per step: a collapse shows as a climb."""
    unrecorded: set[str] = set()
    for j, name in enumerate(benchmarks):
        curve, missing = recorded_curve(points, name, "mode_answer_share")
        unrecorded.update(missing)
        ax.plot(curve.x, curve.y, marker="o", color=f"C{j}", label=name)
    title = "Samples giving the most common answer"
    if unrecorded:
        title += f"\nnot recorded for {', '.join(sorted(unrecorded))}: `harness score RUN` adds it"
    ax.set_ylim(0, 105)
    _finish(ax, title, "training step (checkpoint)", "share (%)", "benchmark")


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _panels(count: int, title: str) -> tuple[Figure, list[Axes]]:
    """A figure with `count` panels, at most three a row."""
    cols = min(count, 3)
    fig = _figure(4.8 * cols, 3.8 * ceil(count / cols) + 0.4)
    axes = fig.subplots(ceil(count / cols), cols, squeeze=False).ravel().tolist()
    for ax in axes[count:]:
        ax.remove()
    fig.suptitle(title)
    return fig, axes[:count]


def _finish(ax: Axes, title: str, xlabel: str, ylabel: str, legend: str) -> None:
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.yaxis.set_major_formatter(PercentFormatter(100))
    ax.grid(alpha=0.3)
    ax.legend(title=legend, fontsize=8)
