"""SPAE's own settings (`options:` in a train config), each with its default, bounds and help;
importable without torch (the docs build the method page's table from this dataclass)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from harness import HarnessError
from harness.core.settings import setting
from harness.probing.probe import entropy_top_k
from trainers.method import MethodOptions

ADVANTAGES = ("spae", "rfb", "dapo")
PENALTY_FORMS = ("exp", "slow_fast")  # Eq. 13 as the third-party reading gives it; the prose's shape
SHAPING_MEANS = ("steps", "tokens")  # E_B in Eq. 15 over steps, or over tokens (not given in §3.3)


@dataclass(frozen=True)
class SpaeOptions(MethodOptions):
    """SPAE's own settings (`options:` in the config); the defaults are the paper's (§3.3, App. D.3)."""

    method: ClassVar[str] = "SPAE"
    advantage: str = setting(
        "spae", "spae (Eq. 11-17), or the baselines rfb and dapo (§4.1)", choices=ADVANTAGES
    )
    alpha: float = setting(0.5, "the saturation penalty's depth (Eq. 13)", minimum=0, maximum=1)
    xi: float = setting(0.5, "the shaping strength (Eq. 11)", minimum=0)
    tau_sat: float = setting(0.9, "saturation: Phi > tau_sat (Eq. 9, 12)", minimum=-1, maximum=1)
    penalty: str = setting(
        "exp",
        "f = 1 - alpha (1 - e^-C) (§3.3, the default); slow_fast: the prose's shape",
        choices=PENALTY_FORMS,
    )
    kappa: float = setting(2.0, "slow_fast's scale", exclusive_minimum=0)
    shaping_mean: str = setting(
        "steps", "E_B in Eq. 15 over steps, or tokens (not given)", choices=SHAPING_MEANS
    )
    penalty_on_positive_only: bool = setting(False, "Eq. 13's sign question, as an ablation")
    probes: bool | None = setting(
        None, "default: on for spae; on for a baseline logs its Phi, check share, R2W"
    )
    n_probe: int = setting(5, "N (the authors' probe code)", minimum=1)
    probe_max_tokens: int = setting(10, "each probe's continuations are at most this long (§3.1)", minimum=1)
    probe_every_m: int = setting(1, "probe every m-th boundary; the rest join the next step", minimum=1)
    probe_batch_size: int = setting(16, "probes per forward pass (transformers) or per vLLM call", minimum=1)
    delimiter: str = setting(".\n\n", "the step delimiter (§3.1)")
    entropy_mode: str = setting(
        "full", "full (transformers); topk=K <= 20 probes on the colocated vLLM engine"
    )
    dynamic_sampling: bool = setting(True, "drop groups whose rewards are all equal, refill (DAPO)")
    max_refill_rounds: int = setting(3, "sampling rounds to refill dropped groups", minimum=0)
    logged_groups: int = setting(2, "trained groups per step in OUT/samples.jsonl", minimum=0)

    def __post_init__(self) -> None:
        super().__post_init__()
        entropy_top_k(self.entropy_mode)
        if not self.delimiter:
            raise HarnessError("options.delimiter must not be empty")
        if self.advantage == "spae" and self.probes is False:
            raise HarnessError("options.probes: the spae advantage is built from the probes' potentials")

    @property
    def probing(self) -> bool:
        return self.advantage == "spae" if self.probes is None else self.probes
