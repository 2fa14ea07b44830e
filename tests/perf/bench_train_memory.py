"""Peak memory per training process: every method's CPU config on a real model, stock against bounded.

For each method, `harness train METHOD --config configs/train/<its CPU config>` runs a few steps twice:

- stock: TRL's log-prob tiles and glibc's adaptive mmap threshold (`--set cpu_memory=stock`), with
  gradient checkpointing as the configs had it before (`--set trl.gradient_checkpointing=false` where
  they now turn it on);
- bounded: the config as shipped (trainers/integration/memory.py).

The peak is the largest resident set of any process the run started (`/usr/bin/time`'s maximum RSS:
with `--processes 2`, torchrun's largest rank). The cold start is left out (`--set cold_start=null`): it
is measured on its own with `--methods cold-spell,cold-azr` (one SFT epoch on 2 demonstrations per
role and task, in batches of 4 as the configs train, then one step of self-play).
Printed: one line per method and mode, then stock / bounded.

    python tests/perf/bench_train_memory.py --model models/smollm2 [--methods grpo,ulorl] [--steps 3]
        [--processes 2] [--modes bounded]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs" / "train"
SUMS = f"jsonl:{CONFIGS / 'ulorl-cpu-problems.jsonl'}"
NO_COLD_START = ["--set", "cold_start=null"]
SMALL_COLD_START = ["--set", "cold_start.examples=2", "--set", "cold_start.epochs=1"]
RUNS = {  # method: (harness train arguments, what the config turned on since the stock measurement)
    "grpo": (
        ["grpo", "--config", CONFIGS / "demo.yaml", "--dataset", SUMS],
        ["trl.gradient_checkpointing=false"],
    ),
    "spell": (["spell", "--config", CONFIGS / "spell-cpu.yaml", *NO_COLD_START], []),
    "azr": (["azr", "--config", CONFIGS / "azr-cpu.yaml", *NO_COLD_START], []),
    "arena": (["arena", "--config", CONFIGS / "arena-cpu.yaml"], ["trl.gradient_checkpointing=false"]),
    "ulorl": (["ulorl", "--config", CONFIGS / "ulorl-cpu.yaml"], ["trl.gradient_checkpointing=false"]),
    "spae": (["spae", "--config", CONFIGS / "spae-cpu.yaml"], ["trl.gradient_checkpointing=false"]),
    "cold-spell": (["spell", "--config", CONFIGS / "spell-cpu.yaml", *SMALL_COLD_START], []),
    "cold-azr": (["azr", "--config", CONFIGS / "azr-cpu.yaml", *SMALL_COLD_START], []),
}


def command(method: str, mode: str, model: str, steps: int, processes: int, out: Path) -> list[str]:
    arguments, before = RUNS[method]
    settings = (
        ["--set", "cpu_memory=stock", *(a for s in before for a in ("--set", s))] if mode == "stock" else []
    )
    steps_flags = ["--max-steps", "1" if method.startswith("cold-") else str(steps), "--save-steps", "1000"]
    harness = [*map(str, arguments), "--model", model, "--out", str(out), *steps_flags, *settings]
    if processes == 1:
        return [sys.executable, "-m", "harness", "train", *harness]
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node"]
    launcher = [*torchrun, str(processes), "-m", "harness", "train"]
    return [*launcher, *harness, "--num-processes", str(processes)]


def peak_gib(argv: list[str], log: Path) -> float:
    """Run `argv` under /usr/bin/time; its largest process's peak resident set, GiB."""
    with log.open("w") as f:
        done = subprocess.run(["/usr/bin/time", "-v", *argv], stdout=f, stderr=subprocess.STDOUT, cwd=ROOT)
    text = log.read_text()
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed; its log: {log}\n{text[-2000:]}")
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--methods", default="grpo,spell,azr,arena,ulorl,spae")
    parser.add_argument("--modes", default="stock,bounded")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--logs", type=Path, default=None, help="keep each run's log here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        logs = args.logs or Path(tmp)
        logs.mkdir(parents=True, exist_ok=True)
        for method in args.methods.split(","):
            peaks = {}
            for mode in args.modes.split(","):
                out = Path(tmp) / f"{method}-{mode}"
                argv = command(method, mode, args.model, args.steps, args.processes, out)
                peaks[mode] = peak_gib(argv, logs / f"{method}-{mode}-{args.processes}p.log")
                print(
                    f"{method:10s} {mode:8s} {args.processes} process(es): peak {peaks[mode]:.2f} GiB",
                    flush=True,
                )
            if len(peaks) == 2:
                print(f"{method:10s} stock / bounded: {peaks['stock'] / peaks['bounded']:.2f}x", flush=True)


if __name__ == "__main__":
    main()
