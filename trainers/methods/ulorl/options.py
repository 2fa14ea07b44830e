"""UloRL's own settings (`options:` in a train config), each with its default, bounds and help;
importable without torch (the docs build the method page's table from this dataclass)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from harness import HarnessError
from harness.core.settings import setting
from trainers.method import MethodOptions

IMPORTANCE_SAMPLING = ("pois", "sais", "tois")
MPT_MASKING = ("dynamic", "static", "none")
ENTROPY_SCOPES = ("sample", "batch")


@dataclass(frozen=True)
class UloRLOptions(MethodOptions):
    """UloRL's own settings (`options:` in the config); the defaults are the paper's (§4.1)."""

    method: ClassVar[str] = "UloRL"
    segments: int = setting(8, "S: each step decodes at most max_completion_length / S tokens", minimum=1)
    groups_in_flight: int | None = setting(None, "default: the groups one step trains", minimum=1)
    importance_sampling: str = setting(
        "pois", "pois (the paper's), sais, tois (one segment)", choices=IMPORTANCE_SAMPLING
    )
    mpt_masking: str = setting(
        "dynamic", "dynamic (DMMPT, Eq. 10), static (always, an ablation), none", choices=MPT_MASKING
    )
    tau: float = setting(0.99, "a mastered token's probability", minimum=0, maximum=1)
    sigma: float = setting(0.2, "the target entropy under which DMMPT masks", minimum=0)
    entropy_scope: str = setting(
        "sample", "Eq. 10's per-sample H_i, or the batch's mean (our reading)", choices=ENTROPY_SCOPES
    )
    dynamic_sampling: bool = setting(True, "drop complete groups whose rewards are all equal (DAPO)")
    logged_groups: int = setting(2, "released groups per step in OUT/samples.jsonl", minimum=0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.importance_sampling == "tois" and self.segments != 1:
            raise HarnessError("options.importance_sampling: tois is one segment; set options.segments: 1")
