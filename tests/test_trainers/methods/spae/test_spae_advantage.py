"""SPAE's advantage builder and step potential (SPAE paper, Eq. 8
and Eqs. 11-17), checked against values computed here by hand."""

from __future__ import annotations

import math
import statistics

import pytest
import torch

from harness.probing.steps import potential
from trainers.advantages import group_center, whiten_tokens
from trainers.masks import completion_mask
from trainers.methods.spae.advantage import (
    SpaeSettings,
    penalty,
    potential_differences,
    saturation_counts,
    shaping,
    spae_terms,
)

GRID = [i / 40 for i in range(41)]


# --- Phi (Eq. 8) ------------------------------------------------------------------------------------------


def test_potential_corners_and_its_interpolation_form():
    assert [potential(a, c) for a, c in [(1, 1), (0, 1), (0, 0), (1, 0)]] == [1, -1, 0, 0.5]
    for acc in GRID:
        for conf in GRID:
            mixed = conf * (2 * acc - 1) + (1 - conf) * acc / 2  # confident: 2 Acc - 1; exploring: Acc / 2
            assert potential(acc, conf) == pytest.approx(mixed, abs=1e-12)
            assert -1 - 1e-12 <= potential(acc, conf) <= 1 + 1e-12


def test_a_saturated_potential_means_right_and_confident():
    fine = [i / 400 for i in range(401)]
    saturated = [(a, c) for a in fine for c in fine if potential(a, c) > 0.9 + 1e-12]  # past rounding
    assert saturated and all(a > 0.95 and c > 0.8 for a, c in saturated)


# --- the pieces of Eq. 11-15 ------------------------------------------------------------------------------


def test_saturation_counts_only_earlier_steps_above_the_threshold():
    # step 3's dip does not undo step 2's saturation; exactly 0.9 is not above it; the last entry is the
    # virtual step after the last boundary
    assert saturation_counts([0.1, 0.95, 0.4, 0.9, 0.97, 0.2], 0.9) == [0, 0, 1, 1, 1, 2, 2]
    assert saturation_counts([], 0.9) == [0]


@pytest.mark.parametrize("form", ["exp", "slow_fast"])
def test_penalty_starts_at_one_and_never_rises(form):
    settings = SpaeSettings(alpha=0.5, penalty=form)
    counts = torch.arange(0, 9)
    f = penalty(counts, settings, most=8)
    assert f[0] == 1 and bool((f[1:] <= f[:-1]).all()) and bool((f >= 0.5 - 1e-12).all())
    drops = (f[:-1] - f[1:]).tolist()
    if form == "exp":  # 1 - alpha (1 - e^-C): fastest first
        assert f[1].item() == pytest.approx(1 - 0.5 * (1 - math.exp(-1)))
        assert drops == sorted(drops, reverse=True)
    else:  # slow, then fast, reaching 1 - alpha at the batch's largest count
        assert drops == sorted(drops) and f[-1].item() == pytest.approx(0.5)
    assert bool((penalty(counts, SpaeSettings(alpha=0.0, penalty=form), most=8) == 1).all())


def test_slow_fast_penalty_is_its_formula_and_stays_finite_for_many_saturated_steps():
    settings = SpaeSettings(alpha=0.5, penalty="slow_fast", kappa=2.0)
    f = penalty(torch.tensor([0.0, 1.0, 3.0]), settings, most=3)
    expected = [1 - 0.5 * math.expm1(c / 2) / math.expm1(3 / 2) for c in (0, 1, 3)]
    assert f.tolist() == pytest.approx(expected)
    many = penalty(torch.tensor([0.0, 1499.0, 1500.0]), settings, most=1500)  # e^(1500/2) overflows
    assert bool(torch.isfinite(many).all()) and many[0] == 1 and many[2].item() == pytest.approx(0.5)
    assert many[1].item() == pytest.approx(1 - 0.5 * math.exp(-0.5))


def test_potential_differences_start_at_zero():
    assert potential_differences([0.2, 0.5, 0.1]) == pytest.approx([0.0, 0.3, -0.4])
    assert potential_differences([0.7]) == [0.0] and potential_differences([]) == []


def test_shaping_is_min_max_scaled_exponential_centred_on_the_batch():
    deltas = [[0.0, -0.45, 0.47], [0.0], [0.0, 0.62]]
    tokens = [[2, 2, 1], [3], [1, 1]]
    g = shaping(deltas, tokens, "steps")
    flat = [v for row in g for v in row]
    assert statistics.fmean(flat) == pytest.approx(0.0, abs=1e-12)  # zero mean over the batch's steps
    lifted = [v - flat[1] + 1 for v in flat]  # the -0.45 step is the minimum: exp(0) = 1
    assert min(lifted) == pytest.approx(1) and max(lifted) == pytest.approx(math.e)  # min-max into [0, 1]
    by_tokens = shaping(deltas, tokens, "tokens")
    weights = [w for row in tokens for w in row]
    weighted = sum(v * w for v, w in zip([v for row in by_tokens for v in row], weights, strict=True)) / sum(
        weights
    )
    assert weighted == pytest.approx(0.0, abs=1e-12)
    assert shaping([[0.0, 0.0], [0.0]], [[1, 1], [1]], "steps") == [[0.0, 0.0], [0.0]]  # no spread: 0


