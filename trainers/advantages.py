"""Advantage estimators: pure functions from rewards to per-sequence or per-token advantages.

Rows are grouped by arbitrary hashable keys, so one batch may mix groups of different sizes in any
order (SPELL: questioner singletons next to responder groups of G). A group whose rewards do not vary
(all equal, or a single row) has no baseline to learn from: its rows get exactly 0 and are flagged in
`zero_std`, so a method can drop them (DAPO dynamic sampling) or re-score them (Reasoning Arena).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import NamedTuple

import torch
from torch import Tensor

ZERO_STD_ATOL = 1e-8  # a std at most this counts as zero (TRL flags zero-std groups with torch.isclose)


class Advantages(NamedTuple):
    """Per-sequence advantages and the rows whose group had no reward variance."""

    values: Tensor  # (N,) float, the rewards' dtype (float32 for integer rewards)
    zero_std: Tensor  # (N,) bool; these rows have value exactly 0


def group_zscore(
    rewards: Tensor, groups: Sequence[Hashable], *, unbiased: bool = True, eps: float = 1e-4
) -> Advantages:
    """GRPO's (r - mean_g) / (std_g + eps) per group (SPELL paper, Eq. 3; TRL `scale_rewards="group"`).

    The defaults are TRL 1.16's: unbiased std (Bessel, n - 1) and eps 1e-4. SPELL's code uses eps 1e-6
    (SPELL paper, Eqs. 8-9); Reasoning Arena's Eq. 2 the population std, `unbiased=False`, eps 1e-6
    (Reasoning Arena paper, §3).
    """
    return _standardise(rewards, groups, None, unbiased=unbiased, eps=eps, scale=True)


def group_center(rewards: Tensor, groups: Sequence[Hashable]) -> Advantages:
    """Dr. GRPO's r - mean_g with no std (SPAE paper, Eq. 16; TRL `scale_rewards="none"`)."""
    return _standardise(rewards, groups, None, unbiased=True, eps=0.0, scale=False)


def whiten_by_key(
    rewards: Tensor,
    keys: Sequence[Hashable] | None = None,
    *,
    lengths: Sequence[int] | Tensor | None = None,
    unbiased: bool = True,
    eps: float = 1e-6,
) -> Advantages:
    """REINFORCE++ whitening (r - mean_k) / (std_k + eps) within each key (AZR paper, App. A, Eq. 10).

    `keys=None` whitens the whole batch: REINFORCE++ Eq. 10, SPELL's questioner Eq. 9 as the paper
    writes it (SPELL paper). Keys (task, role) give AZR's TRR++ Eq. 8, six baselines; keys = task give
    SPELL's questioner as its code normalises it.

    `lengths=None` weighs every sequence once, as both papers do. Completion lengths instead weigh each
    sequence by its token count, with Bessel's correction over tokens: verl's `masked_whiten` of the
    reward broadcast over the response mask, which AZR's released code runs (a fidelity option).
    verl puts its eps inside the square root, rsqrt(var + 1e-8); with eps=1e-8 here the two agree to
    about 1e-8 relative whenever the std is not tiny.
    """
    n = len(rewards)
    weights = None if lengths is None else torch.as_tensor(lengths, dtype=torch.float64)
    if weights is not None and (weights.shape != (n,) or bool((weights < 0).any())):
        raise ValueError(f"lengths must be {n} non-negative token counts, got shape {tuple(weights.shape)}")
    return _standardise(
        rewards, [None] * n if keys is None else keys, weights, unbiased=unbiased, eps=eps, scale=True
    )


