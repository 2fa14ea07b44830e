"""Loss masks on hand-made tensors."""

import pytest
import torch
from trainer_helpers import segment_index

from trainers.masks import completion_mask, dmmpt_mask, mask_truncated
from trainers.rollout import Rollout


def rows(mask: torch.Tensor) -> list[list[int]]:
    assert mask.dtype == torch.int32
    return mask.tolist()


def test_completion_mask_from_lengths():
    assert rows(completion_mask([2, 0, 3], 3)) == [[1, 1, 0], [0, 0, 0], [1, 1, 1]]
    with pytest.raises(ValueError, match="width 3"):
        completion_mask([4], 3)


def test_truncated_completions_are_masked():
    mask = completion_mask([2, 3], 3)
    assert rows(mask_truncated(mask, [False, True])) == [[1, 1, 0], [0, 0, 0]]
    with pytest.raises(ValueError, match="do not fit mask"):
        mask_truncated(mask, [True])


def test_continued_completion_segments():
    first = Rollout([1, 2], [10, 11, 12], "solver", "g0", "math", "unfinished", policy_versions=[4])
    done = first.continued([13, 14], "stop", policy_version=5)
    short = Rollout([1, 2], [20, 21], "solver", "g0", "math", "stop", policy_versions=[5])
    width = 6
    index = segment_index([done.segments, short.segments], width)
    assert index.tolist() == [[0, 0, 0, 1, 1, -1], [0, 0, -1, -1, -1, -1]]


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
