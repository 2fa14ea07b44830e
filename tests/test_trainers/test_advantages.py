"""Advantage estimators on hand-computed tensors."""

import math

import pytest
import torch

from trainers.advantages import (
    group_center,
    group_zscore,
    whiten_by_key,
    whiten_tokens,
)

R3 = math.sqrt(3) / 2  # 0.5 / unbiased std of [1, 0, 0, 1]
R2 = 1 / math.sqrt(2)  # 0.5 / unbiased std of [1, 0]

# Mixed group sizes, interleaved: "a" has 4 rows, "b" 2, "c" 3 equal rewards, "d" a single row.
GROUPS = ["a", "b", "a", "c", "b", "a", "c", "d", "a", "c"]
REWARDS = torch.tensor([1.0, 1.0, 0.0, 0.5, 0.0, 0.0, 0.5, 3.0, 1.0, 0.5])
ZERO_STD = [False, False, False, True, False, False, True, True, False, True]


def close(actual: torch.Tensor, expected: list[float], tol: float = 1e-6) -> None:
    torch.testing.assert_close(actual, torch.tensor(expected, dtype=actual.dtype), atol=tol, rtol=0)


def test_group_zscore_mixed_sizes_zero_variance_and_singleton():
    adv = group_zscore(REWARDS, GROUPS, eps=0.0)
    close(adv.values, [R3, R2, -R3, 0, -R2, -R3, 0, 0, R3, 0])
    assert adv.zero_std.tolist() == ZERO_STD
    assert adv.values.dtype == torch.float32


def test_group_zscore_population_std():
    # Reasoning Arena Eq. 2: population std; [1, 0, 0, 1] and [1, 0] both have std 0.5.
    adv = group_zscore(REWARDS, GROUPS, unbiased=False, eps=0.0)
    close(adv.values, [1, 1, -1, 0, -1, -1, 0, 0, 1, 0])
    assert adv.zero_std.tolist() == ZERO_STD


def test_group_zscore_defaults_equal_trls_inline_formula():
    rewards = torch.tensor([1.0, 0.0, 0.0, 0.0, 0.2, 0.9, 0.4, 0.4])
    grouped = rewards.view(-1, 4)  # TRL: consecutive groups of num_generations, std(dim=1) + 1e-4
    expected = (rewards - grouped.mean(1).repeat_interleave(4)) / (grouped.std(1).repeat_interleave(4) + 1e-4)
    adv = group_zscore(rewards, [0, 0, 0, 0, 1, 1, 1, 1])
    torch.testing.assert_close(adv.values, expected)


def test_group_zscore_eps_and_integer_rewards():
    adv = group_zscore(torch.tensor([1, 0]), ["g", "g"], eps=0.1)
    close(adv.values, [0.5 / (math.sqrt(0.5) + 0.1), -0.5 / (math.sqrt(0.5) + 0.1)])
    assert adv.values.dtype == torch.float32


def test_near_equal_float_rewards_count_as_zero_variance():
    adv = group_zscore(torch.tensor([0.1, 0.1, 0.1]), ["g"] * 3)
    assert adv.zero_std.all() and (adv.values == 0).all()


def test_group_center_subtracts_the_group_mean_only():
    adv = group_center(REWARDS, GROUPS)
    close(adv.values, [0.5, 0.5, -0.5, 0, -0.5, -0.5, 0, 0, 0.5, 0])
    assert adv.zero_std.tolist() == ZERO_STD


