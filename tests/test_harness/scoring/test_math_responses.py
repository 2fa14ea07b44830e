r"""The math scorer on realistic responses (written for these tests, in the shapes rules 3's audit found),
on exact-answer golds: the rules together."""

from __future__ import annotations

import pytest
from scoring_cases import CUBE, FAR, FIND_ALL, PAINT, PLANE

from harness.scoring.rules import gold_text

# Realistic responses (written for these tests, in the shapes the audit found), on exact-answer golds.
CASES = [
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
def scored(verdicts):
    return verdicts([(None, *row) for row in CASES])


@pytest.mark.parametrize("index", range(len(CASES)))
def test_realistic_response(scored, index):
    response, gold, value = CASES[index]
    score = scored[index]
    assert score.value == value, (response[-120:], gold, score)
