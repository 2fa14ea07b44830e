"""A study's warm start: TRL's SFTTrainer on demonstrations (the study's own sums written in its style, or
a method's cold-start demonstrations), after the cold starts' contamination check against the held-out
set (no demonstration shares a sum or a program's 13-gram with it).

STUDY/warm-start/ is a model folder with `demonstrations.jsonl`, `log.jsonl` and `report.json`, written
last: a folder without it is redone from scratch.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from harness import HarnessError
from harness.core.io.write import OutDir
from trainers.coldstart.contamination import decontaminate, ngrams
from trainers.coldstart.demos import Demonstration
from trainers.coldstart.options import ColdStartOptions
from trainers.studies.task import completion

REPORT = "report.json"


def demonstrations(rows: list[dict], style: str) -> list[Demonstration]:
    return [
        Demonstration(
            role="solver",
            task=row["level"],
            prompt=({"role": "user", "content": row["problem"]},),
            completion=completion(row, style),
            sources=(row["problem"],),
        )
        for row in rows
    ]


def warm_start(
    model: str,
    make: Callable[[], tuple[list[Demonstration], list[str]]],
    style: str,
    options: ColdStartOptions,
    folder: Path,
    seed: int,
    bf16: bool = False,
) -> Path:
    """Train the warm start into `folder` (in bf16 autocast if `bf16`) unless a finished one is there;
    returns the folder. `make` gives the demonstrations and the held-out items' texts their sources must
    not share an n-gram with."""
    if (folder / REPORT).is_file():
        return folder
    from transformers import AutoTokenizer

    from trainers.config import TrainConfig
    from trainers.integration.sft import train_sft

    demos, heldout = make()
    against = {"heldout": set().union(*(ngrams(text) for text in heldout))}
    kept, contamination = decontaminate(demos, against)
    if not kept:
        raise HarnessError("warm start: every demonstration shares a sum with the held-out set")
    if folder.exists():
        shutil.rmtree(folder)  # an interrupted warm start
    config = TrainConfig(
        method="grpo", model=model, dataset="-", out=str(folder), seed=seed,
        trl={"gradient_checkpointing": True, "bf16": bf16},
    )  # fmt: skip
    tokenizer = AutoTokenizer.from_pretrained(model)
    started = time.perf_counter()
    log = train_sft(config, options, tokenizer, kept, folder)
    report = {
        "base_model": model,
        "style": style,
        "bf16": bf16,
        "demonstrations": len(kept),
        "contamination": contamination.record(),
        "final_loss": next((e["loss"] for e in reversed(log) if "loss" in e), None),
        "seconds": round(time.perf_counter() - started, 1),
    }
    with OutDir.open(folder) as out:
        out.write("demonstrations.jsonl", "".join(json.dumps(d.record()) + "\n" for d in kept))
        out.write("log.jsonl", "".join(json.dumps(e) + "\n" for e in log))
        out.write(REPORT, json.dumps(report, indent=2) + "\n")  # last: the warm start is finished
    return folder
