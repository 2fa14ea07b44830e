"""Custom benchmarks: `--benchmarks jsonl:PATH --scorer NAME`, one JSON object per line.

math: `id`, `problem`, `answer`. integer, choice, cem, numeric, judge (and cem+judge...): `id`, `problem`,
`answer` (a string, or a list of accepted answers); the judge is shown `problem` as the question.
code: `id`, `prompt`, `tests` (Python asserts that call the
candidate's functions by name, or define `check(candidate)` with `entry_point` given), optional
`entry_point`; the model's last fenced code block (or its whole answer) is the candidate.

The default prompt (`--prompt-template` replaces it) asks for the answer in the form the scorer reads:
math and numeric the last `\\boxed{}`, integer a final number, choice a boxed letter (GPQA's prompt),
cem and judge "The correct answer is ..." (SPELL's QA prompt), code a Python code block.
"""

import json
from pathlib import Path
from typing import Any

from benchmarks.base import MATH_PROMPT, Benchmark, FileLayout, columns
from benchmarks.gpqa import PROMPT as CHOICE_PROMPT
from harness import HarnessError
from harness.core.data import require
from harness.core.types import Item
from harness.scoring.rules import gold_text


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


ANSWER_IS_PROMPT = '{problem}\n\nFormat your answer as follows: "The correct answer is (insert answer here)."'
PROMPTS = {  # by the scorer's rule (the part before "+judge")
    "math": MATH_PROMPT,
    "numeric": MATH_PROMPT,  # the last \boxed{} or "answer is" number
    "integer": "{problem}\n\nPlease reason step by step, and end your answer with the final number.",
    "choice": CHOICE_PROMPT,
    "cem": ANSWER_IS_PROMPT,
    "judge": ANSWER_IS_PROMPT,
    "code": "{problem}\n\nWrite your solution in a single Python code block (```python ... ```).",
}


def default_prompt(scorer: str) -> str:
    """The prompt of a custom file scored by `scorer`."""
    return PROMPTS[scorer.split("+")[0]]


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
        prompt=default_prompt(scorer),
        scorer=scorer,
        description=f"custom JSONL {path}",
        path=path.resolve(),
    )
