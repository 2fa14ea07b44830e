"""Reasoning Arena's own settings (`options:` in a train config), each with its default, bounds and help;
importable without torch (the docs build the method page's table from this dataclass)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from harness import HarnessError
from harness.core.settings import setting
from trainers.method import MethodOptions
from trainers.methods.arena.tournament import ARRIVALS, TIE_RULES

ROUTES = ("zero_variance", "all", "none")
TOURNAMENTS = ("live", "round_robin", "pointwise")
RATINGS = ("auto", "bt", "winrate")
NORMALISERS = ("group", "batch")


@dataclass(frozen=True)
class ArenaOptions(MethodOptions):
    """Reasoning Arena's own settings (`options:` in the config); defaults are Arena-Live's (App. B)."""

    method: ClassVar[str] = "Reasoning Arena"
    route: str = setting("zero_variance", "which groups the judge re-scores (Eq. 5)", choices=ROUTES)
    tournament: str = setting("live", "live (§4), round_robin (Eq. 8), pointwise (§5)", choices=TOURNAMENTS)
    rating: str = setting(
        "auto", "auto: bt for live (Eqs. 9-10), winrate for round robin (Eq. 8)", choices=RATINGS
    )
    gamma: float = setting(1.0, "soft margin, Eq. 7 (not stated)", exclusive_minimum=0.5, maximum=1.0)
    anchors: int = setting(3, "best, worst, median (§4)", minimum=1, maximum=3)
    arrival: str = setting(
        "length",
        "the live schedule's arrival order (our choice): shortest first",
        choices=ARRIVALS,
    )
    ties: str = setting(
        "wins",
        "leaderboard ties: (win-rate, wins, arrival) or (win-rate, arrival)",
        choices=TIE_RULES,
    )
    l2: float = setting(0.5, "the coefficient of ||beta||^2 in Eq. 10", minimum=0)
    eps: float = setting(1e-06, "Eq. 2's epsilon (not stated)", exclusive_minimum=0)
    normalise: str = setting(
        "group", "Eq. 1's 1/sum_i |y_i| per group; \"batch\": TRL's global token mean", choices=NORMALISERS
    )
    refill: bool = setting(False, "discard groups with no verifier variance and generate more (RLVR, DAPO)")
    max_refill_rounds: int = setting(
        4, "with refill: sampling rounds to replace the groups dropped", minimum=1
    )
    judge_max_tokens: int = setting(4096, "the judge's reply budget", minimum=1)
    judge_context: int = setting(32768, "the judge's window: responses are cut to fit", minimum=64)
    keep_tail_tokens: int = setting(2048, "a cut response keeps its last tokens (the answer)", minimum=0)
    judge_temperature: float = setting(0.0, "a served judge's sampling temperature", minimum=0)
    retry_temperature: float = setting(1.0, "an unparsable verdict is asked again once, sampled", minimum=0)
    judge_prefill: str = setting(
        "", "the policy judge's replies start with this (a CPU-config aid, not the paper's)"
    )
    judge_cache: int = setting(100000, "verdicts kept, keyed by problem, both traces and order", minimum=0)
    logged_groups: int = setting(4, "routed groups per step in OUT/samples.jsonl", minimum=0)

    @property
    def uses_bt(self) -> bool:
        return self.rating == "bt" or (self.rating == "auto" and self.tournament == "live")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.tournament == "pointwise" and self.rating != "auto":
            raise HarnessError("options.rating applies to tournaments; a pointwise judge gives scores")
        if self.refill and self.route != "none":
            raise HarnessError(
                "options.refill drops the groups routing would judge: it is the RLVR baseline's (route: none)"
            )
