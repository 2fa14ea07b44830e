"""Helpers for trainer tests: arithmetic rows, small CPU arguments, a trainer with a scripted engine, the
segment that decoded each token, and `harness train` invoked in-process."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import torch
from typer.testing import CliRunner

from benchmarks.arithmetic import arithmetic_rows
from benchmarks.base import MATH_PROMPT
from harness.cli import app
from harness.core.types import Item
from trainers.data import item_rows


def arithmetic_dataset_rows(n: int = 200, seed: int = 1) -> list[dict]:
    """Trainer rows (prompt messages, answer, id) of generated single-digit sums."""
    return item_rows([Item(**r) for r in arithmetic_rows(n, seed=seed)], MATH_PROMPT)


def cpu_args(out: Path, **overrides):
    """A small, fast `GRPOConfig` for the CPU (TRL's defaults assume a GPU)."""
    from trl import GRPOConfig

    settings = dict(
        output_dir=str(out),
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
        disable_tqdm=True,
        per_device_train_batch_size=8,
        num_generations=4,
        max_completion_length=8,
        max_steps=2,
        learning_rate=1e-2,
        loss_type="grpo",
        seed=0,
    )
    return GRPOConfig(**(settings | overrides))


def scripted_trainer(method, model: Path, out: Path, rows: list[dict], engine: type, **args):
    """A `MethodGRPOTrainer` of `method` on `rows` whose engine is `engine(trainer)` (scripted replies)."""
    from datasets import Dataset

    from trainers.integration.trainer import MethodGRPOTrainer

    trainer = MethodGRPOTrainer(
        model=str(model), args=cpu_args(out, **args), train_dataset=Dataset.from_list(rows), method=method
    )
    trainer.engine = engine(trainer)
    return trainer


def segment_index(segment_lengths: Sequence[Sequence[int]], width: int) -> torch.Tensor:
    """(N, T) long: the segment that decoded each token (UloRL's f(t), its paper's Eq. 8); -1 on padding."""
    index = torch.full((len(segment_lengths), width), -1, dtype=torch.long)
    for row, lengths in enumerate(segment_lengths):
        ids = torch.repeat_interleave(torch.arange(len(lengths)), torch.as_tensor(lengths, dtype=torch.long))
        index[row, : len(ids)] = ids
    return index


runner = CliRunner()


def invoke(*args: str):
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def dry_run(method: str, config: Path, tmp_path: Path, *extra: str) -> dict:
    """`harness train METHOD --dry-run` of a config file: what it prints, parsed; nothing written."""
    result = invoke(
        "train", method, "--dry-run", "--config", config, "--model", "m", "--out", tmp_path / "o", *extra
    )
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "o").exists()
    return json.loads(result.stdout[result.stdout.index("{") :])  # the notes after it go to stderr
