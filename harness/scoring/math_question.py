"""The math rules that read the question's wording: whether an answer's unit or letter case means
something else than the gold's, and whether the question asks for a set of values or fixes a form."""

from __future__ import annotations

import re

from harness.scoring.math_normalise import answer_unit, variables
from harness.scoring.math_text import DELIMITED
from harness.scoring.units import asked_units

_SET_QUESTION = re.compile(  # a request for every value, not "for all values of $x$"
    r"\b(?:find|determine|enter|list|compute|give|identify|what\s+are)\s+all\b"
    r"|\ball\s+possible\s+(?:values|solutions)\b|separated\s+by\s+commas",
    re.IGNORECASE,
)


_ORDER_QUESTION = re.compile(r"\bordered\b|\bin\s+(?:that\s+)?order\b|\brespectively\b", re.IGNORECASE)


_FIXED_FORM = re.compile(r"\bgcd\b|greatest\s+common\s+divisor|relatively\s+prime", re.IGNORECASE)


def units_disagree(answer: str, gold: str, question: str | None) -> bool:
    """Whether the answer's unit differs from the gold's, or, for a gold without a unit, from every
    unit the question asks for ("in meters", "How many square centimeters"). Unknown either way: agree."""
    unit = answer_unit(answer, variables(gold))
    if unit is None:
        return False
    gold_unit = answer_unit(gold, set())
    if gold_unit is not None:
        return gold_unit != unit
    asked = asked_units(question)
    return bool(asked) and unit not in asked


def letter_case_differs(answer: str, gold: str, question: str | None = None) -> bool:
    """Whether the answer writes a one-letter symbol of the gold in the other case (t for T) where
    that case means something else: math-verify lowercases symbols, but T and t are different
    quantities when the question's maths uses the answer's letter too ("at time $t$ ... in terms of
    $T$"). Where it does not, the case is a spelling (C for the constant c); without the question
    (runs made before questions were recorded) every case change is refused."""
    gold_letters = {v for v in variables(gold) if len(v) == 1}
    swapped = {
        v for v in variables(answer) if len(v) == 1 and v not in gold_letters and v.swapcase() in gold_letters
    }
    return bool(swapped) and (question is None or bool(swapped & question_letters(question)))


def question_letters(question: str) -> set[str]:
    """The one-letter symbols the question's maths uses ($t$, \\(T\\), \\[x = y\\]); letters of its
    prose ("a", "A ball") are not symbols."""
    spans = (next(g for g in m.groups() if g is not None) for m in DELIMITED.finditer(question))
    return {v for span in spans for v in variables(span) if len(v) == 1}


def asks_for_values(question: str | None) -> bool:
    """Whether the question asks for a collection of values ("Find all ...", "separated by commas")
    rather than an ordered tuple ("ordered pair", "respectively")."""
    return bool(question) and bool(_SET_QUESTION.search(question)) and not _ORDER_QUESTION.search(question)


def fixes_form(question: str | None) -> bool:
    """Whether the question fixes an equation's scale ("... integers with gcd(|A|,|B|,|C|,|D|) = 1")."""
    return bool(question) and bool(_FIXED_FORM.search(question))
