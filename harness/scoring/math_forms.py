r"""Answer forms that a plain parse misreads, put side by side with the gold: a percent
for a question that asks for one, a choice letter boxed with its option's text, and a family of
solutions whose integer parameter has another name (``+ n\pi, n \in \mathbb{Z}`` for ``+ \pi k``).
Works on normalised text (`math_normalise.normalise`); no SymPy here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_PERCENT_QUESTION = re.compile(  # asks for one, not "a 20% discount" or "grew by 5 percent"
    r"\bpercentage\b|\bwhat\s+(?:is\s+the\s+)?percent\b|\bhow\s+many\s+percent\b"
    r"|\b(?:as|in)\s+(?:a\s+)?percent\b|\(\s*in\s+(?:\\?%|percent)\s*\)|\bin\s+\\?%",
    re.IGNORECASE,
)
_PERCENT_SIGN = re.compile(r"\s*(?:\\%|%|\\text\{\s*\\?%\s*\})\s*$")
_WRAPPED = r"(?:\\(?:text|textbf|mathrm|mathbf)\s*\{\s*)?"
_UNWRAPPED = r"(?:\s*\})?"
_CHOICE = re.compile(rf"{_WRAPPED}\(\s*([A-E])\s*\){_UNWRAPPED}")
_CHOICE_GOLD = re.compile(rf"\s*{_WRAPPED}\(\s*([A-E])\s*\){_UNWRAPPED}\s*")
_INTEGERS = r"(?:\\mathbb\s*\{\s*Z\s*\}|\\mathbb\s*Z|\\mathbf\s*\{\s*Z\s*\}|\\Z\b)"
_SEPARATOR = r"(?:\s|,|;|\\[,;:! ]|\\quad|\\qquad|~)*"
_WORD = r"(?:\\text\s*\{\s*(?:for|where|with)\s*\}|for|where|with)"
_DECLARATION = re.compile(  # ", n \in \mathbb{Z}", "\text{ for } k \in \mathbb{Z}", "(n \in \mathbb{Z})"
    rf"{_SEPARATOR}(?:{_WORD}{_SEPARATOR})?(?P<open>\()?\s*(?:\\text\s*\{{\s*(?:some|all|any)\s*\}}\s*)?"
    rf"(?P<letter>[A-Za-z])\s*\\in\s*{_INTEGERS}\s*(?(open)\))\s*\.?\s*$"
)
_WORDED = re.compile(  # "\text{ where } n \text{ is an integer}", "\text{for any integer } n"
    rf"{_SEPARATOR}(?:\\text\s*\{{\s*(?:for|where)\s+(?:any|all|some|an?)?\s*integers?\s*\}}\s*(?P<before>[A-Za-z])"
    rf"|(?:{_WORD}{_SEPARATOR})?(?P<after>[A-Za-z])\s*\\text\s*\{{\s*(?:is\s+an?\s+)?integers?\s*\}})\s*\.?\s*$"
)
_ALTERNATIVE = re.compile(r"\bor\b")  # "(B) or 288\pi": two candidates
_LETTER = r"(?<![\\A-Za-z]){}(?![A-Za-z])"


def asks_for_percent(question: str | None) -> bool:
    """Whether the question asks for a percentage ("What percent ...", "as a percentage", "(in %)");
    a percentage it mentions ("a 20% discount") is not a request for one."""
    return bool(question) and bool(_PERCENT_QUESTION.search(question))


def without_percent(text: str) -> str:
    """`text` without a final percent sign ("17.5\\%" -> "17.5")."""
    return _PERCENT_SIGN.sub("", text)


def gold_choice(gold: str) -> str | None:
    """The option letter a gold is, in parentheses ("\\text{(B)}", "(B)"), else None."""
    match = _CHOICE_GOLD.fullmatch(gold)
    return match.group(1) if match else None


def answer_choice(answer: str) -> str | None:
    """The option letter an answer opens with, in parentheses, when it names no other one and offers
    no alternative ("\\textbf{(B)}\\ 3(1+r/10)^x=7" -> "B"; "(B) or (C)", "(B) or 103" -> None)."""
    match = _CHOICE.match(answer.strip())
    if match is None or _ALTERNATIVE.search(answer):
        return None
    named = {m.group(1) for m in _CHOICE.finditer(answer)}
    return match.group(1) if named == {match.group(1)} else None


def integer_parameter(answer: str) -> tuple[str, str] | None:
    """(the answer without its declaration, the letter) when it ends by declaring an integer
    parameter ("+ n\\pi, n \\in \\mathbb{Z}", "\\text{ where } k \\text{ is an integer}"), else None."""
    match = _DECLARATION.search(answer) or _WORDED.search(answer)
    if match is None or not answer[: match.start()].strip():
        return None
    letter = next(match.group(g) for g in ("letter", "before", "after") if match.groupdict().get(g))
    return answer[: match.start()].rstrip(" ,;"), letter


def same_parameter(answer: str, gold: str, letters: Callable[[str], set[str]]) -> tuple[str, str]:
    """(answer, gold) with their integer-parameter declarations dropped and the answer's declared
    parameter renamed to the gold's (n for k). The answer is left whole when the renaming is not one
    letter for one: the gold's parameter is the one letter of the gold the answer lacks, and the
    answer's is not a letter of the gold. `letters` names a text's symbols."""
    gold = (integer_parameter(gold) or (gold, ""))[0]
    declared = integer_parameter(answer)
    if declared is None:
        return answer, gold
    body, letter = declared
    gold_letters = {v for v in letters(gold) if len(v) == 1}
    if letter in gold_letters:
        return body, gold
    missing = gold_letters - letters(body)
    if len(missing) != 1:
        return answer, gold
    return re.sub(_LETTER.format(letter), missing.pop(), body), gold
