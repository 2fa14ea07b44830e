"""GPQA Diamond (198) and GPQA main (448): four-choice graduate-level science questions.

The dataset is gated on the Hugging Face Hub (accept its terms, then `huggingface-cli login` or
HF_TOKEN). Each row lists the correct answer first, so the choices are permuted per item, with a
seed derived from the item's record id alone: the same order on every run and machine, whatever
else is loaded. The permutation is kept in the gold (run.json `answers`) and in the item's meta.
The letter is read from the answer part (after any thinking) by the `choice` scorer.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

from benchmarks.base import REASONING_SAMPLING, Benchmark, FileLayout, HubSource
from harness.core.data import require
from harness.core.types import Item

REPO, REVISION = "Idavidrein/gpqa", "633f5ee89ab8ad4522a9f850766b73f62147ffdd"
PROMPT = "{problem}\n\nPlease reason step by step, and put the letter of your final answer within \\boxed{}."
FIELDS = ("Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")


def permutation(record_id: str) -> list[int]:
    """Where each original choice goes (index 0 is the correct one), seeded by the record id."""
    seed = int.from_bytes(hashlib.sha256(f"gpqa\x1f{record_id}".encode()).digest()[:8], "big")
    order = list(range(4))
    random.Random(seed).shuffle(order)
    return order


def to_item(row: dict[str, Any], path: Path, number: int) -> Item:
    record = str(require(row, "Record ID", path, number))
    question = str(require(row, "Question", path, number)).strip()
    choices = [str(require(row, f, path, number)).strip() for f in FIELDS]
    order = permutation(record)
    shown = [choices[order.index(slot)] for slot in range(4)]
    letter = "ABCD"[order[0]]
    listed = "\n".join(f"({'ABCD'[i]}) {c}" for i, c in enumerate(shown))
    problem = f"What is the correct answer to this question: {question}\n\nChoices:\n{listed}"
    gold = {"answers": [letter], "question": question, "permutation": order}
    return Item(id=record, problem=problem, answer=json.dumps(gold), meta={"permutation": order})


def _gpqa(name: str, file: str, size: int) -> Benchmark:
    return Benchmark(
        name=name,
        description=f"GPQA {name.split('_')[1]} ({size}, four choices permuted per item; gated)",
        hub=HubSource(
            repo=REPO, revision=REVISION, layout=FileLayout(files=(file,), to_item=to_item), gated=True
        ),
        prompt=PROMPT,
        scorer="choice",
        sampling=REASONING_SAMPLING,
    )


GPQA_DIAMOND = _gpqa("gpqa_diamond", "gpqa_diamond.csv", 198)
GPQA_MAIN = _gpqa("gpqa_main", "gpqa_main.csv", 448)
