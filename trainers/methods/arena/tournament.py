"""Reasoning Arena's tournament core (its paper, §3-4, Eqs. 3-9): routing, soft outcomes, pairings.

Everything here is plain Python over trace indices 0..N-1 of one group; the judge and the Bradley-Terry
fit (`bt.py`) live elsewhere. A match `(i, j, o)` is the soft outcome `o` of trace i against trace j.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from itertools import combinations
from typing import NamedTuple

VERDICTS = ("A", "B", "Tie")
ARRIVALS = ("length", "random", "index")
TIE_RULES = ("wins", "arrival")
MAX_ANCHORS = 3  # best, worst, median (§4)


class Match(NamedTuple):
    """Trace i's soft outcome `o` in [0, 1] against trace j (Eq. 7)."""

    i: int
    j: int
    o: float


def route(rewards: Sequence[float], atol: float = 1e-8) -> str | None:
    """None for a reward-diverse group, else "all_correct" or "all_incorrect" (Eqs. 3-5).

    A group is non-diverse when its population std is at most `atol`, so float rewards with rounding-level
    spread route too; a single trace has no spread. The kind is "all_correct" when the mean is at
    least 0.5 (binary rewards are all 1 or all 0).
    """
    if not rewards:
        raise ValueError("route needs at least one reward")
    mean = math.fsum(rewards) / len(rewards)
    std = math.sqrt(math.fsum((r - mean) ** 2 for r in rewards) / len(rewards))
    if std > atol:
        return None
    return "all_correct" if mean >= 0.5 else "all_incorrect"


def soft_outcome(verdict: str, gamma: float) -> float:
    """Eq. 7: the first trace's outcome, gamma for "A", 1/2 for "Tie", 1 - gamma for "B".

    gamma is the soft margin, in (1/2, 1].
    """
    if not 0.5 < gamma <= 1.0:
        raise ValueError(f"gamma must be in (0.5, 1], got {gamma}")
    outcomes = {"A": gamma, "Tie": 0.5, "B": 1.0 - gamma}
    if verdict not in outcomes:
        raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
    return outcomes[verdict]


def mirror(matches: Sequence[Match]) -> list[Match]:
    """Each match followed by its mirror (j, i, 1 - o): the symmetrised set M~ (§4)."""
    return [m for i, j, o in matches for m in (Match(i, j, o), Match(j, i, 1.0 - o))]


def round_robin_pairs(n: int) -> list[tuple[int, int]]:
    """Every pair (i, j), i < j, in lexicographic order: the C(n, 2) calls of round robin (Eq. 8)."""
    return list(combinations(range(n), 2))


def win_rates(matches: Sequence[Match], n: int) -> list[float | None]:
    """Each trace's mean outcome over the matches it played, mirrored ones included (§4's leaderboard).

    Trace i scores o and trace j scores 1 - o for a match (i, j, o); None for a trace with no match. With
    every pair of a complete graph observed once this is Eq. 8's (1/(N-1)) sum_j o_ij.
    """
    scores: list[list[float]] = [[] for _ in range(n)]
    for i, j, o in matches:
        scores[i].append(o)
        scores[j].append(1.0 - o)
    return [math.fsum(s) / len(s) if s else None for s in scores]


def arrival_order(lengths: Sequence[int], mode: str, rng: random.Random) -> list[int]:
    """The simulated order in which a group's traces finish (our choice; the paper's are asynchronous).

    "length": shortest completion first, index breaking ties (mimics asynchronous arrival; the default);
    "random": a shuffle by `rng`; "index": 0..n-1.
    """
    n = len(lengths)
    if mode == "length":
        return sorted(range(n), key=lambda k: (lengths[k], k))
    if mode == "random":
        order = list(range(n))
        rng.shuffle(order)
        return order
    if mode == "index":
        return list(range(n))
    raise ValueError(f"arrival mode must be one of {ARRIVALS}, got {mode!r}")


def _check_anchors(anchors: int) -> None:
    if not 1 <= anchors <= MAX_ANCHORS:
        raise ValueError(f"anchors must be 1..{MAX_ANCHORS} (best, worst, median), got {anchors}")


