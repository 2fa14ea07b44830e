r"""Math rule: lists of values: repeats keep their multiplicity, "all solutions" lists compare as sets or
multisets as the question asks, other lists in order (`math_normalise.repeated_list_as_tuple`,
`asks_for_values`)."""

from __future__ import annotations

import pytest
from scoring_cases import DETERMINE, FIND_ALL, LINE, PLANE, right_and_wrong, verdict_test

from harness.scoring.math_normalise import repeated_list_as_tuple
from harness.scoring.math_question import asks_for_values, fixes_form
from harness.scoring.rules import gold_text

# (label, answer, gold, expected value): the audit's pattern 6, rules 3's shape 3
CASES = [
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
    # 3. repeated lists: multisets when the question asks for all values, ordered otherwise
    *right_and_wrong("3 multiset", r"\boxed{16, 3, 1, 1}", r"\boxed{16, 3, 1}", "1,1,3,16", FIND_ALL),
    ("3 multiset", r"\boxed{\{16, 3, 1, 1\}}", gold_text("1,1,3,16", FIND_ALL), 1.0),
    ("3 multiset", r"\boxed{16, 3, 3, 1}", gold_text("1,1,3,16", FIND_ALL), 0.0),
    *right_and_wrong("3 ordered", r"\boxed{16, 3, 1, 1}", r"\boxed{1, 1, 3, 16}", "16,3,1,1", DETERMINE),
    ("3 ordered", r"\boxed{16, 3, 1, 1}", "1,1,3,16", 0.0),  # no question: order kept, as in rules 2
]


test_verdict = verdict_test(CASES)


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


def test_question_cues():
    assert asks_for_values(FIND_ALL) and asks_for_values("Enter the roots, separated by commas.")
    assert not asks_for_values(DETERMINE) and not asks_for_values(None)
    assert not asks_for_values("Find all ordered pairs $(a, b)$.")
    assert not asks_for_values("Suppose that $a(x+b)=2x$ for all values of $x$. Determine $a$ and $b$.")
    assert fixes_form(PLANE) and not fixes_form(LINE) and not fixes_form(None)
