r"""Math scorer rules 3 (issue 38): each shape rules 2 broke or let through, credited when right and
refused when wrong, on short cases and on realistic model responses.

Golds carry their question where a rule reads it (`rules.gold_text`), as run.json's `questions`
make the score stage pass them. All scorer cases go through one `MathScorer.score` call per
setting (it spawns worker processes).
"""

from __future__ import annotations

import json

import pytest
from helpers import run_cli

from harness.scoring.math import MathScorer
from harness.scoring.math_text import (
    answer_unit,
    asks_for_values,
    final_answer,
    fixes_form,
    letter_case_differs,
    list_items,
    normalise,
    units_disagree,
)
from harness.scoring.rules import gold_text
from harness.scoring.units import asked_units
from harness.stages.score import benchmark_options, scoring_golds

PLANE = (
    "Find the equation of the plane containing the points $(0,-1,-1),$ $(-4,4,4),$ and $(4,5,1).$ "
    "Enter your answer in the form\n\\[Ax + By + Cz + D = 0,\\]where $A,$ $B,$ $C,$ $D$ are integers "
    "such that $A > 0$ and $\\gcd(|A|,|B|,|C|,|D|) = 1.$"
)
LINE = "Find the equation of the line through $(0, 1)$ and $(1, 0)$."
FIND_ALL = (
    "Find all positive integers $n$ such that $n^2 - 19n + 99$ is a perfect square. Enter all solutions."
)
DETERMINE = "Determine the values of $w, d, a$ and $b$ if the total points are $w W + d D + a A + b B$."
FAR = "A ball rolls for 3 seconds at a constant 2 meters per second. How far, in meters, does it roll?"
ANGLE = r"Find the angle of refraction, in degrees."
FIELD = "Find the magnetic field in the gap at time $t$, in terms of $T$, the period."  # t is not T
PAINT = (  # amc23 44
    "Jackson's paintbrush makes a narrow strip with a width of $6.5$ millimeters. Jackson has enough "
    "paint to make a strip $25$ meters long. How many square centimeters of paper could Jackson cover "
    "with paint?"
)
CUBE = (  # MATH-500 geometry/477
    "A steel sphere with a 3-inch radius is made by removing metal from the corners of a cube that has "
    "the shortest possible side lengths. How many cubic inches are in the volume of the cube?"
)
SPEED = "A car covers 150 miles in 2.5 hours. What is its average speed, in miles per hour?"
AREA_UNITS = "A right triangle has legs 6 and 8. What is its area, in square units?"
AREA_METERS = "A garden is 4 meters wide and 6 meters long. How many square meters is its area?"
WHEEL = "A wheel of radius 1 meter turns once. How far, in meters, does it roll?"
OMEGA = "A motor applies a torque of 50 N m against a damping of 0.05. What is its steady-state speed?"


def right_and_wrong(shape: str, right: str, wrong: str, gold: str, question: str | None = None):
    """Two cases of one shape: the right answer credited, the wrong one refused."""
    stored = gold if question is None else gold_text(gold, question)
    return [(shape, right, stored, 1.0), (shape, wrong, stored, 0.0)]


