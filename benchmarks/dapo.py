"""DAPO-Math-17K, the training set of SPAE's (and DAPO's) recipes, as the JSONL `harness train` reads.

The Hub's parquet holds each of its 17K questions about a hundred times, each wrapped in DAPO's
instruction ("Solve the following math problem step by step. The last line ... Answer: $Answer ...")
with the integer answer in `reward_model.ground_truth`. `convert` writes one line per distinct
question, `{id, problem, answer}` with the bare problem (the trainer's prompt template wraps it), and
leaves out questions that appear with two different answers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.base import FileLayout, HubSource
from harness import HarnessError

INSTRUCTION = "Solve the following math problem step by step."
REMINDER = '\n\nRemember to put your answer on its own line after "Answer:"'


@dataclass(frozen=True)
class Converted:
    rows: int  # parquet rows read
    written: int  # distinct questions written
    conflicting: int  # questions left out: the same text with two different answers


def _unused(row: dict[str, Any], path: Path, number: int):
    raise HarnessError(f"{path}:{number}: DAPO-Math-17K is converted by benchmarks.dapo.convert")


DAPO_MATH_17K = HubSource(
    repo="BytedTsinghua-SIA/DAPO-Math-17k",
    revision="65877096c24ffa7abc4e4fa5edb95cf3413a5674",
    layout=FileLayout(files=("data/dapo-math-17k.parquet",), to_item=_unused),
)
NAME = "dapo-math-17k"  # `harness fetch-data dapo-math-17k --to data` writes data/dapo-math-17k.jsonl


def bare_problem(prompt: str) -> str:
    """The question inside DAPO's instruction and reminder (a prompt without them is kept whole)."""
    text = prompt.strip()
    if text.startswith(INSTRUCTION) and "\n\n" in text:
        text = text.split("\n\n", 1)[1]
    return text.split(REMINDER, 1)[0].strip()


def _row(row: dict[str, Any], path: Path, number: int) -> tuple[str, str, str]:
    """(id, problem, answer) of one parquet row, or an error naming the row."""
    try:
        prompt = row["prompt"][0]["content"]
        answer = str(row["reward_model"]["ground_truth"]).strip()
    except (KeyError, IndexError, TypeError):
        raise HarnessError(
            f"{path}: row {number} is not DAPO-Math-17K's shape (prompt[0].content, "
            "reward_model.ground_truth)"
        ) from None
    problem = bare_problem(str(prompt))
    if not problem or not answer:
        raise HarnessError(f"{path}: row {number} has an empty problem or answer")
    index = (row.get("extra_info") or {}).get("index")
    return (str(index) if index not in (None, "") else str(number)), problem, answer


def convert(parquet: Path, out: Path) -> Converted:
    """Write `out` (JSONL of {id, problem, answer}, one line per distinct question, first id kept)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    first: dict[str, tuple[str, str]] = {}  # problem -> (id, answer)
    conflicting: set[str] = set()
    number = 0
    try:
        batches = pq.ParquetFile(parquet).iter_batches(
            batch_size=8192, columns=["prompt", "reward_model", "extra_info"]
        )
        for batch in batches:
            for row in batch.to_pylist():
                number += 1
                id_, problem, answer = _row(row, parquet, number)
                if problem not in first:
                    first[problem] = (id_, answer)
                elif first[problem][1] != answer:
                    conflicting.add(problem)
    except (pa.ArrowException, OSError) as e:
        raise HarnessError(f"{parquet}: not DAPO-Math-17K's parquet file ({e})") from None
    lines = [
        json.dumps({"id": id_, "problem": problem, "answer": answer}, ensure_ascii=False) + "\n"
        for problem, (id_, answer) in first.items()
        if problem not in conflicting
    ]
    if not lines:
        raise HarnessError(f"{parquet}: no questions")
    out.write_text("".join(lines), encoding="utf-8")
    return Converted(rows=number, written=len(lines), conflicting=len(conflicting))
