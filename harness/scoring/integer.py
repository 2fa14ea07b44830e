r"""The last integer of an answer against an integer gold, as lm-eval's GSM8K "flexible-extract" reads it.

For tasks that ask for a number ("Answer with the number only."): math-verify evaluates an expression
and credits "The answer is 4 + 17." for 21; here an unevaluated expression is not an answer, which
leaves a trained model no such shortcut to its reward. Extraction: inside the last ``\boxed{}`` if
there is one, else in the whole text, the last number ("1,000", "-3" and "204.0" are integers; a
last number of 2.5 is a wrong answer, not a skipped one). A gold that is not an integer is an error.
"""

from __future__ import annotations

import re

from harness.core.types import Score
from harness.scoring.latex import last_boxed
from harness.scoring.math import as_integer
from harness.scoring.rules import Gold, RuleScorer

_NUMBER = re.compile(r"-?\d{1,3}(?:,\d{3})+(?![\d.])|-?\d+(?:\.\d+)?")


def last_number(answer: str) -> str | None:
    """The last number written in `answer` (in its last \\boxed{} when it has one), as written."""
    boxed = last_boxed(answer)
    found = _NUMBER.findall(answer if boxed is None else boxed)
    return found[-1] if found else None


class IntegerScorer(RuleScorer):
    name = "integer"

    def prediction(self, answer: str) -> str | None:
        return last_number(answer)

    def check(self, answer: str, gold: Gold) -> Score:
        golds = [as_integer(g) for g in gold.answers]
        if None in golds:
            return Score(0.0, None, None, {"verdict": "error", "reason": f"non-integer gold {gold.answers}"})
        number = last_number(answer)
        if number is None:
            return Score(0.0, None, None, {"reason": "no number in the answer"})
        value = as_integer(number)
        return Score(float(value in golds), number, None if value is None else str(value))