class LiveTournament:
    """Reasoning Arena-Live's schedule for one group, replayed after the group completes (our deferred mode).

    Traces arrive in `order`; each new trace plays the current best, worst and median of the leaderboard of
    the traces already arrived, deduplicated, so the n-th arrival plays min(n-1, anchors) of them and the
    group costs sum_{n=2..N} min(n-1, anchors) calls (3N - 6 with 3 anchors, N >= 3, 18 at N = 8). The
    leaderboard ranks by win-rate over the matches played (`win_rates`); a trace with no match yet (the
    first trace before its first match, or one whose matches all failed to parse) ranks with win-rate 0.5.
    `ties` breaks equal win-rates: "wins" by more wins (matches with outcome > 0.5), then earlier arrival
    (our choice); "arrival" by earlier arrival only.
    """

    def __init__(self, order: Sequence[int], anchors: int = MAX_ANCHORS, ties: str = "wins") -> None:
        if sorted(order) != list(range(len(order))):
            raise ValueError(f"order must be a permutation of 0..{len(order) - 1}, got {list(order)}")
        _check_anchors(anchors)
        if ties not in TIE_RULES:
            raise ValueError(f"ties must be one of {TIE_RULES}, got {ties!r}")
        self.order = list(order)
        self.anchors = anchors
        self.ties = ties
        self.arrived: list[int] = []
        self.matches: list[Match] = []
        self.calls = 0

    @property
    def finished(self) -> bool:
        return len(self.arrived) == len(self.order)

    def leaderboard(self) -> list[int]:
        """The arrived traces, best first."""
        rates = win_rates(self.matches, len(self.order))
        wins = [0] * len(self.order)
        for i, j, o in self.matches:
            if o != 0.5:
                wins[i if o > 0.5 else j] += 1
        position = {trace: k for k, trace in enumerate(self.arrived)}

        def key(trace: int) -> tuple[float, ...]:
            rate = rates[trace]
            rate = 0.5 if rate is None else rate
            if self.ties == "wins":
                return (-rate, -wins[trace], position[trace])
            return (-rate, position[trace])

        return sorted(self.arrived, key=key)

    def anchors_for_next(self) -> list[int]:
        """Opponents of the next arrival: best L[0], worst L[n-1], median L[(n-1)//2] of the n-trace
        leaderboard L, deduplicated in that order and cut to `anchors`; [] for the first trace.

        For n >= 3 the median is neither best nor worst; for even n it is the better of the two middle traces.
        """
        board = self.leaderboard()
        if self.finished or not board:
            return []
        n = len(board)
        picks = list(dict.fromkeys((board[0], board[n - 1], board[(n - 1) // 2])))
        return picks[: self.anchors]

    def next_pairs(self) -> list[tuple[int, int]]:
        """The (new, anchor) pairs to judge for the next arrival; [] once every trace has arrived."""
        if self.finished:
            return []
        new = self.order[len(self.arrived)]
        return [(new, anchor) for anchor in self.anchors_for_next()]

    def record(self, outcomes: Sequence[float | None]) -> None:
        """Take the new trace's outcomes for `next_pairs()`, in order; then it has arrived.

        None means the judge gave no verdict even after its retry: the call counts, no match is recorded
        (our choice for unparseable judge output).
        """
        if self.finished:
            raise ValueError("every trace has already arrived")
        pairs = self.next_pairs()
        if len(outcomes) != len(pairs):
            raise ValueError(f"expected {len(pairs)} outcomes for {pairs}, got {len(outcomes)}")
        if any(o is not None and not 0.0 <= o <= 1.0 for o in outcomes):
            raise ValueError(f"outcomes must be in [0, 1] or None, got {list(outcomes)}")
        for (new, anchor), o in zip(pairs, outcomes, strict=True):
            if o is not None:
                self.matches.append(Match(new, anchor, o))
        self.calls += len(pairs)
        self.arrived.append(self.order[len(self.arrived)])