def masked_whiten_by_key(
    rewards: Tensor, keys: Sequence[Hashable], lengths: Sequence[int] | Tensor, *, eps: float = 1e-8
) -> Advantages:
    """verl's `masked_whiten` exactly, per key: (r - μ_k)·rsqrt(σ²_k + eps), μ and σ² token-weighted
    (each row counts `lengths` times) with Bessel's correction over tokens (AZR's released code).

    `whiten_by_key(..., lengths=...)` divides by σ + eps instead, which differs from this only when σ² is
    within a few orders of magnitude of eps. A key whose rewards do not vary gives exactly 0 (verl:
    rounding noise times 1e4), flagged in `zero_std`, as does one of at most one token.
    """
    n = len(rewards)
    weights = torch.as_tensor(lengths, dtype=torch.float64)
    if weights.shape != (n,) or bool((weights < 0).any()):
        raise ValueError(f"lengths must be {n} non-negative token counts, got shape {tuple(weights.shape)}")
    centred, zero = _standardise(rewards, keys, weights, unbiased=True, eps=0.0, scale=False)
    ids: dict[Hashable, int] = {}
    index = torch.tensor([ids.setdefault(key, len(ids)) for key in keys], dtype=torch.long)
    c = centred.double().cpu()
    tokens = torch.zeros(len(ids), dtype=torch.float64).index_add_(0, index, weights)
    var = torch.zeros(len(ids), dtype=torch.float64).index_add_(0, index, weights * c.square())
    var = var / (tokens - 1).clamp(min=1e-300)
    values = (c * torch.rsqrt(var[index] + eps)).to(device=centred.device, dtype=centred.dtype)
    return Advantages(torch.where(zero, 0.0, values), zero)


def whiten_tokens(values: Tensor, mask: Tensor, *, unbiased: bool = True, eps: float = 1e-6) -> Tensor:
    """(A - mean_B) / (std_B + eps) over every unmasked token of the batch (SPAE paper, Eq. 17).

    `values` and `mask` are (N, T); masked positions come back 0, and so does everything when the
    unmasked tokens do not vary.
    """
    if values.shape != mask.shape or values.dim() != 2:
        raise ValueError(f"values {tuple(values.shape)} and mask {tuple(mask.shape)} must be one (N, T)")
    keep = mask.bool()
    tokens = values[keep].double()
    dof = tokens.numel() - (1 if unbiased else 0)
    if dof <= 0:
        return torch.zeros_like(values)
    mean = tokens.mean()
    std = ((tokens - mean).square().sum() / dof).sqrt()
    if std <= ZERO_STD_ATOL:
        return torch.zeros_like(values)
    whitened = (values.double() - mean) / (std + eps)
    return torch.where(keep, whitened, 0.0).to(values.dtype)


def _standardise(
    rewards: Tensor,
    keys: Sequence[Hashable],
    weights: Tensor | None,
    *,
    unbiased: bool,
    eps: float,
    scale: bool,
) -> Advantages:
    """Weighted mean (and std) per key; a key whose std is zero or undefined gives its rows 0."""
    if rewards.dim() != 1:
        raise ValueError(f"rewards must be one number per row, got shape {tuple(rewards.shape)}")
    if len(keys) != len(rewards):
        raise ValueError(f"{len(keys)} group keys for {len(rewards)} rewards")
    bad = (~torch.isfinite(rewards)).nonzero().flatten().tolist()
    if bad:
        raise ValueError(f"rewards must be finite; rows {bad[:10]} are not")
    ids: dict[Hashable, int] = {}
    device = rewards.device
    index = torch.tensor([ids.setdefault(key, len(ids)) for key in keys], dtype=torch.long, device=device)
    r = rewards.double()
    w = torch.ones_like(r) if weights is None else weights.to(device)

    def per_key(x: Tensor) -> Tensor:
        return torch.zeros(len(ids), dtype=torch.float64, device=device).index_add_(0, index, x)

    count = per_key(w)
    mean = per_key(w * r) / count.clamp(min=1e-300)
    centred = r - mean[index]
    dof = count - 1 if unbiased else count
    std = (per_key(w * centred.square()) / dof.clamp(min=1e-300)).sqrt()
    zero = ((dof <= 0) | (std <= ZERO_STD_ATOL))[index]
    values = centred / (std[index] + eps) if scale else centred
    dtype = rewards.dtype if rewards.is_floating_point() else torch.float32
    return Advantages(torch.where(zero, 0.0, values).to(dtype), zero)
