"""DocMath-Eval testmini (800: complong 300, compshort 200, simplong 100, simpshort 200), with SPELL's
financial-math prompt and numeric scoring (±0.15% relative tolerance by default, `--numeric-rtol`).

Gated on the Hub (accept its terms, then log in or set HF_TOKEN). The document is the item's
paragraphs (tables included) joined by newlines, as DocMath's own code and SPELL's do. Offline,
--data-dir D holds D/docmath/{subset}_testmini.json (or .jsonl / .parquet) for the four subsets.
Results are broken down by subset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.base import Benchmark, FileLayout, HubSource
from benchmarks.doc_prompts import FINANCIAL_MATH, MAX_INPUT, SAMPLING, fill
from harness import HarnessError
from harness.core.data import require
from harness.core.types import Item
from harness.scoring.numeric import parse_number
from harness.scoring.rules import gold_text

SUBSETS = ("complong", "compshort", "simplong", "simpshort")
REPO = "yale-nlp/DocMath-Eval"


def to_item(row: dict[str, Any], path: Path, number: int) -> Item:
    subset = path.name.split("_")[0]
    question = str(require(row, "question", path, number))
    paragraphs = require(row, "paragraphs", path, number)
    answer = require(row, "ground_truth", path, number)
    if isinstance(answer, bool) or parse_number(str(answer)) is None:
        raise HarnessError(f"{path}:{number}: ground_truth {answer!r} is not a number")
    return Item(
        id=f"{subset}/{require(row, 'question_id', path, number)}",
        problem=fill(FINANCIAL_MATH, content="\n".join(map(str, paragraphs)), question=question),
        answer=gold_text(repr(float(answer)), question),
        meta={"subset": subset},
    )


def _files(pattern: str) -> tuple[str, ...]:
    return tuple(pattern.format(subset=s) for s in SUBSETS)


DOCMATH = Benchmark(
    name="docmath",
    description="DocMath-Eval testmini (800, four subsets; numeric ±0.15%; gated)",
    hub=HubSource(
        repo=REPO,
        revision="main",  # unpinned (its commits could not be listed offline); runs record the commit read
        layout=FileLayout(files=_files("data/{subset}_testmini-00000-of-00001.parquet"), to_item=to_item),
        gated=True,
    ),
    local_layouts=tuple(
        FileLayout(files=_files("{subset}_testmini" + ext), to_item=to_item)
        for ext in (".json", ".jsonl", ".parquet")
    ),
    prompt="{problem}",
    scorer="numeric",
    sampling=SAMPLING,
    group_by=("subset",),
    max_input_tokens=MAX_INPUT,
)
