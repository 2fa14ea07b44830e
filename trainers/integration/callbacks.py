"""Trainer callbacks of `harness train`: metrics.jsonl, a checkpoint at the last step, evaluations."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from harness import HarnessError
from harness.core.io.read import Unfit, loads
from harness.core.io.write import OutDir, append_file
from harness.core.progress import duration, log_interval
from harness.core.store import RESULTS, RunDir, atomic_write, read_file


class MetricsJsonlCallback(TrainerCallback):
    """Appends every log (`{"step": N, ...}`) to a JSONL file, flushed as it is written.

    On resume from step K, lines after K (logged after the checkpoint being resumed) are dropped, so
    the file reads like one uninterrupted run.
    """

    def __init__(self, path: Path, resumed_at: int = 0):
        self.path = Path(path)
        self.resumed_at = resumed_at

    def on_train_begin(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        kept = [line for line in read_jsonl(self.path) if line.get("step", 0) <= self.resumed_at]
        atomic_write(self.path, "".join(json.dumps(line) + "\n" for line in kept))

    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_world_process_zero and logs:
            self.append({"step": state.global_step, **logs})

    def append(self, record: dict[str, Any]) -> None:
        append_file(self.path, json.dumps(record) + "\n")


class SamplesJsonlCallback(MetricsJsonlCallback):
    """Appends the method's readable samples of each step (`Method.take_samples`, process 0's) to a
    JSONL file as `{"step": N, ...}`, dropping lines after the resumed checkpoint as metrics.jsonl does."""

    def __init__(self, path: Path, method: Any, resumed_at: int = 0):
        super().__init__(path, resumed_at)
        self.method = method

    def on_train_begin(self, args, state, control, **kwargs):
        if self.path.is_file():  # a method without samples leaves no file
            super().on_train_begin(args, state, control, **kwargs)

    def on_log(self, args, state, control, logs=None, **kwargs):
        pass

    def on_step_end(self, args, state, control, **kwargs):
        samples = self.method.take_samples()
        if state.is_world_process_zero:
            for sample in samples:
                self.append({"step": state.global_step, **sample})


class FinalCheckpointCallback(TrainerCallback):
    """Saves a checkpoint at the last step even when it is not a multiple of save_steps."""

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= state.max_steps:
            control.should_save = True


class StepLineCallback(TrainerCallback):
    """Prints one line at every `every`-th step, the last, and any step that ends `interval` seconds or
    more after the previous line (HARNESS_PROGRESS_SECONDS, 30 s), in place of TRL's metric dicts: the
    mean reward, the share of groups with no reward spread (nothing to learn), completion length, speed
    and the time left."""

    def __init__(self, every: int, interval: float | None = None):
        self.every = every
        self.interval = log_interval() if interval is None else interval
        self.started, self.first_step = time.monotonic(), 0
        self.said_at = self.started

    def on_train_begin(self, args, state, control, **kwargs):
        self.started, self.first_step = time.monotonic(), state.global_step
        self.said_at = self.started

    def on_log(self, args, state, control, logs=None, **kwargs):
        step = state.global_step
        if not state.is_world_process_zero or not logs or "reward" not in logs:
            return
        now = time.monotonic()
        if step % self.every and step < state.max_steps and now - self.said_at < self.interval:
            return
        self.said_at = now
        seconds = (now - self.started) / max(1, step - self.first_step)
        parts = [f"reward {logs['reward']:.3f}"]
        if "frac_reward_zero_std" in logs:  # a method that logs no groups' spread (AZR) says nothing of it
            parts.append(f"groups without spread {logs['frac_reward_zero_std']:.0%}")
        if "completions/mean_length" in logs:
            parts.append(f"completion tokens {logs['completions/mean_length']:.1f}")
        parts.append(f"{seconds:.1f} s/step")
        if step < state.max_steps:
            parts.append(f"ETA {duration(seconds * (state.max_steps - step))}")
        print(f"step {step}/{state.max_steps}: {', '.join(parts)}", flush=True)


class EvalEveryCallback(TrainerCallback):
    """Evaluates the initial model into OUT/evals/step-0, then each saved checkpoint at a multiple of
    `eval_every` (and the last one) into OUT/evals/step-N, and records the results in metrics.jsonl.
    A failed evaluation is recorded, and training goes on."""

    def __init__(self, config: Any, evaluate: Callable[[Any, str, Path], None], initial: str | None = None):
        self.config = config
        self.evaluate = evaluate
        self.initial = initial or config.model  # the model step 0 trains: the cold start's, if any
        self.metrics = MetricsJsonlCallback(Path(config.out) / "metrics.jsonl")

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero and state.global_step == 0:
            self._evaluate(0, self.initial)

    def on_save(self, args, state, control, **kwargs):
        step = state.global_step
        if not state.is_world_process_zero or (step % self.config.eval_every and step < state.max_steps):
            return
        self._evaluate(step, str(Path(self.config.out) / f"checkpoint-{step}"))

    def _evaluate(self, step: int, model: str) -> None:
        run_dir = Path(self.config.out) / "evals" / f"step-{step}"
        try:
            with OutDir.open(Path(self.config.out)) as out, out.folder("evals") as evals:
                evals.folder(run_dir.name).close()  # made here, so that no link on the way is followed
            self.evaluate(self.config, model, run_dir)
        except HarnessError as e:
            print(f"warning: {e}", flush=True)
            self.metrics.append({"step": step, "eval_error": str(e)})
            return
        results = RunDir(run_dir).read_json(RESULTS)
        self.metrics.append({"step": step, "eval": results})


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSONL file this trainer appends to; a torn last line (a kill mid-write) is
    dropped, and any other line that is not a JSON object is a one-line error naming it."""
    path = Path(path)
    if not os.path.lexists(path):
        return []
    data = read_file(path)
    records = []
    for number, line in enumerate(data[: data.rfind(b"\n") + 1].splitlines(), start=1):
        try:
            record = loads(line) if line.strip() else {}
        except Unfit:
            record = None
        step = record.get("step", 0) if isinstance(record, dict) else None
        if not isinstance(step, int) or isinstance(step, bool):
            raise HarnessError(
                f"{path}:{number}: not a record of a step; delete the line, or use another --out"
            )
        if record:
            records.append(record)
    return records
