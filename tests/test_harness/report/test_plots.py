"""Plots from hand-built run directories (finalized by harness.stages.score) against hand-computed numbers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import answered_run

from harness import HarnessError
from harness.core.metrics import bootstrap_ci
from harness.core.records import generation_record
from harness.core.store import GENERATIONS, RESULTS, RunDir
from harness.report import plots
from harness.report.plotdata import checkpoint_step, pass_at_k_curve, run_labels, scored_pairs
from harness.stages.score import finalize

# benchmark -> item -> per-sample (value, completion_tokens, finish_reason)
Samples = dict[str, dict[str, list[tuple[float, int | None, str | None]]]]


def _math(correct: list[int], truncated_from: int) -> dict:
    """Four items of four samples; item i has correct[i] right answers; tokens 10, 20, ... in order."""
    items, t = {}, 0
    for i, c in enumerate(correct):
        rows = []
        for k in range(4):
            t += 10
            rows.append((1.0 if k < c else 0.0, t, "length" if t >= truncated_from else "stop"))
        items[f"m{i}"] = rows
    return items


RUN_A: Samples = {
    "math": _math([0, 1, 2, 4], truncated_from=150),  # 2 of 16 truncated
    "code": {"c0": [(1.0, 5, "stop"), (0.0, 7, "stop")], "c1": [(1.0, 9, "stop"), (1.0, 11, "stop")]},
}
RUN_B: Samples = {"math": _math([4, 4, 0, 0], truncated_from=130)}  # 4 of 16 truncated


def make_run(path: Path, samples: Samples, model: str = "org/model", score: bool = True) -> Path:
    """A run directory with run.json and generations; scored and finalized unless `score` is False."""
    info = {
        "config": {"benchmarks": list(samples), "model": model, "scorers": dict.fromkeys(samples, "exact")},
        "config_hash": "test",
        "answers": {b: dict.fromkeys(items, "1") for b, items in samples.items()},
    }
    run = RunDir(path)
    run.start(info)
    generations, scores = [], []
    for b, items in samples.items():
        for item_id, rows in items.items():
            for k, (value, tokens, finish) in enumerate(rows):
                generations.append(
                    generation_record(b, item_id, k, "1", completion_tokens=tokens, finish_reason=finish)
                )
                verdict = {"value": value, "extracted": "1", "canonical": "1", "scorer": "v1", "details": {}}
                scores.append({"benchmark": b, "item_id": item_id, "sample_idx": k, **verdict})
    run.append(GENERATIONS, generations)
    if score:
        run.append("scores.jsonl", scores)
        finalize(run, info, dict.fromkeys(samples, "v1"))
    return path


@pytest.fixture
def runs(tmp_path) -> tuple[Path, Path]:
    return (
        make_run(tmp_path / "run-a", RUN_A, model="/ckpts/x/checkpoint-200"),
        make_run(tmp_path / "run-b", RUN_B, model="/ckpts/x/checkpoint-100"),
    )


def assert_written(paths: list[Path], stem: Path) -> None:
    assert paths == [stem.with_name(stem.name + ".png"), stem.with_name(stem.name + ".pdf")]
    assert paths[0].read_bytes().startswith(b"\x89PNG") and paths[0].stat().st_size > 1000
    assert paths[1].read_bytes().startswith(b"%PDF") and paths[1].stat().st_size > 1000


def lines(ax) -> dict[str, tuple[list, list]]:
    return {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in ax.get_lines()}


def legend(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


# ---------------------------------------------------------------------------------------------
# pass@k curves
# ---------------------------------------------------------------------------------------------


def test_pass_at_k_curves_plot_unbiased_values_per_run_and_benchmark(runs, tmp_path):
    fig = plots.pass_at_k_figure(runs)
    math, code = fig.axes
    assert (math.get_title(), code.get_title()) == ("math", "code")
    assert legend(math) == ["run-a", "run-b"] and legend(code) == ["run-a"]
    assert math.get_xscale() == "log" and "%" in math.get_ylabel() and "k" in math.get_xlabel()
    got = lines(math)
    assert got["run-a"][0] == [1, 2, 4]
    # items with 0, 1, 2, 4 of 4 right: pass@2 = mean(0, 1 - 3/6, 1 - 1/6, 1)
    assert got["run-a"][1] == pytest.approx([100 * 7 / 16, 100 * (0.5 + 5 / 6 + 1) / 4, 75.0])
    assert got["run-b"][1] == pytest.approx([50.0, 50.0, 50.0])
    assert lines(code)["run-a"] == ([1, 2], pytest.approx([75.0, 100.0]))
    for path, run_results in zip(runs, (RUN_A, RUN_B), strict=True):  # the same numbers as results.json
        results = json.loads((path / RESULTS).read_text())
        for b in run_results:
            curve = pass_at_k_curve(scored_pairs(path)[b])
            assert curve.y == pytest.approx([100 * results[b][f"pass@{k}"] for k in curve.x])
    assert_written(plots.pass_at_k_curves(runs, tmp_path / "figs" / "passk"), tmp_path / "figs" / "passk")


def test_pass_at_k_band_is_the_item_bootstrap_of_per_item_pass_at_k(runs):
    curve = pass_at_k_curve(scored_pairs(runs[0])["math"])
    low, high = bootstrap_ci(np.array([0.0, 0.25, 0.5, 1.0]))
    assert (curve.low[0], curve.high[0]) == pytest.approx((100 * low, 100 * high))
    assert np.all(curve.low <= curve.y) and np.all(curve.y <= curve.high)
    fig = plots.pass_at_k_figure(runs, benchmark="math")
    assert len(fig.axes) == 1 and len(fig.axes[0].collections) == 2  # one band per run


# ---------------------------------------------------------------------------------------------
# accuracy against length
# ---------------------------------------------------------------------------------------------


def test_accuracy_vs_length_bins_by_length_quantiles(runs, tmp_path):
    fig = plots.accuracy_vs_length_figure(runs, benchmark="math", bins=2)
    (ax,) = fig.axes
    assert legend(ax) == ["run-a", "run-b"] and "tokens" in ax.get_xlabel() and "%" in ax.get_ylabel()
    # lengths 10..160: the shorter half holds items m0, m1; the longer half m2, m3
    xs, ys = lines(ax)["run-a"]
    assert xs == pytest.approx([45.0, 125.0]) and ys == pytest.approx([100 * 1 / 8, 100 * 6 / 8])
    assert lines(ax)["run-b"][1] == pytest.approx([100.0, 0.0])
    assert len(lines(plots.accuracy_vs_length_figure(runs, bins=4).axes[0])["run-a"][0]) == 4
    assert_written(plots.accuracy_vs_length(runs, tmp_path / "len.png", bins=3), tmp_path / "len")


def test_accuracy_vs_length_needs_token_counts_and_bins(runs, tmp_path):
    with pytest.raises(HarnessError, match="bins"):
        plots.accuracy_vs_length_figure(runs, bins=0)
    blind = make_run(tmp_path / "blind", {"math": {"m0": [(1.0, None, None)]}})
    with pytest.raises(HarnessError, match="completion_tokens"):
        plots.accuracy_vs_length_figure([blind])


# ---------------------------------------------------------------------------------------------
# truncation
# ---------------------------------------------------------------------------------------------


def test_truncation_rates_are_grouped_bars_with_counts(runs, tmp_path):
    fig = plots.truncation_figure(runs)
    (ax,) = fig.axes
    assert legend(ax) == ["run-a", "run-b"] and "%" in ax.get_ylabel()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["math", "code"]
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([12.5, 0.0, 25.0, 0.0])  # run-b has no code: "n/a"
    labels = [t.get_text() for t in ax.texts]
    assert labels == ["2/16", "0/4", "4/16", "n/a"]
    assert_written(plots.truncation_rates(runs, tmp_path / "trunc"), tmp_path / "trunc")


def test_truncation_needs_generations(tmp_path):
    empty = make_run(tmp_path / "empty", {"math": {}}, score=False)
    with pytest.raises(HarnessError, match="no generations"):
        plots.truncation_figure([empty])


# ---------------------------------------------------------------------------------------------
# trajectory over checkpoints
# ---------------------------------------------------------------------------------------------


def test_trajectory_orders_runs_by_checkpoint_step(runs, tmp_path):
    fig = plots.trajectory_figure(runs)
    ax, shares = fig.axes
    assert legend(ax) == ["math", "code"] and ax.get_ylabel() == "avg@N (%)" and "step" in shares.get_xlabel()
    assert lines(ax)["math"] == ([100, 200], pytest.approx([50.0, 100 * 7 / 16]))
    assert lines(ax)["code"] == ([200], pytest.approx([75.0]))
    assert len(ax.collections) == 2  # ci95 bands
    (top,) = ax.child_axes
    assert [t.get_text() for t in top.get_xticklabels()] == ["run-b", "run-a"]
    assert lines(shares) == {"math": ([100, 200], [100.0, 100.0]), "code": ([200], [100.0])}  # all answer "1"
    named = plots.trajectory_figure(runs, metric="pass@2", steps=[5, 1]).axes[0]
    assert lines(named)["math"] == ([1, 5], pytest.approx([50.0, 100 * (0.5 + 5 / 6 + 1) / 4]))
    assert named.get_ylabel() == "pass@2 (%)" and not named.collections
    assert_written(plots.trajectory(runs, tmp_path / "traj"), tmp_path / "traj")


def test_trajectory_shows_answers_collapsing_onto_one_and_the_constant_answer_baseline(tmp_path):
    golds = ["5", "5", "3", "4", "6", "7", "8", "9"]  # answering 5 everywhere: 25%
    steps = [  # 3 of 8 right, its answers 1, 2 and 3 twice each; then 5 on 6 of 8 items; then 5 on all
        answered_run(tmp_path / "step-0", ["1", "2", "3", "4", "6", "1", "2", "3"], golds),
        answered_run(tmp_path / "step-10", ["5", "5", "5", "5", "6", "7", "5", "5"], golds),
        answered_run(tmp_path / "step-20", ["5"] * 8, golds),
    ]
    ax, shares = plots.trajectory_figure(steps).axes
    assert lines(shares)["sums"] == ([0, 10, 20], pytest.approx([25.0, 75.0, 100.0]))
    assert lines(ax)["sums: constant answer"] == ([0, 10, 20], pytest.approx([25.0] * 3))
    assert lines(ax)["sums"] == ([0, 10, 20], pytest.approx([37.5, 50.0, 25.0]))
    assert shares.get_title() == "Samples giving the most common answer"

    old = json.loads((steps[0] / RESULTS).read_text())  # a run scored before answer spreads were recorded
    for key in ("distinct_answers", "mode_answer", "mode_answer_share", "constant_baseline"):
        del old["sums"][key]
    (steps[0] / RESULTS).write_text(json.dumps(old))
    ax, shares = plots.trajectory_figure(steps).axes
    assert lines(shares)["sums"] == ([10, 20], pytest.approx([75.0, 100.0]))
    assert lines(ax)["sums: constant answer"][0] == [10, 20] and lines(ax)["sums"][0] == [0, 10, 20]
    assert shares.get_title().splitlines()[1] == "not recorded for step-0: `harness score RUN` adds it"
    assert "sums: constant answer" not in lines(plots.trajectory_figure(steps, "unextracted_rate").axes[0])


@pytest.mark.parametrize(
    ("model", "step"),
    [
        ("/ckpts/run/checkpoint-200", 200),
        ("out/global_step_1500/actor", 1500),
        ("org/model-step1000", 1000),
        ("org/Qwen3-8B", None),
        (None, None),
    ],
)
def test_checkpoint_step(model, step):
    assert checkpoint_step(model) == step


def test_trajectory_errors(runs, tmp_path):
    with pytest.raises(HarnessError, match="no checkpoint step"):
        plots.trajectory_figure([make_run(tmp_path / "plain", RUN_B)])
    with pytest.raises(HarnessError, match="2 steps given for 1 runs"):
        plots.trajectory_figure(runs[:1], steps=[1, 2])
    with pytest.raises(HarnessError, match="share a checkpoint step"):
        plots.trajectory_figure(runs, steps=[3, 3])
    with pytest.raises(HarnessError, match=r"run-b \(math\) has no pass@8 \(it has: avg@4, pass@1"):
        plots.trajectory_figure(runs, metric="pass@8")


# ---------------------------------------------------------------------------------------------
# unusable input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda out: plots.pass_at_k_curves([], out),
        lambda out: plots.accuracy_vs_length([], out),
        lambda out: plots.truncation_rates([], out),
        lambda out: plots.trajectory([], out),
    ],
)
def test_no_runs(call, tmp_path):
    with pytest.raises(HarnessError, match="no run directories"):
        call(tmp_path / "plot")
    assert not list(tmp_path.iterdir())


def test_benchmark_missing_from_a_run(runs, tmp_path):
    for call in (plots.pass_at_k_curves, plots.accuracy_vs_length):
        with pytest.raises(HarnessError, match="run run-b has no benchmark 'code' \\(it has: math\\)"):
            call(runs, tmp_path / "plot", benchmark="code")


def test_unscored_runs(runs, tmp_path):
    unscored = make_run(tmp_path / "unscored", RUN_B, model="checkpoint-300", score=False)
    for call in (plots.pass_at_k_curves, plots.accuracy_vs_length, plots.trajectory):
        with pytest.raises(HarnessError, match="is not scored"):
            call([runs[0], unscored], tmp_path / "plot")
    RunDir(runs[1]).append(GENERATIONS, [generation_record("math", "m0", 4, "1")])  # a fifth, unscored sample
    with pytest.raises(HarnessError, match="'math': 1 of its 17 samples are not scored"):
        plots.pass_at_k_figure(runs)
    with pytest.raises(HarnessError, match="not found"):
        plots.pass_at_k_figure([tmp_path / "nowhere"])


def test_run_labels_are_directory_names_or_paths_when_names_collide(tmp_path):
    assert run_labels([tmp_path / "a", tmp_path / "b"]) == ["a", "b"]
    same = [tmp_path / "x" / "run", tmp_path / "y" / "run"]
    assert run_labels(same) == [str(p) for p in same]


def test_training_metrics_plot_each_key_per_step_and_run(tmp_path):
    runs = []
    for name, scale in (("a", 1.0), ("b", 2.0)):
        out = tmp_path / name
        out.mkdir()
        lines = [{"step": s, "loss": 0.1 * s, "rewards/x/mean": scale * s} for s in (1, 2, 3)]
        lines.insert(1, {"step": 1, "eval_only": 5.0})  # a line without the key is skipped
        lines.append({"step": 3, "rewards/x/mean": 9.0})  # after a resume the step's last line counts
        (out / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        runs.append(out)
    fig = plots.training_figure(runs, ["rewards/x/mean", "missing"])
    shown, missing = fig.axes[:2]
    assert shown.get_title() == "rewards/x/mean" and missing.get_title() == "missing: not logged"
    (a, b) = shown.get_lines()
    assert a.get_label() == "a" and list(a.get_xdata()) == [1, 2, 3] and list(a.get_ydata()) == [1, 2, 9]
    assert list(b.get_ydata()) == [2, 4, 9]
    paths = plots.training_metrics(runs, tmp_path / "plot", ["loss"])
    assert [p.suffix for p in paths] == [".png", ".pdf"] and all(p.stat().st_size > 0 for p in paths)
    with pytest.raises(HarnessError, match="metrics.jsonl is missing"):
        plots.training_figure([tmp_path], ["loss"])
    with pytest.raises(HarnessError, match="name the metrics"):
        plots.training_figure(runs, [])
