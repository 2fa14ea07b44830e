"""`harness study run NAME`: a method against GRPO and its own ablation, over seeds, from one warm start;
`harness study table STUDY...`: the paper-style table and the per-step plots (trainers/studies/)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Annotated

import typer

from harness.cli.app import app
from harness.cli.options import Options, config_options
from trainers.studies.run import Settings

study_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Mechanism studies: each method against GRPO and its ablation, over seeds (docs/studies.md).",
)
app.add_typer(study_app, name="study")
SETTINGS = Options(Settings, partial=True)


@study_app.command("run")
@config_options(settings=SETTINGS)
def run_command(
    settings: dict,
    name: Annotated[str, typer.Argument(help="The study: ulorl, spae or arena.")],
    out: Annotated[Path, typer.Option(help="The study folder; the same settings on it resume.")],
    dry_run: Annotated[
        bool,
        typer.Option(
            help="Write the sums and the arms' configs (from --model) and resolve each with train --dry-run."
        ),
    ] = False,
) -> None:
    """Generate the sums, warm-start the model, then train, evaluate and record every (arm, seed)."""
    from trainers.studies.catalog import study
    from trainers.studies.run import dry_run as resolve
    from trainers.studies.run import run_study

    study(name)
    if dry_run:
        resolve(Settings(study=name, **settings), out)
        return
    typer.echo(str(run_study(Settings(study=name, **settings), out)))


@study_app.command("table")
def table_command(
    studies: Annotated[list[Path], typer.Argument(help="Study folders (or their copies under results/).")],
    out: Annotated[Path, typer.Option(help="Folder for table.md, table.json and a plot per study.")],
    keep: Annotated[
        bool,
        typer.Option(
            help="Also copy each study's study.json and record/ (all the table reads) into OUT/NAME."
        ),
    ] = False,
) -> None:
    """One block of rows per study: each mechanism metric for the method, its ablation and GRPO, the paired
    differences over seeds with 95 % intervals, held-out accuracy beside the best constant answer, and a
    verdict; then the answers' diversity, and per-step curves with a band over seeds."""
    from trainers.studies.table import diversity, load, markdown, plot, rows

    loaded = [load(folder) for folder in studies]
    out.mkdir(parents=True, exist_ok=True)
    text = markdown(loaded) + "\n" + diversity(loaded)
    (out / "table.md").write_text(text)
    (out / "table.json").write_text(
        json.dumps({r.study.name: [_plain(row) for row in rows(r)] for r in loaded}, indent=2) + "\n"
    )
    for runs, folder in zip(loaded, studies, strict=True):
        plot(runs, out)
        if keep:
            _keep(folder, out / runs.study.name)
    typer.echo(text)


def _plain(row: dict) -> dict:
    return {k: (vars(v) if hasattr(v, "low") else v) for k, v in row.items()}


def _keep(folder: Path, to: Path) -> None:
    """What the table reads, copied: study.json and each run's metrics.jsonl and summary.json."""
    if folder.resolve() == to.resolve():
        return
    to.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(folder / "study.json", to / "study.json")
    for run in sorted((folder / "record").iterdir()):
        (to / "record" / run.name).mkdir(parents=True, exist_ok=True)
        for name in ("metrics.jsonl", "summary.json"):
            shutil.copyfile(run / name, to / "record" / run.name / name)
