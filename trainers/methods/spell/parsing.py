"""Reading the policy's outputs: the questioner's JSON proposal and the verifier's decision.

Questioner (SPELL paper, App. E): the text after the last `</think>` (an unclosed think block is
dropped without penalty), control characters removed, then the last fenced ```json block that parses,
trying later blocks first; else the whole text; else (the paper's "conclude with a JSON object") the
last balanced {...} object. A structural failure is a format error (-1 for the questioner): no JSON
object, a missing or mistyped key, multiple-choice options other than exactly A-D, or an answer that
is not one of those letters. A proposal that parses but cannot be used is dropped without penalty, as
the released code does: a general answer over 40 tokens, a numeric answer that is zero or not a number.
A numeric answer given as text must be one number (commas, currency and % aside) with at most
`MAX_UNIT_WORDS` words of units ("1.2 million USD"): a sentence that merely contains a number, such as
"2023 revenue: 86,800" or a question pasted into the answer, is not a reference (our reading of the
prompt's "a single non-zero numeric value"; SmolLM2 wrote both in the CPU run).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.core.thinking import split_thinking
from harness.scoring.numeric import NUMBER, parse_number
from trainers.methods.spell.prompts import CHOICE, GENERAL, LETTERS, MATH

FORMAT_ERROR, DROPPED = "format", "dropped"
MAX_ANSWER_TOKENS = 40  # the prompt asks for at most 20 (SPELL paper, App. E)
MAX_UNIT_WORDS = 3
_FENCE = re.compile(r"```json\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LETTER = re.compile(r"^\(?\s*([A-D])\s*\)?[.:]?$")


@dataclass(frozen=True)
class Proposal:
    """A usable question: `answer` is the reference (a number's canonical text, or the letter)."""

    question: str
    answer: str
    options: dict[str, str] | None = None


@dataclass(frozen=True)
class Rejected:
    """An unusable output: `kind` is FORMAT_ERROR (penalised) or DROPPED (not)."""

    kind: str
    reason: str = field(compare=False)


def parse_proposal(
    text: str, task: str, count_tokens: Callable[[str], int], think_opened: bool = False
) -> Proposal | Rejected:
    split = split_thinking(text, think_opened)
    if split.answer is None:
        return Rejected(DROPPED, "the think block never closes")
    found = _json_object(_CONTROL.sub("", split.answer))
    if found is None:
        return Rejected(FORMAT_ERROR, "no JSON object")
    question = found.get("question")
    if not isinstance(question, str) or not question.strip():
        return Rejected(FORMAT_ERROR, "'question' is not a non-empty string")
    question, answer = question.strip(), found.get("answer")
    if task == GENERAL:
        if not isinstance(answer, str) or not answer.strip():
            return Rejected(FORMAT_ERROR, "'answer' is not a non-empty string")
        if count_tokens(answer) > MAX_ANSWER_TOKENS:
            return Rejected(DROPPED, f"the answer is over {MAX_ANSWER_TOKENS} tokens")
        return Proposal(question, answer.strip())
    if task == MATH:
        if isinstance(answer, bool) or not isinstance(answer, str | int | float):
            return Rejected(FORMAT_ERROR, "'answer' is not a number or a string")
        if isinstance(answer, str):
            value = parse_number(answer) if _one_number(answer) else None
        else:
            value = float(answer)
        if value is None or value == 0:
            return Rejected(DROPPED, "the answer is not a non-zero number")
        return Proposal(question, _number_text(value))
    if task == CHOICE:
        options = found.get("options")
        if not isinstance(options, dict) or sorted(options) != list(LETTERS):
            return Rejected(FORMAT_ERROR, "'options' must have exactly the keys A, B, C, D")
        if not all(isinstance(v, str) and v.strip() for v in options.values()):
            return Rejected(FORMAT_ERROR, "every option must be a non-empty string")
        letter = _LETTER.match(answer.strip().upper()) if isinstance(answer, str) else None
        if letter is None:
            return Rejected(FORMAT_ERROR, "'answer' is not one of the letters A-D")
        return Proposal(question, letter.group(1), {k: options[k].strip() for k in LETTERS})
    raise ValueError(f"unknown task {task!r}")


def _one_number(text: str) -> bool:
    """Whether `text` is a single number with at most a few words of units around it."""
    text = text.replace(",", "")
    rest = NUMBER.sub(" ", text)
    return len(NUMBER.findall(text)) == 1 and len(re.findall(r"[^\W\d_]+", rest)) <= MAX_UNIT_WORDS


def _json_object(text: str) -> dict | None:
    candidates = [m.group(1) for m in _FENCE.finditer(text)][::-1] + [text]
    last = text.rfind("}")
    start = _matching_open(text, last) if last >= 0 else None
    if start is not None:
        candidates.append(text[start : last + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _matching_open(text: str, end: int) -> int | None:
    """Where the {...} object that closes at `end` opens, or None."""
    depth = 0
    for i in range(end, -1, -1):
        depth += {"}": 1, "{": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return None


def _number_text(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


YES, NO, INVALID = 1, 0, -1
_DECISIONS = (
    (re.compile(r"\[\[YES\]\]"), re.compile(r"\[\[NO\]\]")),
    (re.compile(r"\bYES\b"), re.compile(r"\bNO\b")),
)


def parse_judgment(text: str, think_opened: bool = False) -> int:
    """The verifier's decision after its thinking: YES (1) if it says [[YES]] and not [[NO]], NO (0) in
    the mirror case; failing both, a bare YES or NO word on the same terms; else INVALID (-1)."""
    answer = split_thinking(text, think_opened).answer
    if answer is None:
        return INVALID
    for yes, no in _DECISIONS:
        said_yes, said_no = bool(yes.search(answer)), bool(no.search(answer))
        if said_yes != said_no:
            return YES if said_yes else NO
    return INVALID
