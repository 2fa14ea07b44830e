"""Helpers shared by the test modules."""

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("HARNESS_TEST_DATA", REPO.parent / "shared" / "data"))


def run_cli(
    *args: str, cwd: Path | None = None, check: bool = True, **env: str
) -> subprocess.CompletedProcess:
    """`python -m harness ARGS`, offline, capturing output."""
    # the caller's data folder and sandbox opt-in are not inherited: a test passes its own
    private = ("HARNESS_DATA_DIR", "HARNESS_UNSAFE_NO_SANDBOX")
    inherited = {k: v for k, v in os.environ.items() if k not in private}
    environment = {**inherited, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **env}
    done = subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=cwd, env=environment, capture_output=True, text=True
    )
    if check and done.returncode != 0:
        raise AssertionError(f"harness {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done


def answered_run(
    path: Path,
    answers: list[str | None],
    golds: list[str],
    scorer: str = "math",
    model: str | None = None,
    stored: Callable[[str], str] = str,
) -> Path:
    """A finalized one-sample run of the benchmark "sums", scored by `scorer`: item i answered
    `answers[i]` (None: nothing extracted), right when that equals `golds[i]`; run.json keeps each
    gold as `stored(gold)` (e.g. `gold_text`, the form of the choice, cem, numeric and integer golds)."""
    from harness.core.records import generation_record
    from harness.core.store import GENERATIONS, SCORES, RunDir
    from harness.stages.score import finalize

    config = {"benchmarks": ["sums"], "model": model or str(path), "scorers": {"sums": scorer}}
    info = {
        "config": config,
        "config_hash": "sums",
        "answers": {"sums": {str(i): stored(g) for i, g in enumerate(golds)}},
    }
    run = RunDir(path)
    run.start(info)
    run.append(GENERATIONS, [generation_record("sums", str(i), 0, str(a)) for i, a in enumerate(answers)])
    scores = [
        {"benchmark": "sums", "item_id": str(i), "sample_idx": 0, "value": float(a == g), "extracted": a,
         "canonical": a, "scorer": f"{scorer}-1", "details": {}}
        for i, (a, g) in enumerate(zip(answers, golds, strict=True))
    ]  # fmt: skip
    run.append(SCORES, scores)
    finalize(run, info, {"sums": f"{scorer}-1"})
    return path
