"""max(rule, judge): a rule scorer first, an LLM judge where the rule scores below 1.

The judge is shown the rule's extracted answer ("None" when it extracted nothing, as in SPELL's
code). The score keeps the rule's extracted and canonical answers and details, adds the rule's
value under "rule" and, where the judge was asked, its verdicts under "judge".
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from harness.core.types import Score
from harness.scoring.base import Scorer
from harness.scoring.judge import JudgeScorer
from harness.scoring.rules import Gold, RuleScorer, no_answer, parse_gold


class _ThenJudge:
    """A first scorer, then the judge where it scored below 1: the name, version, judging and closing."""

    def __init__(self, first: Scorer, judge: JudgeScorer):
        self.first = first
        self.judge = judge
        self.name = f"{first.name}+judge"

    @property
    def version(self) -> str:
        return f"max({self.first.version},{self.judge.version})"

    def _judged(
        self, asks: list[tuple[int, str, Gold, dict | None]], firsts: dict[int, Score]
    ) -> Iterator[tuple[int, Score]]:
        """max(first, judge) for each asked answer, as the verdicts arrive."""
        for i, judged in self.judge.verdicts(asks):
            first = firsts[i]
            value = 1.0 if judged["decision"] == "yes" else 0.0
            details = {**first.details, "rule": first.value, "judge": judged}
            yield i, Score(max(first.value, value), first.extracted, first.canonical, details)

    def close(self) -> None:
        self.first.close()
        self.judge.close()


def _decided(first: Score) -> Score:
    """A first score that needs no judge, with its value under "rule"."""
    return Score(first.value, first.extracted, first.canonical, {**first.details, "rule": first.value})


class RuleThenJudge(_ThenJudge):
    """The better of a rule's score and a judge's verdict; the judge is asked only where it can help."""

    first: RuleScorer

    def score(
        self,
        answers: Sequence[str | None],
        golds: Sequence[str],
        previous: Sequence[dict | None] | None = None,
    ) -> Iterator[tuple[int, Score]]:
        """Rule-decided scores come first, then the judged ones as their verdicts arrive."""
        previous = previous or [None] * len(answers)
        ruled: dict[int, Score] = {}
        asks: list[tuple[int, str, Gold, dict | None]] = []
        for i, (answer, gold_text) in enumerate(zip(answers, golds, strict=True)):
            missing = no_answer(answer)
            if missing is not None:
                yield i, missing
                continue
            gold = parse_gold(gold_text)
            rule = ruled[i] = self.first.check(answer, gold)
            if rule.value >= 1.0:
                yield i, _decided(rule)
                continue
            asks.append((i, self.first.prediction(answer) or "None", gold, previous[i]))
        yield from self._judged(asks, ruled)


class ScorerThenJudge(_ThenJudge):
    """max(scorer, judge) for a scorer that scores whole batches (`math`, math-verify in worker processes):
    each answer is scored against every accepted gold answer, and the judge is asked, with the answer the
    scorer extracted, only where none scored 1 (the UloRL paper's rule-then-verifier reward)."""

    def score(
        self,
        answers: Sequence[str | None],
        golds: Sequence[str],
        previous: Sequence[dict | None] | None = None,
    ) -> Iterator[tuple[int, Score]]:
        """The scorer's 1s first, then the judged ones as their verdicts arrive."""
        previous = previous or [None] * len(answers)
        parsed = [parse_gold(g) for g in golds]
        pairs = [(i, accepted) for i, gold in enumerate(parsed) for accepted in gold.answers]
        best: dict[int, Score] = {}
        for k, found in self.first.score([answers[i] for i, _ in pairs], [a for _, a in pairs]):
            i = pairs[k][0]
            if i not in best or found.value > best[i].value:
                best[i] = found
        asks: list[tuple[int, str, Gold, dict | None]] = []
        for i, answer in enumerate(answers):
            first = best.setdefault(i, Score(0.0, None, None, {"reason": "the gold lists no answer"}))
            if first.value >= 1.0 or no_answer(answer) is not None:
                yield i, _decided(first)
            else:
                asks.append((i, first.extracted or "None", parsed[i], previous[i]))
        yield from self._judged(asks, best)
