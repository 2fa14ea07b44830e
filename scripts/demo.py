"""The offline demo (`tox -e demo`): evaluate, train with GRPO, evaluate again, gate, tabulate, plot.

Every step is a `harness` command, printed before it runs, so the demo doubles as a tutorial:

1. build the tiny random model (no network) and generate single-digit sums to train and test on;
2. `harness eval` the model on the test sums (4 samples each);
3. `harness train grpo` for 60 steps on the CPU, evaluating steps 0, 20, 40 and 60 on the way;
4. `harness eval` the last checkpoint exactly like the model in step 2;
5. `harness regress` the checkpoint against the model: the gain must be significant;
6. `harness table` of both runs and `harness plot trajectory` of the training run.

    python scripts/demo.py [--out demo]

The sums use operands 0..4, so there are only 25 distinct problems and the train and test files share
them: this shows the loop working end to end, not generalisation.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLING = ["--n", "4", "--temperature", "1.0", "--max-tokens", "8", "--seed", "0"]


def run(*args: object, check: bool = True) -> int:
    command = [str(a) for a in args]
    print(f"\n$ {shlex.join(command)}", flush=True)
    code = subprocess.run(command).returncode
    if check and code != 0:
        sys.exit(f"demo: the command above failed with exit code {code}")
    return code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("demo"))
    out = parser.parse_args().out.resolve()
    started = time.monotonic()
    harness = [sys.executable, "-m", "harness"]
    model, train_file, test_file = (
        out / "model",
        out / "data" / "sums-train.jsonl",
        out / "data" / "sums.jsonl",
    )
    test = f"jsonl:{test_file}"

    run(*harness, "tiny-model", model, "--no-thinking")
    run(sys.executable, "-m", "benchmarks.arithmetic", train_file, "--n", "2000", "--seed", "1")
    run(sys.executable, "-m", "benchmarks.arithmetic", test_file, "--n", "200", "--seed", "0")
    run(*harness, "eval", "--benchmarks", test, "--model", model, *SAMPLING, "--out", out / "eval-base")
    run(
        *harness, "train", "grpo", "--config", REPO / "configs" / "train" / "demo.yaml",
        "--model", model, "--dataset", train_file, "--out", out / "train", "--eval-benchmarks", test,
    )  # fmt: skip
    checkpoint = out / "train" / "checkpoint-60"
    run(
        *harness,
        "eval",
        "--benchmarks",
        test,
        "--model",
        checkpoint,
        *SAMPLING,
        "--out",
        out / "eval-trained",
    )
    report = out / "regress.json"
    code = run(*harness, "regress", out / "eval-base", out / "eval-trained", "--json", report, check=False)
    run(*harness, "table", out / "eval-base", out / "eval-trained")
    run(*harness, "plot", "trajectory", out / "train", "--out", out / "trajectory")

    (comparison,) = json.loads(report.read_text())["comparisons"]
    gained = comparison["delta"] > 0 and comparison["p_holm"] < 0.05
    print(
        f"\ndemo: avg@4 {comparison['base']:.1%} -> {comparison['candidate']:.1%} "
        f"(delta {comparison['delta']:+.1%}, "
        f"95% CI {comparison['ci95'][0]:+.1%}..{comparison['ci95'][1]:+.1%}, "
        f"p={comparison['p_holm']:.2g}); regress exit code {code}; "
        f"{time.monotonic() - started:.0f} s; outputs in {out}"
    )
    if code != 0 or not gained:
        sys.exit("demo: training did not give a significant gain")


if __name__ == "__main__":
    main()
