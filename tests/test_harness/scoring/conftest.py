"""The math rule files' verdict tables share one persistent `MathScorer` per setting: workers start once."""

import pytest

from harness.scoring.math import MathScorer


@pytest.fixture(scope="session")
def verdicts():
    """`verdicts(rows, measured=False)` scores (label, answer, gold, value) rows in one `score` call and
    returns {row index: Score}; a table asked for again is not scored again."""
    scorers: dict[bool, MathScorer] = {}
    done: dict[tuple, dict] = {}

    def score(rows, measured=False):
        key = (tuple(rows), measured)
        if key in done:
            return done[key]
        if measured not in scorers:
            scorers[measured] = MathScorer(timeout=30, workers=2, measured=measured, persistent=True)
        results = dict(scorers[measured].score([r[1] for r in rows], [r[2] for r in rows]))
        assert sorted(results) == list(range(len(rows)))
        done[key] = results
        return results

    yield score
    for scorer in scorers.values():
        scorer.close()
