"""The seed papers' published main tables (results/paper/*.csv, see its README, and those other packages'
profiles ship) as rows."""

from __future__ import annotations

import csv
import importlib
from dataclasses import dataclass, fields
from pathlib import Path

from harness import HarnessError
from harness.papers import PAPERS


def papers() -> list[str]:
    """The published CSVs' names, one per registered paper profile (harness.papers)."""
    return [PAPERS[name].paper for name in PAPERS]


def paper_dir(package: str) -> Path:
    """The folder of published CSVs in `package`: `results` (this project's), or a profile's own package."""
    return Path(importlib.import_module(package).__file__).parent / "paper"


def published_csv(paper: str) -> Path:
    """Where the published table `paper` is kept: its profile's package's paper/PAPER.csv."""
    (profile,) = [PAPERS[name] for name in PAPERS if PAPERS[name].paper == paper]
    return paper_dir(profile.published_in) / f"{paper}.csv"


@dataclass(frozen=True)
class PaperRow:
    """One published number: a cell of a paper's table, in the paper's units (percent, or tokens)."""

    paper: str
    table: str
    model: str
    method: str
    benchmark: str
    metric: str
    setting: str
    value: float


COLUMNS = [f.name for f in fields(PaperRow)]


def paper_rows(paper: str | None = None) -> list[PaperRow]:
    """The published rows of one paper, or of every paper when `paper` is None."""
    known = papers()
    if paper is not None and paper not in known:
        raise HarnessError(f"unknown paper {paper!r}; choose one of {', '.join(known)}")
    rows = []
    for name in (paper,) if paper else known:
        path = published_csv(name)
        if not path.is_file():
            raise HarnessError(f"published table {path} not found")
        with path.open(newline="", encoding="utf-8") as file:
            reader = csv.DictReader(file)
            if reader.fieldnames != COLUMNS:
                raise HarnessError(f"{path}: the header must be {','.join(COLUMNS)}")
            for record in reader:
                try:
                    if None in record or None in record.values() or record["paper"] != name:
                        raise ValueError(f"expected {len(COLUMNS)} fields with paper={name}")
                    rows.append(PaperRow(**{**record, "value": float(record["value"])}))
                except ValueError as error:
                    raise HarnessError(f"{path}, line {reader.line_num}: malformed row ({error})") from None
    return rows
