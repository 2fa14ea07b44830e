"""Question texts and row builders shared by the math rule tests (rows: label, answer, gold, value)."""

from __future__ import annotations

import pytest

from harness.scoring.rules import gold_text

# answers and golds of the audit's failure patterns (issue 18)
ALL_TEN = "-2, -1, 0, 1, 2, 10, 11, 12, 13, 14"
TWO_BOXES = r"The solutions are $\boxed{10, 11, 12, 13, 14}$ and $\boxed{-2, -1, 0, 1, 2}$."
LOOPING = r"So $x = \boxed{5}$. Please reason step by step, and put your final answer within \boxed{}."
GAVE_UP = "This is getting complicated. I can't finish the computation (which we know is 0)."
ECHO = r"Find the value of $m$ such that the line $y = mx + 1$ is tangent to the parabola."
KCAL = r"15,000 \, \text{kcal m}^{-2}"
SINH_GOLD = r"\frac{e^{at}-e^{-at}}{2a}"

# questions of rules 3 (issue 38)
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

# questions of rules 4 (issue 46)
WORK = "We set up the equations and solve them step by step.\n\n"
HOURS = "A tank fills at 3 litres per minute. How many hours does it take to fill 720 litres?"
PHOTON = "What is the energy of a photon of wavelength 800 nm, in eV?"
LUMINOSITY = "How many times brighter than the Sun is a star of 5 solar radii at 5 times its temperature?"
REACTION = "What percentage of the reaction is complete after 10 minutes?"
SIMPLIFY = "Simplify $3(5x-20)-5(x+4)$."
DECAY = (  # Minerva 96
    "Find the general solution of the differential equation $\\dot{x}+2 x=e^{t}$, using $c$ for the "
    "arbitrary constant of integration which will occur."
)
SUPPLY = "Find the supply curve of the industry of 100 identical firms in terms of the price."
SUPPLY_BOTH = "Find the supply $P$ of the industry in terms of the price $p$."
PASSED = "Of the 40 students, 7 failed. What percentage of the students passed?"
CHOICE = (  # MATH-500 intermediate_algebra/754, shortened
    "Which equation does $r$ satisfy? $\\textbf{(A)}\\ 3(1 + r)^x = 7\\qquad \\textbf{(B)}\\ "
    "3(1 + r/10)^x = 7\\qquad \\textbf{(C)}\\ 3(1 + 2r)^x = 7$"
)
FAMILY = r"x=\frac{1}{6} \pi+\pi k, \frac{1}{3} \pi+\pi k, \frac{2}{3} \pi+\pi k, \frac{5}{6} \pi+\pi k"
ROOTS = r"\frac{\pi}{6} + n\pi, \frac{\pi}{3} + n\pi, \frac{2\pi}{3} + n\pi, \frac{5\pi}{6} + n\pi"


def right_and_wrong(shape: str, right: str, wrong: str, gold: str, question: str | None = None):
    """Two cases of one shape: the right answer credited, the wrong one refused."""
    stored = gold if question is None else gold_text(gold, question)
    return [(shape, right, stored, 1.0), (shape, wrong, stored, 0.0)]


def case(rule: str, answer: str, gold: str, value: float, question: str | None = None):
    """One scorer case: (rule, answer, stored gold, expected value)."""
    return (rule, answer, gold if question is None else gold_text(gold, question), value)


def verdict_test(cases: list[tuple], measured: bool = False):
    """A test of each (label, answer, gold, value) row's verdict, parametrized by row; the rows are
    scored together, once per process, by the shared `verdicts` fixture
    (tests/test_harness/scoring/conftest.py)."""

    @pytest.mark.parametrize("index", range(len(cases)), ids=[f"{c[0]}-{i}" for i, c in enumerate(cases)])
    def test(verdicts, index):
        label, answer, gold, value = cases[index]
        score = verdicts(cases, measured=measured)[index]
        assert "error" not in score.details, score
        assert score.value == value, (label, answer, gold, score)

    return test
