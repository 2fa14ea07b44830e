"""Loss masks over completion tokens: pure functions returning (N, T) 0/1 tensors.

Masks are int32 like TRL's `completion_mask`, over completions padded on the right.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import torch
from torch import Tensor


def completion_mask(lengths: Sequence[int] | Tensor, width: int) -> Tensor:
    """1 on the first `lengths[i]` tokens of row i: right-padded completions (TRL's completion_mask)."""
    lengths = torch.as_tensor(lengths, dtype=torch.long)
    if lengths.dim() != 1 or bool((lengths < 0).any()) or bool((lengths > width).any()):
        raise ValueError(f"lengths must be 1-D counts between 0 and width {width}, got {lengths.tolist()}")
    return (torch.arange(width, device=lengths.device)[None, :] < lengths[:, None]).int()


def mask_truncated(mask: Tensor, truncated: Sequence[bool] | Tensor) -> Tensor:
    """DAPO's overlong filtering: zero truncated rows (TRL `mask_truncated_completions`).

    UloRL rejects it: truncated samples are trained with reward 0 instead (UloRL paper, overlong handling).
    """
    return _keep_rows(mask, ~torch.as_tensor(truncated, dtype=torch.bool, device=mask.device))


def dmmpt_mask(
    token_probs: Tensor,
    entropies: Tensor,
    mask: Tensor,
    rewards: Tensor,
    *,
    tau: float = 0.99,
    sigma: float = 0.2,
    entropy_scope: Literal["sample", "batch"] = "sample",
) -> Tensor:
    """UloRL's DMMPT mask (UloRL paper, Eq. 10): 0 on well-mastered positive tokens while entropy is low.

    A token is masked when its sample has reward 1, its own probability p >= tau, and the mean entropy
    is below sigma: the sample's own mean H_i over its tokens (Eq. 10, "sample") or the token mean over
    the batch ("batch", the prose's "current entropy"). `token_probs` and `entropies` are (N, T) from the
    current policy, detached. Multiply the result into the per-token advantages, not into the loss
    normaliser: masked tokens still count in sum_i |o_i|.
    """
    if not token_probs.shape == entropies.shape == mask.shape or rewards.shape != mask.shape[:1]:
        raise ValueError(
            f"token_probs {tuple(token_probs.shape)}, entropies {tuple(entropies.shape)}, mask "
            f"{tuple(mask.shape)} must share one (N, T) shape, and rewards {tuple(rewards.shape)} be (N,)"
        )
    valid = mask.bool()
    mean_entropy = sample_entropy(entropies, mask, entropy_scope)
    low_entropy_positive = (rewards == 1) & (mean_entropy < sigma)
    mastered = valid & (token_probs >= tau) & low_entropy_positive[:, None]
    return (valid & ~mastered).int()


def sample_entropy(
    entropies: Tensor, mask: Tensor, entropy_scope: Literal["sample", "batch"] = "sample"
) -> Tensor:
    """(N,) float64: the entropy DMMPT compares with sigma for each sample: its own mean over its tokens
    (H_i of Eq. 10, "sample"), or the token mean over the whole batch ("batch")."""
    valid = mask.bool()
    token_entropy = torch.where(valid, entropies.double(), 0.0)
    if entropy_scope == "sample":
        return token_entropy.sum(dim=1) / valid.sum(dim=1).clamp(min=1)
    if entropy_scope == "batch":
        return (token_entropy.sum() / valid.sum().clamp(min=1)).expand(mask.shape[0])
    raise ValueError(f"entropy_scope must be 'sample' or 'batch', got {entropy_scope!r}")


def _keep_rows(mask: Tensor, keep: Sequence[bool] | Tensor) -> Tensor:
    keep = torch.as_tensor(keep, dtype=torch.bool, device=mask.device)
    if mask.dim() != 2 or keep.shape != mask.shape[:1]:
        raise ValueError(f"{tuple(keep.shape)} row flags do not fit mask {tuple(mask.shape)}")
    return (mask.bool() & keep[:, None]).int()
