"""Generated arithmetic: a toy verifiable task for the offline demo and the learning tests.

`python -m benchmarks.arithmetic OUT.jsonl --n 200 --seed 0` writes `id`, `problem`, `answer` lines,
read back as `--benchmarks jsonl:OUT.jsonl` (scorer math). Sums of two operands in [0, max_operand]:
with the default 4, every answer is one digit, so even a random tiny model is sometimes right and
GRPO has a signal to learn from.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path


def arithmetic_rows(n: int, seed: int = 0, max_operand: int = 4) -> list[dict[str, str]]:
    """`n` distinct-id problems "a + b = ?" with their answers, the same for the same seed."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        a, b = rng.randint(0, max_operand), rng.randint(0, max_operand)
        rows.append({"id": f"add-{seed}-{i}", "problem": f"{a} + {b} = ?", "answer": str(a + b)})
    return rows


def write_jsonl(path: Path, rows: list[dict[str, str]]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-operand", type=int, default=4)
    args = parser.parse_args()
    write_jsonl(args.out, arithmetic_rows(args.n, args.seed, args.max_operand))


if __name__ == "__main__":
    main()
