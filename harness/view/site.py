"""The runs a view shows and the answers to the page's data requests, by path.

Paths: `index`; `run/R` (a run's summary); `run/R/bench/B/rows` and `run/R/bench/B/sample/K` (an
evaluation's items and one sample); `run/R/curves` and `run/R/step/S` (a training run's metrics and one
step's samples); `compare/A/B` (two evaluations). R, B, K are positions, never names from the files, so
a path is always safe as a URL and as a file name in a bundle.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.view.compare import regression
from harness.view.evalrun import EvalRun
from harness.view.training import TrainRun, is_training_run

MAX_PAIRS = 28  # a bundle holds every pair of up to 8 evaluations; beyond, each vs the first and the next


@dataclass
class Entry:
    name: str
    run: EvalRun | TrainRun
    parent: int | None = None  # a training run's evaluation: the training run's position
    step: int | None = None


class Site:
    def __init__(self, run_dirs: Sequence[Path]):
        if not run_dirs:
            raise HarnessError("pass run folders to view")
        self.entries: list[Entry] = []
        for path in map(Path, run_dirs):
            if not path.is_dir():
                raise HarnessError(f"{path}: not a folder")
            if is_training_run(path):
                train = TrainRun(path)
                parent = len(self.entries)
                self.entries.append(Entry(path.name, train))
                for folder in train.evals:
                    run = EvalRun(folder)
                    step = int(folder.name.split("-")[-1]) if folder.name.split("-")[-1].isdigit() else None
                    self.entries.append(Entry(f"{path.name}/evals/{folder.name}", run, parent, step))
            else:
                self.entries.append(Entry(path.name, EvalRun(path)))
        self._lock = threading.Lock()

    def get(self, path: str) -> Any:
        """The answer to a data request; KeyError for a path that names nothing."""
        parts = path.strip("/").split("/")
        with self._lock:
            return clean(self._get(parts))

    def _get(self, parts: list[str]) -> Any:
        if parts == ["index"]:
            return self.index()
        numbers = [_number(p) for p in parts[1::2]]
        if parts[0] == "compare" and len(parts) == 3:
            a, b = self._eval(_number(parts[1])), self._eval(_number(parts[2]))
            return regression(a, b)
        if parts[0] != "run" or not numbers:
            raise KeyError("/".join(parts))
        entry = self._entry(numbers[0])
        run = entry.run
        if len(parts) == 2:
            if isinstance(run, TrainRun):
                return run.summary([k for k, e in enumerate(self.entries) if e.parent == numbers[0]])
            return run.summary()
        if isinstance(run, TrainRun) and parts[2:] == ["curves"]:
            return run.curves()
        if isinstance(run, TrainRun) and len(parts) == 4 and parts[2] == "step":
            return run.step(_number(parts[3]))
        if isinstance(run, EvalRun) and len(parts) == 5 and parts[2] == "bench" and parts[4] == "rows":
            return run.rows(_number(parts[3]))
        if isinstance(run, EvalRun) and len(parts) == 6 and parts[2] == "bench" and parts[4] == "sample":
            return run.sample(_number(parts[3]), _number(parts[5]))
        raise KeyError("/".join(parts))

    def index(self) -> dict[str, Any]:
        return {
            "runs": [
                {
                    "id": k,
                    "name": e.name,
                    "path": str(e.run.path),
                    "kind": e.run.kind,
                    "parent": e.parent,
                    "step": e.step,
                }
                for k, e in enumerate(self.entries)
            ],
            "pairs": [list(p) for p in self.pairs()],
        }

    def pairs(self) -> list[tuple[int, int]]:
        """The comparisons a bundle holds (a server answers any pair)."""
        evals = [k for k, e in enumerate(self.entries) if isinstance(e.run, EvalRun)]
        every = [(a, b) for i, a in enumerate(evals) for b in evals[i + 1 :]]
        if len(every) <= MAX_PAIRS:
            return every
        return list(
            dict.fromkeys([(evals[0], b) for b in evals[1:]] + list(zip(evals, evals[1:], strict=False)))
        )

    def paths(self) -> Iterator[str]:
        """Every path the page can ask for (what a bundle writes)."""
        yield "index"
        for r, e in enumerate(self.entries):
            yield f"run/{r}"
            if isinstance(e.run, TrainRun):
                yield f"run/{r}/curves"
                yield from (f"run/{r}/step/{s}" for s in e.run.steps)
                continue
            for b, name in enumerate(e.run.benchmarks):
                yield f"run/{r}/bench/{b}/rows"
                yield from (f"run/{r}/bench/{b}/sample/{k}" for k in range(len(e.run.samples[name])))
        yield from (f"compare/{a}/{b}" for a, b in self.pairs())

    def _entry(self, k: int) -> Entry:
        if not 0 <= k < len(self.entries):
            raise KeyError(k)
        return self.entries[k]

    def _eval(self, k: int) -> EvalRun:
        run = self._entry(k).run
        if not isinstance(run, EvalRun):
            raise KeyError(k)
        return run


def _number(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 9:  # "²".isdigit() too
        raise KeyError(text)
    return int(text)


def clean(value: Any) -> Any:
    """`value` with NaN and infinities as None (valid JSON) and integers too large for JavaScript as text."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
        return str(value)  # seeds: beyond what a JavaScript number holds exactly
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    return value
