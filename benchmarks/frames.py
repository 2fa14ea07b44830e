"""Frames (824 multi-hop questions over Wikipedia), with the linked articles as the document.

The articles come from Tongyi-Zhiwen/frames (Frames with each question's Wikipedia pages as
`wiki_items`, the copy SPELL and QwenLong-L1 evaluate on); the document is each article's title
and text, joined by newlines. Scored by cover exact match (`cem`, or max(cem, judge) with
--judge-model). Offline, --data-dir D holds D/frames/test.jsonl. The official release
(google/frames-benchmark's test.tsv) has only links to the articles, not their text: it is recognised
and refused with a message that says which copy to use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.base import Benchmark, FileLayout, HubSource
from benchmarks.doc_prompts import GENERAL_QA, MAX_INPUT, SAMPLING, fill
from harness import HarnessError
from harness.core.data import require
from harness.core.types import Item
from harness.scoring.rules import gold_text

OFFICIAL = "google/frames-benchmark"


def _official_release(row: dict[str, Any]) -> bool:
    """A row of the official release: Wikipedia links (wikipedia_link_1...), no articles."""
    return "wiki_items" not in row and any("wikipedia_link" in str(key) for key in row)


def to_item(row: dict[str, Any], path: Path, number: int) -> Item:
    if _official_release(row):
        raise HarnessError(
            f"{path}:{number}: this is the official Frames release ({OFFICIAL}'s test.tsv): questions with "
            "links to Wikipedia, without the articles' text. This benchmark gives the model the linked "
            "articles as its document (as SPELL and QwenLong-L1 evaluate Frames), so it needs the copy "
            "with the articles: Tongyi-Zhiwen/frames test.jsonl (field wiki_items), read from the Hub, "
            "or put at D/frames/test.jsonl for --data-dir D"
        )
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
        revision="main",  # unpinned (its commits could not be listed offline); runs record the commit read
        layout=FileLayout(files=("test.jsonl",), to_item=to_item),
    ),
    local_layouts=(FileLayout(files=("test.tsv",), to_item=to_item),),  # the official file: refused
    prompt="{problem}",
    scorer="cem",
    sampling=SAMPLING,
    max_input_tokens=MAX_INPUT,
)
