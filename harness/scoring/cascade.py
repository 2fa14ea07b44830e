"""max(rule, judge): a rule scorer first, an LLM judge where the rule scores below 1.

The judge is shown the rule's extracted answer ("None" when it extracted nothing, as in SPELL's
code). The score keeps the rule's extracted and canonical answers and details, adds the rule's
value under "rule" and, where the judge was asked, its verdicts under "judge".
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from harness.scoring.judge import JudgeScorer
from harness.scoring.rules import Gold, RuleScorer, no_answer, parse_gold
from harness.types import Score


class RuleThenJudge:
    """The better of a rule's score and a judge's verdict; the judge is asked only where it can help."""

    def __init__(self, rule: RuleScorer, judge: JudgeScorer):
        self.rule = rule
        self.judge = judge
        self.name = f"{rule.name}+judge"

    @property
    def version(self) -> str:
        return f"max({self.rule.version},{self.judge.version})"

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
            rule = ruled[i] = self.rule.check(answer, gold)
            if rule.value >= 1.0:
                yield (
                    i,
                    Score(rule.value, rule.extracted, rule.canonical, {**rule.details, "rule": rule.value}),
                )
                continue
            asks.append((i, self.rule.prediction(answer) or "None", gold, previous[i]))
        for i, judged in self.judge.verdicts(asks):
            rule = ruled[i]
            value = 1.0 if judged["decision"] == "yes" else 0.0
            details = {**rule.details, "rule": rule.value, "judge": judged}
            yield i, Score(max(rule.value, value), rule.extracted, rule.canonical, details)

    def close(self) -> None:
        self.rule.close()
        self.judge.close()
