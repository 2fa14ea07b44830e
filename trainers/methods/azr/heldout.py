"""Held-out AZR deduction: CRUXEval-O asked as Absolute Zero asks a buffered deduction task, a benchmark
(`azr_deduction`) and its scorer, registered by pyproject.toml's entry points as any package would.

Why: at 135M parameters CRUXEval's own few-shot prompt scores 0/100 (the model keeps writing the few-shot
pattern), so it cannot tell whether self-play helped. Each item's problem is the method's deduction solver
prompt (`prompts.solve_prompt(DEDUCTION, code, input)`), the system message the R1 instruction, so that
with a chat template the prompt is `prompts.chat_messages` rendered as `AzrMethod._encode` renders it
(`template: chat`, as configs/train/azr-cpu.yaml runs). The scorer reads a reply with the method's
`extract_solution` and checks it with the executor's `check_deduction` against the gold `output` read as a
literal: a literal answer never runs, any other is evaluated in the sealed sandbox, as in training.
Greedy, one sample, 96 tokens (azr-cpu.yaml's `solve_max_tokens`).
"""

from __future__ import annotations

import ast
import dataclasses
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks.base import Benchmark
from benchmarks.cruxeval import cruxeval_files
from harness import HarnessError, sandbox
from harness.core.data import require
from harness.core.types import Item, Sampling, Score
from harness.sandbox import Limits, Verdict
from harness.scoring import Kind
from harness.scoring.verdicts import checked_in_threads, unanswered, verdict_score
from trainers.methods.azr import prompts
from trainers.methods.azr.executor import LIMITS, check_deduction
from trainers.methods.azr.parsing import extract_solution

NAME = "azr_deduction"
VERSION = "1"


def to_item(row: dict[str, Any], path: Path, number: int) -> Item:
    """A CRUXEval row as a deduction task: the solver prompt for (`code`, `input`), the gold `output`."""
    code, output = require(row, "code", path, number), require(row, "output", path, number)
    given = row.get("input")  # "" when f takes no arguments
    if not isinstance(given, str):
        raise HarnessError(f"{path}:{number}: missing string field 'input'")
    problem = prompts.solve_prompt(prompts.DEDUCTION, code, input=given)
    return Item(id=str(require(row, "id", path, number)), problem=problem, answer=output)


def check(reply: str | None, gold: str, limits: Limits = LIMITS) -> Score:
    """AZR's reading of a deduction reply and its verdict against the gold literal; 1 for a pass."""
    if reply is None:  # an unclosed think block (a blank reply has no <answer> block either)
        return unanswered(reply)
    answer = extract_solution(reply, prompts.DEDUCTION)
    if answer is None:
        return verdict_score(Verdict("fail", "no <answer> block"), None)
    return verdict_score(check_deduction(answer, ast.literal_eval(gold), limits), answer)


class DeductionScorer:
    """Checks deduction answers, `workers` at a time; `timeout` replaces the executor's time limits."""

    name = NAME

    def __init__(self, timeout: float | None = None, workers: int | None = None):
        sandbox.require()  # no answer is evaluated unisolated without the user's --unsafe-no-sandbox
        self.limits = LIMITS if timeout is None else dataclasses.replace(LIMITS, wall=timeout, cpu=timeout)
        self.workers = workers or os.cpu_count() or 1

    @property
    def version(self) -> str:
        return f"{NAME}-{VERSION}+sandbox-{sandbox.facts()['isolation']}"

    def score(
        self,
        answers: Sequence[str | None],
        golds: Sequence[str],
        previous: Sequence[dict | None] | None = None,
    ) -> Iterator[tuple[int, Score]]:
        yield from checked_in_threads(
            lambda answer, gold: check(answer, gold, self.limits), answers, golds, self.workers
        )

    def close(self) -> None:
        pass  # each `score` call has its own thread pool


def _build(options: Any) -> DeductionScorer:
    return DeductionScorer(options.timeout, options.workers)


# the registered scorer: timed and sandboxed (its checks run programs), and its gold is a literal a model
# can give verbatim, so `harness regress` prices a constant answer (the most common output's share)
scorer = Kind(_build, exact_golds=True, timed=True, sandboxed=True)


AZR_DEDUCTION = Benchmark(
    name=NAME,
    description="CRUXEval-O (800 functions) in Absolute Zero's deduction-solver prompt, R1 format",
    **cruxeval_files(to_item),
    prompt="{problem}",
    system_prompt=prompts.R1_INSTRUCTION,
    scorer=NAME,
    sampling=Sampling(n=1, temperature=0.0, top_p=1.0, max_tokens=96),
)
