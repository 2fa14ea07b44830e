"""Multiple choice: the option letter read from the answer part (after any thinking).

Recognised forms: `\\boxed{C}` (also `\\boxed{\\text{C}}`, `\\boxed{(C)}`), "Answer: C", "answer is
C" / "answer is (C)" (any case, markdown bold allowed), and a bare "(C)". When several appear, the
one that ends last wins. Letters beyond the item's options are ignored; the score is exact match.
"""

from __future__ import annotations

import re

from harness.core.types import Score
from harness.scoring.rules import Gold, RuleScorer

LETTERS = "ABCDEFGHIJ"
_PATTERNS = (
    r"\\boxed\{\s*(?:\\text(?:bf)?\{\s*)?\(?\s*([A-J])\s*\)?\s*\}?\s*\}",
    r"(?i:answer)\s*(?:(?i:is)|:)\s*[:*\s]*\(?\s*\**\s*([A-J])\b",
    r"\(([A-J])\)",
)
PATTERNS = tuple(re.compile(p) for p in _PATTERNS)


def extract_letter(text: str, options: int = 4) -> str | None:
    """The last recognised option letter among the first `options` letters, or None."""
    allowed = LETTERS[:options]
    found = [(m.end(), m.group(1)) for p in PATTERNS for m in p.finditer(text) if m.group(1) in allowed]
    return max(found)[1] if found else None


class ChoiceScorer(RuleScorer):
    """Exact match of the extracted letter with the gold letter."""

    name = "choice"

    def prediction(self, answer: str) -> str | None:
        return extract_letter(answer)

    def check(self, answer: str, gold: Gold) -> Score:
        right = gold.answers[0].strip().upper()
        letter = extract_letter(answer, max(4, LETTERS.index(right) + 1) if right in LETTERS else 4)
        if letter is None:
            return Score(0.0, None, None, {"reason": "no option letter found"})
        return Score(float(letter == right), letter, letter)
