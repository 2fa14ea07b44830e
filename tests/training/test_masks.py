"""Loss masks on hand-made tensors."""

import pytest
import torch

from trainers.advantages import broadcast_to_tokens, group_zscore
from trainers.masks import (
    completion_mask,
    dmmpt_mask,
    eos_mask,
    mask_truncated,
    mask_untrainable,
    segment_index,
    segment_mask,
)
from trainers.rollout import Rollout


def rows(mask: torch.Tensor) -> list[list[int]]:
    assert mask.dtype == torch.int32
    return mask.tolist()


def test_completion_mask_from_lengths():
    assert rows(completion_mask([2, 0, 3], 3)) == [[1, 1, 0], [0, 0, 0], [1, 1, 1]]
    with pytest.raises(ValueError, match="width 3"):
        completion_mask([4], 3)


def test_eos_mask_keeps_the_first_eos_and_whole_rows_without_one():
    ids = torch.tensor([[5, 2, 7, 2], [5, 5, 5, 5], [2, 0, 0, 0], [4, 3, 0, 0]])
    assert rows(eos_mask(ids, 2)) == [[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0], [1, 1, 1, 1]]
    assert rows(eos_mask(ids, [2, 3]))[3] == [1, 1, 0, 0]


def test_untrainable_rollouts_get_zero_weight():
    mask = completion_mask([3, 2, 3], 3)
    kept = mask_untrainable(mask, [True, False, True])
    assert rows(kept) == [[1, 1, 1], [0, 0, 0], [1, 1, 1]]
    adv = group_zscore(torch.tensor([1.0, 0.0, 0.0]), ["g"] * 3).values
    assert (broadcast_to_tokens(adv, kept)[1] == 0).all() and adv[1] != 0


def test_truncated_completions_are_masked():
    mask = completion_mask([2, 3], 3)
    assert rows(mask_truncated(mask, [False, True])) == [[1, 1, 0], [0, 0, 0]]
    with pytest.raises(ValueError, match="do not fit mask"):
        mask_truncated(mask, [True])


def test_continued_completion_segments_and_mask():
    first = Rollout([1, 2], [10, 11, 12], "solver", "g0", "math", "unfinished", policy_versions=[4])
    done = first.continued([13, 14], "stop", policy_version=5)
    short = Rollout([1, 2], [20, 21], "solver", "g0", "math", "stop", policy_versions=[5])
    width = 6
    index = segment_index([done.segments, short.segments], width)
    assert index.tolist() == [[0, 0, 0, 1, 1, -1], [0, 0, -1, -1, -1, -1]]
    assert rows(segment_mask(index)) == rows(completion_mask([5, 2], width))  # POIS: all segments
    assert rows(segment_mask(index, last_only=True)) == [[0, 0, 0, 1, 1, 0], [1, 1, 0, 0, 0, 0]]


def test_segment_index_rejects_overflow():
    with pytest.raises(ValueError, match="row 1"):
        segment_index([[1], [2, 3]], 4)


# DMMPT rows: 0 positive, low entropy; 1 negative; 2 positive with mean entropy 0.25; 3 positive, padded.
PROBS = torch.tensor(
    [
        [0.995, 0.5, 0.99, 0.989],
        [0.999, 0.999, 0.999, 0.999],
        [0.999, 0.2, 0.3, 0.4],
        [0.999, 0.999, 0.999, 0.1],
    ]
)
ENTROPY = torch.tensor([[0.1] * 4, [0.1] * 4, [0.25] * 4, [0.1, 0.1, 5.0, 5.0]])
MASK = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 0, 0]])
REWARDS = torch.tensor([1.0, 0.0, 1.0, 1.0])


def test_dmmpt_masks_mastered_tokens_of_positive_low_entropy_samples():
    keep = dmmpt_mask(PROBS, ENTROPY, MASK, REWARDS)
    assert rows(keep) == [[0, 1, 0, 1], [1, 1, 1, 1], [1, 1, 1, 1], [0, 0, 0, 0]]


def test_dmmpt_batch_entropy_scope():
    # batch token mean: (0.4 + 0.4 + 1.0 + 0.2) / 14 < 0.2, so row 2's p = 0.999 token is masked too
    keep = dmmpt_mask(PROBS, ENTROPY, MASK, REWARDS, entropy_scope="batch")
    assert rows(keep)[2] == [0, 1, 1, 1]
    assert rows(dmmpt_mask(PROBS, ENTROPY, MASK, REWARDS, sigma=0.1)) == MASK.tolist()  # 0.1 is not < 0.1
    with pytest.raises(ValueError, match="entropy_scope"):
        dmmpt_mask(PROBS, ENTROPY, MASK, REWARDS, entropy_scope="step")  # type: ignore[arg-type]
