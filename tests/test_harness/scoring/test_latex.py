r"""Boxes and corrupted escapes in answers (`harness.scoring.latex`)."""

from __future__ import annotations

import pytest

from harness.scoring.latex import boxed_contents, has_corrupted_escape, last_boxed


@pytest.mark.parametrize(
    ("text", "boxes"),
    [
        (r"so $\boxed{\frac{1}{2}}$.", [r"\frac{1}{2}"]),
        (r"\fbox{3}", ["3"]),
        (r"the answer is \boxed 7", ["7"]),
        (r"$\boxed 7$", ["7"]),
        (r"\boxed {5}", ["5"]),
        (r"\boxed{\{1\}}", [r"\{1\}"]),
        (r"\boxed{\{1,2\}} and \boxed{\{3\}}", [r"\{1,2\}", r"\{3\}"]),
        (r"\boxed{1} then \boxed{2", ["1"]),  # unbalanced trailing box ignored
        (r"\boxed{a} \fbox{b} \boxed{c}", ["a", "b", "c"]),
        (r"\boxed{x^{2^{3}}}", ["x^{2^{3}}"]),
        ("no box here", []),
    ],
)
def test_boxed_contents(text, boxes):
    assert boxed_contents(text) == boxes
    assert last_boxed(text) == (boxes[-1] if boxes else None)


def test_boxed_contents_line_break_before_closing_brace():
    assert boxed_contents(r"\boxed{1 \\} \boxed{5}") == ["1 \\\\", "5"]


def test_last_boxed_takes_last():
    assert last_boxed(r"\boxed{205} and then \boxed{204}") == "204"
    assert last_boxed(r"\boxed{\frac{1}{2}}") == r"\frac{1}{2}"
    assert last_boxed(r"\boxed{1} \boxed{") == "1"
    assert last_boxed("") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("In \triangle ABC", True),  # \t + "riangle"
        ("\x0crac{1}{2}", True),  # \f + "rac"
        ("\x08egin{align}", True),  # \b + "egin"
        ("a \times b", True),  # \t + "imes"
        ("have\tequal sides", False),  # a real tab between words
        (r"In \triangle ABC, $\frac{1}{2}$", False),  # intact backslashes
        ("line one\r\nline two", False),
    ],
)
def test_has_corrupted_escape(text, expected):
    assert has_corrupted_escape(text) is expected
