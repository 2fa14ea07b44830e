"""SPAE's per-token advantage (SPAE paper, §3.3, Eqs. 11-17) as pure functions.

Each rollout i is cut into K_i reasoning steps (their token ends, from the step boundaries) with a step
potential Phi per step (Eq. 8). Token j of step k gets

    A_ij = A_group_i * f(C_ik) + xi * g_ik                                      (Eq. 11)

where A_group is the reward less its group's mean (Eq. 16), C_ik the number of earlier steps whose
potential exceeded tau_sat (Eq. 12), f the saturation penalty (Eq. 13), and g the batch-centred
exponential of the min-max normalised potential difference (Eq. 14-15). Then every real token of the
batch is standardised together (Eq. 17). Tokens after the last boundary (the rest of the thinking and the
summary) belong to a virtual step K + 1: f of all K steps' saturations, g = 0 (our decision on a gap
the paper leaves). With xi = 0 and alpha = 0 this is RF-B's advantage exactly.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor

from trainers.advantages import group_center, whiten_tokens
from trainers.masks import completion_mask
from trainers.methods.spae.options import PENALTY_FORMS, SHAPING_MEANS


@dataclass(frozen=True)
class SpaeSettings:
    alpha: float = 0.5  # the penalty's depth (Eq. 13)
    xi: float = 0.5  # the shaping's strength (Eq. 11)
    tau_sat: float = 0.9  # a step is saturated when its potential exceeds this (Eq. 12)
    penalty: str = "exp"  # f = 1 - alpha (1 - e^-C); "slow_fast": 1 - alpha (e^(C/k) - 1) / (e^(Cmax/k) - 1)
    kappa: float = 2.0  # the slow-then-fast form's scale
    shaping_mean: str = "steps"
    penalty_on_positive_only: bool = False  # leave negative-advantage rollouts unpenalised (an ablation)
    eps: float = 1e-6  # Eq. 17

    def __post_init__(self) -> None:
        if self.penalty not in PENALTY_FORMS:
            raise ValueError(f"penalty must be one of {PENALTY_FORMS}, got {self.penalty!r}")
        if self.shaping_mean not in SHAPING_MEANS:
            raise ValueError(f"shaping_mean must be one of {SHAPING_MEANS}, got {self.shaping_mean!r}")


def saturation_counts(potentials: Sequence[float], tau_sat: float) -> list[int]:
    """C_k for steps 1..K+1: how many earlier steps' potentials exceeded tau_sat (Eq. 12); the last entry
    is the virtual step after the last boundary, counting all K."""
    counts, seen = [], 0
    for phi in potentials:
        counts.append(seen)
        seen += phi > tau_sat
    return [*counts, seen]


def penalty(counts: Tensor, settings: SpaeSettings, most: float) -> Tensor:
    """f(C) (Eq. 13): 1 at C = 0, non-increasing. `most` is the batch's largest C (the slow-then-fast
    form reaches 1 - alpha there)."""
    counts = counts.double()
    if settings.penalty == "exp":
        return 1 - settings.alpha * (1 - torch.exp(-counts))
    if most <= 0:
        return torch.ones_like(counts)
    k = settings.kappa  # (e^(C/k) - 1) / (e^(M/k) - 1), written so that no exponential overflows
    ratio = torch.exp((counts - most) / k) * -torch.expm1(-counts / k) / -math.expm1(-most / k)
    return 1 - settings.alpha * ratio


def potential_differences(potentials: Sequence[float]) -> list[float]:
    """Delta Phi_k = Phi_k - Phi_{k-1}, 0 for the first step (Eq. 14, as the released code does)."""
    return [phi - before for before, phi in zip([*potentials[:1], *potentials], potentials, strict=False)]


def shaping(
    deltas: Sequence[Sequence[float]], step_tokens: Sequence[Sequence[int]], mean: str
) -> list[list[float]]:
    """g per step (Eq. 15): exp of Delta Phi min-max normalised over every step of the batch, less its
    batch mean (over steps, or over tokens weighting each step by its length). A batch whose differences
    are all equal gives g = 0."""
    flat = [d for row in deltas for d in row]
    if not flat:
        return [[] for _ in deltas]
    low, high = min(flat), max(flat)
    scaled = [[(d - low) / (high - low) if high > low else 0.0 for d in row] for row in deltas]
    lifted = [[math.exp(s) for s in row] for row in scaled]
    if mean == "steps":
        centre = sum(v for row in lifted for v in row) / len(flat)
    else:
        weights = [w for row in step_tokens for w in row]
        values = [v for row in lifted for v in row]
        total = sum(weights)
        centre = sum(v * w for v, w in zip(values, weights, strict=True)) / total if total else 0.0
    return [[v - centre for v in row] for row in lifted]


class SpaeTerms(NamedTuple):
    """The (N, T) advantages (0 on padding) and the means over real tokens of their two factors."""

    advantages: Tensor  # Eq. 17: Eq. 11 standardised over the batch's tokens
    f_mean: float  # the saturation penalty of each token's step (Eq. 13)
    g_mean: float  # the shaping of each token's step (Eq. 15), before xi


def spae_terms(
    rewards: Tensor,
    groups: Sequence[Hashable],
    potentials: Sequence[Sequence[float]],
    step_ends: Sequence[Sequence[int]],
    lengths: Sequence[int],
    settings: SpaeSettings = SpaeSettings(),
) -> SpaeTerms:
    """(N, T) advantages over completions right-padded to the longest (T = max length), 0 on padding,
    with the means of the per-token f and g they are built from (SPAE logs them).

    `potentials[i]` holds Phi of rollout i's K_i steps and `step_ends[i]` their exclusive token ends
    (increasing, at most `lengths[i]`); tokens from the last end on form the virtual step K_i + 1.
    """
    n = len(lengths)
    if not (len(rewards) == len(groups) == len(potentials) == len(step_ends) == n):
        raise ValueError("rewards, groups, potentials, step_ends and lengths must have one entry per rollout")
    for i, (phis, ends) in enumerate(zip(potentials, step_ends, strict=True)):
        if len(phis) != len(ends) or list(ends) != sorted(ends) or (ends and ends[-1] > lengths[i]):
            raise ValueError(
                f"rollout {i}: {len(phis)} potentials for step ends {list(ends)} of {lengths[i]} tokens"
            )
    width = max(lengths, default=0)
    outcome = group_center(rewards.double(), groups).values
    counts = [saturation_counts(phis, settings.tau_sat) for phis in potentials]
    most = max((c[-1] for c in counts), default=0)
    step_tokens = [[e - s for s, e in zip([0, *ends], ends, strict=False)] for ends in step_ends]
    g = shaping([potential_differences(p) for p in potentials], step_tokens, settings.shaping_mean)
    out = torch.zeros(n, width, dtype=torch.float64)
    f_sum = g_sum = 0.0
    for i in range(n):
        steps = torch.tensor([bisect_right(step_ends[i], j) for j in range(lengths[i])], dtype=torch.long)
        f = penalty(torch.tensor(counts[i], dtype=torch.float64), settings, most)
        if settings.penalty_on_positive_only and outcome[i] <= 0:
            f = torch.ones_like(f)
        g_i = torch.tensor([*g[i], 0.0], dtype=torch.float64)  # the virtual last step has no shaping
        f_sum += float(f[steps].sum())
        g_sum += float(g_i[steps].sum())
        out[i, : lengths[i]] = outcome[i] * f[steps] + settings.xi * g_i[steps]
    mask = completion_mask(lengths, width)
    tokens = max(sum(lengths), 1)
    return SpaeTerms(whiten_tokens(out, mask, eps=settings.eps), f_sum / tokens, g_sum / tokens)