# (shape, answer, gold, expected value); golds of exact-answer benchmarks
CASES = [
    # 1. extraction: the value stated at the end, without a box or "the answer is"
    *right_and_wrong("1 bold", "Add them.\n\nso m + n = 25 + 169 = **194**", "... = **195**", "194"),
    *right_and_wrong(
        "1 closing",
        "Count the coins.\n\nTherefore, Hillary has 7 nickels.",
        "Therefore, Hillary has 8 nickels.",
        "7",
    ),
    *right_and_wrong(
        "1 closing",
        "Work.\n\nThus the angle is approximately $3\\times10^{-3}$ arcseconds.",
        "Work.\n\nThus the angle is approximately $3\\times10^{-4}$ arcseconds.",
        "3e-3",
    ),
    *right_and_wrong(
        "1 lead-in",
        "Invert.\n\n$f^{-1}(1/5) = 9$\n\n**Therefore, the value of $f^{-1}(1/5)$ is:**",
        "Invert.\n\n$f^{-1}(1/5) = 8$\n\n**Therefore, the value of $f^{-1}(1/5)$ is:**",
        "9",
    ),
    *right_and_wrong(
        "1 label",
        "Final answer: The steady-state velocity \\(\\omega_{ss}\\) is 1000 rad/s",
        "Final answer: The steady-state velocity \\(\\omega_{ss}\\) is 100 rad/s",
        "1000",
    ),
    *right_and_wrong(
        "1 lead-in",
        "Invert: $5 = 1/(x-4)$, so $f^{-1}(1/5) = 9$\n\n**Therefore, the value of $f^{-1}(1/5)$ is:**",
        "Invert: $5 = 1/(x-4)$, so $f^{-1}(1/5) = 8$\n\n**Therefore, the value of $f^{-1}(1/5)$ is:**",
        "9",
    ),
    ("1 lead-in", "Invert.\n\nSo $x = 9$ is the first root, and $x = 2$ the second", "9", 0.0),
    ("1 unfinished", "Expand both sides.\n\nSo we get $x = 12$", "12", 0.0),
    ("1 unfinished", "Therefore we get 12 in the end", "12", 0.0),
    ("1 unfinished", "Therefore, we have $x = 12$", "12", 0.0),
    ("1 unfinished", "$x = 12$\n\nLet's check:", "12", 0.0),
    *right_and_wrong("1 bold", "Add them.\n\nThe answer is **194**", "The answer is **195**", "194"),
    *right_and_wrong(
        "1 bold", "Add them.\n\nTherefore the total is **194**.", "Therefore the total is **195**.", "194"
    ),
    ("1 unfinished", "Try small cases.\n\nLet's try a small case first: **n = 2**", "2", 0.0),
    ("1 unfinished", "Set up the system.\n\nFirst, we substitute: **x = 5**", "5", 0.0),
    ("1 unfinished", "Expand both sides.\n\nWe get: **x = 3**", "3", 0.0),
    ("1 unfinished", "Plan the solution.\n\nStep 1: **a = 4**", "4", 0.0),
    ("1 unfinished", "Use the quadratic formula.\n\nFirst, the discriminant is **16**", "16", 0.0),
    ("1 unfinished", "Try small cases.\n\nLet's try:\n\n**n = 2**", "2", 0.0),
    ("1 unfinished", "Count the fruit.\n\nSo we bought 12 apples.", "12", 0.0),
    *right_and_wrong(
        "1 label",
        "Balance the torques.\n\nFinal answer: \\(\\omega_{ss}\\) = 1000 rad/s",
        "Balance the torques.\n\nFinal answer: \\(\\omega_{ss}\\) = 100 rad/s",
        "1000",
        OMEGA,
    ),
    *right_and_wrong(
        "1 label",
        "Balance the torques.\n\n**Final Answer:** $\\omega_{ss}$ is 1000 rad/s.",
        "Balance the torques.\n\n**Final Answer:** $\\omega_{ss}$ is 100 rad/s.",
        "1000",
    ),
    *right_and_wrong(
        "1 label", "Count.\n\nFinal answer: $N$ is 42.", "Count.\n\nFinal answer: $N$ is 41.", "42"
    ),
    *right_and_wrong(
        "1 label", "Heat it.\n\nThe final answer is $T$ = 300 K.", "The final answer is $T$ = 30 K.", "300"
    ),
    *right_and_wrong(
        "1 closing", "Count the fruit.\n\nSo Maria bought 12 apples.", "So Maria bought 13 apples.", "12"
    ),
    *right_and_wrong(
        "1 heading",
        "Count the coins.\n\n**Final Answer**\n\nThe number of nickels is 7.",
        "Count the coins.\n\n**Final Answer**\n\nThe number of nickels is 8.",
        "7",
    ),
    # 2. exact-answer golds are exact: no rounding to the gold's figures
    ("2 exact", r"\boxed{165.93}", "166", 0.0),
    ("2 exact", r"\boxed{35.5}", "36", 0.0),
    ("2 exact", r"\boxed{1.504}", "1.50", 0.0),
    ("2 exact", r"\boxed{166.0}", "166", 1.0),
    ("2 exact", r"\boxed{1.5}", "1.50", 1.0),
    # 3. repeated lists: multisets when the question asks for all values, ordered otherwise
    *right_and_wrong("3 multiset", r"\boxed{16, 3, 1, 1}", r"\boxed{16, 3, 1}", "1,1,3,16", FIND_ALL),
    ("3 multiset", r"\boxed{\{16, 3, 1, 1\}}", gold_text("1,1,3,16", FIND_ALL), 1.0),
    ("3 multiset", r"\boxed{16, 3, 3, 1}", gold_text("1,1,3,16", FIND_ALL), 0.0),
    *right_and_wrong("3 ordered", r"\boxed{16, 3, 1, 1}", r"\boxed{1, 1, 3, 16}", "16,3,1,1", DETERMINE),
    ("3 ordered", r"\boxed{16, 3, 1, 1}", "1,1,3,16", 0.0),  # no question: order kept, as in rules 2
    # 4. subscript braces in the string comparison
    *right_and_wrong("4 subscripts", r"\boxed{E_1, E_2}", r"\boxed{E_1, E_3}", "E_{1},E_{2}"),
    *right_and_wrong("4 subscripts", r"\boxed{\lambda_1}", r"\boxed{\lambda_2}", r"\lambda_{1}"),
    # 5. a multiple of an equation whose form the question fixes
    *right_and_wrong(
        "5 form",
        r"\boxed{5x - 7y + 11z + 4 = 0}",
        r"\boxed{20x-28y+44z+16=0}",
        "5x - 7y + 11z + 4 = 0",
        PLANE,
    ),
    ("5 form", r"\boxed{-5x + 7y - 11z - 4 = 0}", gold_text("5x - 7y + 11z + 4 = 0", PLANE), 0.0),
    ("5 form", r"\boxed{5x - 7y + 11z = -4}", gold_text("5x - 7y + 11z + 4 = 0", PLANE), 1.0),
    *right_and_wrong("5 free form", r"\boxed{2x + 2y = 2}", r"\boxed{2x + 2y = 1}", "x + y = 1", LINE),
    # 6. letter case and units
    *right_and_wrong("6 case", r"\boxed{100\sqrt{T}}", r"\boxed{100\sqrt{t}}", "100T^{1/2}", FIELD),
    *right_and_wrong("6 case", r"\boxed{\text{Yes}}", r"\boxed{\text{No}}", r"\text{yes}"),
    *right_and_wrong("6 units", r"\boxed{6 \text{ m}}", r"\boxed{6 \text{ km}}", "6", FAR),
    *right_and_wrong(
        "6 units", r"\boxed{5.4 \text{ cents}}", r"\boxed{5.4 \text{ dollars}}", r"5.4 \text{ cents}"
    ),
    *right_and_wrong("6 units", r"\boxed{48.6^\circ}", r"\boxed{48.6 \text{ rad}}", "48.6", ANGLE),
    ("6 units", r"\boxed{6 \text{ km}}", "6", 1.0),  # neither gold nor question names a unit: unchecked
    # both spellings of one unit agree; another unit, or another power of it, does not
    *right_and_wrong("6 units", r"\boxed{1625\text{ cm}^2}", r"\boxed{1625\text{ cm}}", "1625", PAINT),
    *right_and_wrong(
        "6 units", r"\boxed{1625 \, \mathrm{cm}^2}", r"\boxed{1625 \, \mathrm{m}^2}", "1625", PAINT
    ),
    *right_and_wrong("6 units", r"\boxed{216\text{ in}^3}", r"\boxed{216\text{ in}^2}", "216", CUBE),
    *right_and_wrong(
        "6 units",
        r"\boxed{864 \text{ square inches}}",
        r"\boxed{864 \text{ inches}}",
        r"864 \mbox{ inches}^2",
    ),
    *right_and_wrong(
        "6 units", r"\boxed{864 \text{ sq in}}", r"\boxed{864 \text{ sq ft}}", r"864 \mbox{ inches}^2"
    ),
    *right_and_wrong("6 units", r"\boxed{60 \text{ mph}}", r"\boxed{60 \text{ km/h}}", "60", SPEED),
    *right_and_wrong("6 units", r"\boxed{24 \text{ units}^2}", r"\boxed{24 \text{ units}}", "24", AREA_UNITS),
    *right_and_wrong("6 units", r"\boxed{24 \text{ m}^2}", r"\boxed{24 \text{ cm}^2}", "24", AREA_METERS),
    *right_and_wrong("6 units", r"\boxed{2\pi \text{ m}}", r"\boxed{2\pi \text{ km}}", r"2\pi", WHEEL),
    # the unit of a value stated without a box is checked too
    *right_and_wrong(
        "6 units",
        "Multiply.\n\nTherefore, the distance it rolls is 6 meters.",
        "Multiply.\n\nTherefore, the distance it rolls is 6 km.",
        "6",
        FAR,
    ),
    *right_and_wrong(
        "6 units",
        "Multiply.\n\nSo the distance is **6 meters**.",
        "So the distance is **6 kilometers**.",
        "6",
        FAR,
    ),
    *right_and_wrong("6 units", "Multiply.\n\nThe distance is **6 m**", "The distance is **6 km**", "6", FAR),
    *right_and_wrong(
        "6 units",
        "Multiply.\n\nThus the distance is $2\\pi$ meters.",
        "Thus the distance is $2\\pi$ km.",
        r"2\pi",
        WHEEL,
    ),
    *right_and_wrong(
        "6 units",
        "Balance the torques.\n\nFinal answer: \\(\\omega_{ss}\\) = 1000 rad/s",
        "Balance the torques.\n\nFinal answer: \\(\\omega_{ss}\\) = 1000 deg/s",
        "1000",
        "What is the steady-state speed, in radians per second?",
    ),
]

