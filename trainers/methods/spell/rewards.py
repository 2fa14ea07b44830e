"""SPELL's rewards (SPELL paper, Eqs. 4-7): the verifier's strict majority, the responder's max(rule, vote),
the verifier's agreement with its majority, and the questioner's mapping of the responders' mean."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from trainers.methods.spell.options import MAPPINGS, SIGMA, VOTES
from trainers.methods.spell.parsing import INVALID, YES

UNGROUNDED = -0.5  # answerable without the documents (Alg. 1 l.13)
FORMAT_ERROR = -1.0  # an unparsable proposal (Eq. 7)


def questioner_reward(mean: float, mapping: str = "gaussian", sigma: float = SIGMA) -> float:
    """Eq. 7 for an answered question: 0 when every or no responder is right, else the mapping."""
    if not 0.0 < mean < 1.0:
        return 0.0
    if mapping == "gaussian":
        return math.exp(-((mean - 0.5) ** 2) / (2 * sigma**2))
    if mapping == "azr":
        return 1.0 - mean
    if mapping == "rzero":
        return 1.0 - 2.0 * abs(mean - 0.5)
    raise ValueError(f"questioner reward mapping {mapping!r} is not one of {MAPPINGS}")


def majority(judgments: Sequence[int], vote: str = "strict") -> int:
    """Eq. 4: YES (1) when more than half the judgments say YES, so a tie is NO; an invalid judgment
    counts as NO. `vote="mode"` is the released code's: the most frequent of YES, NO
    and INVALID, ties going to the label seen first; INVALID means the rule decides alone."""
    if vote == "strict":
        return int(sum(j == YES for j in judgments) > len(judgments) / 2)
    if vote == "mode":
        counts = Counter(judgments)
        return max(counts, key=lambda label: (counts[label], -judgments.index(label)))
    raise ValueError(f"vote {vote!r} is not one of {VOTES}")


def verifier_rewards(judgments: Sequence[int], vote: int, invalid_reward: float = 0.0) -> list[float]:
    """Eq. 5: 1 for each judgment that agrees with the majority, else 0. An unreadable judgment agrees
    with nothing: it gets `invalid_reward` (0; the released code's format penalty is -1)."""
    return [invalid_reward if j == INVALID else float(j == vote) for j in judgments]


def responder_reward(rule: float, vote: int) -> float:
    """Eq. 6: a correct paraphrase the rule misses is still right when the verifiers agree it is.
    An INVALID majority (the code's mode vote) leaves the rule's score."""
    return rule if vote == INVALID else max(rule, float(vote))
