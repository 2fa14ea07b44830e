"""`cold_start:` in a training config: how many demonstrations, and how SFTTrainer trains on them."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from harness import HarnessError
from harness.core.settings import check, setting


@dataclass(frozen=True)
class ColdStartOptions:
    """Off unless the config sets `cold_start:` (a mapping, `{}` for these defaults)."""

    examples: int = setting(64, "Demonstrations per (role, task), before the contamination check.", minimum=1)
    epochs: float = setting(2.0, "SFTTrainer's epochs over the demonstrations.", exclusive_minimum=0)
    learning_rate: float = setting(5e-5, "SFTTrainer's learning rate (cosine schedule).", exclusive_minimum=0)
    batch_size: int = setting(4, "Demonstrations per batch and process.", minimum=1)
    decontaminate: tuple[str, ...] = setting(
        (),
        "Evaluation sets the demonstrations are checked against, besides the run's eval_benchmarks and the "
        "method's own (e.g. jsonl:PATH, or cruxeval with --data-dir).",
    )

    def __post_init__(self) -> None:
        check(type(self), vars(self), name=lambda f: f"cold_start.{f}")

    @classmethod
    def from_mapping(cls, values: Any) -> ColdStartOptions:
        if not isinstance(values, dict):
            raise HarnessError(
                f"cold_start must be a mapping of settings ({{}} for the defaults), got {values!r}"
            )
        valid = [f.name for f in fields(cls)]
        unknown = sorted(set(values) - set(valid))
        if unknown:
            raise HarnessError(f"unknown cold_start settings {unknown}; valid: {', '.join(valid)}")
        values = dict(values)
        if isinstance(values.get("decontaminate"), str):
            values["decontaminate"] = tuple(v for v in values["decontaminate"].split(",") if v)
        elif "decontaminate" in values:
            values["decontaminate"] = tuple(values["decontaminate"])
        return cls(**values)
