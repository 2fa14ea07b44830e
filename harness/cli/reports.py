"""`harness table`, `plot`, `analyze`, `regress`, `compare`, `export` and `list`: reading runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness import HarnessError
from harness.cli.app import GateCommand, app


@app.command("table")
def table_command(
    run_dirs: Annotated[list[Path] | None, typer.Argument(help="Run directories, one row each.")] = None,
    format: Annotated[str, typer.Option("--format", help="md, csv or latex.")] = "md",
    metric: Annotated[
        str, typer.Option(help="avg (avg@N ± CI) or a metric such as pass@4, maj@16 or mode_answer_share.")
    ] = "avg",
    layout: Annotated[
        str | None, typer.Option(help="A paper's main table: spell, azr, arena, ulorl or spae.")
    ] = None,
    with_paper: Annotated[bool, typer.Option(help="With --layout: the paper's own rows too.")] = False,
    base: Annotated[
        Path | None, typer.Option(help="With --layout: show each cell's Δ against this run.")
    ] = None,
) -> None:
    """One row per run (per model with --layout), one column per benchmark (the paper's with --layout)."""
    run_dirs = run_dirs or []
    if layout is not None:
        from harness.report.paper_table import render as render_layout

        typer.echo(render_layout(layout, run_dirs, format, with_paper=with_paper, base=base), nl=False)
        return
    if with_paper or base is not None:
        raise HarnessError("--with-paper and --base go with --layout")
    if not run_dirs:
        raise HarnessError("pass run directories")
    from harness.report.table import render

    typer.echo(render(run_dirs, format, metric), nl=False)


PLOTS = ("pass-at-k", "length", "truncation", "trajectory", "training")


@app.command("plot")
def plot_command(
    kind: Annotated[str, typer.Argument(help="pass-at-k, length, truncation, trajectory or training.")],
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories (checkpoints, for trajectory).")],
    out: Annotated[Path, typer.Option(help="Output path without suffix: writes OUT.png and OUT.pdf.")],
    benchmark: Annotated[str | None, typer.Option(help="Only this benchmark (pass-at-k, length).")] = None,
    bins: Annotated[int, typer.Option(help="Length bins (quantiles).")] = 10,
    metric: Annotated[str, typer.Option(help="trajectory: avg (with its CI) or e.g. pass@4.")] = "avg",
    steps: Annotated[
        str | None, typer.Option(help="trajectory: comma-separated steps [default: from checkpoint-N].")
    ] = None,
    keys: Annotated[
        str | None, typer.Option(help="training: comma-separated metrics.jsonl keys, one panel each.")
    ] = None,
) -> None:
    """Plots from runs: pass@k curves with CIs, accuracy against length, truncation, trajectories, and
    a `harness train` folder's logged metrics per step."""
    from harness.report import plots

    if kind not in PLOTS:
        raise HarnessError(f"unknown plot {kind!r}; choose {', '.join(PLOTS)}")
    if kind == "pass-at-k":
        paths = plots.pass_at_k_curves(run_dirs, out, benchmark)
    elif kind == "length":
        paths = plots.accuracy_vs_length(run_dirs, out, benchmark, bins)
    elif kind == "truncation":
        paths = plots.truncation_rates(run_dirs, out)
    elif kind == "training":
        paths = plots.training_metrics(run_dirs, out, [k for k in (keys or "").split(",") if k])
    else:
        paths = plots.trajectory(run_dirs, out, metric, _steps(steps) if steps else None)
    for path in paths:
        typer.echo(str(path))


def _steps(text: str) -> list[int]:
    try:
        return [int(s) for s in text.split(",")]
    except ValueError:
        raise HarnessError(f"--steps must be comma-separated whole numbers, got {text!r}") from None


@app.command("analyze")
def analyze_command(
    run_dir: Annotated[Path, typer.Argument(help="A scored run directory.")],
    solve_check: Annotated[
        bool, typer.Option(help="SPAE's solve/check tokens and Right-to-Wrong rate.")
    ] = False,
    mode: Annotated[
        str, typer.Option(help="probe (the paper's: token probabilities) or mention (a labelled proxy).")
    ] = "probe",
    model: Annotated[str | None, typer.Option(help="Model to probe [default: the run's].")] = None,
    backend: Annotated[str, typer.Option(help="Probe backend: hf, or vllm (prefix caching).")] = "hf",
    entropy_mode: Annotated[
        str, typer.Option(help="Conf's entropy: full (exact), or topk=K from vLLM's top-K logprobs.")
    ] = "full",
    batch_size: Annotated[int, typer.Option(help="Probe prompts per forward pass.")] = 8,
    dtype: Annotated[str, typer.Option(help="Weights dtype for the probe.")] = "auto",
    data_dir: Annotated[Path | None, typer.Option(help="Benchmark data [default: the run's].")] = None,
) -> None:
    """Analyses of a run: --solve-check writes RUN_DIR/analysis/solve_check.jsonl and .json."""
    import json

    from harness.analysis.solve_check import analyze_solve_check

    if not solve_check:
        raise HarnessError("choose an analysis: --solve-check")
    summary = analyze_solve_check(
        run_dir,
        mode=mode,
        model=model,
        backend=backend,
        batch_size=batch_size,
        dtype=dtype,
        data_dir=data_dir,
    )
    typer.echo(json.dumps(summary, indent=2))


@app.command("regress", cls=GateCommand)
def regress_command(
    base_dir: Annotated[Path, typer.Argument(help="The baseline run.")],
    candidate_dir: Annotated[Path, typer.Argument(help="The candidate run.")],
    alpha: Annotated[float, typer.Option(help="Significance level after Holm's correction.")] = 0.05,
    min_effect: Annotated[
        float, typer.Option(help="Smallest drop that counts, as a fraction (0.02 = 2 points).")
    ] = 0.0,
    allow_drift: Annotated[
        bool, typer.Option(help="Compare even when the harness (data, prompt, scorer...) changed.")
    ] = False,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the report as JSON.")] = None,
) -> None:
    """Gate CAND on BASE. Exit codes: 0 no significant regression, 1 regression, 2 not comparable (the runs
    share nothing, or the harness drifted), 3 a usage error (a bad option, a path that is not a run, a
    damaged or mismatched run file: NaN or out-of-range scores, another run's run.json), 5 a crash, 4 answer
    collapse: on a benchmark that did not regress, the candidate's most common answer takes at
    least 50% of its samples and at least 25 points more than the base's most common answer and than the
    most common gold answer's share of items (math, numeric, integer, choice), whatever its gain."""
    if not 0 <= min_effect < 1:
        raise HarnessError(f"--min-effect must be at least 0 and less than 1, got {min_effect}")
    code = _compare(base_dir, candidate_dir, alpha, min_effect, allow_drift, json_out)
    raise typer.Exit(code)


@app.command("compare")
def compare_command(
    run_dirs: Annotated[list[Path], typer.Argument(help="Runs; each after the first is compared with it.")],
    alpha: Annotated[float, typer.Option(help="Significance level after Holm's correction.")] = 0.05,
) -> None:
    """The regression table of each run against the first, without gating."""
    if len(run_dirs) < 2:
        raise HarnessError("compare needs at least two run directories")
    for candidate in run_dirs[1:]:
        _compare(run_dirs[0], candidate, alpha, 0.0, True, None)


def _compare(base, candidate, alpha, min_effect, allow_drift, json_out) -> int:
    import json

    from harness.report.regress import as_json, compare_runs, render

    if not 0 < alpha < 1:
        raise HarnessError(f"--alpha must be greater than 0 and less than 1, got {alpha}")

    code, comparisons, messages = compare_runs(
        base, candidate, alpha=alpha, min_effect=min_effect, allow_drift=allow_drift
    )
    if comparisons:
        typer.echo(render(comparisons, str(base), str(candidate)))
    for message in messages:
        typer.echo(message)
    if json_out is not None:
        json_out.write_text(json.dumps(as_json(code, comparisons, messages), indent=2) + "\n")
    return code


@app.command("export")
def export_command(
    run_dir: Annotated[Path, typer.Argument(help="A scored run directory.")],
    format: Annotated[str, typer.Option("--format", help="lm-eval: its results and samples files.")],
    out: Annotated[Path | None, typer.Option(help="Folder to write [default: RUN_DIR/lm-eval].")] = None,
    lm_eval_include_path: Annotated[
        Path | None, typer.Option(help="The lm-eval task folder run.json names, if you trust its code.")
    ] = None,
) -> None:
    """Write a run in another tool's file format."""
    from harness.report.export import export_lm_eval

    if format != "lm-eval":
        raise HarnessError(f"unknown export format {format!r}; available: lm-eval")
    for path in export_lm_eval(run_dir, out, lm_eval_include_path):
        typer.echo(str(path))


@app.command("list")
def list_command() -> None:
    """The registered benchmarks and presets."""
    from benchmarks import BENCHMARKS
    from harness.papers import presets

    for b in BENCHMARKS.values():
        s = b.sampling
        source = f"{b.hub.repo}@{b.hub.revision[:7]}" if b.hub else "local"
        typer.echo(f"{b.name:15} {b.description}  [{source}; scorer {b.scorer}; n={s.n}, T={s.temperature}]")
    typer.echo("\npresets (--preset NAME):")
    for name, p in presets().items():
        typer.echo(f"{name:21} {p.description}\n{'':21} benchmarks: {', '.join(p.benchmarks)}")
