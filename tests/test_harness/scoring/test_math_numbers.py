r"""Math rule: numbers: integers (`as_integer`), ordinals, e-notation, thousands separators, exact golds,
and rounding to the gold's significant figures on benchmarks of measured quantities only."""

from __future__ import annotations

from decimal import Decimal

import pytest
from scoring_cases import KCAL, verdict_test

from harness.scoring.math import MathScorer, as_integer
from harness.scoring.math_normalise import decimal, matches_at_gold_precision

# (label, answer, gold, expected value): the audit's patterns 3, 9 and 10, rules 3's shape 2
CASES = [
    # 3. ordinal suffixes
    ("3", r"\boxed{12^{\mathrm{th}}}", "12", 1.0),
    ("3", r"\boxed{12^{th}}", "12", 1.0),
    ("3", r"\boxed{12\text{th}}", "12", 1.0),
    ("3", r"\boxed{21^{\text{st}}}", "21", 1.0),
    ("3", "The answer is the 12th grade.", "12", 0.0),  # "the" before the number: not a number answer
    ("3", "The answer is 12th grade.", "12", 1.0),
    ("3", r"\boxed{12^{th}}", "13", 0.0),
    ("3", r"\boxed{12^{2}}", "12", 0.0),
    # 9. e-notation golds
    ("9", r"\boxed{10^{-5}}", "1e-5", 1.0),
    ("9", r"\boxed{0.00001}", "1e-5", 1.0),
    ("9", r"\boxed{10^{-4}}", "1e-5", 0.0),
    ("9", r"\boxed{1.325 \times 10^{-27}}", "2.88e-19", 0.0),  # 6-place rounding made them equal
    ("9", "The final answer is 3e8.", r"3 \times 10^{8}", 1.0),
    ("9", r"\boxed{e - 5}", "e-5", 1.0),  # no digit before e: Euler's e
    # 10. thousands separator followed by units
    ("10", r"\boxed{15000}", KCAL, 1.0),
    ("10", r"\boxed{15}", KCAL, 0.0),
    ("10", r"\boxed{15,000 \text{ kcal}}", "15000", 1.0),
    ("10", r"\boxed{15\,000}", "15000", 1.0),
    ("10", r"\boxed{1,500}", KCAL, 0.0),
    # 2. exact-answer golds are exact: no rounding to the gold's figures
    ("2 exact", r"\boxed{165.93}", "166", 0.0),
    ("2 exact", r"\boxed{35.5}", "36", 0.0),
    ("2 exact", r"\boxed{1.504}", "1.50", 0.0),
    ("2 exact", r"\boxed{166.0}", "166", 1.0),
    ("2 exact", r"\boxed{1.5}", "1.50", 1.0),
]
# scored as a benchmark of measured quantities (Minerva) is: the audit's pattern 4
MEASURED_CASES = [
    # 4. an answer more precise than the gold, at the gold's significant figures (measured golds only)
    ("4", r"\boxed{6630.65}", "6630", 1.0),
    ("4", r"\boxed{6640.1}", "6630", 0.0),
    ("4", r"\boxed{6636}", "6630", 0.0),
    ("4", r"\boxed{102019}", "102018", 0.0),
    ("4", r"\boxed{102018.3}", "102018", 1.0),
    ("4", r"\boxed{2000}", "20", 0.0),
    ("4", r"\boxed{20}", "2000", 0.0),
    ("4", r"\boxed{20.4}", "20", 0.0),
    ("4", r"\boxed{1.504}", "1.50", 1.0),
    ("4", r"\boxed{1.51}", "1.50", 0.0),
    ("4", r"\boxed{2.884 \times 10^{-19}}", "2.88e-19", 1.0),
]


test_verdict = verdict_test(CASES)


test_measured_verdict = verdict_test(MEASURED_CASES, measured=True)


@pytest.mark.parametrize(
    ("answer", "gold", "value"),
    [
        (r"\boxed{165.93}", "166", 1.0),  # measured quantities round to the gold's figures
        (r"\boxed{6630.65}", "6630", 1.0),
        (r"\boxed{41.83}", "41.8", 1.0),
        (r"\boxed{41.86}", "41.8", 0.0),
        (r"\boxed{20.4}", "20", 0.0),
    ],
)
def test_measured_benchmarks_round(answer, gold, value):
    scores = dict(MathScorer(timeout=30, workers=1, measured=True).score([answer], [gold]))
    assert scores[0].value == value


@pytest.mark.parametrize(
    ("answer", "gold", "expected"),
    [
        ("6630.65", "6630", True),
        ("6635.2", "6630", False),  # rounds to 6640
        ("6634.9", "6630", True),
        ("102018.4", "102018", True),
        ("102018.5", "102018", False),
        ("102019", "102018", False),  # integers are exact
        ("20.4", "20", False),  # one significant figure: exact only
        ("2000.1", "2000", False),
        ("0.0501", "0.05", False),
        ("1.504", "1.50", True),
        ("1.49", "1.50", False),  # not more precise than the gold: exact
        ("3.14159", "3.14", True),
        ("3.146", "3.14", False),
        ("-6630.65", "-6630", True),
        ("2.884e-19", "2.88e-19", True),
        ("2.886e-19", "2.88e-19", False),
    ],
)
def test_matches_at_gold_precision(answer, gold, expected):
    assert matches_at_gold_precision(Decimal(answer), Decimal(gold)) is expected


def test_decimal_reads_scientific_forms():
    assert decimal(r"2.88\times10^{-19}") == Decimal("2.88e-19")
    assert decimal(r"3\cdot10^8") == Decimal("3e8")
    assert decimal("-0.5") == Decimal("-0.5")
    assert decimal(r"\frac{1}{2}") is None
    assert decimal("x") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("033", 33),
        ("204.0", 204),
        ("1,000", 1000),
        ("1{,}000", 1000),
        ("1,000,000", 1000000),
        ("$-7$", -7),
        ("3.00", 3),
        (r"90^\circ", 90),
        (r"\text{12}", 12),
        ("1,2", None),
        ("1,0000", None),
        (r"\frac{1}{2}", None),
        ("3.5", None),
        ("x", None),
        ("", None),
    ],
)
def test_as_integer(text, expected):
    assert as_integer(text) == expected
