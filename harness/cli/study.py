"""`harness study run NAME`: a method against GRPO and its own ablation, over seeds, from one warm start;
`harness study table STUDY...`: the paper-style table and the per-step plots (trainers/studies/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from harness.cli.app import app
from harness.cli.options import Options, config_options
from harness.core.io.read import RECORDS_BYTES, read_bytes
from harness.core.io.write import OutDir
from trainers.studies.run import STUDY_FILE, Settings

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
    name: Annotated[str, typer.Argument(help="The study: ulorl, spae, arena, azr or spell.")],
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
    from harness.report.plots import save
    from trainers.studies.table import diversity, figure, load, markdown, rows

    loaded = [load(folder) for folder in studies]
    text = markdown(loaded) + "\n" + diversity(loaded)
    table = {r.study.name: [_plain(row) for row in rows(r)] for r in loaded}
    with OutDir.open(out) as folder:
        folder.write("table.md", text)
        folder.write("table.json", json.dumps(table, indent=2) + "\n")
    for runs, study in zip(loaded, studies, strict=True):
        save(figure(runs), out / runs.study.name)
        if keep:
            _keep(study, out / runs.study.name)
    typer.echo(text)


def _plain(row: dict) -> dict:
    return {k: (vars(v) if hasattr(v, "low") else v) for k, v in row.items()}


def _keep(study: Path, to: Path) -> None:
    """What the table reads, copied through the one reader and writer: study.json and each run's
    metrics.jsonl and summary.json."""
    if study.resolve() == to.resolve():
        return
    with OutDir.open(to) as out:
        out.write(STUDY_FILE, read_bytes(study / STUDY_FILE, study))
        for run in sorted((study / "record").iterdir()):
            for name in ("metrics.jsonl", "summary.json"):
                relative = f"record/{run.name}/{name}"
                out.write(relative, read_bytes(study / relative, study, RECORDS_BYTES))


@study_app.command("rank")
def rank_command(
    study: Annotated[Path, typer.Argument(help="A Reasoning Arena study folder (its warm start and sums).")],
    out: Annotated[Path, typer.Option(help="Folder for ranking.json and ranking.md.")],
    groups: Annotated[int, typer.Option(min=1, help="Held-out sums, one group each.")] = 16,
    responses: Annotated[int, typer.Option(min=3, help="Responses a group (N).")] = 8,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the samples and the judge's orders.")] = 0,
    model: Annotated[
        Path | None, typer.Option(help="The policy and judge (default: the study's warm start).")
    ] = None,
) -> None:
    """Training-free: the live tournament's Bradley-Terry ranking against the full round robin's and its
    repeat, and against the rule verdicts, per judge call, with the policy judging (docs/studies.md)."""
    from trainers.studies.ranking import markdown, rank_study

    result = rank_study(study, groups, responses, seed, model)
    text = markdown(result)
    with OutDir.open(out) as folder:
        folder.write("ranking.json", json.dumps(result, indent=2) + "\n")
        folder.write("ranking.md", text)
    typer.echo(text)
