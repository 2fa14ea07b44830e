r"""Math rules 4 as properties: a wrong value is refused in every shape, unfinished work or two candidates
are never credited (`verify_pair` in this process), and long repeated input is read quickly."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st
from scoring_cases import REACTION, SIMPLIFY, WORK

from harness.scoring.commentary import answer_part
from harness.scoring.math import verify_pair
from harness.scoring.math_forms import same_parameter
from harness.scoring.math_normalise import variables
from harness.scoring.math_symbols import as_latex
from harness.scoring.math_text import final_answer

SHAPES = (
    "{work}Therefore, it will take {v} hours.\n\nLet me know if you have other questions!",
    "{work}So Maria bought {v} apples.\n\n### Explanation\n\nShe counted them twice.",
    "{work}So Maria bought {v} apples.\n\nThis assumes none were returned.",
    "{work}Converting to the asked units, we get Q = {o} J = {v} eV.",
    "{work}Therefore, the luminosity is {v} times that of the Sun.",
    "{work}So 997⁻¹ ≡ **{v}** (mod 1000)",
    "{work}Therefore, it will take {o} hours for half, and the whole takes {v} hours.",
)
TRAPS = (  # unfinished work, doubt or two candidates: never credited, whatever the values
    "{work}Therefore, it will take {g} hours.\n\nNow we check this against the budget",
    "{work}So Maria bought {g} apples.\n\nWait, some of them were returned.",
    "{work}So Maria bought {g} apples.\n\n### Explanation\n\nBut this is not the whole count.",
    "{work}So 997⁻¹ ≡ **{g}** (mod 1000) or **{o}** (mod 1000)",
    "{work}Converting to the asked units, we get {g} eV or {o} eV.",
    "{work}Therefore, the luminosity is {g} times {o}.",
    "{work}So Maria bought {g} apples.\n\n### Explanation\n\nSo Maria bought {o} apples.\n\nEach counts.",
)


@settings(max_examples=40, deadline=None)
@given(
    gold=st.integers(1, 10**6),
    other=st.integers(1, 10**6),
    shape=st.sampled_from(SHAPES),
)
def test_a_wrong_value_is_never_credited(gold, other, shape):
    right = shape.format(work=WORK, v=gold, o=other)
    wrong = shape.format(work=WORK, v=other, o=gold)
    assert verify_pair((right, str(gold)))["value"] == 1.0
    assert verify_pair((wrong, str(gold)))["value"] == (1.0 if other == gold else 0.0)


@settings(max_examples=40, deadline=None)
@given(gold=st.integers(1, 10**6), other=st.integers(1, 10**6), trap=st.sampled_from(TRAPS))
def test_unfinished_or_two_candidates_are_never_credited(gold, other, trap):
    if other == gold:
        other += 1
    assert verify_pair((trap.format(work=WORK, g=gold, o=other), str(gold)))["value"] == 0.0


FRAGMENTS = (
    "Converting to a ",
    "1 = ",
    "(mod 1) ",
    "≡ ",
    "**1** ",
    "the ",
    "a=",
    "word ",
    "\n\nThis is fine.",
    "Hence we ",
    "√",
    ", n \\in \\mathbb{Z}",
    " \\text{ where } n",
    "5% of ",
    "$$",
    "times ",
)


@settings(max_examples=25, deadline=None)
@given(
    head=st.sampled_from(("So ", "Therefore, it is ", "Converting to x, we get ", "So 5% of ", "$$3x = ")),
    fragment=st.sampled_from(FRAGMENTS),
    count=st.integers(1000, 10000),
)
def test_hostile_text_is_read_quickly(head, fragment, count):

    text = head + fragment * count + " 5"
    start = time.monotonic()
    final_answer(text, SIMPLIFY + " " + REACTION)
    same_parameter(text, r"2\pi k", variables)
    as_latex(text)
    answer_part(text)
    assert time.monotonic() - start < 10  # linear: well under a second unloaded
