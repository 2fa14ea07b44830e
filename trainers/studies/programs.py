"""The Absolute Zero study's task: toy programs whose output is predicted (deduction), with a difficulty knob.

A level is `STEPSxMAX` (e.g. `3x20`): `f(x)` applies STEPS integer statements to x, the input drawn from
0..MAX. Items are CRUXEval rows (`id`, `code`, `input`, `output`, literals as Python writes them), so the
`azr_deduction` benchmark asks them as Absolute Zero's deduction solver is asked and its scorer checks
the answers in the sandbox. Sets are split as the sums are: no (program, input) in two sets. Outputs are
computed here, from the statements, not by running the code. The warm start's own programs are taught as
a trace of their run, one statement at a time (`demonstrations`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from harness import HarnessError
from trainers.studies.task import Level

if TYPE_CHECKING:
    from trainers.coldstart.demos import Demonstration

BENCHMARK = "azr_deduction"  # CRUXEval-O's layout asked as AZR's deduction solver (methods/azr/heldout.py)
FILE = "cruxeval/cruxeval.jsonl"  # where the benchmark reads a local folder's items

# a statement's text and what it does, by its constant k (2..9)
STATEMENTS: tuple[tuple[str, Callable[[int, int], int]], ...] = (
    ("x = x + {k}", lambda x, k: x + k),
    ("x = x - {k}", lambda x, k: x - k),
    ("x = x * {k}", lambda x, k: x * k),
    ("x = x // {k}", lambda x, k: x // k),
    ("x = x % {k}", lambda x, k: x % k),
    ("x = abs(x - {k} * 3)", lambda x, k: abs(x - k * 3)),
)


def program(level: Level, rng: random.Random) -> dict[str, str]:
    """One item of `level`: a program of level.terms statements and an input in 0..level.maximum."""
    lines, steps = [], []
    for _ in range(level.terms):
        index, k = rng.randrange(len(STATEMENTS)), rng.randint(2, 9)
        lines.append("    " + STATEMENTS[index][0].format(k=k))
        steps.append((index, k))
    x = value = rng.randint(0, level.maximum)
    for index, k in steps:
        value = STATEMENTS[index][1](value, k)
    code = "def f(x):\n" + "\n".join(lines) + "\n    return x"
    key = "-".join(f"{i}{k}" for i, k in steps)
    return {"id": f"{level.name}-{key}-{x}", "code": code, "input": repr(x), "output": repr(value)}


# a statement's line in a program (as `program` indents it): what it does
_BY_LINE = {"    " + text.format(k=k): (apply, k) for text, apply in STATEMENTS for k in range(2, 10)}


def trace(row: dict[str, str]) -> str:
    """The program's run on its input, one statement at a time, x's value written into each: for
    `x = x * 9` then `x = x % 7` on 6, 'x = 6. 6 * 9 = 54. 54 % 7 = 5.'"""
    x = int(row["input"])
    steps = [f"x = {x}."]
    for line in row["code"].splitlines()[1:-1]:
        apply, k = _BY_LINE[line]
        worked = line.strip().removeprefix("x = ").replace("x", str(x))
        x = apply(x, k)
        steps.append(f"{worked} = {x}.")
    return " ".join(steps)


def demonstrations(rows: Sequence[dict[str, str]], options) -> list[Demonstration]:
    """Absolute Zero's deduction-solver demonstrations of these programs (`options`: the method's), each
    thought the program's trace."""
    from trainers.methods.azr.buffers import Task  # torch: not for the command line's import
    from trainers.methods.azr.coldstart import deduction_demonstration

    return [
        deduction_demonstration(options, Task(row["code"], row["input"], row["output"]), trace(row))
        for row in rows
    ]


def split(levels: Sequence[Level], sizes: Sequence[int], seed: int) -> list[list[dict[str, str]]]:
    """Disjoint sets of the given sizes, each drawn evenly over the levels."""
    rng = random.Random(seed)
    taken: set[str] = set()
    sets = []
    for size in sizes:
        rows = []
        for i in range(size):
            for _ in range(10_000):
                row = program(levels[i % len(levels)], rng)
                if row["id"] not in taken:
                    break
            else:
                raise HarnessError(
                    f"level {levels[i % len(levels)].name} has too few programs for {sum(sizes)}"
                )
            taken.add(row["id"])
            rows.append(row)
        sets.append(rows)
    return sets
