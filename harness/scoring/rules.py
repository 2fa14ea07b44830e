"""What the rule scorers (choice, cem, numeric, integer) share: the gold format and a loop over answers.

A gold is either the answer text itself or a JSON object `{"answers": [...], "question": "..."}`
(several accepted answers, and the question an LLM judge is shown).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from harness.core.types import Score


@dataclass(frozen=True)
class Gold:
    answers: list[str]
    question: str | None = None


def gold_text(answers: str | list, question: str | None = None) -> str:
    """The stored form of a gold for these scorers."""
    listed = [str(a) for a in answers] if isinstance(answers, list) else [str(answers)]
    return json.dumps({"answers": listed, "question": question}, ensure_ascii=False)


def parse_gold(gold: str) -> Gold:
    if gold.lstrip().startswith("{"):
        try:
            data = json.loads(gold)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("answers"), list):
            return Gold([str(a) for a in data["answers"]], data.get("question"))
    return Gold([gold])


def accepted_answers(gold: str) -> tuple[str, ...]:
    """Every answer a gold accepts, in either stored form."""
    return tuple(parse_gold(gold).answers)


def no_answer(answer: str | None) -> Score | None:
    """The score of a missing answer (an unclosed think block, or blank), else None."""
    if answer is None:
        return Score(0.0, None, None, {"reason": "no answer (unclosed think block)"})
    if not answer.strip():
        return Score(0.0, None, None, {"reason": "empty answer"})
    return None


class RuleScorer:
    """A scorer from a pure `check(answer, gold) -> Score`."""

    name = "rule"
    rules_version = "1"
    check: Callable[[str, Gold], Score]
    prediction: Callable[[str], str | None]  # the extracted answer an LLM judge is shown

    @property
    def version(self) -> str:
        return f"{self.name}-{self.rules_version}"

    def score(
        self,
        answers: Sequence[str | None],
        golds: Sequence[str],
        previous: Sequence[dict | None] | None = None,
    ) -> Iterator[tuple[int, Score]]:
        for i, (answer, gold) in enumerate(zip(answers, golds, strict=True)):
            yield i, no_answer(answer) or self.check(answer, parse_gold(gold))

    def close(self) -> None:
        pass
