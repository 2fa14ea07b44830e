"""Rewards from the harness's own scorers, so a training reward is exactly the evaluation score.

A completion is split into reasoning and answer as the harness does for evaluation (an unclosed think
block has no answer and scores 0), then scored by any harness scorer: math (math-verify), code (the
sandbox), choice, cem, numeric, the LLM judge and their cascades.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.core.thinking import split_thinking
from harness.core.types import Score
from harness.scoring import get_scorer
from harness.scoring.judge import JudgeConfig


class ScorerReward:
    """Scores completion texts against gold answers with a named harness scorer."""

    def __init__(
        self,
        scorer: str = "math",
        *,
        judge: JudgeConfig | None = None,
        timeout: float | None = None,
        workers: int | None = None,
    ):
        self.name = scorer
        self.scorer = get_scorer(scorer, judge=judge, timeout=timeout, workers=workers, persistent=True)

    @property
    def version(self) -> str:
        return self.scorer.version

    def scores(self, texts: Sequence[str], golds: Sequence[str], think_opened: Sequence[bool]) -> list[Score]:
        """One Score per text, in order."""
        answers = [split_thinking(t, o).answer for t, o in zip(texts, think_opened, strict=True)]
        out: list[Score | None] = [None] * len(answers)
        for i, score in self.scorer.score(answers, list(golds)):
            out[i] = score
        missing = [i for i, s in enumerate(out) if s is None]
        if missing:
            raise RuntimeError(f"scorer {self.name!r} returned no score for completions {missing}")
        return out  # type: ignore[return-value]

    def __call__(
        self, texts: Sequence[str], golds: Sequence[str], think_opened: Sequence[bool]
    ) -> list[float]:
        return [s.value for s in self.scores(texts, golds, think_opened)]
