"""A benchmark's items as trainer rows, prompted exactly as `harness eval` prompts them."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.types import Item, messages_for
from trainers.config import TrainConfig


def item_rows(items: Sequence[Item], template: str, system_prompt: str | None = None) -> list[dict[str, Any]]:
    """Trainer rows (`prompt` messages, `answer`, `id`), prompted exactly as `harness eval` prompts."""
    return [
        {"id": item.id, "answer": item.answer, "prompt": list(messages_for(item, template, system_prompt))}
        for item in items
    ]


def dataset_rows(config: TrainConfig) -> tuple[list[dict[str, Any]], str]:
    """The dataset's items as trainer rows, asked as `harness eval` asks them (the benchmark's prompt and
    system prompt unless the config sets its own), and the reward's scorer."""
    from benchmarks import get_benchmark

    spec = config.dataset
    if spec.endswith(".jsonl") and not spec.startswith("jsonl:"):
        spec = f"jsonl:{spec}"
    bench = get_benchmark(spec, config.scorer)
    items = bench.load(Path(config.data_dir) if config.data_dir else None).items[: config.limit]
    if not items:
        raise HarnessError(f"dataset {config.dataset!r} has no items")
    system = bench.system_prompt if config.system_prompt is None else config.system_prompt
    rows = item_rows(items, config.prompt_template or bench.prompt, system)
    return rows, config.scorer or bench.scorer


class RowOrder:
    """A method's own walk through the dataset rows, for prompts it draws beyond TRL's batch (UloRL's
    admissions, SPAE's refills): epoch e is shuffled from seed + e (kept in order with `shuffle=False`),
    and each of P processes takes every P-th row. Position k always names the same row, so a resume that
    restores how many rows were drawn continues the same walk."""

    def __init__(
        self,
        rows: Sequence[dict[str, Any]],
        seed: int,
        shuffle: bool = True,
        rank: int = 0,
        processes: int = 1,
    ):
        if not rows:
            raise HarnessError("no dataset rows to draw prompts from")
        self.rows, self.seed, self.shuffle = list(rows), seed, shuffle
        self.rank, self.processes = rank, processes
        self._orders: dict[int, list[int]] = {}

    @classmethod
    def from_config(cls, config: TrainConfig, seed_offset: int = 0) -> RowOrder:
        """The run's dataset rows in this process's walk, seeded by the run's seed + `seed_offset`."""
        from accelerate import PartialState

        state = PartialState()
        shuffle = config.trl.get("shuffle_dataset", True)
        rows = dataset_rows(config)[0]
        return cls(rows, config.seed + seed_offset, shuffle, state.process_index, state.num_processes)

    def __getitem__(self, position: int) -> dict[str, Any]:
        index = position * self.processes + self.rank
        epoch, offset = divmod(index, len(self.rows))
        if epoch not in self._orders:
            order = list(range(len(self.rows)))
            if self.shuffle:
                random.Random(self.seed + epoch).shuffle(order)
            self._orders = {epoch: order}
        return self.rows[self._orders[epoch][offset]]