def test_whiten_by_key_gives_one_baseline_per_task_and_role():
    keys = [("ded", "solve"), ("ded", "propose"), ("ded", "solve"), ("abd", "solve"), ("ded", "propose")]
    keys += [("ded", "solve"), ("ded", "propose"), ("ded", "solve")]
    rewards = torch.tensor([1.0, 1.0, -1.0, -0.5, 0.0, 1.0, -1.0, -1.0])
    adv = whiten_by_key(rewards, keys, eps=0.0)
    # ded/solve [1, -1, 1, -1]: mean 0, unbiased std 2/sqrt(3); ded/propose [1, 0, -1]: std 1; abd/solve alone
    close(adv.values, [R3, 1, -R3, 0, 0, R3, -1, -R3])
    assert adv.zero_std.tolist() == [False, False, False, True, False, False, False, False]
    shifted = rewards + torch.tensor([5.0, 0, 5, 0, 0, 5, 0, 5])  # one slice shifted: nothing moves
    torch.testing.assert_close(whiten_by_key(shifted, keys, eps=0.0).values, adv.values)


def test_whiten_by_key_without_keys_is_a_global_baseline():
    rewards = torch.tensor([1.0, -1.0, 3.0, 1.0])  # mean 1, unbiased std sqrt(8/3)
    s = math.sqrt(8 / 3)
    close(whiten_by_key(rewards, eps=0.0).values, [0, -2 / s, 2 / s, 0])
    # unlike per-key whitening, shifting part of the batch moves every advantage
    moved = whiten_by_key(rewards + torch.tensor([0.0, 0, 4, 4]), eps=0.0).values
    assert not torch.allclose(moved[:2], whiten_by_key(rewards, eps=0.0).values[:2])


def test_whiten_by_key_token_weighted():
    # tokens: 1, 1, 1, 0 -> mean 0.75; squared deviations 3 * 0.0625 + 0.5625 = 0.75; / (4 - 1) -> std 0.5
    adv = whiten_by_key(torch.tensor([1.0, 0.0]), lengths=[3, 1], eps=0.0)
    close(adv.values, [0.5, -1.5])
    close(whiten_by_key(torch.tensor([1.0, 0.0]), eps=0.0).values, [R2, -R2])  # per sequence


def test_token_weighted_equals_verl_masked_whiten_of_broadcast_rewards():
    rewards = torch.tensor([1.0, -0.5, 0.875, -1.0, 0.0])
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1], [1, 1, 0, 0], [1, 1, 1, 0]])
    returns, m = rewards[:, None] * mask, mask.double()
    mean = (returns * m).sum() / m.sum()
    var = (((returns - mean) ** 2) * m).sum() / m.sum() * m.sum() / (m.sum() - 1)
    verl = ((returns - mean) * torch.rsqrt(var + 1e-8))[:, 0]
    adv = whiten_by_key(rewards, lengths=mask.sum(1), eps=1e-8)
    torch.testing.assert_close(adv.values, verl.float(), atol=1e-6, rtol=1e-6)


def test_token_weighted_with_equal_lengths_matches_sequence_level_population_stats():
    rewards = torch.tensor([1.0, 0.0, 0.0, 0.5])
    per_token = whiten_by_key(rewards, lengths=[3, 3, 3, 3], unbiased=False).values
    torch.testing.assert_close(per_token, whiten_by_key(rewards, unbiased=False).values)


def test_whiten_tokens_over_the_whole_batch():
    values = torch.tensor([[1.0, 2.0, 9.0], [3.0, 9.0, 9.0]])
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    close(whiten_tokens(values, mask, eps=0.0), [[-1, 0, 0], [1, 0, 0]])  # tokens 1, 2, 3: mean 2, std 1
    close(whiten_tokens(torch.full((2, 3), 0.7), mask), [[0, 0, 0], [0, 0, 0]])


def test_bad_input_is_refused_with_the_row():
    with pytest.raises(ValueError, match="rows \\[1\\]"):
        group_zscore(torch.tensor([0.0, float("nan")]), ["g", "g"])
    with pytest.raises(ValueError, match="3 group keys for 2 rewards"):
        group_center(torch.tensor([0.0, 1.0]), ["a", "a", "b"])
    with pytest.raises(ValueError, match="lengths"):
        whiten_by_key(torch.tensor([0.0, 1.0]), lengths=[3])
