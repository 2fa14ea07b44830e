"""Absolute Zero's task buffers D_ded, D_abd, D_ind (AZR paper, §3.3.1-3.3.3).

- Seeded with the identity triplet (Fig. 5, the only human-provided task) or from a JSONL seed file.
- References: K = 6 triplets drawn uniformly without replacement from the task's buffer, all of them
  when it holds fewer (the seeding phase's "up to K"); the induction proposer's program is drawn
  uniformly from D_abd ∪ D_ded, a set: a triplet in both (the seed) counts once.
- Growth: every valid proposal is appended, whatever its reward; the buffer is capped at `max_programs`
  keeping the oldest entries (the code's `list[:max_programs]`), so once full it stops growing.
- The solver batch: this step's (or, the code's one-step lag, the previous step's) validated tasks,
  filled to exactly B by uniform draws from the buffer (`solver_tasks`).

The buffers own no randomness: every draw takes the caller's `random.Random`, which the method
checkpoints with its own state.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import HarnessError
from trainers.methods.azr.options import MAX_PROGRAMS, STRATEGIES
from trainers.methods.azr.rewards import TASKS

K_REFERENCES = 6

SEED_PROGRAM = "def f(a):\n    return a"
SEED_INPUT = '"Hello world"'  # the argument list as the proposer writes it: f("Hello world")
SEED_OUTPUT = "'Hello world'"  # repr of the result


@dataclass(frozen=True)
class Task:
    """One buffer entry: a deduction/abduction triplet (program, input, output), or an induction task
    (program, inputs, outputs, message) whose first N//2 pairs the solver sees. Inputs are argument-list
    source strings, outputs reprs."""

    program: str
    input: str = ""
    output: str = ""
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    message: str = ""

    def __post_init__(self) -> None:
        if len(self.inputs) != len(self.outputs):
            raise ValueError(f"{len(self.inputs)} induction inputs for {len(self.outputs)} outputs")

    @property
    def induction(self) -> bool:
        return bool(self.inputs)

    def to_dict(self) -> dict[str, Any]:
        if self.induction:
            return {
                "program": self.program,
                "inputs": list(self.inputs),
                "outputs": list(self.outputs),
                "message": self.message,
            }
        return {"program": self.program, "input": self.input, "output": self.output}

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> Task:
        """A saved entry, or a seed-file line (`snippet` or `code` accepted for `program`)."""
        program = next((row[k] for k in ("program", "snippet", "code") if k in row), None)
        if not isinstance(program, str):
            raise ValueError(f"a task needs its program, got keys {sorted(row)}")
        return cls(
            program,
            str(row.get("input", "")),
            str(row.get("output", "")),
            tuple(map(str, row.get("inputs", ()))),
            tuple(map(str, row.get("outputs", ()))),
            str(row.get("message", "")),
        )


ZERO_TASK = Task(SEED_PROGRAM, SEED_INPUT, SEED_OUTPUT)


def read_seed_file(path: str | Path) -> list[Task]:
    """A JSONL file, one task per line (`Task.from_dict`); blank lines are skipped. A line that is not
    UTF-8, not JSON (a torn last line) or not a task is a one-line error naming it."""
    from harness.core.data import read_rows

    tasks = []
    for number, row in read_rows(Path(path)):
        try:
            tasks.append(Task.from_dict(row))
        except (ValueError, TypeError) as e:
            raise HarnessError(f"{path}:{number}: not an Absolute Zero task ({e})") from None
    return tasks


class TaskBuffers:
    """D_ded, D_abd and D_ind, each a list capped at `max_programs` (oldest kept).

    `seed` fills D_ded and D_abd with its triplets and D_ind with its induction tasks; without any
    triplet (no seed, or a seed of induction tasks only) D_ded and D_abd start from the identity
    triplet. D_ind starts empty unless seeded: the seeding phase (§3.3.1) fills it.

    The buffers also remember which tasks were validated in the current step and the previous one
    (`add` records, `end_step` rolls over), so a method can build its solver batch from either
    (`validated(task, lag)`) and a checkpoint restores both.
    """

    def __init__(self, seed: Iterable[Task] = (), max_programs: int = MAX_PROGRAMS):
        if max_programs < 1:
            raise ValueError(f"max_programs must be at least 1, got {max_programs}")
        self.max_programs = max_programs
        seed = list(seed)
        triplets = [t for t in seed if not t.induction] or [ZERO_TASK]
        self._buffers: dict[str, list[Task]] = {
            "deduction": triplets[:max_programs],
            "abduction": triplets[:max_programs],  # D⁰_abd = D⁰_ded = D_seed, two separate lists
            "induction": [t for t in seed if t.induction][:max_programs],
        }
        self._current: dict[str, list[Task]] = {task: [] for task in TASKS}
        self._previous: dict[str, list[Task]] = {task: [] for task in TASKS}

    @classmethod
    def from_seed_file(cls, path: str | Path, max_programs: int = MAX_PROGRAMS) -> TaskBuffers:
        return cls(read_seed_file(path), max_programs)

    def __getitem__(self, task: str) -> list[Task]:
        """A copy of the task's buffer, oldest first."""
        return list(self._buffers[_check(task)])

    def sizes(self) -> dict[str, int]:
        return {task: len(entries) for task, entries in self._buffers.items()}

    def add(self, task: str, entries: Iterable[Task]) -> int:
        """Append validated proposals, whatever reward they earned; returns how many were stored (fewer
        once the cap is reached). All of them count as validated this step (`validated(task, 0)`)."""
        buffer, entries = self._buffers[_check(task)], list(entries)
        if any(entry.induction != (task == "induction") for entry in entries):
            raise ValueError(f"only the induction buffer holds induction tasks (adding to {task})")
        before = len(buffer)
        buffer.extend(entries)
        del buffer[self.max_programs :]
        self._current[task].extend(entries)
        return len(buffer) - before

    def end_step(self) -> None:
        """This step's validated tasks become the previous step's."""
        self._previous = self._current
        self._current = {task: [] for task in TASKS}

    def validated(self, task: str, lag: int = 0) -> list[Task]:
        """The tasks validated this step (lag 0, the paper) or in the previous step (lag 1, the code,
        whose solver data loader is built before the step's proposals are validated)."""
        if lag not in (0, 1):
            raise ValueError(f"lag must be 0 or 1, got {lag}")
        return list((self._current if lag == 0 else self._previous)[_check(task)])

    def references(self, task: str, rng: random.Random, k: int = K_REFERENCES) -> list[Task]:
        """K triplets drawn uniformly without replacement from the task's buffer; all of them, in a
        random order, when it holds fewer than K."""
        if task == "induction":
            raise ValueError("the induction proposer sees one program (induction_programs), not references")
        buffer = self._buffers[_check(task)]
        return rng.sample(buffer, min(k, len(buffer)))

    def induction_programs(self, n: int, rng: random.Random) -> list[Task]:
        """`n` independent uniform draws (with replacement) from the set D_abd ∪ D_ded, one per
        induction proposal."""
        union = list(dict.fromkeys(self._buffers["abduction"] + self._buffers["deduction"]))
        return [rng.choice(union) for _ in range(n)] if union else []

    def solver_tasks(
        self,
        task: str,
        fresh: Sequence[Task],
        batch_size: int,
        rng: random.Random,
        strategy: str = "paper",
    ) -> list[Task]:
        """The solver's `batch_size` tasks of one type.

        `fresh` is what the caller validated: `validated(task, 0)` for the paper's order, or
        `validated(task, 1)` for the code's one-step lag.

        - "paper" (§3.3.2): every fresh task (the first `batch_size`, in order, if there are more),
          the remainder drawn uniformly from the buffer's other entries ("previously validated").
        - "max_new" (the code's `pred_data_mix_strategy`): up to `batch_size` of the most recent
          fresh tasks (the last ones), the remainder drawn uniformly from the whole buffer.

        The fill draws without replacement while the pool lasts, then starts another shuffled pass
        over it, so the batch has exactly `batch_size` tasks whenever the buffer or `fresh` holds any
        (a pool of the paper's "other entries" that is empty falls back to the buffer and `fresh`).
        Fewer only when both are empty (an unseeded D_ind with no valid proposal).
        """
        if strategy not in STRATEGIES:
            raise ValueError(f"solver batch strategy {strategy!r} is not one of {STRATEGIES}")
        if batch_size < 0:
            raise ValueError(f"batch size must be non-negative, got {batch_size}")
        buffer = self._buffers[_check(task)]
        if strategy == "paper":
            chosen = list(fresh[:batch_size])
            new = set(fresh)
            pool = [t for t in buffer if t not in new]
        else:
            chosen = list(fresh[-batch_size:]) if batch_size else []
            pool = list(buffer)
        pool = pool or list(dict.fromkeys([*buffer, *fresh]))
        while len(chosen) < batch_size and pool:
            chosen += rng.sample(pool, min(len(pool), batch_size - len(chosen)))
        return chosen

    def state_dict(self) -> dict[str, Any]:
        def rows(entries: dict[str, list[Task]]) -> dict[str, list[dict[str, Any]]]:
            return {task: [t.to_dict() for t in tasks] for task, tasks in entries.items()}

        return {
            "max_programs": self.max_programs,
            "buffers": rows(self._buffers),
            "current": rows(self._current),
            "previous": rows(self._previous),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state["max_programs"] != self.max_programs:
            raise ValueError(
                f"the checkpoint's buffers are capped at {state['max_programs']}, "
                f"this run's at {self.max_programs}"
            )

        def tasks(rows: dict[str, list[dict[str, Any]]]) -> dict[str, list[Task]]:
            return {task: [Task.from_dict(r) for r in rows.get(task, [])] for task in TASKS}

        self._buffers = tasks(state["buffers"])
        self._current = tasks(state["current"])
        self._previous = tasks(state["previous"])


def _check(task: str) -> str:
    if task not in TASKS:
        raise ValueError(f"task type {task!r} is not one of {TASKS}")
    return task
