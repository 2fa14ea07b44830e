r"""Minerva Math (OCW courses): 272 science and engineering problems."""

from pathlib import Path
from typing import Any

from benchmarks.base import Benchmark, FileLayout, HubSource, columns
from harness import HarnessError
from harness.core.data import require
from harness.core.types import Sampling
from harness.scoring.latex import last_boxed


def _answer_from_solution(row: dict[str, Any], path: Path, number: int) -> str:
    r"""The reference answer is the last \boxed{} of the solution (as in the Qwen2.5-Math harness)."""
    answer = last_boxed(require(row, "solution", path, number))
    if not answer:
        raise HarnessError(f"{path}:{number}: solution has no \\boxed{{}} answer")
    return answer.strip()


MINERVA = Benchmark(
    name="minerva",
    description="Minerva Math, OCW courses (272 problems)",
    hub=HubSource(
        repo="math-ai/minervamath",
        revision="ee46ddc498933b1977577953250ca5c66be64f96",
        layout=FileLayout(files=("test.jsonl",), to_item=columns(problem="question", answer="answer")),
    ),
    # Qwen2.5-Math copy: no answer field, ids are `idx`.
    local_layouts=(
        FileLayout(
            files=("test.jsonl",),
            to_item=columns(id="idx", problem="problem", answer=_answer_from_solution, meta=("type",)),
        ),
    ),
    folders=("minerva_math",),
    measured=True,  # physics and chemistry results given to a few significant figures
    sampling=Sampling(n=4, temperature=0.6, top_p=0.95, max_tokens=32768),
)
