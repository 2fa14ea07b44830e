"""Prompts, engine options and `harness eval` runs shared by the real-engine tests."""

from pathlib import Path

PROMPTS = [
    "What is 2 + 2?",
    "Find the area of a triangle with sides 3, 4 and 5.",
    "Let x be real. Solve x^2 = 9.",
    "How many primes are there below 100?",
    "Compute 17 * 23.",
    "A fair coin is tossed 3 times. What is the probability of exactly two heads?",
]
VLLM_OPTIONS = ("--dtype", "float32", "--enforce-eager", "--gpu-memory-utilization", "0.2")
FILES = ("generations.jsonl", "scores.jsonl", "results.json")


def eval_args(model: Path, data: Path, out: Path, *backend: str) -> list[str]:
    return [
        "eval", "--benchmarks", "aime24", "--limit", "6", "--n", "3", "--max-tokens", "40", "--seed", "3",
        "--model", str(model), "--data-dir", str(data), "--out", str(out), *backend,
    ]  # fmt: skip


def same_files(a: Path, b: Path) -> None:
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
