"""Generated arithmetic: toy verifiable tasks for the offline demo and the learning tests.

`arithmetic_rows` makes single-digit sums for the trainer tests. `sum_split` makes the demo's task:
"Add a and b. Answer with the number only." for every unordered pair of operands in [0, max_operand],
split into train and test files that share no pair (neither "a + b" nor "b + a").

    python -m benchmarks.arithmetic split TRAIN.jsonl TEST.jsonl --max-operand 30 --test 100 --seed 0
    python -m benchmarks.arithmetic sums OUT.jsonl --n 200 --seed 0 [--max-operand 4]

Lines hold `id`, `problem`, `answer`, read back as `--benchmarks jsonl:OUT.jsonl --scorer integer`.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

QUESTION = "Add {a} and {b}. Answer with the number only."


def arithmetic_rows(n: int, seed: int = 0, max_operand: int = 4) -> list[dict[str, str]]:
    """`n` distinct-id problems "a + b = ?" with their answers, the same for the same seed."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        a, b = rng.randint(0, max_operand), rng.randint(0, max_operand)
        rows.append({"id": f"add-{seed}-{i}", "problem": f"{a} + {b} = ?", "answer": str(a + b)})
    return rows


def sum_row(a: int, b: int) -> dict[str, str]:
    """One question of the demo's task, with its id naming the operands."""
    return {"id": f"sum-{a}-{b}", "problem": QUESTION.format(a=a, b=b), "answer": str(a + b)}


def sum_split(max_operand: int, test_size: int, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """(train, test): every unordered pair in [0, max_operand] once, shuffled by `seed`, the first
    `test_size` pairs to test and the rest to train; each pair's operand order is drawn by the seed."""
    rng = random.Random(seed)
    pairs = [(a, b) for a in range(max_operand + 1) for b in range(a, max_operand + 1)]
    if not 0 < test_size < len(pairs):
        raise ValueError(f"test size must be in 1..{len(pairs) - 1} for operands 0..{max_operand}")
    rng.shuffle(pairs)
    rows = [sum_row(*(pair if rng.random() < 0.5 else pair[::-1])) for pair in pairs]
    return rows[test_size:], rows[:test_size]


def operand_pairs(rows: list[dict[str, str]]) -> set[frozenset[int]]:
    """The unordered operand pairs of `sum_row` rows (read back from their ids)."""
    return {frozenset(int(x) for x in row["id"].split("-")[1:]) for row in rows}


def check_disjoint(train: list[dict[str, str]], test: list[dict[str, str]]) -> None:
    """Raise when a test sum (in either operand order) is also a training sum."""
    shared = operand_pairs(train) & operand_pairs(test)
    if shared:
        raise ValueError(f"{len(shared)} sums are in both train and test, e.g. {sorted(next(iter(shared)))}")


def read_jsonl(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict[str, str]]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    split = commands.add_parser("split", help="the demo's disjoint train and test files")
    split.add_argument("train", type=Path)
    split.add_argument("test", type=Path)
    split.add_argument("--max-operand", type=int, default=30)
    split.add_argument("--test", type=int, default=100, dest="test_size")
    split.add_argument("--seed", type=int, default=0)
    sums = commands.add_parser("sums", help="single-digit sums (repeats allowed)")
    sums.add_argument("out", type=Path)
    sums.add_argument("--n", type=int, default=200)
    sums.add_argument("--seed", type=int, default=0)
    sums.add_argument("--max-operand", type=int, default=4)
    args = parser.parse_args()
    if args.command == "sums":
        write_jsonl(args.out, arithmetic_rows(args.n, args.seed, args.max_operand))
        return
    train, test = sum_split(args.max_operand, args.test_size, args.seed)
    check_disjoint(train, test)
    write_jsonl(args.train, train)
    write_jsonl(args.test, test)
    print(f"{len(train)} training sums and {len(test)} test sums of operands 0..{args.max_operand}, disjoint")


if __name__ == "__main__":
    main()