# Realistic responses (written for these tests, in the shapes the audit found), on exact-answer golds.
RESPONSES = [
    (
        "Let the two fractions be $\\frac{a}{b}$ and $\\frac{c}{d}$. From the first condition, "
        "$b = 25$, and the second gives $d = 169$ after clearing denominators.\n\n"
        "Both are in lowest terms, since $\\gcd(a, 25) = 1$ and $\\gcd(c, 169) = 1$.\n\n"
        "The problem asks for $m + n$, where $m = 25$ and $n = 169$, so m + n = 25 + 169 = **194**",
        "194",
        1.0,
    ),
    (
        "Let $n$ be the number of nickels and $d$ the number of dimes. Hillary has 11 coins, so "
        "$n + d = 11$, and they are worth 75 cents, so $5n + 10d = 75$.\n\n"
        "Dividing the second equation by 5 gives $n + 2d = 15$. Subtracting the first, $d = 4$, "
        "so $n = 11 - 4 = 7$.\n\nTherefore, Hillary has 7 nickels.",
        "7",
        1.0,
    ),
    (
        "We need $f^{-1}(1/5)$, the $x$ with $f(x) = \\frac{1}{5}$.\n\n"
        "Setting $\\frac{1}{x - 4} = \\frac{1}{5}$ gives $x - 4 = 5$, so\n\n"
        "$$f^{-1}(1/5) = 9$$\n\n**Therefore, the value of $f^{-1}(1/5)$ is:**",
        "9",
        1.0,
    ),
    (
        "At steady state the torque balance gives $b\\,\\omega_{ss} = \\tau$, so "
        "$\\omega_{ss} = \\tau / b = 50 / 0.05$.\n\n"
        "Final answer: The steady-state velocity \\(\\omega_{ss}\\) is 1000 rad/s",
        "1000",
        1.0,
    ),
    (
        "Expanding, $(x - 3)(x + 4) = x^2 + x - 12$. Setting this equal to $0$ and comparing "
        "coefficients with the given quadratic, we find the product of the roots.\n\nSo we get $-12$",
        "-12",
        0.0,  # unfinished work, not a closing statement (rules 2's "So we get x")
    ),
    (
        "The discriminant is $b^2 - 4ac = 16 - 4 \\cdot 3 = 4$, so there are two real roots.\n\n"
        "Next we find the sum of their squares. Using Vieta's formulas,",
        "4",
        0.0,  # cut off mid-solution: no answer
    ),
    (
        "The angle subtended is $\\theta = d / D = 1.5 \\times 10^{-8}$ radians, and one radian is "
        "$206265$ arcseconds.\n\nThus the angle is approximately $3\\times10^{-3}$ arcseconds.",
        "3e-3",
        1.0,
    ),
    (
        "Adding the two counts, there are $96 + 70 = 166$ paths in all.\n\n"
        "Averaging over the $3$ starting points gives $\\boxed{165.93}$.",
        "166",
        0.0,  # an exact answer: 165.93 is not 166
    ),
    (
        "Vieta's formulas give the four roots; two of them coincide.\n\n"
        "The values of $n$ are $16, 3, 1, 1$, i.e. $\\boxed{16, 3, 1, 1}$.",
        gold_text("1,1,3,16", FIND_ALL),
        1.0,
    ),
    (
        "The normal vector is $(5, -7, 11)$ scaled by $4$, giving $20x - 28y + 44z + 16 = 0$.\n\n"
        "So the plane is $\\boxed{20x - 28y + 44z + 16 = 0}$.",
        gold_text("5x - 7y + 11z + 4 = 0", PLANE),
        0.0,  # not in the requested form
    ),
    (
        "The normal vector is $(20, -28, 44)$; dividing by $\\gcd = 4$ gives $(5, -7, 11)$.\n\n"
        "So the plane is $\\boxed{5x - 7y + 11z + 4 = 0}$.",
        gold_text("5x - 7y + 11z + 4 = 0", PLANE),
        1.0,
    ),
    (
        "The quartic factors as $(n - 1)^2 (n - 3)(n - 16)$, so the root $n = 1$ is double.\n\n"
        "Hence the solutions are $\\boxed{1, 3, 16}$.",
        gold_text("1,1,3,16", FIND_ALL),
        0.0,  # the double root is missing
    ),
    (
        "Distance is speed times time: $2 \\times 3 = 6$.\n\n"
        "So the ball rolls a distance of $\\boxed{6 \\text{ km}}$.",
        gold_text("6", FAR),
        0.0,  # the question asks for meters
    ),
    (
        "The ball rolls at $2$ meters per second for $3$ seconds.\n\n"
        "Distance is speed times time: $2 \\times 3 = 6$.\n\nTherefore, the distance it rolls is 6 km.",
        gold_text("6", FAR),
        0.0,  # the same wrong unit in a closing sentence
    ),
    (
        "The ball rolls at $2$ meters per second for $3$ seconds.\n\n"
        "Distance is speed times time: $2 \\times 3 = 6$.\n\nSo the distance is **6 meters**.",
        gold_text("6", FAR),
        1.0,
    ),
    (
        "The strip is $6.5$ mm $= 0.65$ cm wide and $25$ m $= 2500$ cm long.\n\n"
        "Its area is $0.65 \\times 2500 = 1625$ square centimeters.\n\n"
        "So Jackson can cover $\\boxed{1625\\text{ cm}^2}$ of paper.",
        gold_text("1625", PAINT),
        1.0,
    ),
    (
        "The sphere's diameter is $6$ inches, so the smallest cube around it has side $6$ inches.\n\n"
        "Its volume is $6^3 = 216$.\n\nThe volume of the cube is $\\boxed{216\\text{ in}^3}$.",
        gold_text("216", CUBE),
        1.0,
    ),
    (
        "The sphere's diameter is $6$ inches, so the smallest cube around it has side $6$ inches.\n\n"
        "Each face has area $6^2 = 36$, and there are $6$ faces.\n\n"
        "The volume of the cube is $\\boxed{216\\text{ in}^2}$.",
        gold_text("216", CUBE),
        0.0,  # square inches are not the cubic inches asked for
    ),
    (
        "One cubic foot is a cube with side $12$ inches.\n\n"
        "Each face has area $12^2 = 144$ square inches, and there are $6$ faces.\n\n"
        "The total surface area is $6 \\cdot 144 = \\boxed{864 \\text{ sq in}}$.",
        r"864 \mbox{ inches}^2",
        1.0,
    ),
    (
        "We need the smallest $n$ for which $n^2 + n$ is divisible by $6$.\n\n"
        "The expression factors as $n(n+1)$, a product of consecutive integers, so it is always even.\n\n"
        "Let's try a small case first: **n = 2**",
        "2",
        0.0,  # a step of the work, not its conclusion
    ),
    (
        "From the first equation, $2x + y = 13$, and the second gives $y = 3$.\n\n"
        "First, we substitute: **x = 5**",
        "5",
        0.0,
    ),
    (
        "The roots are real when the discriminant is non-negative.\n\nFirst, the discriminant is **16**",
        "16",
        0.0,
    ),
    (
        "At steady state the torque balance gives $b\\,\\omega_{ss} = \\tau$, so "
        "$\\omega_{ss} = \\tau / b = 50 / 0.05$.\n\nFinal answer: \\(\\omega_{ss}\\) = 1000 rad/s",
        "1000",
        1.0,
    ),
    (
        "Let $n$ be the number of nickels and $d$ the number of dimes; then $n + d = 11$ and "
        "$5n + 10d = 75$, so $d = 4$ and $n = 7$.\n\n**Final Answer**\n\nThe number of nickels is 7.",
        "7",
        1.0,
    ),
]


