"""HumanEval, HumanEval+ and MBPP+ (evalplus's data, pinned release files).

`humaneval_plus` and `mbpp_plus` run evalplus's base and plus inputs against the ground truth
(HumanEvalPlus v0.1.10, MbppPlus v0.2.0, the GitHub release files evalplus itself downloads).
`humaneval` is the original 164 problems with their own `check` tests. Offline, --data-dir holds
`humaneval/HumanEval.jsonl.gz`, `humaneval_plus/HumanEvalPlus.jsonl[.gz]` and
`mbpp_plus/MbppPlus.jsonl[.gz]`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.base import Benchmark, FileLayout, HubSource
from harness.core.data import require
from harness.core.types import Item, Sampling
from harness.sandbox.codec import encode

HUMANEVAL_PLUS_VERSION = "v0.1.10"
MBPP_PLUS_VERSION = "v0.2.0"
PROMPT = (
    "Please provide a self-contained Python script that solves the following problem in a markdown "
    "code block:\n```\n{problem}\n```"
)
SAMPLING = Sampling(n=16, temperature=0.6, top_p=0.95, max_tokens=32768)


def _plus_mapper(dataset: str):
    def to_item(row: dict[str, Any], path: Path, number: int) -> Item:
        task_id = str(require(row, "task_id", path, number))
        prompt, entry = require(row, "prompt", path, number), require(row, "entry_point", path, number)
        inputs = {k: row.get(k) or [] for k in ("base_input", "plus_input")}
        if dataset == "mbpp":
            from evalplus.data.mbpp import mbpp_deserialize_inputs  # tuples and sets JSON cannot hold

            inputs = {k: mbpp_deserialize_inputs(task_id, v) for k, v in inputs.items()}
        solution = require(row, "canonical_solution", path, number)
        gold = {
            "kind": "evalplus",
            "dataset": dataset,
            "entry_point": entry,
            "prompt": prompt,
            "solution": prompt + solution if dataset == "humaneval" else solution,
            "atol": row.get("atol") or 0,
            **{k: encode(v) for k, v in inputs.items()},
        }
        return Item(id=task_id, problem=prompt.strip(), answer=json.dumps(gold))

    return to_item


def _humaneval_item(row: dict[str, Any], path: Path, number: int) -> Item:
    prompt = require(row, "prompt", path, number)
    gold = {
        "kind": "tests",
        "tests": require(row, "test", path, number),
        "entry_point": require(row, "entry_point", path, number),
        "prelude": prompt,
    }
    return Item(
        id=str(require(row, "task_id", path, number)), problem=prompt.strip(), answer=json.dumps(gold)
    )


def _release(name: str, version: str, dataset: str, files: tuple[str, ...]) -> Benchmark:
    to_item = _plus_mapper(dataset)
    return Benchmark(
        name=name,
        description=f"{'HumanEval+' if dataset == 'humaneval' else 'MBPP+'} {version} (evalplus)",
        hub=None,
        local_layouts=tuple(FileLayout(files=(f,), to_item=to_item) for f in files),
        prompt=PROMPT,
        scorer="code",
        sampling=SAMPLING,
        release=(
            f"https://github.com/evalplus/{files[0].split('.')[0].lower()}_release/releases/download/"
            f"{version}/{files[0]}"
        ),
    )


HUMANEVAL_PLUS = _release(
    "humaneval_plus", HUMANEVAL_PLUS_VERSION, "humaneval", ("HumanEvalPlus.jsonl.gz", "HumanEvalPlus.jsonl")
)
MBPP_PLUS = _release("mbpp_plus", MBPP_PLUS_VERSION, "mbpp", ("MbppPlus.jsonl.gz", "MbppPlus.jsonl"))
HUMANEVAL = Benchmark(
    name="humaneval",
    description="HumanEval (164 problems, original tests)",
    hub=HubSource(
        repo="openai/openai_humaneval",
        revision="main",
        layout=FileLayout(files=("openai_humaneval/test-00000-of-00001.parquet",), to_item=_humaneval_item),
    ),
    local_layouts=(FileLayout(files=("HumanEval.jsonl.gz",), to_item=_humaneval_item),),
    prompt=PROMPT,
    scorer="code",
    sampling=SAMPLING,
)
