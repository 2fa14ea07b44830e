"""LiveCodeBench's checks, as its runner (lcb_runner/evaluation/testing_util.py) makes them.

Every solution runs after `PRELUDE`, the runner's block of imports (`from typing import *`, ...,
and a recursion limit of 50,000). Standard-input problems run each test as a fresh program; a
SystemExit (`exit()`, `sys.exit(1)`) ends the program and its output so far is compared. Call-based
(LeetCode) problems load the code once and call the method for each test, each call under its own
time limit (`TEST_SECONDS`); the process's CPU budget covers every test.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import pickle
import zlib

from harness.core.types import Score
from harness.sandbox import CallFailed, Limits, Served, Verdict, run_program
from harness.sandbox.jobs import failed
from harness.scoring.extract import last_code_block
from harness.scoring.outputs import as_lists, stdout_matches
from harness.scoring.verdicts import verdict_score

TEST_SECONDS = 6.0  # LiveCodeBench's time limit per test
MEMORY_MB = 4096  # LiveCodeBench sets none; ours only stops a runaway solution (see README)
_STAR_IMPORTS = (
    "string re datetime collections heapq bisect copy math random statistics itertools functools "
    "operator io sys json builtins typing"
).split()
PRELUDE = (
    "".join(f"from {name} import *\n" for name in _STAR_IMPORTS)
    + "".join(f"import {name}\n" for name in _STAR_IMPORTS if name not in ("builtins", "typing"))
    + "sys.setrecursionlimit(50000)\n"
)


class _TextOnly(pickle.Unpickler):
    def find_class(self, module: str, name: str):  # noqa: ARG002
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}: tests are plain text")


def private_tests(field: str) -> list[dict]:
    """LiveCodeBench's private tests: JSON, or base64(zlib(pickle(JSON text))) read without running
    any pickled code (only plain strings may be unpickled)."""
    if not field:
        return []
    if field.lstrip().startswith("["):
        return json.loads(field)
    raw = zlib.decompress(base64.b64decode(field))
    return json.loads(_TextOnly(io.BytesIO(raw)).load())


def limits(per_test: float | None) -> Limits:
    """The limits of one check: `per_test` seconds (LiveCodeBench's 6 s by default) for each test."""
    seconds = per_test or TEST_SECONDS
    return Limits(wall=seconds, cpu=seconds, memory_mb=MEMORY_MB)


def check(answer: str, gold: dict, limits: Limits) -> Score:
    """Run the answer's last fenced code block on the item's tests (public, then private)."""
    code = last_code_block(answer)
    if code is None or not code.strip():
        reason = "no fenced code block in the answer" if code is None else "the last code block is empty"
        return verdict_score(Verdict("fail", reason), code)
    tests = gold["tests"] + private_tests(gold.get("private") or "")
    if not tests:
        return verdict_score(Verdict("error", "the problem has no tests"), code)
    if tests[0].get("testtype") == "functional":
        verdict, failing = _functional(PRELUDE + "\n" + code, gold["func_name"], tests, limits)
    else:
        verdict, failing = _stdio(PRELUDE + code, tests, limits)
    details = {"tests": len(tests)}
    if failing is not None:
        details["failed_test"] = failing
    return verdict_score(verdict, code, **details)


def _stdio(program: str, tests: list[dict], limits: Limits) -> tuple[Verdict, int | None]:
    for i, test in enumerate(tests):
        exit = run_program(program, test["input"], limits, exit_ends=True)
        if exit.status != "ok":
            return failed(exit, "runtime error"), i
        if not stdout_matches(exit.stdout.decode(errors="replace"), test["output"]):
            return Verdict("fail", "wrong answer"), i
    return Verdict("pass"), None


def _functional(code: str, func_name: str, tests: list[dict], limits: Limits) -> tuple[Verdict, int | None]:
    target = f"Solution.{func_name}" if "class Solution" in code else func_name
    budget = dataclasses.replace(limits, cpu=limits.cpu * (len(tests) + 1))  # loading, then each test
    try:
        with Served(code, budget) as served:
            for i, test in enumerate(tests):
                args = [json.loads(line) for line in test["input"].split("\n") if line.strip()]
                try:
                    got = served.call(target, args)
                except CallFailed as e:
                    return e.verdict, i
                if as_lists(got) != json.loads(test["output"]):
                    return Verdict("fail", "wrong answer"), i
    except CallFailed as e:
        return e.verdict, 0
    return Verdict("pass"), None
