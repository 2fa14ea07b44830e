"""Frames (824 multi-hop questions over Wikipedia), with the linked articles as the document.

The articles come from Tongyi-Zhiwen/frames (Frames with each question's Wikipedia pages as
`wiki_items`, the copy SPELL and QwenLong-L1 evaluate on); the document is each article's title
and text, joined by newlines. Scored by cover exact match (`cem`, or max(cem, judge) with
--judge-model). Offline, --data-dir D holds D/frames/test.jsonl.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.base import Benchmark, FileLayout, HubSource
from benchmarks.doc_prompts import GENERAL_QA, MAX_INPUT, SAMPLING, fill
from harness import HarnessError
from harness.data import require
from harness.scoring.rules import gold_text
from harness.types import Item


def to_item(row: dict[str, Any], path: Path, number: int) -> Item:
    question, answer = str(require(row, "Prompt", path, number)), str(require(row, "Answer", path, number))
    articles = require(row, "wiki_items", path, number)
    if not isinstance(articles, list) or not all(isinstance(a, dict) for a in articles):
        raise HarnessError(f"{path}:{number}: wiki_items must be a list of {{title, text}} objects")
    content = "\n".join(f"{a.get('title', '')}\n{a.get('text', '')}" for a in articles)
    return Item(
        id=str(row.get("id", number - 1)),
        problem=fill(GENERAL_QA, content=content, question=question),
        answer=gold_text(answer, question),
    )


FRAMES = Benchmark(
    name="frames",
    description="Frames (824, Wikipedia articles as context; cover exact match)",
    hub=HubSource(
        repo="Tongyi-Zhiwen/frames",
        revision="main",  # not pinned: its commits could not be listed when this was written
        layout=FileLayout(files=("test.jsonl",), to_item=to_item),
    ),
    prompt="{problem}",
    scorer="cem",
    sampling=SAMPLING,
    max_input_tokens=MAX_INPUT,
)
