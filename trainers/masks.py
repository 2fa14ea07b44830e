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


def eos_mask(completion_ids: Tensor, eos_token_ids: int | Sequence[int]) -> Tensor:
    """1 up to and including each row's first EOS; a row without EOS is all 1 (TRL's generate path)."""
    if completion_ids.dim() != 2:
        raise ValueError(f"completion_ids must be (N, T), got shape {tuple(completion_ids.shape)}")
    eos = torch.as_tensor(eos_token_ids, device=completion_ids.device).reshape(-1)
    is_eos = torch.isin(completion_ids, eos)
    width = completion_ids.shape[1]
    first = torch.where(is_eos.any(dim=1), is_eos.int().argmax(dim=1), width)
    return (torch.arange(width, device=completion_ids.device)[None, :] <= first[:, None]).int()


def mask_untrainable(mask: Tensor, trainable: Sequence[bool] | Tensor) -> Tensor:
    """Zero the rows of rollouts scored but not trained, e.g. AZR's Monte-Carlo solves (anchors §6.2)."""
    return _keep_rows(mask, trainable)


def mask_truncated(mask: Tensor, truncated: Sequence[bool] | Tensor) -> Tensor:
    """DAPO's overlong filtering: zero truncated rows (TRL `mask_truncated_completions`).

    UloRL rejects it: truncated samples are trained with reward 0 instead (ulorl.md §1.6).
    """
    return _keep_rows(mask, ~torch.as_tensor(truncated, dtype=torch.bool, device=mask.device))


def segment_index(segment_lengths: Sequence[Sequence[int]], width: int) -> Tensor:
    """(N, T) long: the segment that decoded each token (UloRL's f(t), ulorl.md §1.3); -1 on padding.

    Any split of a completion into consecutive spans works, e.g. SPAE's reasoning steps (spae.md §1.6).
    """
    index = torch.full((len(segment_lengths), width), -1, dtype=torch.long)
    for row, lengths in enumerate(segment_lengths):
        spans = torch.as_tensor(lengths, dtype=torch.long)
        if bool((spans < 0).any()) or int(spans.sum()) > width:
            raise ValueError(f"row {row}: segment lengths {list(lengths)} do not fit width {width}")
        ids = torch.repeat_interleave(torch.arange(len(spans)), spans)
        index[row, : len(ids)] = ids
    return index


def segment_mask(segment_index: Tensor, *, last_only: bool = False) -> Tensor:
    """Which segments of a finished completion are trained.

    UloRL's POIS trains every segment once the sample finishes, all as if the current policy had
    decoded them (pseudo on-policy, ulorl.md §1.3): the default. `last_only=True` trains only the
    segment the current policy decoded (truly on-policy tokens); an ablation, not the paper's.
    """
    decoded = segment_index >= 0
    if not last_only:
        return decoded.int()
    last = segment_index.max(dim=1, keepdim=True).values
    return (decoded & (segment_index == last)).int()


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
    """UloRL's DMMPT mask (ulorl.md §1.4 Eq. 10): 0 on well-mastered positive tokens while entropy is low.

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
