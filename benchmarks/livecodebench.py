"""LiveCodeBench code generation: a release (release_v1 ... release_v6) and a contest_date window.

`livecodebench` is release_v5 with problems dated 2024-08-01 <= contest_date < 2025-02-01, the
window the self-play papers report; `livecodebench:release_v6` or
`livecodebench:release_v5:2024-08-01..2025-02-01` pick others (either date may be left out).
The Hub files are read directly (no loading script); private tests are decoded without running
pickled code. Offline, the rllm copies under --data-dir (public tests only, no dates or
difficulty) stand in for the exact release and window they hold.
"""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.base import Benchmark, FileLayout, HubSource
from harness import HarnessError
from harness.core.data import require
from harness.core.types import Item, Sampling

FILES = ("test.jsonl", "test2.jsonl", "test3.jsonl", "test4.jsonl", "test5.jsonl", "test6.jsonl")
RELEASES = {f"release_v{i}": FILES[:i] for i in range(1, 7)} | {
    f"v{i}": FILES[i - 1 : i] for i in range(1, 7)
}
DEFAULT = ("release_v5", "2024-08-01", "2025-02-01")
# rllm's copies: (folder, file) -> the (release, start, end) they hold
RLLM_COPIES = {
    ("release_v5", "2024-08-01", "2025-02-01"): "livecodebench_rllm_2408_2501",
    ("release_v5", None, None): "livecodebench_rllm_v5_879",
}
PROMPT = (
    "You will be given a question (problem specification) and will generate a correct Python program "
    "that matches the specification and passes all tests.\n\nQuestion: {problem}"
)
STDIN_FORMAT = (
    "\n\nRead the inputs from stdin, solve the problem and write the answer to stdout (do not directly "
    "test on the sample inputs). Enclose your code within delimiters as follows. Ensure that when the "
    "python program runs, it reads the inputs, runs the algorithm and writes output to STDOUT.\n"
    "```python\n# YOUR CODE HERE\n```"
)
STARTER_FORMAT = (
    "\n\nYou will use the following starter code to write the solution to the problem and enclose your "
    "code within delimiters.\n```python\n{starter}\n```"
)


def _problem_text(content: str, starter: str) -> str:
    return content + (STARTER_FORMAT.format(starter=starter) if starter.strip() else STDIN_FORMAT)


def _func_name(starter: str, metadata: Any) -> str | None:
    if isinstance(metadata, str) and metadata.strip():
        metadata = json.loads(metadata)
    if isinstance(metadata, dict) and metadata.get("func_name"):
        return metadata["func_name"]
    names = re.findall(r"def\s+(\w+)\s*\(\s*self", starter)
    return names[-1] if names else None


def _hub_item(row: dict[str, Any], path: Path, number: int) -> Item:
    starter = row.get("starter_code") or ""
    public = json.loads(require(row, "public_test_cases", path, number))
    gold = {
        "kind": "lcb",
        "tests": public,
        "private": row.get("private_test_cases") or "",
        "func_name": _func_name(starter, row.get("metadata")),
    }
    return Item(
        id=str(require(row, "question_id", path, number)),
        problem=_problem_text(require(row, "question_content", path, number), starter),
        answer=json.dumps(gold),
        meta={
            "contest_date": str(row.get("contest_date", ""))[:10],
            "difficulty": row.get("difficulty") or "unknown",
            "platform": row.get("platform") or "unknown",
        },
    )


def _rllm_item(row: dict[str, Any], path: Path, number: int) -> Item:
    starter = row.get("starter_code") or ""
    tests = require(row, "tests", path, number)
    gold = {"kind": "lcb", "tests": tests, "private": "", "func_name": _func_name(starter, None)}
    return Item(
        id=str(number - 1),
        problem=_problem_text(require(row, "problem", path, number), starter),
        answer=json.dumps(gold),
        meta={"difficulty": "unknown"},
    )


def _date(text: str | None, spec: str) -> str | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        raise HarnessError(f"{spec}: {text!r} is not a date (YYYY-MM-DD)") from None


def parse(spec: str) -> tuple[str, str | None, str | None]:
    """("release_v5", start, end) from "livecodebench[:RELEASE[:START..END]]"."""
    parts = spec.split(":")
    if parts == ["livecodebench"]:
        return DEFAULT
    release = parts[1] if len(parts) > 1 else ""
    if release not in RELEASES or len(parts) > 3:
        raise HarnessError(
            f"{spec}: expected livecodebench[:RELEASE[:START..END]], RELEASE one of {list(RELEASES)}"
        )
    start = end = None
    if len(parts) == 3:
        if ".." not in parts[2]:
            raise HarnessError(f"{spec}: the window is START..END, e.g. 2024-08-01..2025-02-01")
        start, end = (_date(d, spec) for d in parts[2].split("..", 1))
    return release, start, end


def livecodebench(spec: str = "livecodebench") -> Benchmark:
    release, start, end = parse(spec)

    def in_window(item: Item) -> bool:
        day = item.meta.get("contest_date")
        if not day:  # a copy without dates is only used for the window it is known to hold
            return True
        return (start is None or day >= start) and (end is None or day < end)

    rllm = RLLM_COPIES.get((release, start, end))
    return Benchmark(
        name=spec,
        description=f"LiveCodeBench {release}"
        + (f", contests {start or '...'} to {end or '...'}" if start or end else ""),
        hub=HubSource(
            repo="livecodebench/code_generation_lite",
            revision="main",
            layout=FileLayout(files=RELEASES[release], to_item=_hub_item),
        ),
        local_layouts=(FileLayout(files=("livecodebench.json",), to_item=_rllm_item),) if rllm else (),
        folders=("livecodebench",) + ((rllm,) if rllm else ()),
        prompt="{problem}",
        scorer="code",
        sampling=Sampling(n=16, temperature=0.6, top_p=0.95, max_tokens=32768),
        group_by=("difficulty",),
        keep=in_window,
    )


LIVECODEBENCH = livecodebench()  # the whole default release, registered by name (pyproject.toml)
