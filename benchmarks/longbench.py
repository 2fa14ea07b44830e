"""LongBench-V2 (503, four choices) and LongBench v1's multi-hop QA sets HotpotQA, 2WikiMultihopQA and
MuSiQue (200 each), with SPELL's prompts.

LongBench-V2 is scored by the option letter (`choice`) and broken down by difficulty and length;
the v1 sets by cover exact match (`cem`, or max(cem, judge) with --judge-model). SPELL's LB-MQA is
the mean of the three v1 sets. v1 comes from the Hub's parquet conversion of THUDM/LongBench (the
repo itself only has a loading script). Offline, --data-dir D holds D/longbench_v2/data.json and, for
v1, LongBench's data.zip unzipped in D (it holds data/hotpotqa.jsonl, so D/data/hotpotqa.jsonl) or the
file in the set's own folder (D/hotpotqa/hotpotqa.jsonl); likewise 2wikimqa and musique.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.base import Benchmark, FileLayout, HubSource
from benchmarks.doc_prompts import GENERAL_QA, MAX_INPUT, MULTIPLE_CHOICE, SAMPLING, fill
from harness.core.data import require
from harness.core.types import Item
from harness.scoring.rules import gold_text

V2_REPO, V2_REVISION = "THUDM/LongBench-v2", "2b48e494f2c7a2f0af81aae178e05c7e1dde0fe9"
V1_REPO, V1_REVISION = "THUDM/LongBench", "7c9853f5f7fca382f6da407759276469a7b89d0d"  # its parquet conversion


def _v2_item(row: dict[str, Any], path: Path, number: int) -> Item:
    fields = {k: str(require(row, k, path, number)) for k in ("question", "context")}
    choices = {f"choice_{c}": str(require(row, f"choice_{c}", path, number)) for c in "ABCD"}
    answer = str(require(row, "answer", path, number)).strip()
    if answer not in ("A", "B", "C", "D"):
        from harness import HarnessError

        raise HarnessError(f"{path}:{number}: answer {answer!r} is not one of A, B, C, D")
    problem = fill(MULTIPLE_CHOICE, content=fields["context"], question=fields["question"], **choices)
    return Item(
        id=str(require(row, "_id", path, number)),
        problem=problem,
        answer=gold_text(answer, fields["question"]),
        meta={k: row.get(k) for k in ("difficulty", "length", "domain")},
    )


def _v1_item(row: dict[str, Any], path: Path, number: int) -> Item:
    question, context = str(require(row, "input", path, number)), str(require(row, "context", path, number))
    answers = require(row, "answers", path, number)
    return Item(
        id=str(require(row, "_id", path, number)),
        problem=fill(GENERAL_QA, content=context, question=question),
        answer=gold_text(list(answers), question),
    )


LONGBENCH_V2 = Benchmark(
    name="longbench_v2",
    description="LongBench-V2 (503, four choices; SPELL's prompt; difficulty and length breakdown)",
    hub=HubSource(
        repo=V2_REPO, revision=V2_REVISION, layout=FileLayout(files=("data.json",), to_item=_v2_item)
    ),
    prompt="{problem}",
    scorer="choice",
    sampling=SAMPLING,
    group_by=("difficulty", "length"),
    max_input_tokens=MAX_INPUT,
)


def _v1(name: str, title: str) -> Benchmark:
    return Benchmark(
        name=name,
        description=f"{title} (LongBench v1, 200; cover exact match)",
        hub=HubSource(
            repo=V1_REPO,
            revision=V1_REVISION,
            layout=FileLayout(files=(f"{name}/test/0000.parquet",), to_item=_v1_item),
        ),
        local_layouts=(FileLayout(files=(f"{name}.jsonl",), to_item=_v1_item),),
        folders=("data",),  # LongBench's data.zip, unzipped: data/<name>.jsonl
        prompt="{problem}",
        scorer="cem",
        sampling=SAMPLING,
        max_input_tokens=MAX_INPUT,
    )


HOTPOTQA = _v1("hotpotqa", "HotpotQA")
TWOWIKIMQA = _v1("2wikimqa", "2WikiMultihopQA")
MUSIQUE = _v1("musique", "MuSiQue")
