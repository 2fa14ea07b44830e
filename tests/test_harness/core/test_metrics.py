"""Tests for harness.core.metrics against hand-computed values."""

from __future__ import annotations

from dataclasses import replace
from math import comb

import pytest

from harness.core.metrics import (
    Outcome,
    aggregate,
    answer_of,
    answer_spread,
    collapsed,
    constant_baseline,
    k_values,
    majority_value,
    pass_at_k,
)

# ---------------------------------------------------------------------------------------------
# pass_at_k
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 4, 8])
@pytest.mark.parametrize("c", range(9))
def test_pass_at_k_matches_combinatorial_formula(c, k):
    n = 8
    expected = 1 - comb(n - c, k) / comb(n, k)  # comb(a, b) == 0 when b > a
    assert pass_at_k(n, c, k) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (8, 3, 2, 1 - 10 / 28),  # 0.642857...
        (8, 3, 1, 3 / 8),
        (8, 1, 4, 1 - 35 / 70),  # 0.5
        (8, 2, 8, 1.0),
        (8, 7, 2, 1.0),  # only one failure: any pair contains a success
        (8, 0, 1, 0.0),
        (8, 0, 8, 0.0),
        (8, 8, 1, 1.0),
        (4, 2, 2, 1 - 1 / 6),
        (4, 1, 2, 0.5),
        (1, 1, 1, 1.0),
        (1, 0, 1, 0.0),
    ],
)
def test_pass_at_k_literal_values(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_pass_at_k_literal_0_642857():
    assert pass_at_k(8, 3, 2) == pytest.approx(0.6428571428571429, abs=1e-12)


@pytest.mark.parametrize(("n", "k"), [(8, 9), (1, 2), (4, 16)])
def test_pass_at_k_rejects_k_larger_than_n(n, k):
    with pytest.raises(ValueError):
        pass_at_k(n, 0, k)


# ---------------------------------------------------------------------------------------------
# k_values
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (16, [1, 2, 4, 8, 16]),
        (5, [1, 2, 4, 5]),
        (1, [1]),
        (6, [1, 2, 4, 6]),
        (2, [1, 2]),
        (8, [1, 2, 4, 8]),
        (9, [1, 2, 4, 8, 9]),
    ],
)
def test_k_values(n, expected):
    assert k_values(n) == expected


# ---------------------------------------------------------------------------------------------
# majority_value
# ---------------------------------------------------------------------------------------------


def _o(idx, value, key, item="q", truncated=None, tokens=None):
    return Outcome(
        item_id=item,
        sample_idx=idx,
        value=value,
        answer_key=key,
        answer=key,
        truncated=truncated,
        completion_tokens=tokens,
    )


def test_majority_clear_winner_correct():
    outcomes = [_o(0, 0.0, "7"), _o(1, 1.0, "5"), _o(2, 1.0, "5"), _o(3, 0.0, "9"), _o(4, 1.0, "5")]
    assert majority_value(outcomes) == 1.0


def test_majority_clear_winner_wrong():
    outcomes = [_o(0, 1.0, "5"), _o(1, 0.0, "7"), _o(2, 0.0, "7"), _o(3, 0.0, "7")]
    assert majority_value(outcomes) == 0.0


def test_majority_tie_goes_to_lowest_sample_idx():
    # "b" (wrong) and "a" (right) both have 2 votes; "b" appears first by sample_idx (idx 0).
    outcomes = [_o(3, 1.0, "a"), _o(0, 0.0, "b"), _o(1, 1.0, "a"), _o(2, 0.0, "b")]
    assert majority_value(outcomes) == 0.0
    assert majority_value(list(reversed(outcomes))) == 0.0
    # Now "a" owns sample_idx 0: it wins the tie whatever the list order.
    swapped = [_o(3, 0.0, "b"), _o(0, 1.0, "a"), _o(1, 0.0, "b"), _o(2, 1.0, "a")]
    assert majority_value(swapped) == 1.0
    assert majority_value(list(reversed(swapped))) == 1.0
    assert majority_value(sorted(swapped, key=lambda o: -o.sample_idx)) == 1.0


def test_majority_none_answers_do_not_vote():
    # Three unextracted samples (marked correct, to show they are ignored) vs one extracted wrong one.
    outcomes = [_o(0, 1.0, None), _o(1, 1.0, None), _o(2, 1.0, None), _o(3, 0.0, "4")]
    assert majority_value(outcomes) == 0.0
    outcomes = [_o(0, 0.0, None), _o(1, 0.0, None), _o(2, 1.0, "4"), _o(3, 0.0, "5")]
    assert majority_value(outcomes) == 1.0  # tie 1-1, "4" comes first by sample_idx


def test_majority_all_none_scores_zero():
    assert majority_value([_o(0, 1.0, None), _o(1, 1.0, None)]) == 0.0
    assert majority_value([]) == 0.0


