"""`harness corpus spell`: SPELL's training corpus of document clusters (trainers/methods/spell/corpus);
`harness corpus ulorl`: UloRL's cleaned dataset (trainers/methods/ulorl/corpus.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from harness import HarnessError
from harness.cli.app import app
from harness.cli.options import THREADS, Options, config_options, use_threads
from trainers.methods.ulorl.corpus import CorpusOptions, build_corpus

corpus_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Build training corpora: document clusters written as a versioned dataset with its manifest.",
)
app.add_typer(corpus_app, name="corpus")
ULORL = Options(CorpusOptions)


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
    embeddings and hierarchical k-means clusters, split into the three tasks (SPELL paper, App. C.1)."""
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
@config_options(options=ULORL)
def ulorl_command(
    options: CorpusOptions,
    data: Annotated[
        Path,
        typer.Argument(help="Dataset to clean (jsonl, json, csv or parquet rows with id, problem, answer)."),
    ],
    out: Annotated[Path, typer.Option(help="Folder to write clean.jsonl, removed.jsonl and report.json to.")],
) -> None:
    """Clean a dataset as UloRL does (docs/methods/ulorl.md#data-cleaning): remove multi-question, proof,
    over-long-answer and too-easy items, convert multiple-choice and true/false ones to short answers by
    rule."""
    build_corpus(data, out, options)
    typer.echo(str(out))
