"""The math rule files' verdict tables share one persistent `MathScorer` per setting: workers start once."""

import pytest

from harness.scoring.math import MathScorer


@pytest.fixture(scope="session")
def verdicts():
    """`verdicts(rows, measured=False)` scores (label, answer, gold, value) rows in one `score` call and
    returns {row index: Score}, every row scored exactly once."""
    scorers: dict[bool, MathScorer] = {}

    def score(rows, measured=False):
        if measured not in scorers:
            scorers[measured] = MathScorer(timeout=30, workers=2, measured=measured, persistent=True)
        results = dict(scorers[measured].score([r[1] for r in rows], [r[2] for r in rows]))
        assert sorted(results) == list(range(len(rows)))
        return results

    yield score
    for scorer in scorers.values():
        scorer.close()
