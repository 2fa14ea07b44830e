"""Held-out document questions for SPELL's CPU runs, on financial reports that no training cluster holds.

    python scripts/spell_heldout.py --out DIR [--reports 12] [--seed 1]

Writes DIR/heldout-qa.jsonl (score with cem), DIR/heldout-math.jsonl (numeric) and DIR/heldout-mc.jsonl
(choice), in the harness's custom-benchmark format, one item per report and task; each problem is the
responder's prompt for that task (documents, then the question). The reports are generated like the
shipped corpus's (`corpus/synthetic.py`) but for fiscal years 2031-2038, so no training document holds
their numbers; the questions are built by the cold start's builders (`spell/coldstart.py`), so they
have the forms the cold start teaches, on documents neither it nor the questioner ever saw. Evaluate
with `--prompt-template '{problem}'` (the problem is the whole prompt).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from trainers.methods.spell import prompts
from trainers.methods.spell.coldstart import SpellDemonstrations
from trainers.methods.spell.corpus.dataset import Cluster
from trainers.methods.spell.corpus.synthetic import COMPANIES, _report
from trainers.methods.spell.method import SpellOptions

FILES = {
    prompts.GENERAL: "heldout-qa.jsonl",
    prompts.MATH: "heldout-math.jsonl",
    prompts.CHOICE: "heldout-mc.jsonl",
}


def heldout(reports: int, seed: int) -> dict[str, list[dict]]:
    rng = random.Random(seed)
    clusters = [
        Cluster(
            f"heldout-{n:02d}",
            task,
            tuple(_report(rng, COMPANIES[n % len(COMPANIES)], 2031 + n % 8)),
            "heldout",
        )
        for n in range(reports)
        for task in prompts.TASKS
    ]
    builder = SpellDemonstrations(clusters, SpellOptions(documents_per_question=5), seed)
    out: dict[str, list[dict]] = {task: [] for task in prompts.TASKS}
    for cluster in clusters:
        fact = builder.fact(cluster.task, cluster.documents)
        if fact is None:
            continue
        problem = prompts.responder_prompt(
            cluster.task, "\n".join(cluster.documents), fact.question, fact.options
        )
        out[cluster.task].append({"id": cluster.id, "problem": problem, "answer": fact.answer})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--reports", type=int, default=12)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for task, rows in heldout(args.reports, args.seed).items():
        path = args.out / FILES[task]
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        print(f"{path}: {len(rows)} items")


if __name__ == "__main__":
    main()