# --- the builder (Eq. 11, 16, 17) -------------------------------------------------------------------------

# rollout 0: group A, reward 1, Phi 0.95, 0.5, 0.97 over tokens [0, 2), [2, 4), [4, 5), then 2 tail tokens
# rollout 1: group A, reward 0, Phi 0.2 over [0, 3), one tail token
# rollout 2: group B (alone), reward 1, Phi 0.3, 0.92 over [0, 1), [1, 2), no tail
REWARDS = torch.tensor([1.0, 0.0, 1.0])
GROUPS = ["A", "A", "B"]
POTENTIALS = [[0.95, 0.5, 0.97], [0.2], [0.3, 0.92]]
ENDS = [[2, 4, 5], [3], [1, 2]]
LENGTHS = [7, 4, 2]


def by_hand(alpha: float = 0.5, xi: float = 0.5, positive_only: bool = False) -> torch.Tensor:
    """Eq. 11 before Eq. 17, written out for the three rollouts above."""
    f = lambda c: 1 - alpha * (1 - math.exp(-c))  # noqa: E731
    # Delta Phi: 0, -0.45, 0.47 | 0 | 0, 0.62; min -0.45, max 0.62
    scaled = [[0.45 / 1.07, 0.0, 0.92 / 1.07], [0.45 / 1.07], [0.45 / 1.07, 1.0]]
    mean = statistics.fmean(math.exp(s) for row in scaled for s in row)
    g = [[math.exp(s) - mean for s in row] for row in scaled]
    a = [0.5, -0.5, 0.0]  # R - group mean
    f1 = (lambda c: 1.0) if positive_only else f  # rollout 1 is negative
    rows = [
        [a[0] * f(0) + xi * g[0][0]] * 2
        + [a[0] * f(1) + xi * g[0][1]] * 2
        + [a[0] * f(1) + xi * g[0][2]]
        + [a[0] * f(2)] * 2,  # the tail: all 2 saturations, no shaping
        [a[1] * f1(0) + xi * g[1][0]] * 3 + [a[1] * f1(0)],  # no step of rollout 1 saturates
        [a[2] * f(0) + xi * g[2][0], a[2] * f(0) + xi * g[2][1]],
    ]
    out = torch.zeros(3, 7, dtype=torch.float64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row, dtype=torch.float64)
    return out


def test_the_builder_matches_the_hand_computation():
    mask = completion_mask(LENGTHS, 7)
    got = spae_terms(REWARDS, GROUPS, POTENTIALS, ENDS, LENGTHS).advantages
    torch.testing.assert_close(got, whiten_tokens(by_hand(), mask))
    tokens = got[mask.bool()]
    assert tokens.mean().item() == pytest.approx(0.0, abs=1e-9)
    assert tokens.std().item() == pytest.approx(1.0, abs=1e-5)  # Eq. 17: mean 0, std 1 over real tokens
    assert bool((got[~mask.bool()] == 0).all())


def test_penalty_on_positive_only_leaves_negative_rollouts_alone():
    mask = completion_mask(LENGTHS, 7)
    got = spae_terms(
        REWARDS, GROUPS, POTENTIALS, ENDS, LENGTHS, SpaeSettings(penalty_on_positive_only=True)
    ).advantages
    torch.testing.assert_close(got, whiten_tokens(by_hand(positive_only=True), mask))


def test_without_penalty_and_shaping_it_is_rf_b():
    """xi = 0 and alpha = 0: the group-centred reward on every token, standardised over the batch's tokens
    (Reinforce++-Baseline), bit for bit."""
    mask = completion_mask(LENGTHS, 7)
    rf_b = whiten_tokens(group_center(REWARDS.double(), GROUPS).values[:, None] * mask, mask)
    plain = spae_terms(REWARDS, GROUPS, POTENTIALS, ENDS, LENGTHS, SpaeSettings(alpha=0.0, xi=0.0)).advantages
    assert torch.equal(plain, rf_b)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="one entry per rollout"):
        spae_terms(REWARDS, GROUPS[:2], POTENTIALS, ENDS, LENGTHS)
    with pytest.raises(ValueError, match="rollout 0: 3 potentials for step ends \\[2, 4, 9\\] of 7 tokens"):
        spae_terms(REWARDS, GROUPS, POTENTIALS, [[2, 4, 9], [3], [1, 2]], LENGTHS)
    with pytest.raises(ValueError, match="penalty must be one of"):
        SpaeSettings(penalty="linear")
