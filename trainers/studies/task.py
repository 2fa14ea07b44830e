"""The studies' task: sums with a difficulty knob, split three ways, and warm-start completions per style.

A level is `TERMSxMAX` (e.g. `3x99`: three operands in 0..99); a task is one or more levels, drawn
evenly. Items are unique by (level, operands in order) and split into warm-start, training and held-out
sets that share no multiset of operands, so neither the warm start nor the training set holds a held-out
sum in any order. The questions ask for the number; the `integer` scorer reads the answer's last number.

Styles of warm-start completion, one per mechanism:
- `direct`: "12 + 30 + 7 = 49" (short, confident: UloRL's mastered tokens);
- `check`: the result first, then verified by the partial sums, paragraph by paragraph, then the
  answer in the form SPAE's probes ask for it (`**Final Answer**` then `\\boxed{49}`), so that a probe
  after the first paragraph already finds the answer settled while the text goes on checking;
- `steps`: the partial sums first, then the result (GRPO's and Reasoning Arena's plain reasoning).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from harness import HarnessError

QUESTION = "What is {expression}? Give the number."
_LEVEL = re.compile(r"(\d{1,2})x(\d{1,6})")
STYLES = ("direct", "check", "steps")
FINAL_ANSWER = "**Final Answer**\n\\boxed{"  # SPAE's probe text (harness/probing/probe.py)


@dataclass(frozen=True)
class Level:
    terms: int
    maximum: int

    @classmethod
    def parse(cls, text: str) -> Level:
        match = _LEVEL.fullmatch(text.strip())
        if not match or not 2 <= int(match[1]) <= 9 or int(match[2]) < 1:
            raise HarnessError(f"a level is TERMSxMAX with 2-9 terms and MAX >= 1 (e.g. 3x99), got {text!r}")
        return cls(int(match[1]), int(match[2]))

    @property
    def name(self) -> str:
        return f"{self.terms}x{self.maximum}"


def parse_levels(text: str) -> tuple[Level, ...]:
    levels = tuple(Level.parse(part) for part in text.split(",") if part.strip())
    if not levels:
        raise HarnessError("a task needs at least one level (e.g. 2x9,3x99)")
    return levels


def item(level: Level, operands: Sequence[int]) -> dict[str, str]:
    expression = " + ".join(map(str, operands))
    return {
        "id": f"{level.name}-{'-'.join(map(str, operands))}",
        "problem": QUESTION.format(expression=expression),
        "answer": str(sum(operands)),
        "level": level.name,
    }


def operands_of(row: dict[str, str]) -> tuple[int, ...]:
    return tuple(int(x) for x in row["id"].split("-")[1:])


def split(levels: Sequence[Level], sizes: Sequence[int], seed: int) -> list[list[dict[str, str]]]:
    """Disjoint sets of the given sizes (warm start, train, held out), each drawn evenly over the levels;
    no two sets hold the same operands in any order."""
    rng = random.Random(seed)
    taken: set[tuple[int, ...]] = set()
    sets: list[list[dict[str, str]]] = []
    for size in sizes:
        rows: list[dict[str, str]] = []
        for i in range(size):
            level = levels[i % len(levels)]
            for _ in range(10_000):
                operands = tuple(rng.randint(0, level.maximum) for _ in range(level.terms))
                key = (level.terms, *sorted(operands))
                if key not in taken:
                    break
            else:
                raise HarnessError(f"level {level.name} has too few distinct sums for {sum(sizes)} items")
            taken.add(key)
            rows.append(item(level, operands))
        rng.shuffle(rows)
        sets.append(rows)
    return sets


def completion(row: dict[str, str], style: str) -> str:
    """The warm start's answer to `row` in `style` (see the module's docstring)."""
    operands = operands_of(row)
    total, expression = sum(operands), " + ".join(map(str, operands))
    partial, running = [], operands[0]
    for x in operands[1:]:
        partial.append(f"{running} + {x} = {running + x}")
        running += x
    if style == "direct":
        return f"{expression} = {total}"
    if style == "check":
        checks = "\n\n".join(f"Check: {p}." for p in partial)
        return f"{expression} = {total}.\n\n{checks}\n\n{FINAL_ANSWER}{total}}}"
    if style == "steps":
        return ". ".join(partial) + f". The answer is {total}."
    raise HarnessError(f"style must be one of {', '.join(STYLES)}, got {style!r}")


def disjoint(*sets: Sequence[dict[str, str]]) -> None:
    """Raise when two sets share a sum (the same operands in any order)."""
    seen: dict[tuple[int, ...], int] = {}
    for index, rows in enumerate(sets):
        for row in rows:
            key = (len(operands_of(row)), *sorted(operands_of(row)))
            if seen.setdefault(key, index) != index:
                raise HarnessError(f"sets {seen[key]} and {index} share the sum {row['id']}")
