"""`harness eval` and `harness score`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from harness import HarnessError
from harness.backends import EngineConfig
from harness.cli.app import app
from harness.cli.options import (
    DATA_DIR,
    ENGINE,
    JUDGE,
    RUN,
    SAMPLING,
    SCORING,
    Options,
    config_options,
    judge_config,
)
from harness.config import SamplingOverrides, ScoringConfig
from harness.progress import console

CPU_REASONING_CAP = {"n": 4, "max_tokens": 4096}


def _fit_hardware(sampling: SamplingOverrides) -> SamplingOverrides:
    """Without a GPU, long multi-sample reasoning runs take days: cap n and max tokens, and say so."""
    import torch

    if torch.cuda.is_available():
        return sampling
    n, max_tokens = sampling.n, sampling.max_tokens
    capped_n = min(n, CPU_REASONING_CAP["n"]) if n else CPU_REASONING_CAP["n"]
    capped_tokens = (
        min(max_tokens, CPU_REASONING_CAP["max_tokens"]) if max_tokens else CPU_REASONING_CAP["max_tokens"]
    )
    console.print(
        f"[yellow]no GPU found: using n={capped_n}, max_tokens={capped_tokens} (asked n={n}, "
        f"max_tokens={max_tokens}); these numbers are not comparable to published ones[/yellow]"
    )
    return replace(sampling, n=capped_n, max_tokens=capped_tokens)


@app.command("eval")
@config_options(run=RUN, engine=ENGINE, sampling=SAMPLING, scoring=SCORING, judge=JUDGE)
def eval_command(
    run: dict[str, Any],
    engine: EngineConfig,
    sampling: SamplingOverrides,
    scoring: ScoringConfig,
    judge: dict[str, Any],
    benchmarks: Annotated[
        str | None,
        typer.Option(help="Comma-separated names, jsonl:PATH or lm-eval:TASK [default: the preset's]."),
    ] = None,
    fit_hardware: Annotated[bool, typer.Option(help="Cap n and max tokens when there is no GPU.")] = False,
) -> None:
    """Generate, score and aggregate: writes run.json, generations.jsonl, scores.jsonl, results.json."""
    from harness.config import EvalConfig
    from harness.evaluate import run_eval
    from harness.report.summary import print_summary
    from harness.report.table import render

    cfg = EvalConfig(
        benchmarks=tuple(b.strip() for b in (benchmarks or "").split(",") if b.strip()),
        engine=engine,
        sampling=_fit_hardware(sampling) if fit_hardware else sampling,
        scoring=scoring,
        judge=judge_config(judge),
        **run,
    )
    out, results = run_eval(cfg)
    print_summary(results, f"{engine.model} → {out}")
    typer.echo(render([out]), nl=False)


@app.command("score")
@config_options(run=DATA_DIR, scoring=Options(ScoringConfig, exclude=("upstream_compat",)), judge=JUDGE)
def score_command(
    run: dict[str, Any],
    scoring: ScoringConfig,
    judge: dict[str, Any],
    run_dir: Annotated[Path | None, typer.Argument(help="Run directory to rescore.")] = None,
    generations: Annotated[Path | None, typer.Option(help="JSONL of generations made elsewhere.")] = None,
    benchmark: Annotated[str | None, typer.Option(help="Benchmark the generations answer.")] = None,
    out: Annotated[Path | None, typer.Option(help="Run directory to write (with --generations).")] = None,
) -> None:
    """Rescore RUN_DIR without generating (with its own judge: --judge-* options may only say where and how
    that judge runs), or score --generations FILE into --out DIR."""
    from harness.report.summary import print_summary

    data_dir = run["data_dir"]
    if generations is not None:
        if run_dir is not None or benchmark is None or out is None:
            raise HarnessError("use: harness score --generations FILE --benchmark B --out DIR")
        from harness.external import import_generations

        results = import_generations(
            generations,
            benchmark,
            out,
            data_dir=data_dir,
            scoring=scoring,
            judge=judge_config(judge),
        )
        print_summary(results, f"{generations} → {out}")
        return
    if run_dir is None:
        raise HarnessError(
            "use: harness score RUN_DIR, or harness score --generations FILE --benchmark B --out DIR"
        )
    generation_only = {
        "--benchmark": benchmark,
        "--out": out,
        "--data-dir": data_dir,
        "--scorer": scoring.scorer,
        "--numeric-rtol": scoring.numeric_rtol,
        "--lm-eval-include-path": scoring.lm_eval_include_path,
    }
    given = [flag for flag, value in generation_only.items() if value is not None]
    if given:
        raise HarnessError(f"{', '.join(given)}: with --generations only; RUN_DIR is rescored as it was made")
    from harness.stages.score import score_run
    from harness.store import RUN, RunDir

    if scoring.unsafe_no_sandbox:
        from harness.sandbox import allow_unisolated

        allow_unisolated()

    run = RunDir(run_dir)
    run.read_json(RUN)  # a run directory, before locking (which would create one)
    with run.locked():
        results = score_run(
            run,
            force=True,
            timeout=scoring.score_timeout,
            workers=scoring.score_workers,
            judge_settings=judge,
        )
    print_summary(results, f"rescored {run_dir}")
