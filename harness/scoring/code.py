"""Code answers checked by execution in the sandbox, many at a time.

Each gold answer is a JSON object whose `kind` says how to check: `lcb` (LiveCodeBench stdin/stdout
and LeetCode-style functional tests), `tests` (trusted test code, e.g. HumanEval's `check` or a
custom benchmark's asserts, run in a separate sandbox), `evalplus` (differential testing against
the ground truth, see evalplus.py) and `cruxeval` (see cruxeval.py). A verdict is pass, fail,
timeout, memory or error; only pass scores 1.
"""

from __future__ import annotations

import base64
import io
import json
import os
import pickle
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed

from harness import sandbox
from harness.sandbox import CallFailed, Limits, Served, Verdict, run_program, run_tests
from harness.sandbox.jobs import failed
from harness.scoring.extract import function_code, last_code_block
from harness.scoring.outputs import as_lists, stdout_matches
from harness.scoring.verdicts import verdict_score
from harness.types import Score

RULES_VERSION = "1"
LCB_TEST_SECONDS = 6.0  # LiveCodeBench's per-test limit
TESTS_SECONDS = 20.0  # a whole `tests` check


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


def check_lcb(answer: str, gold: dict, limits: Limits) -> Score:
    code = last_code_block(answer)
    if code is None:
        return verdict_score(Verdict("fail", "no fenced code block in the answer"), None)
    tests = gold["tests"] + private_tests(gold.get("private") or "")
    if not tests:
        return verdict_score(Verdict("error", "the problem has no tests"), code)
    if tests[0].get("testtype") == "functional":
        verdict, failing = _functional(code, gold["func_name"], tests, limits)
    else:
        verdict, failing = _stdio(code, tests, limits)
    details = {"tests": len(tests)}
    if failing is not None:
        details["failed_test"] = failing
    return verdict_score(verdict, code, **details)


def _stdio(code: str, tests: list[dict], limits: Limits) -> tuple[Verdict, int | None]:
    for i, test in enumerate(tests):
        exit = run_program(code, test["input"], limits)
        if exit.status != "ok":
            return failed(exit, "runtime error"), i
        if not stdout_matches(exit.stdout.decode(errors="replace"), test["output"]):
            return Verdict("fail", "wrong answer"), i
    return Verdict("pass"), None


def _functional(code: str, func_name: str, tests: list[dict], limits: Limits) -> tuple[Verdict, int | None]:
    target = f"Solution.{func_name}" if "class Solution" in code else func_name
    try:
        with Served(code, limits) as served:
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


def check_tests(answer: str, gold: dict, limits: Limits) -> Score:
    entry = gold.get("entry_point")
    code = function_code(answer, entry) if entry else (last_code_block(answer) or answer)
    if code is None:
        return verdict_score(Verdict("fail", f"no code defining {entry} in the answer"), None)
    if entry and gold.get("prelude") and f"def {entry}" not in code:
        code = gold["prelude"] + code  # a completion of the prompt's function body
    return verdict_score(run_tests(code, gold["tests"], limits, entry, gold.get("prelude", "")), code)


Checker = Callable[[str, dict, Limits], Score]


def _checkers() -> dict[str, Checker]:
    """Every kind's checker; evalplus and cruxeval load here, not with the module (numpy, evalplus)."""
    from harness.scoring.cruxeval import check as check_cruxeval
    from harness.scoring.evalplus import check as check_evalplus

    return {"lcb": check_lcb, "tests": check_tests, "evalplus": check_evalplus, "cruxeval": check_cruxeval}


class CodeScorer:
    """Checks code answers in sandboxes; `timeout` overrides each kind's own time limit."""

    name = "code"

    def __init__(self, timeout: float | None = None, workers: int | None = None):
        sandbox.require()  # no code runs unisolated without the user's --unsafe-no-sandbox
        self.timeout = timeout
        self.workers = workers or os.cpu_count() or 1
        self.checkers = _checkers()

    @property
    def version(self) -> str:
        return f"code-{RULES_VERSION}+sandbox-{sandbox.facts()['isolation']}"

    def limits(self, kind: str) -> Limits:
        wall = self.timeout or {"lcb": LCB_TEST_SECONDS, "tests": TESTS_SECONDS}.get(kind, 10.0)
        return Limits(wall=wall, cpu=wall)

    def score(
        self,
        answers: Sequence[str | None],
        golds: Sequence[str],
        previous: Sequence[dict | None] | None = None,
    ) -> Iterator[tuple[int, Score]]:
        """Yield (index, Score) as checks finish; a check that breaks is an `error` verdict."""
        with ThreadPoolExecutor(self.workers) as pool:
            futures = {
                pool.submit(self._one, a, g): i for i, (a, g) in enumerate(zip(answers, golds, strict=True))
            }
            for future in as_completed(futures):
                yield futures[future], future.result()

    def close(self) -> None:
        pass  # each `score` call has its own thread pool

    def _one(self, answer: str | None, gold_text: str) -> Score:
        if answer is None or not answer.strip():
            reason = "no answer (unclosed think block)" if answer is None else "empty answer"
            return Score(0.0, None, None, {"verdict": "fail", "reason": reason})
        gold = json.loads(gold_text)
        try:
            return self.checkers[gold["kind"]](answer, gold, self.limits(gold["kind"]))
        except Exception as e:  # a bug or a broken item must not stop the other checks
            return Score(0.0, None, None, {"verdict": "error", "reason": f"{type(e).__name__}: {e}"})
