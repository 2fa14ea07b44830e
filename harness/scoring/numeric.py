"""Numeric answers within a relative tolerance, as DocMath-Eval (and SPELL, at ±0.15%) score them.

Extraction: the last `\\boxed{...}`, else the text after the last "answer is" (to the end of that
line). The part after the last "=" or "≈" is kept; \\frac{a}{b} becomes a/b; commas, currency
signs, "%" and words (units, "million"...) are dropped, and the first number left is the prediction.

A prediction p matches the reference g when any of these holds:
- |p - g| <= rtol * |g| (rtol defaults to 0.0015, i.e. ±0.15%);
- the same after scaling one side by 100, 1e3, 1e6 or 1e9 (0.05 vs 5%, 1.2 thousand vs 1,200);
- p and g are equal once rounded half up to 3 decimals.
A reference of 0 needs p to round to 0. A reference that is not a number is an error verdict.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from harness.core.types import Score
from harness.scoring.rules import Gold, RuleScorer

DEFAULT_RTOL = 0.0015
SCALES = (100.0, 1e3, 1e6, 1e9)
_BOXED = re.compile(r"\\boxed\{")
_MARKER = re.compile(r"answer is", re.IGNORECASE)
_FRACTION = re.compile(r"\\[dt]?frac\{\s*(-?\d+(?:\.\d+)?)\s*\}\{\s*(-?\d+(?:\.\d+)?)\s*\}")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|-?\.\d+")


def _boxed(text: str) -> str | None:
    starts = [m.end() for m in _BOXED.finditer(text)]
    if not starts:
        return None
    depth, start = 1, starts[-1]
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i]
    return None


def parse_number(text: str) -> float | None:
    """The first number in `text` after its last "=" or "≈", ignoring commas, signs of currency, units."""
    text = re.split(r"[=≈]", text)[-1].replace(",", "").replace("−", "-")
    text = _FRACTION.sub(
        lambda m: repr(float(m.group(1)) / float(m.group(2))) if float(m.group(2)) else " ", text
    )
    text = re.sub(r"\\(?:text|mathrm)\{[^}]*\}|\\[%$]|[$€£¥%]", " ", text)
    found = NUMBER.search(text)
    if found is None:
        return None
    try:
        return float(found.group())
    except ValueError:
        return None


def extract_number(text: str) -> tuple[str, float] | None:
    """(the extracted answer text, its value), from the last \\boxed{} or the last "answer is"."""
    part = _boxed(text)
    if part is None:
        found = list(_MARKER.finditer(text))
        if not found:
            return None
        part = text[found[-1].end() :].split("\n", 1)[0]
    value = parse_number(part)
    return None if value is None else (part.strip(), value)


def _round3(x: float) -> Decimal:
    return Decimal(repr(x)).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP)


def within(p: float, g: float, rtol: float = DEFAULT_RTOL) -> bool:
    """Whether prediction p matches reference g (see the module docstring)."""
    try:
        if _round3(p) == _round3(g):
            return True
    except InvalidOperation:  # inf or nan
        return False
    if g == 0:
        return False
    candidates = [p] + [p * s for s in SCALES] + [p / s for s in SCALES]
    return any(abs(c - g) <= rtol * abs(g) for c in candidates)


class NumericScorer(RuleScorer):
    name = "numeric"

    def __init__(self, rtol: float = DEFAULT_RTOL):
        self.rtol = rtol

    def prediction(self, answer: str) -> str | None:
        found = extract_number(answer)
        return found[0] if found else None

    @property
    def version(self) -> str:
        return f"{self.name}-{self.rules_version}+rtol{self.rtol:g}"

    def check(self, answer: str, gold: Gold) -> Score:
        references = [parse_number(g) for g in gold.answers]
        if any(r is None for r in references):
            return Score(
                0.0, None, None, {"verdict": "error", "reason": f"non-numeric reference {gold.answers}"}
            )
        found = extract_number(answer)
        if found is None:
            return Score(0.0, None, None, {"reason": "no number after \\boxed{} or 'answer is'"})
        text, value = found
        right = any(within(value, r, self.rtol) for r in references)
        return Score(float(right), text, repr(value))
