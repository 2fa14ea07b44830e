"""`harness corpus spell`: SPELL's training corpus of document clusters (trainers/methods/spell/corpus)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from harness import HarnessError
from harness.cli.app import app
from harness.cli.options import THREADS, use_threads

corpus_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Build training corpora: document clusters written as a versioned dataset with its manifest.",
)
app.add_typer(corpus_app, name="corpus")


@corpus_app.command("spell")
def spell_command(
    out: Annotated[Path, typer.Option(help="Folder to write clusters.jsonl and manifest.json to.")],
    config: Annotated[
        Path | None,
        typer.Option(help="YAML file with any corpus parameters (configs/corpus/spell.yaml: the paper's)."),
    ] = None,
    synthetic: Annotated[
        bool,
        typer.Option(
            help="Generate the small offline corpus (synthetic.py) and run the whole pipeline on it."
        ),
    ] = False,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            help="Local copies instead of the Hub: D/ultra-fineweb/ (jsonl, json or parquet files), "
            "D/docmath/{subset}_test.json(l)/.parquet, and the evaluation sets under D/<benchmark>/."
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option(min=0, help="Seed for k-means and the task split.")] = None,
    threads: THREADS = None,
) -> None:
    """Build SPELL's corpus: quality/length filter, MinHash-LSH deduplication and decontamination,
    embeddings and hierarchical k-means clusters, split into the three tasks (spell.md §2.2)."""
    use_threads(threads)
    from trainers.methods.spell.corpus.build import build, build_synthetic, load_config

    overrides: dict[str, Any] = {}
    if data_dir is not None:
        if synthetic:
            raise HarnessError(
                "--data-dir and --synthetic exclude each other: the synthetic corpus is generated"
            )
        if not data_dir.is_dir():
            raise HarnessError(f"--data-dir {data_dir}: no such folder")
        overrides = {
            "web": {"path": str(data_dir / "ultra-fineweb")},
            "docmath": {"path": str(data_dir / "docmath")},
            "decontaminate": {"data_dir": str(data_dir)},
        }
    if seed is not None:
        overrides["seed"] = seed
    cfg = load_config(config, overrides, synthetic=synthetic)
    written = build_synthetic(out, cfg) if synthetic else build(cfg, out)
    typer.echo(str(written))


@corpus_app.command("ulorl")
def ulorl_command(
    data: Annotated[
        Path,
        typer.Argument(help="Dataset to clean (jsonl, json, csv or parquet rows with id, problem, answer)."),
    ],
    out: Annotated[Path, typer.Option(help="Folder to write clean.jsonl, removed.jsonl and report.json to.")],
    max_answer_chars: Annotated[
        int, typer.Option(min=1, help="Longest reference answer kept; matrices are always removed.")
    ] = 50,
    reference_run: Annotated[
        list[Path] | None,
        typer.Option(
            help="A `harness eval` run directory of a strong model on these rows (repeat, at least twice): "
            "rows whose runs all agree on one answer that scored wrong are removed."
        ),
    ] = None,
    pass_rate_model: Annotated[
        str | None,
        typer.Option(
            help="Model that answers each remaining row n times; rows it gets n/n right are removed."
        ),
    ] = None,
    pass_rate_n: Annotated[int, typer.Option(min=1, help="Samples per row (the paper: 8).")] = 8,
    pass_rate_temperature: Annotated[
        float, typer.Option(min=0, help="Sampling temperature (the paper's rollouts: 0.85, top-p 1.0).")
    ] = 0.85,
    pass_rate_max_tokens: Annotated[
        int | None,
        typer.Option(
            min=1, help="Completion budget [default: harness eval's, 32,768; the paper's was 131,072]."
        ),
    ] = None,
    pass_rate_backend: Annotated[
        str, typer.Option(help="Engine of the pass-rate model: hf, vllm or openai.")
    ] = "hf",
    pass_rate_scorer: Annotated[
        str, typer.Option(help="Scorer of its answers (math, integer, numeric, cem...).")
    ] = "math",
    pass_rate_seed: Annotated[int, typer.Option(min=0, help="Seed of the pass-rate run.")] = 0,
) -> None:
    """Clean a dataset as UloRL does (ulorl.md §1.6): remove multi-question, proof, over-long-answer
    and too-easy items, convert multiple-choice and true/false ones to short answers by rule."""
    import json
    import subprocess
    import sys

    from harness.core.data import read_rows
    from trainers.methods.ulorl import cleaning

    numbered = list(read_rows(data))
    runs = None
    if reference_run:
        if len(reference_run) < 2:
            raise HarnessError("--reference-run: give at least two models' run directories")
        runs = {str(path): cleaning.majority_answers(path) for path in reference_run}
    kept, report = cleaning.clean(
        [row for _, row in numbered],
        max_answer_chars=max_answer_chars,
        reference_runs=runs,
        source=str(data),
        lines=[number for number, _ in numbered],
    )
    out.mkdir(parents=True, exist_ok=True)
    settings = None if pass_rate_model is None else {"model": pass_rate_model, "run": None}
    if pass_rate_model is not None and kept:
        items, run_dir = out / "pass-rate-items.jsonl", out / "pass-rate"
        fields = ("id", "problem", "answer")
        lines = (json.dumps({k: r[k] for k in fields}, ensure_ascii=False) + "\n" for r in kept)
        items.write_text("".join(lines), encoding="utf-8")
        command = cleaning.pass_rate_command(
            pass_rate_model, items, run_dir, n=pass_rate_n, temperature=pass_rate_temperature,
            max_tokens=pass_rate_max_tokens, backend=pass_rate_backend, scorer=pass_rate_scorer,
            seed=pass_rate_seed,
        )  # fmt: skip
        typer.echo(f"pass rate: {len(kept)} rows x {pass_rate_n} samples of {pass_rate_model} -> {run_dir}")
        done = subprocess.run([sys.executable, "-m", "harness", *command])  # its progress shows
        if done.returncode != 0:
            raise HarnessError(
                f"the pass-rate evaluation failed (exit {done.returncode}; its output is above); "
                "the same command resumes it"
            )
        kept = cleaning.drop_too_easy(kept, cleaning.pass_counts(run_dir), pass_rate_n, report)
        settings = {"model": pass_rate_model, "run": str(run_dir), "command": ["harness", *command]}
    with open(out / "clean.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in kept)
    with open(out / "removed.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r.record(), ensure_ascii=False) + "\n" for r in report.removed_rows)
    summary = {
        "input": str(data),
        "max_answer_chars": max_answer_chars,
        "reference_runs": list(runs or ()),
        "pass_rate": settings,
        **report.as_json(),
    }
    (out / "report.json").write_text(
        json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    typer.echo(f"{report.total} rows: kept {report.kept}, removed {report.total - report.kept}")
    for name, count in report.removed.items():
        typer.echo(f"  removed {name}: {count}")
    for name, count in report.converted.items():
        typer.echo(f"  converted {name}: {count}")
    typer.echo(str(out))
