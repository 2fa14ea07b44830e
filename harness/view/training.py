"""A `harness train` folder as the view reads it: the logged metrics as curves (`harness plot training`'s
data), samples.jsonl by step and role, and the evaluations in evals/step-N."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from harness.report.plotdata import checkpoint_step, training_series
from harness.view.files import folder_inside, inside, read_json, read_line, scan

METRICS, SAMPLES, CONFIG = "metrics.jsonl", "samples.jsonl", "train.json"
PREFERRED = ("reward", "loss", "completions/mean_length", "frac_reward_zero_std")  # curves shown first


def is_training_run(path: Path) -> bool:
    return any(inside(Path(path), name) for name in (CONFIG, METRICS))


def role(record: dict[str, Any]) -> str:
    """What a samples.jsonl record is: AZR's own role, else by the fields each method writes."""
    if isinstance(record.get("role"), str):
        return record["role"]  # AZR: propose, solve
    for field, name in (
        ("judge_replies", "judge replies"),  # Arena
        ("proposal", "question"),  # SPELL
        ("route", "routed group"),  # Arena
        ("released_at", "released group"),  # UloRL
        ("samples", "group"),  # SPAE
    ):
        if field in record:
            return name
    return "sample"


class TrainRun:
    kind = "train"

    def __init__(self, path: Path):
        self.path = Path(path).resolve()
        recorded = read_json(self.path, CONFIG)
        config = recorded.get("config") if isinstance(recorded, dict) else None
        self.config = config if isinstance(config, dict) else {}
        self.samples_file = inside(self.path, SAMPLES)
        self.steps: dict[int, list[tuple[int, int, str]]] = {}
        for offset, length, record in scan(self.samples_file):
            step = record.get("step")
            if isinstance(step, int):
                self.steps.setdefault(step, []).append((offset, length, role(record)))
        self.evals = sorted(
            (
                p
                for p in (self.path / "evals").glob("step-*")
                if folder_inside(self.path, p) and inside(p, "run.json")
            ),
            key=lambda p: checkpoint_step(p.name) or 0,
        )

    def keys(self) -> list[str]:
        """The numeric keys metrics.jsonl logs, in first-logged order."""
        keys: dict[str, None] = {}
        for _, _, record in scan(inside(self.path, METRICS)):
            keys.update((k, None) for k, v in record.items() if k != "step" and _number(v))
        return list(keys)

    def summary(self, eval_runs: list[int]) -> dict[str, Any]:
        keys = self.keys()
        shown = [k for k in PREFERRED if k in keys] or keys[:4]
        return {
            "kind": self.kind,
            "method": self.config.get("method"),
            "model": self.config.get("model"),
            "settings": {
                k: v for k, v in self.config.items() if v is not None and not isinstance(v, dict | list)
            },
            "options": self.config.get("options") or self.config.get("trl"),
            "keys": keys,
            "shown": shown,
            "steps": [
                {"step": s, "records": len(rows), "roles": sorted({r for _, _, r in rows})}
                for s, rows in sorted(self.steps.items())
            ],
            "evals": [
                {"step": checkpoint_step(p.name), "name": p.name, "run": r}
                for p, r in zip(self.evals, eval_runs, strict=True)
            ],
        }

    def curves(self) -> dict[str, list[list[float]]]:
        """Every logged key against the step (a resumed step's last line counts), as `plot training`."""
        if inside(self.path, METRICS) is None:
            return {}
        out = {}
        for key in self.keys():
            try:
                curve = training_series(self.path, key)
            except (TypeError, ValueError):  # a line where the key is not a number (null): not plotted
                continue
            out[key] = [
                [float(x), float(y)] for x, y in zip(curve.x, curve.y, strict=True) if math.isfinite(y)
            ]
        return out

    def step(self, step: int) -> dict[str, Any]:
        """The records samples.jsonl holds for one step, each with its role."""
        rows = self.steps[step]
        records = [{"role": r, "record": read_line(self.samples_file, o, n)} for o, n, r in rows]
        return {"step": step, "records": records}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and json.dumps(value) != "NaN"