@pytest.fixture(scope="module")
def scored():
    cases = [(c[1], c[2]) for c in CASES] + [(r[0], r[1]) for r in RESPONSES]
    scorer = MathScorer(timeout=30, workers=2)
    results = dict(scorer.score([c[0] for c in cases], [c[1] for c in cases]))
    assert sorted(results) == list(range(len(cases)))
    return results


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_shape_verdict(scored, index):
    shape, answer, gold, value = CASES[index]
    score = scored[index]
    assert "error" not in score.details, score
    assert score.value == value, (shape, answer, gold, score)


@pytest.mark.parametrize("index", range(len(RESPONSES)))
def test_realistic_response(scored, index):
    response, gold, value = RESPONSES[index]
    score = scored[len(CASES) + index]
    assert score.value == value, (response[-120:], gold, score)


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
    ("text", "expected"),
    [
        ("Work.\n\nso m + n = 25 + 169 = **194**", ("closing", "194")),
        ("Work.\n\nThe sum is **12**.", ("closing", "12")),
        ("Work.\n\n**Step 2: add the parts**", None),
        ("Work.\n\nTherefore, Hillary has 7 nickels.", ("closing", "7")),
        ("Work.\n\nThus, $m + n = 194$.", ("closing", "m + n = 194")),
        ("Work.\n\nHence the number of ways is $\\binom{5}{2} = 10$.", ("closing", "10")),
        ("Work.\n\nSo the plane is $5x - 7y + 11z + 4 = 0$.", ("closing", "5x - 7y + 11z + 4 = 0")),
        ("Work.\n\nSo the total is 12, which is less than 15.", None),
        ("Work.\n\nSo the count is $2\\cdot5!\\cdot5! = 2\\cdot120\\cdot120 = 28800$.", ("closing", "28800")),
        ("Work.\n\nThus it is 5.", None),
        ("Work.\n\nSo we get $x = 3$", None),
        ("Hence x = 5", None),
        ("Work.\n\n$x = 5$\n\nThe final answer is:", ("closing", "x = 5")),
        ("Work.\n\n$x = 5$\n\nLet's check:", None),
        ("The answer is: the speed $v$ is 30 m/s", ("phrase", "30 m/s")),
        ("Work.\n\nLet's try a small case first: **n = 2**", None),
        ("Work.\n\nStep 1: **a = 4**", None),
        ("Work.\n\nFirst, the discriminant is **16**", None),
        ("Work.\n\nLet's try:\n\n**n = 2**", None),
        ("Work.\n\nThe answer is:\n\n**194**", ("closing", "194")),
        ("Work.\n\nSo the distance is **6 kilometers**.", ("closing", "6 kilometers")),
        ("Work.\n\nTherefore, the distance she rides is 6 km.", ("closing", "6 km")),
        ("Work.\n\nThus there are 5 in total.", ("closing", "5")),
        (
            "Work.\n\nTherefore, assuming a fair die, the chance is $\\frac{1}{6}$.",
            ("closing", "\\frac{1}{6}"),
        ),
        ("Work.\n\nSo first, the discriminant is 16.", None),
        ("Work.\n\nSo Maria bought 12 apples.", ("closing", "12")),
        ("Work.\n\n**Final Answer**\n\nThe number of nickels is 7.", ("closing", "7")),
        ("Final answer: \\(\\omega_{ss}\\) = 1000 rad/s", ("phrase", "1000 rad/s")),
        ("The final answer is $T$ = 300 K.", ("phrase", "300 K")),
        ("Final answer: $N$ is 42.", ("phrase", "42")),
        ("Final answer: $Q$ is $MR = SRMC$.", ("phrase", "MR = SRMC")),  # a math span is taken whole
        ("Final answer: $N$, the number of paths.", ("phrase", "N")),
        ("Final answer: $\\pi$ = 3.14", ("phrase", "\\pi")),  # a constant is not a label
        ("The final answer is $x = 3$. Done.", ("phrase", "x = 3")),
    ],
)
def test_final_answer_closing_shapes(text, expected):
    assert final_answer(text) == expected


