"""The `harness` command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from harness import HarnessError
from harness.progress import console

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    help="Evaluate reasoning models with trustworthy numbers.",
)

CPU_REASONING_CAP = {"n": 4, "max_tokens": 4096}


def _fit_hardware(n: int | None, max_tokens: int | None) -> tuple[int | None, int | None]:
    """Without a GPU, long multi-sample reasoning runs take days: cap n and max tokens, and say so."""
    import torch

    if torch.cuda.is_available():
        return n, max_tokens
    capped_n = min(n, CPU_REASONING_CAP["n"]) if n else CPU_REASONING_CAP["n"]
    capped_tokens = (
        min(max_tokens, CPU_REASONING_CAP["max_tokens"]) if max_tokens else CPU_REASONING_CAP["max_tokens"]
    )
    console.print(
        f"[yellow]no GPU found: using n={capped_n}, max_tokens={capped_tokens} (asked n={n}, "
        f"max_tokens={max_tokens}); these numbers are not comparable to published ones[/yellow]"
    )
    return capped_n, capped_tokens


@app.command("eval")
def eval_command(
    model: Annotated[str, typer.Option(help="Local model folder or Hugging Face model id.")],
    benchmarks: Annotated[
        str | None,
        typer.Option(help="Comma-separated names, jsonl:PATH or lm-eval:TASK [default: the preset's]."),
    ] = None,
    preset: Annotated[
        str | None,
        typer.Option(help="A paper's protocol: spell, spell-100k, azr, arena, ulorl, spae... (see list)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Run directory, resumed if it exists [default: runs/<model>-<config hash>]."),
    ] = None,
    backend: Annotated[
        str, typer.Option(help="hf (transformers), vllm (offline engine) or openai (a server at --base-url).")
    ] = "hf",
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1.")
    ] = None,
    n: Annotated[int | None, typer.Option(help="Samples per item (default: the benchmark's).")] = None,
    temperature: Annotated[float | None, typer.Option(help="0 means greedy.")] = None,
    top_p: Annotated[float | None, typer.Option()] = None,
    top_k: Annotated[int | None, typer.Option(help="-1: no top-k cut.")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Completion token budget.")] = None,
    seed: Annotated[int, typer.Option(help="Run seed; each sample's seed is derived from it.")] = 0,
    limit: Annotated[int | None, typer.Option(help="Only the first L items of each benchmark.")] = None,
    data_dir: Annotated[
        Path | None, typer.Option(help="Local data folder (D/<benchmark>/...) instead of the Hub.")
    ] = None,
    scorer: Annotated[
        str | None,
        typer.Option(
            help="Scorer for jsonl: benchmarks: math, code, choice, cem, numeric, judge, cem+judge..."
        ),
    ] = None,
    max_input_tokens: Annotated[
        int | None,
        typer.Option(
            help="Cut longer prompts in the middle to this many tokens (0: never) [default: the benchmark's]."
        ),
    ] = None,
    numeric_rtol: Annotated[
        float | None, typer.Option(help="Relative tolerance of the numeric scorer [default: 0.0015].")
    ] = None,
    judge_model: Annotated[
        str | None,
        typer.Option(help="LLM judge: free-text benchmarks (cem, numeric) score max(rule, judge)."),
    ] = None,
    judge_backend: Annotated[str, typer.Option(help="The judge's backend: openai, vllm or hf.")] = "openai",
    judge_base_url: Annotated[str | None, typer.Option(help="The judge server's API root (openai).")] = None,
    judge_prompt: Annotated[
        str, typer.Option(help="spell-v1, or a template file with {question}, {prediction}, {gold}.")
    ] = "spell-v1",
    judge_repeats: Annotated[int, typer.Option(help="Verdicts per answer; the majority decides.")] = 1,
    judge_temperature: Annotated[float, typer.Option()] = 0.0,
    judge_max_tokens: Annotated[int, typer.Option()] = 8192,
    lm_eval_include_path: Annotated[
        Path | None, typer.Option(help="A folder of lm-eval task YAML files, for lm-eval:TASK.")
    ] = None,
    prompt_template: Annotated[str | None, typer.Option(help="User prompt; {problem} is replaced.")] = None,
    system_prompt: Annotated[str | None, typer.Option()] = None,
    revision: Annotated[str | None, typer.Option(help="Model revision on the Hub.")] = None,
    batch_size: Annotated[int | None, typer.Option(help="Generation batch size (hf).")] = None,
    dtype: Annotated[str, typer.Option(help="Weights dtype (hf, vllm): auto, bfloat16, float32...")] = "auto",
    tensor_parallel_size: Annotated[int, typer.Option(help="GPUs per vLLM engine.")] = 1,
    data_parallel_size: Annotated[
        int, typer.Option(help="Engines (hf, vllm), each on its own GPUs and share of the items.")
    ] = 1,
    max_model_len: Annotated[int | None, typer.Option(help="vLLM context length.")] = None,
    gpu_memory_utilization: Annotated[
        float | None, typer.Option(help="vLLM memory share [default: 0.9 on GPU, 0.2 of RAM on CPU].")
    ] = None,
    prefix_caching: Annotated[bool, typer.Option(help="vLLM prefix caching.")] = True,
    enforce_eager: Annotated[
        bool, typer.Option(help="vLLM without graph compilation: faster start, slower decoding.")
    ] = False,
    max_num_seqs: Annotated[int | None, typer.Option(help="vLLM: sequences decoded at once.")] = None,
    api: Annotated[str, typer.Option(help="openai endpoint: chat or completions.")] = "chat",
    concurrency: Annotated[int, typer.Option(help="openai: requests in flight.")] = 32,
    max_retries: Annotated[int, typer.Option(help="openai: retries on 429, 5xx and timeouts.")] = 5,
    request_timeout: Annotated[float, typer.Option(help="openai: seconds per request.")] = 600.0,
    score_timeout: Annotated[
        float | None, typer.Option(help="Seconds per scorer call before it is killed.")
    ] = None,
    score_workers: Annotated[int | None, typer.Option(help="Scorer worker processes.")] = None,
    upstream_compat: Annotated[
        bool,
        typer.Option(
            help="CRUXEval: drop invalid answers from n as the upstream scorer does (inflates pass@k)."
        ),
    ] = False,
    fit_hardware: Annotated[bool, typer.Option(help="Cap n and max tokens when there is no GPU.")] = False,
) -> None:
    """Generate, score and aggregate: writes run.json, generations.jsonl, scores.jsonl, results.json."""
    from harness.evaluate import EvalConfig, run_eval
    from harness.pipeline import print_summary

    if fit_hardware:
        n, max_tokens = _fit_hardware(n, max_tokens)
    cfg = EvalConfig(
        benchmarks=tuple(b.strip() for b in (benchmarks or "").split(",") if b.strip()),
        preset=preset,
        top_k=top_k,
        max_input_tokens=max_input_tokens,
        numeric_rtol=numeric_rtol,
        judge_model=judge_model,
        judge_backend=judge_backend,
        judge_base_url=judge_base_url,
        judge_prompt=judge_prompt,
        judge_repeats=judge_repeats,
        judge_temperature=judge_temperature,
        judge_max_tokens=judge_max_tokens,
        lm_eval_include_path=str(lm_eval_include_path) if lm_eval_include_path else None,
        model=model,
        out=out,
        backend=backend,
        base_url=base_url,
        n=n,
        temperature=temperature,
        top_p=top_p,
        max_tokens=max_tokens,
        seed=seed,
        limit=limit,
        data_dir=data_dir,
        scorer=scorer,
        prompt_template=prompt_template,
        system_prompt=system_prompt,
        revision=revision,
        batch_size=batch_size,
        dtype=dtype,
        tensor_parallel_size=tensor_parallel_size,
        data_parallel_size=data_parallel_size,
        max_model_len=max_model_len,
        gpu_memory_utilization=gpu_memory_utilization,
        prefix_caching=prefix_caching,
        enforce_eager=enforce_eager,
        max_num_seqs=max_num_seqs,
        api=api,
        concurrency=concurrency,
        max_retries=max_retries,
        request_timeout=request_timeout,
        score_timeout=score_timeout,
        score_workers=score_workers,
        upstream_compat=upstream_compat,
    )
    from harness.report.table import render

    out, results = run_eval(cfg)
    print_summary(results, f"{model} → {out}")
    typer.echo(render([out]), nl=False)


@app.command("score")
def score_command(
    run_dir: Annotated[Path | None, typer.Argument(help="Run directory to rescore.")] = None,
    generations: Annotated[Path | None, typer.Option(help="JSONL of generations made elsewhere.")] = None,
    benchmark: Annotated[str | None, typer.Option(help="Benchmark the generations answer.")] = None,
    out: Annotated[Path | None, typer.Option(help="Run directory to write (with --generations).")] = None,
    data_dir: Annotated[Path | None, typer.Option(help="Local data folder instead of the Hub.")] = None,
    scorer: Annotated[str | None, typer.Option(help="Scorer for jsonl: benchmarks.")] = None,
    score_timeout: Annotated[float | None, typer.Option(help="Seconds per scorer call.")] = None,
    score_workers: Annotated[int | None, typer.Option(help="Scorer worker processes.")] = None,
    judge_base_url: Annotated[
        str | None,
        typer.Option(help="Where the judge is served (now: verdicts a run already made are reused)."),
    ] = None,
    judge_model: Annotated[
        str | None, typer.Option(help="With --generations: judge free-text answers.")
    ] = None,
    judge_backend: Annotated[str, typer.Option(help="The judge's backend: openai, vllm or hf.")] = "openai",
    judge_prompt: Annotated[str, typer.Option(help="spell-v1, or a template file.")] = "spell-v1",
    judge_repeats: Annotated[int, typer.Option(help="Verdicts per answer; the majority decides.")] = 1,
    numeric_rtol: Annotated[float | None, typer.Option(help="Numeric scorer's relative tolerance.")] = None,
    lm_eval_include_path: Annotated[
        Path | None, typer.Option(help="A folder of lm-eval task YAML files, for lm-eval:TASK.")
    ] = None,
) -> None:
    """Rescore RUN_DIR without generating, or score --generations FILE into --out DIR."""
    from harness.pipeline import print_summary, score_run
    from harness.store import RunDir

    if generations is not None:
        if run_dir is not None or benchmark is None or out is None:
            raise HarnessError("use: harness score --generations FILE --benchmark B --out DIR")
        from harness.evaluate import EvalConfig
        from harness.external import import_generations

        settings = EvalConfig(
            benchmarks=(benchmark,),
            model="external",
            data_dir=data_dir,
            scorer=scorer,
            numeric_rtol=numeric_rtol,
            judge_model=judge_model,
            judge_backend=judge_backend,
            judge_base_url=judge_base_url,
            judge_prompt=judge_prompt,
            judge_repeats=judge_repeats,
            lm_eval_include_path=str(lm_eval_include_path) if lm_eval_include_path else None,
        )
        results = import_generations(
            generations, benchmark, out, settings, timeout=score_timeout, workers=score_workers
        )
        print_summary(results, f"{generations} → {out}")
        return
    if run_dir is None:
        raise HarnessError(
            "use: harness score RUN_DIR, or harness score --generations FILE --benchmark B --out DIR"
        )
    results = score_run(
        RunDir(run_dir),
        force=True,
        timeout=score_timeout,
        workers=score_workers,
        judge_base_url=judge_base_url,
    )
    print_summary(results, f"rescored {run_dir}")


@app.command("table")
def table_command(
    run_dirs: Annotated[list[Path] | None, typer.Argument(help="Run directories, one row each.")] = None,
    format: Annotated[str, typer.Option("--format", help="md, csv or latex.")] = "md",
    metric: Annotated[
        str, typer.Option(help="avg (avg@N ± CI) or a metric such as pass@4 or maj@16.")
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


PLOTS = ("pass-at-k", "length", "truncation", "trajectory")


@app.command("plot")
def plot_command(
    kind: Annotated[str, typer.Argument(help="pass-at-k, length, truncation or trajectory.")],
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories (checkpoints, for trajectory).")],
    out: Annotated[Path, typer.Option(help="Output path without suffix: writes OUT.png and OUT.pdf.")],
    benchmark: Annotated[str | None, typer.Option(help="Only this benchmark (pass-at-k, length).")] = None,
    bins: Annotated[int, typer.Option(help="Length bins (quantiles).")] = 10,
    metric: Annotated[str, typer.Option(help="trajectory: avg (with its CI) or e.g. pass@4.")] = "avg",
    steps: Annotated[
        str | None, typer.Option(help="trajectory: comma-separated steps [default: from checkpoint-N].")
    ] = None,
) -> None:
    """Plots from runs: pass@k curves with CIs, accuracy against length, truncation, trajectories."""
    from harness.report import plots

    if kind not in PLOTS:
        raise HarnessError(f"unknown plot {kind!r}; choose {', '.join(PLOTS)}")
    if kind == "pass-at-k":
        paths = plots.pass_at_k_curves(run_dirs, out, benchmark)
    elif kind == "length":
        paths = plots.accuracy_vs_length(run_dirs, out, benchmark, bins)
    elif kind == "truncation":
        paths = plots.truncation_rates(run_dirs, out)
    else:
        numbers = [int(s) for s in steps.split(",")] if steps else None
        paths = plots.trajectory(run_dirs, out, metric, numbers)
    for path in paths:
        typer.echo(str(path))


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


@app.command("regress")
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
    """Gate CAND on BASE: exit 0 no significant regression, 1 regression, 2 not comparable."""
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
) -> None:
    """Write a run in another tool's file format."""
    from harness.export import export_lm_eval

    if format != "lm-eval":
        raise HarnessError(f"unknown export format {format!r}; available: lm-eval")
    for path in export_lm_eval(run_dir, out):
        typer.echo(str(path))