# ---------------------------------------------------------------------------------------------
# aggregate
# ---------------------------------------------------------------------------------------------


def _two_items_n4():
    # Item A: values 1,0,0,1 (c=2); answers 5,7,7,5 -> tie 2-2, "5" first (idx 0) -> maj value 1.
    a = [
        _o(0, 1.0, "5", "A", truncated=False, tokens=100),
        _o(1, 0.0, "7", "A", truncated=True, tokens=200),
        _o(2, 0.0, "7", "A", truncated=False, tokens=300),
        _o(3, 1.0, "5", "A", truncated=False, tokens=400),
    ]
    # Item B: all wrong (c=0); answers 2,None,3,2 -> "2" wins -> maj value 0.
    b = [
        _o(0, 0.0, "2", "B", truncated=None, tokens=None),
        _o(1, 0.0, None, "B", truncated=True, tokens=50),
        _o(2, 0.0, "3", "B", truncated=True, tokens=150),
        _o(3, 0.0, "2", "B", truncated=False, tokens=None),
    ]
    return a + b


def test_aggregate_two_items_hand_computed():
    result = aggregate(_two_items_n4())
    assert set(result) == {
        "n_items",
        "n_samples",
        "avg@4",
        "pass@1",
        "pass@2",
        "pass@4",
        "maj@4",
        "ci95",
        "truncated_rate",
        "unextracted_rate",
        "mean_completion_tokens",
        "distinct_answers",
        "mode_answer",
        "mode_answer_share",
    }
    assert result["n_items"] == 2
    assert result["n_samples"] == 8
    # item means 0.5 and 0.0
    assert result["avg@4"] == pytest.approx(0.25)
    # pass@1: A 2/4, B 0 -> 0.25
    assert result["pass@1"] == pytest.approx(0.25)
    # pass@2: A 1 - C(2,2)/C(4,2) = 1 - 1/6 = 5/6, B 0 -> 5/12
    assert result["pass@2"] == pytest.approx(5 / 12)
    # pass@4: A 1, B 0 -> 0.5
    assert result["pass@4"] == pytest.approx(0.5)
    # maj@4: A 1, B 0
    assert result["maj@4"] == pytest.approx(0.5)
    # truncated: 7 known flags (B0 is None), 3 True -> 3/7
    assert result["truncated_rate"] == pytest.approx(3 / 7)
    # unextracted: 1 of 8
    assert result["unextracted_rate"] == pytest.approx(1 / 8)
    # tokens known: 100+200+300+400+50+150 = 1200 over 6 -> 200
    assert result["mean_completion_tokens"] == pytest.approx(200.0)
    # item means {0.5, 0.0}: bootstrap means are 0, 0.25, 0.5 with prob 1/4, 1/2, 1/4
    assert result["ci95"] == pytest.approx([0.0, 0.5])
    assert "samples_per_item" not in result
    # answers 5,7,7,5 and 2,-,3,2: four distinct; 2, 5 and 7 tie at 2 of 8 samples, "2" is the smallest
    assert (result["distinct_answers"], result["mode_answer"], result["mode_answer_share"]) == (4, "2", 0.25)


def test_aggregate_ignores_input_order():
    outcomes = _two_items_n4()
    assert aggregate(outcomes) == aggregate(list(reversed(outcomes)))


def test_aggregate_unequal_sample_counts():
    a = [_o(0, 1.0, "1", "A"), _o(1, 1.0, "1", "A"), _o(2, 0.0, "2", "A"), _o(3, 0.0, "3", "A")]
    b = [_o(0, 1.0, "9", "B"), _o(1, 1.0, "9", "B")]
    result = aggregate(a + b)
    assert result["samples_per_item"] == {"min": 2, "max": 4}
    assert result["n_items"] == 2
    assert result["n_samples"] == 6
    # mean of per-item means (0.5, 1.0) = 0.75, not the pooled 4/6
    assert result["avg@4"] == pytest.approx(0.75)
    assert result["pass@1"] == pytest.approx((0.5 + 1.0) / 2)
    # pass@2: A 1 - C(2,2)/C(4,2) = 5/6, B 1 -> 11/12
    assert result["pass@2"] == pytest.approx(11 / 12)
    assert "pass@4" not in result
    assert "avg@2" not in result
    assert result["maj@4"] == pytest.approx(1.0)  # A: "1" has 2 votes (right); B: "9" (right)
    assert result["truncated_rate"] is None
    assert result["mean_completion_tokens"] is None
    assert result["unextracted_rate"] == 0.0


def test_aggregate_pass_at_k_counts_only_value_one_as_correct():
    # Partial credit (0.5) counts in avg but is not a success for pass@k.
    outcomes = [_o(0, 0.5, "x", "A"), _o(1, 0.5, "x", "A")]
    result = aggregate(outcomes)
    assert result["avg@2"] == pytest.approx(0.5)
    assert result["pass@1"] == 0.0
    assert result["pass@2"] == 0.0


