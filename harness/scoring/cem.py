"""Cover exact match (CEM) on the extracted final answer, as SPELL scores its QA benchmarks.

Extraction: the text after the last "answer is" (which covers "the answer is" and "the correct
answer is"; any case), up to the end of that line, with `*` removed and one trailing period dropped.
An answer equal to the template's "(insert answer here)" counts as none. No marker, no prediction.

Normalisation (SQuAD's): lower-case; drop punctuation; drop the articles a, an, the as whole words;
collapse whitespace. CEM is 1 when some normalised gold answer is a non-empty substring of the
normalised prediction (a character substring, as in SPELL's released `sub_em_strict`: "paris" is
covered by "paris france", but "paris france" is not covered by "paris").
"""

from __future__ import annotations

import re
import string

from harness.core.types import Score
from harness.scoring.rules import Gold, RuleScorer

MARKER = re.compile(r"answer is", re.IGNORECASE)
PLACEHOLDER = "insert answer here"
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def extract_answer(text: str) -> str | None:
    """The final answer after the last "answer is", or None when there is none."""
    found = list(MARKER.finditer(text))
    if not found:
        return None
    rest = text[found[-1].end() :].lstrip(" \t:")
    line = rest.split("\n", 1)[0].replace("*", "").strip()
    line = line.removesuffix(".").strip()
    if not line or normalize(line) == PLACEHOLDER:
        return None
    return line


def normalize(text: str) -> str:
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def covers(prediction: str, gold: str) -> bool:
    p, g = normalize(prediction), normalize(gold)
    return bool(p) and bool(g) and g in p


class CEMScorer(RuleScorer):
    name = "cem"

    def prediction(self, answer: str) -> str | None:
        return extract_answer(answer)

    def check(self, answer: str, gold: Gold) -> Score:
        prediction = extract_answer(answer)
        if prediction is None:
            return Score(0.0, None, None, {"reason": 'no "answer is" marker'})
        return Score(
            float(any(covers(prediction, g) for g in gold.answers)), prediction, normalize(prediction)
        )
