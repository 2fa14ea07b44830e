"""Scorers by name. A scorer has `name`, `version` and `score(answers, golds) -> (index, Score)`."""

from __future__ import annotations

from harness import HarnessError
from harness.scoring.code import CodeScorer
from harness.scoring.math import MathScorer

SCORERS = {"math": MathScorer, "code": CodeScorer}


def get_scorer(name: str, **options):
    if name not in SCORERS:
        raise HarnessError(f"unknown scorer {name!r}; available: {', '.join(SCORERS)}")
    return SCORERS[name](**options)