def test_aggregate_empty():
    assert aggregate([]) == {"n_items": 0, "n_samples": 0}


def _many_items():
    # 10 items with 4 samples each; item i has (i % 5) correct samples.
    outcomes = []
    for i in range(10):
        correct = i % 5
        for s in range(4):
            value = 1.0 if s < correct else 0.0
            outcomes.append(_o(s, value, str(s), f"item{i}"))
    return outcomes


def test_ci95_is_deterministic_bounded_and_contains_avg():
    outcomes = _many_items()
    first, second = aggregate(outcomes), aggregate(outcomes)
    assert first["ci95"] == second["ci95"]
    assert isinstance(first["ci95"], list)
    low, high = first["ci95"]
    assert 0.0 <= low <= high <= 1.0
    # item means are 0, .25, .5, .75, 1 twice over -> mean 0.5
    assert first["avg@4"] == pytest.approx(0.5)
    assert low < first["avg@4"] < high


def test_ci95_degenerate_when_all_item_means_equal():
    outcomes = []
    for i in range(5):
        outcomes += [_o(0, 1.0, "1", f"i{i}"), _o(1, 0.0, "2", f"i{i}")]
    result = aggregate(outcomes)
    assert result["avg@2"] == 0.5
    assert result["ci95"] == [0.5, 0.5]


def test_truncated_rate_none_when_all_flags_none():
    outcomes = [_o(0, 1.0, "1", "A", truncated=None), _o(1, 0.0, "2", "A", truncated=None)]
    result = aggregate(outcomes)
    assert result["truncated_rate"] is None
    outcomes = [_o(0, 1.0, "1", "A", truncated=None), _o(1, 0.0, "2", "A", truncated=True)]
    assert aggregate(outcomes)["truncated_rate"] == 1.0


# ---------------------------------------------------------------------------------------------
# answer spread, constant baseline, collapse
# ---------------------------------------------------------------------------------------------


def test_answer_spread_counts_unextracted_samples_in_the_share_only():
    spread = answer_spread(["5", None, "5", "12", None, "5", "7", "5"])
    assert spread == {"distinct_answers": 3, "mode_answer": "5", "mode_answer_share": 0.5}
    assert answer_spread([None, None]) == {
        "distinct_answers": 0,
        "mode_answer": None,
        "mode_answer_share": 0.0,
    }


def test_an_answer_is_its_canonical_form_else_the_extracted_text():
    assert answer_of({"extracted": "5.0", "canonical": "5"}) == "5"
    assert answer_of({"extracted": "Paris", "canonical": None}) == "Paris"  # a judge's prediction
    assert answer_of({"extracted": None, "canonical": "5"}) is None
    assert answer_of({"extracted": None}) is None


def test_constant_baseline_is_the_most_common_golds_share_of_items():
    assert constant_baseline([(g,) for g in ["5", "7", " 5", "9", "5\n", "7", "11", "12"]]) == 3 / 8
    assert constant_baseline([("A",)]) == 1.0
    # several accepted answers: "5" is accepted by 3 of 4 items, counted once per item
    assert constant_baseline([("5", "five", " 5"), ("5",), ("7", "5"), ("7",)]) == 3 / 4


def test_aggregate_records_the_constant_baseline_when_every_outcome_has_its_gold():
    golds = {"A": ("5",), "B": ("5",), "C": ("9",)}
    outcomes = [_o(k, 0.0, "5", item) for item in golds for k in range(2)]
    assert "constant_baseline" not in aggregate(outcomes)
    result = aggregate([replace(o, gold=golds[o.item_id]) for o in outcomes])
    assert result["constant_baseline"] == pytest.approx(2 / 3)  # items weigh equally, as in avg@N
    assert (result["distinct_answers"], result["mode_answer"], result["mode_answer_share"]) == (1, "5", 1.0)


@pytest.mark.parametrize(
    ("base", "candidate", "constant", "expected"),
    [
        (0.10, 1.00, 0.14, True),  # the demo: every sample answers 5
        (0.10, 0.50, None, True),  # half of the samples, 40 points up, no gold to compare
        (0.10, 0.49, None, False),  # under half
        (0.30, 0.54, None, False),  # only 24 points above the base
        (0.30, 0.55, None, True),
        (0.10, 0.60, 0.40, False),  # golds alone are 40% one answer: 60% is not 25 points beyond
        (0.10, 0.65, 0.40, True),
        (0.80, 0.85, 0.20, False),  # the base was already as concentrated
    ],
)
def test_collapse_rule(base, candidate, constant, expected):
    assert collapsed(base, candidate, constant) is expected
