"""UloRL benchmark: segment rollout against whole rollouts, in one process (UloRL's Algorithm 1, Table 1).

The same model, prompts and training settings through `harness train ulorl` twice: with the output budget
L decoded in S segments, one per optimizer step (`options.segments: S`), and whole (`segments: 1`, TOIS:
every step waits for its longest sample). The prompts give a long-tailed length mix, as a real model
writes it: most ask for a number only (a few tokens), one in `--long-every` asks for a story (it runs to
the cap). Every complete group trains (no dynamic sampling: the measure is the pipeline, not the reward).

Printed per mode: trained completion tokens per second of step time (generation and training; the
per-step `step_time` TRL logs), over all steps and over the steps after the first S (the pipeline full),
the engine's idle fraction (rows of a batched `generate` call that already stopped, times the decode
steps they wait for the call's longest row), and the ratio segment / whole (goal >= 1.5).

    python tests/perf/bench_ulorl.py [--model DIR] [--steps 10] [--segments 4] [--max-tokens 128]

On this CPU the engine is transformers' `generate`: a continued segment re-encodes its prefix (vLLM's
prefix cache on a GPU does not), and a finished row still costs compute until its call ends. What the CPU
shows is the step-time effect of not waiting for the tail; the GPU's throughput effect (few long rows
leave the accelerator under-used) needs a GPU run (README, "UloRL").
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from pathlib import Path

from trainers.config import TrainConfig
from trainers.integration.callbacks import read_jsonl
from trainers.integration.run import train

TOPICS = ("a dragon", "the sea", "a lost key", "a robot", "winter", "a market", "a bridge", "two friends")


def mix(n: int, long_every: int, seed: int = 0) -> list[dict[str, str]]:
    """`n` prompts: a story for one in `long_every` (long), a one-digit sum "number only" for the rest."""
    rng = random.Random(seed)
    rows = []
    for k in range(n):
        if k % long_every == long_every - 1:
            topic = TOPICS[k // long_every % len(TOPICS)]
            rows.append({"id": f"story-{k}", "problem": f"Write a long story about {topic}.", "answer": "0"})
        else:
            a, b = rng.randint(1, 9), rng.randint(1, 9)
            problem = f"What is {a} + {b}? Answer with the number only."
            rows.append({"id": f"sum-{k}", "problem": problem, "answer": str(a + b)})
    return rows


def run(model: str, data: Path, out: Path, segments: int, args: argparse.Namespace) -> dict[str, float]:
    """Train `args.steps` steps with `segments` segments; per-step numbers from OUT/metrics.jsonl."""
    options = {
        "segments": segments,
        "importance_sampling": "pois" if segments > 1 else "tois",
        "groups_in_flight": args.in_flight if segments > 1 else args.groups,
        "dynamic_sampling": False,
        "logged_groups": 0,
    }
    config = TrainConfig(
        method="ulorl",
        model=model,
        dataset=f"jsonl:{data}",
        out=str(out),
        scorer="integer",
        prompt_template="{problem}",
        prompts_per_step=args.groups,
        num_generations=args.group_size,
        max_completion_length=args.max_tokens,
        temperature=0.85,
        learning_rate=1e-6,
        loss_type="dapo",
        max_steps=args.steps,
        save_steps=args.steps,
        report_to=(),
        seed=args.seed,
        options=options,
    )
    train(config)
    steps = [m for m in read_jsonl(out / "metrics.jsonl") if "step_time" in m]
    skip = segments if segments > 1 else 0
    return {
        "all": _rate(steps),
        "full": _rate(steps[skip:]),
        "idle": _idle(steps),
        "seconds": sum(m["step_time"] for m in steps),
        "tokens": sum(m["ulorl/trained_tokens"] for m in steps),
        "truncated": _truncated(steps),
    }


def _rate(steps: list[dict]) -> float:
    return sum(m["ulorl/trained_tokens"] for m in steps) / sum(m["step_time"] for m in steps)


def _truncated(steps: list[dict]) -> float:
    """The share of trained samples that hit the cap (reward 0)."""
    released = [
        (m["ulorl/trained_truncation_rate"], m["ulorl/released_groups"])
        for m in steps
        if m["ulorl/released_groups"]
    ]
    return sum(rate * n for rate, n in released) / max(1, sum(n for _, n in released))


def _idle(steps: list[dict]) -> float:
    """The idle fraction over all calls: 1 - decoded tokens / slot-steps (each step's from its fraction)."""
    tokens = sum(m["ulorl/decoded_tokens"] for m in steps)
    slots = sum(m["ulorl/decoded_tokens"] / (1 - m["ulorl/engine/idle_fraction"]) for m in steps)
    return 1 - tokens / slots if slots else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="models/smollm2", help="a local model folder (SmolLM2 by default)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--segments", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--groups", type=int, default=4, help="groups trained per step")
    parser.add_argument("--in-flight", type=int, default=8, help="groups in flight under segment rollout")
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--long-every", type=int, default=8, help="one prompt in this many asks for a story")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "mix.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in mix(64, args.long_every, args.seed)))
        whole = run(args.model, data, Path(tmp) / "whole", 1, args)
        segment = run(args.model, data, Path(tmp) / "segment", args.segments, args)
    print(
        f"{args.steps} steps, {args.groups} groups x {args.group_size} trained per step, "
        f"L = {args.max_tokens} tokens"
    )
    print(f"{'mode':<22}{'tokens/s':>10}{'full':>10}{'idle':>8}{'tokens':>9}{'seconds':>9}{'trunc':>7}")
    for name, r in (
        ("whole (1 segment)", whole),
        (f"segment ({args.segments} x {args.max_tokens // args.segments})", segment),
    ):
        print(
            f"{name:<22}{r['all']:>10.1f}{r['full']:>10.1f}{r['idle']:>8.1%}{r['tokens']:>9.0f}"
            f"{r['seconds']:>9.1f}{r['truncated']:>7.1%}"
        )
    print(
        f"ratio segment / whole: {segment['all'] / whole['all']:.2f}x over all steps, "
        f"{segment['full'] / whole['full']:.2f}x once the pipeline is full (goal >= 1.5)"
    )


if __name__ == "__main__":
    main()
