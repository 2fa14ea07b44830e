"""What every scorer is: a `name`, a `version`, and `score` over answers and their golds."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from harness.core.types import Score


class Scorer(Protocol):
    """Scores answers against golds.

    `name` is what a run's config calls the scorer; `version` changes whenever its scores may, and
    is stored with each score. `score` yields (index, Score) for every answer, in any order; a None
    answer is one that never closed its think block. `previous` holds each sample's earlier score
    details (or None), for scorers that reuse work already done, such as judge verdicts; others
    ignore it. `close` ends what the scorer keeps between calls (the math scorer's persistent
    worker processes).
    """

    name: str

    @property
    def version(self) -> str: ...

    def score(
        self,
        answers: Sequence[str | None],
        golds: Sequence[str],
        previous: Sequence[dict | None] | None = None,
    ) -> Iterator[tuple[int, Score]]: ...

    def close(self) -> None: ...
