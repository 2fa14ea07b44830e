"""The score of a sandbox verdict on a code answer, and the checks of a batch in threads, shared by the
scorers that run programs."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from harness.core.types import Score
from harness.sandbox import Verdict
from harness.scoring.rules import no_answer


def verdict_score(verdict: Verdict, code: str | None, **details: Any) -> Score:
    """1 for a pass, else 0; the code is the extracted answer, its hash the canonical one."""
    return Score(
        value=1.0 if verdict.passed else 0.0,
        extracted=code,
        canonical=hashlib.sha256(code.encode()).hexdigest()[:16] if code is not None else None,
        details={
            "verdict": verdict.status,
            **({"reason": verdict.reason} if verdict.reason else {}),
            **details,
        },
    )


def unanswered(answer: str | None) -> Score | None:
    """A failing verdict's score for a missing answer (an unclosed think block, or blank), else None."""
    missing = no_answer(answer)
    return dataclasses.replace(missing, details={"verdict": "fail", **missing.details}) if missing else None


def checked_in_threads(
    check: Callable[[str | None, str], Score],
    answers: Sequence[str | None],
    golds: Sequence[str],
    workers: int,
) -> Iterator[tuple[int, Score]]:
    """(index, Score) of `check(answer, gold)` for each pair, `workers` at a time, as each finishes; a
    check that raises is an `error` verdict, so one broken item never stops the others."""

    def guarded(answer: str | None, gold: str) -> Score:
        try:
            return check(answer, gold)
        except Exception as e:  # a bug or a broken item
            return Score(0.0, None, None, {"verdict": "error", "reason": f"{type(e).__name__}: {e}"})

    with ThreadPoolExecutor(workers) as pool:
        pairs = enumerate(zip(answers, golds, strict=True))
        futures = {pool.submit(guarded, answer, gold): i for i, (answer, gold) in pairs}
        for future in as_completed(futures):
            yield futures[future], future.result()
