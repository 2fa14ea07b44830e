"""Sanity check of the math scorer on real benchmark text: every gold answer, boxed, must be judged
right, and so must MATH-500's reference solutions (long LaTeX with the answer boxed inside).

    python scripts/check_scorer_on_references.py ../shared/data
"""

import sys
import time
from pathlib import Path

from benchmarks import BENCHMARKS
from harness.core.data import read_rows
from harness.scoring.math import MathScorer


def cases(data_dir: Path) -> list[tuple[str, str, str]]:
    found = []
    for name in ("math500", "olympiadbench", "minerva", "amc23", "aime24", "aime25"):
        for item in BENCHMARKS[name].load(data_dir).items:
            found.append(
                (f"{name}/{item.id} boxed gold", f"So the answer is $\\boxed{{{item.answer}}}$.", item.answer)
            )
    answers = {item.id: item.answer for item in BENCHMARKS["math500"].load(data_dir).items}
    for _, row in read_rows(data_dir / "math500" / "test.jsonl"):
        found.append((f"math500/{row['unique_id']} solution", row["solution"], answers[row["unique_id"]]))
    return found


def main() -> int:
    checks = cases(Path(sys.argv[1]))
    start = time.monotonic()
    scores = dict(MathScorer().score([c[1] for c in checks], [c[2] for c in checks]))
    wrong = [
        (checks[i][0], checks[i][2], s.extracted, s.details) for i, s in scores.items() if s.value != 1.0
    ]
    for case in wrong:
        print("judged wrong:", *case)
    print(f"{len(checks) - len(wrong)}/{len(checks)} judged right in {time.monotonic() - start:.0f}s")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
