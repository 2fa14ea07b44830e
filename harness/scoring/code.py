"""Code answers checked by execution in the sandbox, many at a time.

Each gold answer is a JSON object whose `kind` says how to check: `lcb` (LiveCodeBench stdin/stdout
and LeetCode-style functional tests, see lcb.py), `tests` (trusted test code, e.g. HumanEval's `check` or a
custom benchmark's asserts, run in a separate sandbox), `evalplus` (differential testing against
the ground truth, see evalplus.py) and `cruxeval` (see cruxeval.py). A verdict is pass, fail,
timeout, memory or error; only pass scores 1.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterator, Sequence

from harness import sandbox
from harness.core.cache import Cache
from harness.core.types import Score
from harness.sandbox import Limits, Verdict, run_tests
from harness.scoring import lcb
from harness.scoring.extract import function_code, last_code_block
from harness.scoring.verdicts import checked_in_threads, unanswered, verdict_score

RULES_VERSION = "2"
TESTS_SECONDS = 20.0  # a whole `tests` check


def check_tests(answer: str, gold: dict, limits: Limits) -> Score:
    entry = gold.get("entry_point")
    code = function_code(answer, entry) if entry else (last_code_block(answer) or answer)
    if code is None:
        return verdict_score(Verdict("fail", f"no code defining {entry} in the answer"), None)
    if entry and gold.get("prelude") and f"def {entry}" not in code:
        code = gold["prelude"] + code  # a completion of the prompt's function body
    return verdict_score(run_tests(code, gold["tests"], limits, entry, gold.get("prelude", "")), code)


Checker = Callable[[str, dict, Limits], Score]


TRUTHS = "ground-truth"  # the harness cache's folder of evalplus's expected outputs


def _checkers(truths: Cache | None) -> dict[str, Checker]:
    """Every kind's checker; evalplus and cruxeval load here, not with the module (numpy, evalplus).
    `truths`: where evalplus's ground truth is kept between runs."""
    from harness.scoring.cruxeval import check as check_cruxeval
    from harness.scoring.evalplus import check as check_evalplus

    evalplus = functools.partial(check_evalplus, cache=truths)
    return {"lcb": lcb.check, "tests": check_tests, "evalplus": evalplus, "cruxeval": check_cruxeval}


class CodeScorer:
    """Checks code answers in sandboxes; `timeout` overrides each kind's own time limit."""

    name = "code"

    def __init__(self, timeout: float | None = None, workers: int | None = None, cache: bool = True):
        sandbox.require()  # no code runs unisolated without the user's --unsafe-no-sandbox
        self.timeout = timeout
        self.workers = workers or os.cpu_count() or 1
        self.checkers = _checkers(Cache(TRUTHS) if cache else None)

    @property
    def version(self) -> str:
        return f"code-{RULES_VERSION}+sandbox-{sandbox.facts()['isolation']}"

    def limits(self, kind: str) -> Limits:
        if kind == "lcb":
            return lcb.limits(self.timeout)
        wall = self.timeout or {"tests": TESTS_SECONDS}.get(kind, 10.0)
        return Limits(wall=wall, cpu=wall)

    def score(
        self,
        answers: Sequence[str | None],
        golds: Sequence[str],
        previous: Sequence[dict | None] | None = None,
    ) -> Iterator[tuple[int, Score]]:
        """Yield (index, Score) as checks finish; a check that breaks is an `error` verdict."""
        yield from checked_in_threads(self._one, answers, golds, self.workers)

    def close(self) -> None:
        pass  # each `score` call has its own thread pool

    def _one(self, answer: str | None, gold_text: str) -> Score:
        missing = unanswered(answer)
        if missing is not None:
            return missing
        gold = json.loads(gold_text)
        return self.checkers[gold["kind"]](answer, gold, self.limits(gold["kind"]))
