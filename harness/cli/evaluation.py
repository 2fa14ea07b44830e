"""`harness eval` and `harness score`."""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from harness import HarnessError
from harness.backends import EngineConfig
from harness.backends.model_args import parse_model_args
from harness.backends.remote_code import warn_remote_code
from harness.cli.app import app
from harness.cli.options import (
    DATA_DIR,
    ENGINE,
    JUDGE,
    RUN,
    SAMPLING,
    SCORING,
    THREADS,
    Options,
    config_options,
    judge_config,
    use_threads,
)
from harness.config import SamplingOverrides, ScoringConfig
from harness.core.progress import console

CPU_REASONING_CAP = {"n": 4, "max_tokens": 4096}
AUTO_MODEL = "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"  # `--model auto` with the Hub reachable
OFFLINE_MODEL = "smollm2-135m-instruct"  # `--model auto` without it (`harness fetch-model`)
OFFLINE_CAP = {"n": 1, "max_tokens": 256}  # what a 135M model does on 60 AIME problems in minutes


def _auto_model(engine: EngineConfig) -> tuple[EngineConfig, bool]:
    """`--model auto`: the default model if the Hub answers, else SmolLM2 from the package registry
    (with a banner). Returns the engine and whether it fell back."""
    if engine.model != "auto":
        return engine, False
    from harness.core.hub import hub_unreachable

    why = hub_unreachable()
    if why is None:
        return replace(engine, model=AUTO_MODEL), False
    from harness.core.models import fetch_model

    path = fetch_model(OFFLINE_MODEL)
    console.print(
        f"[bold yellow]Hugging Face Hub unreachable ({why}): evaluating {OFFLINE_MODEL} from the package "
        f"registry ({path}) instead of {AUTO_MODEL}. A 135M model: its scores say the pipeline works, "
        f"not how a reasoning model does.[/bold yellow]",
        soft_wrap=True,
    )
    return replace(engine, model=str(path)), True


def _fit_hardware(sampling: SamplingOverrides, cap: dict[str, int]) -> SamplingOverrides:
    """Without a GPU, long multi-sample reasoning runs take days: cap n and max tokens, and say which
    values changed (none when there is a GPU or the asked values are within the cap)."""
    import torch

    if torch.cuda.is_available():
        return sampling
    changed = {
        key: (asked, limit)
        for key, limit in cap.items()
        if (asked := getattr(sampling, key)) is None or asked > limit
    }
    if not changed:
        return sampling
    said = ", ".join(
        f"{key} {'the default' if asked is None else asked} -> {limit}"
        for key, (asked, limit) in changed.items()
    )
    console.print(
        f"[yellow]no GPU found: capped {said}; these numbers are not comparable to published ones[/yellow]"
    )
    return replace(sampling, **{key: limit for key, (_, limit) in changed.items()})


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
    threads: THREADS = None,
    model_arg: Annotated[
        list[str] | None,
        typer.Option(
            help="KEY=VALUE passed to the engine (hf: from_pretrained, vllm: LLM); VALUE is read as "
            "true/false, an integer, a number or text. Repeatable."
        ),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            help="Run --shards N shards as Ray tasks on this cluster, then merge them into --out: an "
            "address (HOST:6379, ray://HOST:10001), auto (the cluster running here) or local (start one "
            "on this machine). Needs `pip install 'harness[ray]'`."
        ),
    ] = None,
    shards: Annotated[int | None, typer.Option(help="With --ray: how many shards.", min=1)] = None,
) -> None:
    """Generate, score and aggregate: writes run.json, generations.jsonl, scores.jsonl, results.json.

    `--model auto`: deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B if the Hugging Face Hub answers within
    about a second, else smollm2-135m-instruct from the package registry (`harness fetch-model`)."""
    use_threads(threads)
    if (ray is None) != (shards is None):
        raise HarnessError("--ray and --shards go together (one machine's part of a run: --shard K/N)")
    from harness.config import EvalConfig
    from harness.report.summary import print_summary
    from harness.runs.evaluate import run_eval

    engine = replace(engine, model_args=tuple(parse_model_args(model_arg or []).items()))
    engine, fell_back = _auto_model(engine)
    if engine.trust_remote_code:
        warn_remote_code(engine.model)
    cap = OFFLINE_CAP if fell_back else CPU_REASONING_CAP
    cfg = EvalConfig(
        benchmarks=tuple(b.strip() for b in (benchmarks or "").split(",") if b.strip()),
        engine=engine,
        sampling=_fit_hardware(sampling, cap) if fit_hardware else sampling,
        scoring=scoring,
        judge=judge_config(judge),
        **run,
    )
    if ray is not None:
        from harness.runs.ray_eval import eval_on_ray

        out, results = eval_on_ray(cfg, shards, ray)
    else:
        out, results = run_eval(cfg)
    print_summary(results, f"{engine.model} → {out}")


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
    threads: THREADS = None,
) -> None:
    """Rescore RUN_DIR without generating (with its own judge: --judge-* options may only say where and how
    that judge runs), or score --generations FILE into --out DIR."""
    use_threads(threads)
    from harness.report.summary import print_summary

    data_dir = run["data_dir"]
    if generations is not None:
        if run_dir is not None or benchmark is None or out is None:
            raise HarnessError("use: harness score --generations FILE --benchmark B --out DIR")
        from harness.runs.external import import_generations

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
    }
    given = [flag for flag, value in generation_only.items() if value is not None]
    if given:
        raise HarnessError(f"{', '.join(given)}: with --generations only; RUN_DIR is rescored as it was made")
    from harness.core.store import RUN, RunDir
    from harness.core.terminate import keeping
    from harness.stages.score import kept, score_run

    if scoring.unsafe_no_sandbox:
        from harness.sandbox import allow_unisolated

        allow_unisolated()

    run = RunDir(run_dir)
    run.read_json(RUN)  # a run directory, before locking (which would create one)
    again = "the same command rescores it from the start"
    with run.locked(), keeping(functools.partial(kept, run), then=again):
        results = score_run(
            run,
            force=True,
            timeout=scoring.score_timeout,
            workers=scoring.score_workers,
            judge_settings=judge,
            include_path=scoring.lm_eval_include_path,
            cache=scoring.cache,
        )
    print_summary(results, f"rescored {run_dir}")


@app.command("merge")
def merge_command(
    shards: Annotated[list[Path], typer.Argument(help="The N run folders of `harness eval --shard K/N`.")],
    out: Annotated[Path, typer.Option(help="A new folder for the merged run.")],
) -> None:
    """Check that the shards are one run's, each finished and all N there once, then write the run one
    machine would have written: score, table, regress, view and export read it as any run."""
    from harness.report.summary import print_summary
    from harness.runs.merge import merge

    print_summary(merge(shards, out), f"merged {len(shards)} shards → {out}")
