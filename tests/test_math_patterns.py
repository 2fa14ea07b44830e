r"""The math scorer on the failure patterns an audit of published outputs found (issue 18).

Each pattern has answers that must now be judged right and near misses that must stay wrong.
All scorer cases go through one `MathScorer.score` call (it spawns worker processes).
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from helpers import run_cli

from harness.scoring.math import MathScorer
from harness.scoring.math_text import (
    decimal,
    final_answer,
    matches_at_gold_precision,
    normalise,
    repeated_list_as_tuple,
    variables,
)

ALL_TEN = "-2, -1, 0, 1, 2, 10, 11, 12, 13, 14"
TWO_BOXES = r"The solutions are $\boxed{10, 11, 12, 13, 14}$ and $\boxed{-2, -1, 0, 1, 2}$."
LOOPING = r"So $x = \boxed{5}$. Please reason step by step, and put your final answer within \boxed{}."
GAVE_UP = "This is getting complicated. I can't finish the computation (which we know is 0)."
ECHO = r"Find the value of $m$ such that the line $y = mx + 1$ is tangent to the parabola."
KCAL = r"15,000 \, \text{kcal m}^{-2}"
SINH_GOLD = r"\frac{e^{at}-e^{-at}}{2a}"

# (pattern, answer, gold, expected value)
CASES = [
    # 1. LaTeX math-verify cannot parse: never equal by a truncated prefix; equations as equations
    ("1", r"\boxed{L_{\odot}}", r"L_{\odot}", 1.0),
    ("1", r"\boxed{2 L_{\odot}}", r"L_{\odot}", 0.0),
    ("1", r"\boxed{M_{\odot}^6}", r"M_{\odot}^{6}", 1.0),
    ("1", r"\boxed{M_{\odot}^5}", r"M_{\odot}^{6}", 0.0),
    ("1", r"\boxed{x²}", "x^2", 1.0),
    ("1", r"\boxed{x³}", "x^2", 0.0),
    ("1", r"\boxed{L_{\odot}, M_{\odot}}", r"M_{\odot}, L_{\odot}", 1.0),
    ("1", r"\boxed{L_{\odot}, R_{\odot}}", r"M_{\odot}, L_{\odot}", 0.0),
    ("1", r"\boxed{\lambda_{\text{max}}}", r"\lambda_{\mathrm{max}}", 1.0),
    ("1", r"\boxed{\lambda_{\text{a}}}", r"\lambda_{\text{b}}", 0.0),
    ("1", r"\boxed{\lambda_{\text{max}} = 5}", r"\lambda_{\text{max}} = 5", 1.0),
    ("1", r"\boxed{\lambda_{\text{max}} = 5}", r"\lambda_{\text{max}} = 7", 0.0),
    ("1", r"\boxed{\lambda_{\text{max}} = 5}", r"\lambda_{\text{peak}} = 5", 0.0),
    ("1", r"\boxed{\unknowncmd{abc}}", r"\unknowncmd{abc}", 1.0),
    ("1", r"\boxed{\unknowncmd{abd}}", r"\unknowncmd{abc}", 0.0),
    # 2. a letter is a unit only after a number, and not when the gold uses it as a symbol
    ("2", r"\boxed{\frac{37m}{4}}", r"\frac{37m}{4}", 1.0),
    ("2", r"\boxed{\frac{37m}{4}}", r"\frac{37}{4}", 0.0),
    ("2", r"\boxed{\frac{37}{4}}", r"\frac{37m}{4}", 0.0),
    ("2", r"\boxed{b = m}", "b = m", 1.0),
    ("2", r"\boxed{b = m}", "b", 0.0),
    ("2", r"\boxed{b = n}", "b = m", 0.0),
    ("2", r"\boxed{3m}", "3m", 1.0),
    ("2", r"\boxed{3}", "3m", 0.0),
    ("2", r"\boxed{5 \text{ cm}}", "5", 1.0),
    ("2", r"\boxed{6 \text{ cm}}", "5", 0.0),
    ("2", r"\boxed{1.5 m/s}", "1.5", 1.0),
    ("2", r"\boxed{5x}", "5", 0.0),
    # 3. ordinal suffixes
    ("3", r"\boxed{12^{\mathrm{th}}}", "12", 1.0),
    ("3", r"\boxed{12^{th}}", "12", 1.0),
    ("3", r"\boxed{12\text{th}}", "12", 1.0),
    ("3", r"\boxed{21^{\text{st}}}", "21", 1.0),
    ("3", "The answer is the 12th grade.", "12", 0.0),  # "the" before the number: not a number answer
    ("3", "The answer is 12th grade.", "12", 1.0),
    ("3", r"\boxed{12^{th}}", "13", 0.0),
    ("3", r"\boxed{12^{2}}", "12", 0.0),
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
    # 5. function identities
    ("5", r"\boxed{\frac{\sinh(at)}{a}}", SINH_GOLD, 1.0),
    ("5", r"\boxed{\frac{\sinh(at)}{2a}}", SINH_GOLD, 0.0),
    ("5", r"\boxed{\frac{\cosh(at)}{a}}", SINH_GOLD, 0.0),
    ("5", r"\boxed{\cosh x}", r"\frac{e^{x}+e^{-x}}{2}", 1.0),
    ("5", r"\boxed{\cosh x}", r"\frac{e^{x}-e^{-x}}{2}", 0.0),
    # 6. repeated values keep their multiplicity; "all solutions" lists stay sets
    ("6", r"\boxed{-2}", "-2,-2", 0.0),
    ("6", r"\boxed{-2,-2}", "-2,-2", 1.0),
    ("6", r"\boxed{(-2,-2)}", "-2,-2", 1.0),
    ("6", r"\boxed{-2,-2,3}", "-2,-2", 0.0),
    ("6", r"\boxed{-2}", "a=-2, b=-2", 0.0),
    ("6", r"\boxed{a=-2, b=-2}", "a=-2, b=-2", 1.0),
    ("6", r"\boxed{b=-2, a=-2}", "a=-2, b=-2", 1.0),
    ("6", r"\boxed{2, 1}", "1, 2", 1.0),
    ("6", r"\boxed{1}", "1, 2", 0.0),
    # 7. no final answer: nothing taken from the prose
    ("7", GAVE_UP, "0", 0.0),
    ("7", ECHO, "m", 0.0),
    ("7", "Therefore we get 12 in the end", "12", 0.0),
    ("7", "Answer: 12", "12", 1.0),
    ("7", "So the final answer is $\\frac{1}{2}$. I hope it is correct.", "0.5", 1.0),
    ("7", "The answer is therefore $7$, as claimed.", "7", 1.0),
    ("7", "$MR=SRMC$", "MR=SRMC", 1.0),
    # 8. several boxes: empty boxes never count, boxes joined by "and" form one answer
    ("8", TWO_BOXES, ALL_TEN, 1.0),
    ("8", TWO_BOXES, "-2, -1, 0, 1, 2", 0.0),
    ("8", LOOPING, "5", 1.0),
    ("8", r"$\boxed{3}$ and $\boxed{5}$", "3, 5", 1.0),
    ("8", r"First $\boxed{3}$. Then, after checking, $\boxed{5}$.", "3, 5", 0.0),
    ("8", r"\boxed{}", "5", 0.0),
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
    # 11. proportional equations are accepted (a documented limit)
    ("11", r"\boxed{2x+4y=6}", "x+2y=3", 1.0),
    ("11", r"\boxed{2x+4y=7}", "x+2y=3", 0.0),
]


MEASURED = ("4",)  # patterns scored as a benchmark of measured quantities (Minerva) is, since rules 3


@pytest.fixture(scope="module")
def scored():
    results = {}
    for measured in (False, True):
        index = [i for i, c in enumerate(CASES) if (c[0] in MEASURED) is measured]
        scorer = MathScorer(timeout=30, workers=2, measured=measured)
        for j, score in scorer.score([CASES[i][1] for i in index], [CASES[i][2] for i in index]):
            results[index[j]] = score
    assert sorted(results) == list(range(len(CASES)))
    return results


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"p{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_pattern_verdict(scored, index):
    pattern, answer, gold, value = CASES[index]
    score = scored[index]
    assert "error" not in score.details, score
    assert score.value == value, (pattern, answer, gold, score)


def test_no_answer_is_said(scored):
    for answer in (GAVE_UP, ECHO, r"\boxed{}"):
        index = next(i for i, c in enumerate(CASES) if c[1] == answer)
        assert scored[index].extracted is None
        assert scored[index].details == {"reason": "no answer found"}


def test_joined_boxes_are_the_extracted_answer(scored):
    index = next(i for i, c in enumerate(CASES) if c[1] == TWO_BOXES)
    assert scored[index].extracted == "10, 11, 12, 13, 14, -2, -1, 0, 1, 2"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"\boxed{5}", ("boxed", "5")),
        (r"\boxed{5} \boxed{ }", ("boxed", "5")),
        (r"$\boxed{1}$, $\boxed{2}$", ("boxed", "1, 2")),
        (r"\boxed{1} \text{ or } \boxed{2}", ("boxed", "1, 2")),
        (r"\boxed{2} and \boxed{2}", ("boxed", "2")),
        (r"I first guessed \boxed{1}, but it is \boxed{2}", ("boxed", "2")),
        ("The final answer is $x = 3$. Done.", ("phrase", "x = 3")),
        ("Final Answer: The final answer is 1.6. I hope it is correct.", ("phrase", "1.6")),
        ("**Answer:** 204", ("phrase", "204")),
        ("The answer is:\n\\[ \\frac{1}{2} \\]", ("phrase", r"\frac{1}{2}")),
        ("The answer is not clear.", ("phrase", "not clear")),
        (r"\(204\)", ("whole", "204")),
        (r"$$\frac{3}{4}$$.", ("whole", r"\frac{3}{4}")),
        ("x = 5", ("whole", "x = 5")),
        ("Hence x = 5", None),
        ("12\n13", None),
        ("", None),
    ],
)
def test_final_answer(text, expected):
    assert final_answer(text) == expected


@pytest.mark.parametrize(
    ("text", "gold", "expected"),
    [
        ("x²+y³", None, "x^{2}+y^{3}"),
        ("x⁻¹", None, "x^{-1}"),
        (r"12^{\mathrm{th}}", None, "12"),
        (r"3^{rd}", None, "3"),
        (r"\lambda_{\text{max}}", None, r"\lambda_{max}"),
        (r"L_{\odot}", None, "L_{odot}"),
        (r"x_{\alpha}", None, r"x_{\alpha}"),
        (KCAL, None, "15000"),
        (r"5 \text{ cm}^2", None, "5"),
        ("5 m", None, "5 m"),  # a gold keeps a single letter after a number: it may be a symbol
        ("5 m", "5", "5"),
        ("5 m", "5m", "5 m"),
        ("5 cm", None, "5"),
        (r"90^\circ", None, "90"),
        ("1e-5", None, r"1\times10^{-5}"),
        ("2.5E3", None, r"2.5\times10^{3}"),
        ("2e-5", "e^2", "2e-5"),  # the gold uses Euler's e
        ("x = 2e", None, "x = 2e"),
        ("1{,}000", None, "1000"),
        ("1, 2", None, "1, 2"),
    ],
)
def test_normalise(text, gold, expected):
    assert normalise(text, None if gold is None else variables(gold)) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("-2,-2", "(-2, -2)"),
        ("1, 2, 1", "(1, 2, 1)"),
        ("1, 2", None),
        ("(-2,-2)", None),
        ("a=-2, b=-2", None),
        (r"\frac{1}{2}, \frac{1}{2}", r"(\frac{1}{2}, \frac{1}{2})"),
        ("5", None),
    ],
)
def test_repeated_list_as_tuple(text, expected):
    assert repeated_list_as_tuple(text) == expected


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


def test_an_older_math_score_is_recomputed(tmp_path, shared_data):
    generations = tmp_path / "gens.jsonl"
    generations.write_text(json.dumps({"item_id": 60, "sample_idx": 0, "text": r"so $\boxed{204}$."}) + "\n")
    run = tmp_path / "run"
    args = ["--benchmark", "aime24", "--data-dir", str(shared_data)]
    run_cli("score", "--generations", str(generations), "--out", str(run), *args)
    scores = run / "scores.jsonl"
    record = json.loads(scores.read_text())
    assert record["value"] == 1.0 and record["scorer"].startswith("math-4+")
    old = record["scorer"].replace("math-4+", "math-3+")
    scores.write_text(json.dumps({**record, "scorer": old, "value": 0.0}) + "\n")
    run_cli("score", str(run))
    again = [json.loads(line) for line in scores.read_text().splitlines()]
    assert [(r["scorer"], r["value"]) for r in again] == [(record["scorer"], 1.0)]
    assert json.loads((run / "results.json").read_text())["aime24"]["avg@1"] == 1.0
