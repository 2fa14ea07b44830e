"""Custom benchmarks: `--benchmarks jsonl:PATH --scorer NAME`, one JSON object per line.

math: `id`, `problem`, `answer`. integer, choice, cem, numeric, judge (and cem+judge...): `id`, `problem`,
`answer` (a string, or a list of accepted answers); the judge is shown `problem` as the question.
code: `id`, `prompt`, `tests` (Python asserts that call the
candidate's functions by name, or define `check(candidate)` with `entry_point` given), optional
`entry_point`; the model's last fenced code block (or its whole answer) is the candidate.
"""

import json
from pathlib import Path
from typing import Any

from benchmarks.base import Benchmark, FileLayout, columns
from harness import HarnessError
from harness.data import require
from harness.scoring.rules import gold_text
from harness.types import Item


def _code_item(row: dict[str, Any], path: Path, number: int) -> Item:
    tests = require(row, "tests", path, number)
    if not isinstance(tests, str):
        raise HarnessError(f"{path}:{number}: `tests` must be Python source text")
    try:
        compile(tests, f"{path}:{number} tests", "exec")
    except SyntaxError as e:
        raise HarnessError(
            f"{path}:{number}: `tests` is not valid Python ({e.msg}, line {e.lineno})"
        ) from None
    gold = {"kind": "tests", "tests": tests, "entry_point": row.get("entry_point"), "prelude": ""}
    return Item(
        id=str(require(row, "id", path, number)),
        problem=str(require(row, "prompt", path, number)),
        answer=json.dumps(gold),
    )


def _text_item(row: dict[str, Any], path: Path, number: int) -> Item:
    """integer, choice, cem, numeric, judge: `answer` is a string or a list of accepted answers."""
    problem = str(require(row, "problem", path, number))
    answer = require(row, "answer", path, number)
    return Item(id=str(require(row, "id", path, number)), problem=problem, answer=gold_text(answer, problem))


TEXT_SCORERS = ("integer", "choice", "cem", "numeric", "judge", "choice+judge", "cem+judge", "numeric+judge")
FIELDS = {
    "math": columns(id="id", problem="problem", answer="answer"),
    "code": _code_item,
    **dict.fromkeys(TEXT_SCORERS, _text_item),
}


def custom_benchmark(spec: str, scorer: str | None) -> Benchmark:
    """A benchmark read from the JSONL file named in `spec` ("jsonl:PATH"), scored by `scorer`."""
    path = Path(spec.removeprefix("jsonl:")).expanduser()
    scorer = scorer or "math"
    if scorer not in FIELDS:
        raise HarnessError(
            f"--scorer {scorer!r} is not available for jsonl: benchmarks; choose from {sorted(FIELDS)}"
        )
    if not path.is_file():
        raise HarnessError(f"{spec}: no such file {path}")
    return Benchmark(
        name=path.stem,
        hub=None,
        local_layouts=(FileLayout(files=(path.name,), to_item=FIELDS[scorer]),),
        scorer=scorer,
        description=f"custom JSONL {path}",
        path=path.resolve(),
    )