def test_question_cues():
    assert asks_for_values(FIND_ALL) and asks_for_values("Enter the roots, separated by commas.")
    assert not asks_for_values(DETERMINE) and not asks_for_values(None)
    assert not asks_for_values("Find all ordered pairs $(a, b)$.")
    assert not asks_for_values("Suppose that $a(x+b)=2x$ for all values of $x$. Determine $a$ and $b$.")
    assert fixes_form(PLANE) and not fixes_form(LINE) and not fixes_form(None)


def test_units_and_case():
    assert answer_unit(r"6 \text{ kilometers}", set()) == "km"
    assert answer_unit(r"90^\circ", set()) == "deg"
    assert answer_unit("6", set()) is None
    assert units_disagree("6 km", "6", FAR) and not units_disagree("6 meters", "6", FAR)
    assert not units_disagree("27 miles", "27", "Cities $A$ and $B$. How many miles from City $A$?")
    assert units_disagree("27 km", "27", "Cities $A$ and $B$. How many miles from City $A$?")
    assert letter_case_differs("100\\sqrt{t}", "100T^{1/2}") and not letter_case_differs("2T", "T")


def test_units_are_read_whole():
    assert answer_unit(r"1625\text{ cm}^2", set()) == answer_unit("1625 square centimeters", set()) == "cm^2"
    assert answer_unit(r"864 \text{ sq in}", set()) == answer_unit(r"864 \mbox{ inches}^2", set()) == "in^2"
    assert answer_unit(r"60 \text{ mph}", set()) == answer_unit("60 miles per hour", set()) == "mi/h"
    assert answer_unit(r"9.8 \text{ m s}^{-2}", set()) == answer_unit(r"9.8\text{ m/s}^2", set()) == "m/s^2"
    assert answer_unit("27 miles each way", set()) == "mi" and answer_unit("7 nickels", set()) == "nickels"
    assert asked_units(PAINT) == {"cm^2"} and asked_units(CUBE) == {"in^3"} and asked_units(SPEED) == {"mi/h"}
    assert asked_units(AREA_UNITS) == {"unit^2"} and asked_units(FAR) == {"m"}
    assert asked_units("What is the price in Moldavia, in dollars per bushel?") == {"dollar/bushel"}
    assert asked_units("Find the speed (in $\\mathrm{~cm}$ per second).") == {"cm/s"}
    assert asked_units("Give the speed in m/s.") == set()  # a lone letter may be a symbol
    assert asked_units("What is the largest in $A_{1}$?") == asked_units("How many are in $N$?") == set()
    assert asked_units("In how many ways can 8 people sit in a row?") == set()
    assert units_disagree(r"1625 \text{ cm}", "1625", PAINT) and units_disagree("60 km/h", "60", SPEED)


