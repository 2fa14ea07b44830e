"""Progress bars (with ETA) and the console they draw on; plain lines where stderr is a log.

A terminal gets rich's live bars. A file, a pipe, CI or a batch scheduler gets `LogProgress`: one line
per task at every 5 % (but not within a tenth of the interval of its previous line) and at least every
HARNESS_PROGRESS_SECONDS (30 s) while it runs, each with done/total, the elapsed time, the rate and the
ETA, written as it happens (live bars drawn to a file appear only at the end).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

console = Console(stderr=True)
if not console.is_terminal:  # logs and CI: wide enough for the summary table
    console.width = max(console.width, 120)

INTERVAL_VARIABLE = "HARNESS_PROGRESS_SECONDS"
INTERVAL = 30.0  # seconds between a log's progress lines, at most, while a task runs
STEP = 0.05  # and a line at every 5 % done, unless the previous one is younger than interval * GAP
GAP = 0.1


def progress_bar() -> Progress | LogProgress:
    """Live bars on a terminal; plain lines on anything else."""
    if not console.is_terminal:
        return LogProgress(log_line, interval=log_interval())
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )


def log_line(text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def log_interval() -> float:
    """HARNESS_PROGRESS_SECONDS, a positive finite number of seconds (30 if unset or not one)."""
    try:
        seconds = float(os.environ.get(INTERVAL_VARIABLE, INTERVAL))
    except ValueError:
        return INTERVAL
    return seconds if math.isfinite(seconds) and seconds > 0 else INTERVAL


def duration(seconds: float) -> str:
    """1h02m, 3m05s or 42s."""
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


@dataclass
class _Task:
    description: str
    total: int
    unit: str
    started: float
    done: int = 0
    said: int = -1  # `done` when its last line was written
    said_at: float = 0.0

    def line(self, now: float) -> str:
        elapsed = now - self.started
        text = f"{self.description}: {self.done}/{self.total} {self.unit}"
        text += f" ({self.done / self.total:.0%}) in {duration(elapsed)}" if self.total else ""
        if self.done and elapsed > 0:
            rate = self.done / elapsed
            text += f", {rate:.0f}" if rate >= 100 else f", {rate:.3g}"
            text += f" {self.unit}/s"
            if self.done < self.total:
                text += f", ETA {duration((self.total - self.done) / rate)}"
        return text


@dataclass
class LogProgress:
    """rich's `Progress` interface (add_task, advance, update, a context) writing plain lines: at each
    5 % step a task crosses (not within `interval * GAP` of its last line, unless it is done), every
    `interval` seconds while a task is unfinished, and at the end."""

    write: Callable[[str], None]
    interval: float = INTERVAL
    clock: Callable[[], float] = time.monotonic
    tasks: list[_Task] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.ticker = threading.Thread(target=self._tick, name="progress-lines", daemon=True)

    def __enter__(self) -> LogProgress:
        self.ticker.start()
        return self

    def __exit__(self, kind: type | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stopped.set()
        self.ticker.join()
        with self.lock:
            for task in self.tasks:
                if task.total and task.said != task.done:
                    self._say(task)

    def add_task(self, description: str, total: int = 0, unit: str = "samples", **fields: object) -> int:
        with self.lock:
            self.tasks.append(_Task(description, total, unit, started=self.clock()))
            return len(self.tasks) - 1

    def update(self, task_id: int, total: int | None = None, **fields: object) -> None:
        with self.lock:
            if total is not None:
                self.tasks[task_id].total = total

    def advance(self, task_id: int, advance: float = 1) -> None:
        with self.lock:
            task = self.tasks[task_id]
            before = task.done
            task.done += int(advance)
            stepped = task.total and self._steps(task, before) != self._steps(task, task.done)
            recent = self.clock() - max(task.said_at, task.started) < self.interval * GAP
            if stepped and (task.done >= task.total or not recent):
                self._say(task)

    @staticmethod
    def _steps(task: _Task, done: int) -> int:
        """How many whole 5 % steps `done` is (the last step is reached only when all is done)."""
        return int(done / task.total / STEP + 1e-9) if task.total else 0

    def _say(self, task: _Task) -> None:
        now = self.clock()
        task.said, task.said_at = task.done, now
        self.write(task.line(now))

    def _tick(self) -> None:
        while not self.stopped.wait(self.interval / 4):
            with self.lock:
                now = self.clock()
                for task in self.tasks:
                    due = now - max(task.said_at, task.started) >= self.interval
                    if task.total and task.done < task.total and due:
                        self._say(task)