@app.command("list")
def list_command() -> None:
    """The registered benchmarks and presets."""
    from benchmarks import BENCHMARKS
    from harness.presets import PRESETS

    for b in BENCHMARKS.values():
        s = b.sampling
        source = f"{b.hub.repo}@{b.hub.revision[:7]}" if b.hub else "local"
        typer.echo(f"{b.name:15} {b.description}  [{source}; scorer {b.scorer}; n={s.n}, T={s.temperature}]")
    typer.echo("\npresets (--preset NAME):")
    for name, p in PRESETS.items():
        typer.echo(f"{name:21} {p.description}\n{'':21} benchmarks: {', '.join(p.benchmarks)}")


@app.command("train")
def train_command(
    method: Annotated[str, typer.Argument(help="Trainer backend: grpo.")],
    model: Annotated[str | None, typer.Option(help="Model folder or Hub id to start from.")] = None,
    dataset: Annotated[
        str | None, typer.Option(help="Benchmark name, jsonl:PATH (or PATH.jsonl) or lm-eval:TASK.")
    ] = None,
    out: Annotated[str | None, typer.Option(help="Run folder; the same config on it resumes.")] = None,
    config: Annotated[Path | None, typer.Option(help="YAML file with any TrainConfig keys.")] = None,
    scorer: Annotated[str | None, typer.Option(help="Reward scorer [default: the dataset's].")] = None,
    data_dir: Annotated[str | None, typer.Option(help="Local benchmark files.")] = None,
    max_steps: Annotated[int | None, typer.Option()] = None,
    num_generations: Annotated[int | None, typer.Option(help="Samples per prompt (G).")] = None,
    prompts_per_step: Annotated[int | None, typer.Option(help="Prompts per step and process.")] = None,
    learning_rate: Annotated[float | None, typer.Option()] = None,
    max_completion_length: Annotated[int | None, typer.Option()] = None,
    save_steps: Annotated[int | None, typer.Option()] = None,
    seed: Annotated[int | None, typer.Option()] = None,
    eval_every: Annotated[
        int | None, typer.Option(help="Evaluate every K steps into OUT/evals/step-K.")
    ] = None,
    eval_benchmarks: Annotated[
        str | None, typer.Option(help="Comma-separated benchmarks to evaluate.")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="KEY=VALUE for any config key; trl.FIELD for any GRPOConfig field."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option(help="Print the resolved config and TRL arguments; load and train nothing.")
    ] = False,
) -> None:
    """Train a model with a method backend on TRL; checkpoints land in OUT/checkpoint-N."""
    import json

    from trainers.config import load_config, parse_set

    flags = {
        "method": method,
        "model": model,
        "dataset": dataset,
        "out": out,
        "scorer": scorer,
        "data_dir": data_dir,
        "max_steps": max_steps,
        "num_generations": num_generations,
        "prompts_per_step": prompts_per_step,
        "learning_rate": learning_rate,
        "max_completion_length": max_completion_length,
        "save_steps": save_steps,
        "seed": seed,
        "eval_every": eval_every,
        "eval_benchmarks": eval_benchmarks,
    }
    cfg = load_config(config, {**parse_set(set_ or []), **flags})
    if dry_run:
        from trainers.run import describe

        typer.echo(json.dumps(describe(cfg), indent=2, default=str))
        return
    from trainers.run import train

    console.print(f"trained: {train(cfg)}")


@app.command("tiny-model")
def tiny_model_command(
    out_dir: Annotated[Path, typer.Argument(help="Folder to write the model to.")],
    thinking: Annotated[
        bool, typer.Option(help="--no-thinking: a plain ChatML template, the answer follows the prompt.")
    ] = True,
) -> None:
    """Build a deterministic tiny random Qwen2-style model with a <think>-aware chat template, offline."""
    from harness.tiny_model import build_tiny_model

    typer.echo(str(build_tiny_model(out_dir, thinking=thinking)))


def main() -> None:
    try:
        app()
    except HarnessError as e:
        console.print(f"[red]error:[/red] {e}", highlight=False, markup=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