def test_subscripts_get_braces():
    assert normalise("E_1, E_2") == normalise("E_{1},E_{2}").replace(",", ", ")
    assert normalise(r"x_\alpha") == r"x_{\alpha}"
    assert list_items(r"\{1, 1, 3\}") == ["1", "1", "3"] and list_items("5") is None


def test_the_score_stage_passes_questions_and_measured():
    info = {"answers": {"aime24": {"60": "204"}}, "questions": {"aime24": {"60": "Find n."}}}
    assert json.loads(scoring_golds(info, "aime24")["60"]) == {"answers": ["204"], "question": "Find n."}
    assert scoring_golds({"answers": {"aime24": {"60": "204"}}}, "aime24") == {"60": "204"}
    assert benchmark_options("minerva") == {"measured": True}
    assert benchmark_options("aime24") == {"measured": False}
    assert benchmark_options("jsonl:mine") == {"measured": False}


@pytest.mark.parametrize(
    ("benchmark", "item", "answer", "value"),
    [("aime24", "60", "203.97", 0.0), ("minerva", "2", "41.83", 1.0)],
)
def test_score_generations_rounds_only_measured_golds(tmp_path, shared_data, benchmark, item, answer, value):
    generations = tmp_path / "gens.jsonl"
    text = f"The result is $\\boxed{{{answer}}}$."
    generations.write_text(json.dumps({"item_id": item, "sample_idx": 0, "text": text}) + "\n")
    run = tmp_path / "run"
    run_cli(
        "score",
        "--generations",
        str(generations),
        "--out",
        str(run),
        "--benchmark",
        benchmark,
        "--data-dir",
        str(shared_data),
    )
    assert json.loads((run / "scores.jsonl").read_text())["value"] == value
    info = json.loads((run / "run.json").read_text())
    assert set(info["questions"][benchmark]) == {item}
