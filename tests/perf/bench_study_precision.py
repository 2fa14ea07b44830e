"""A study's training step in float32 against bf16 autocast (`harness study run --bf16`), on a real model.

Writes the study's arm configs from the base model (`harness study run NAME --dry-run`), then runs
`harness train` on one arm for a few steps in each precision, alternating, on one thread each (as a study
runs two arms at once on this 2-core machine). A step's time is TRL's `step_time`; the first step of
each run is left out (it loads and warms up). Printed: the mean step time per precision and the ratio.

    python tests/perf/bench_study_precision.py --model models/smollm2 [--study arena] [--arm grpo]
        [--steps 4] [--repeats 1]
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

PRECISIONS = {"float32": [], "bf16": ["--set", "trl.bf16=true"]}


def harness(*args: object, threads: int = 1) -> None:
    env = dict(os.environ, HARNESS_THREADS=str(threads))
    command = [sys.executable, "-m", "harness", *map(str, args)]
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def step_times(run: Path) -> list[float]:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [r["step_time"] for r in rows if "step_time" in r and r["step"] > 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--study", default="arena")
    parser.add_argument("--arm", default="grpo")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        study = Path(tmp) / "study"
        harness("study", "run", args.study, "--model", args.model, "--out", study, "--dry-run")
        config = study / "configs" / f"{args.arm}.yaml"
        method = yaml.safe_load(config.read_text())["method"]
        times: dict[str, list[float]] = {name: [] for name in PRECISIONS}
        for repeat in range(args.repeats):
            for name, extra in PRECISIONS.items():
                run = Path(tmp) / f"{name}-{repeat}"
                steps = ["--set", f"max_steps={args.steps}", "--set", f"save_steps={args.steps}"]
                harness("train", method, "--config", config, *steps, *extra, "--out", run)
                times[name] += step_times(run)
    for name, seconds in times.items():
        print(
            f"{args.study} {args.arm} {name}: {statistics.mean(seconds):.1f} s a step ({len(seconds)} steps)"
        )
    print(f"float32 / bf16: {statistics.mean(times['float32']) / statistics.mean(times['bf16']):.2f}x")


if __name__ == "__main__":
    main()
