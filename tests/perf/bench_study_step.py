"""A study's training step under different settings, on a real model: float32, bf16 autocast (`harness
study run --bf16`), each with or without gradient checkpointing.

Writes the study's arm configs from the base model (`harness study run NAME --dry-run`), then runs
`harness train` on one arm for a few steps under each variant, in turn, on one thread each (as a study
runs two arms at once on this 2-core machine). A step's time is TRL's `step_time`; the first step of
each run is left out (it loads and warms up). Printed: the mean step time per variant, its ratio to the
first variant's, and how far each run's per-step reward, gradient norm and entropy are from the first
run's (the same samples give the same reward; gradient checkpointing only recomputes, so it should change
nothing but the time).

    python tests/perf/bench_study_step.py --model models/smollm2 [--study arena] [--arm grpo]
        [--steps 4] [--repeats 1] [--variants float32 bf16 bf16-no-checkpointing]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

VARIANTS = {
    "float32": [],
    "bf16": ["--set", "trl.bf16=true"],
    "bf16-no-checkpointing": ["--set", "trl.bf16=true", "--set", "trl.gradient_checkpointing=false"],
    "float32-no-checkpointing": ["--set", "trl.gradient_checkpointing=false"],
}


def harness(*args: object) -> None:
    env = dict(os.environ, HARNESS_THREADS="1")
    command = [sys.executable, "-m", "harness", *map(str, args)]
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def steps(run: Path) -> list[dict]:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [r for r in rows if "step_time" in r]


def largest_gap(rows: list[dict], first: list[dict], key: str) -> float:
    return max(abs(a.get(key, 0.0) - b.get(key, 0.0)) for a, b in zip(rows, first, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--study", default="arena")
    parser.add_argument("--arm", default="grpo")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=["float32", "bf16"])
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in args.variants}
    with tempfile.TemporaryDirectory() as tmp:
        study = Path(tmp) / "study"
        harness("study", "run", args.study, "--model", args.model, "--out", study, "--dry-run")
        config = study / "configs" / f"{args.arm}.yaml"
        method = yaml.safe_load(config.read_text())["method"]
        for repeat in range(args.repeats):
            first: list[dict] = []
            for name in args.variants:
                run = Path(tmp) / f"{name}-{repeat}"
                limit = ["--set", f"max_steps={args.steps}", "--set", f"save_steps={args.steps}"]
                harness("train", method, "--config", config, *limit, *VARIANTS[name], "--out", run)
                rows = steps(run)
                times[name] += [r["step_time"] for r in rows if r["step"] > 1]
                first = first or rows
                gaps = {key: largest_gap(rows, first, key) for key in ("reward", "grad_norm", "entropy")}
                print(f"repeat {repeat} {name}: largest gap to {args.variants[0]}: {gaps}", flush=True)
    base = statistics.mean(times[args.variants[0]])
    for name, seconds in times.items():
        mean = statistics.mean(seconds)
        ratio = f"{base / mean:.2f}x the speed of {args.variants[0]}"
        print(f"{args.study} {args.arm} {name}: {mean:.1f} s a step ({len(seconds)} steps), {ratio}")


if __name__ == "__main__":
    main()
