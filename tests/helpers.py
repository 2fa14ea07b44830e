"""Helpers shared by the test modules."""

import os
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

from harness.core.cache import cache_root

REPO = Path(__file__).resolve().parents[1]
# the benchmark files the tests read (tests/data.json lists each by URL and sha256): HARNESS_TEST_DATA's
# folder (CI: ../shared/data), checked against those sums; else fetched once into the harness cache
DATA_MANIFEST = REPO / "tests" / "data.json"
GIVEN_DATA = os.environ.get("HARNESS_TEST_DATA")
SHARED_DATA = Path(GIVEN_DATA) if GIVEN_DATA else cache_root() / "test-data"
# the method specs the paper tables were transcribed from, beside the data (CI), or beside the clone
SPECS = (Path(GIVEN_DATA).parent if GIVEN_DATA else REPO.parent / "shared") / "specs"


def declared(group: str) -> dict[str, str]:
    """What this project's pyproject.toml registers in entry-point `group`: name -> object, in its order."""
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"][group]


def own_names(group: str) -> list[str]:
    """The names this project registers in `group`. Tests of what the project itself ships (a method's
    configs and page, a paper's transcription, the shared benchmark files) take these; tests of what any
    installed package must satisfy take the registry."""
    return list(declared(group))


def test_data_problem() -> str | None:
    """None when SHARED_DATA holds every file of the manifest with its sha256; else what is wrong, in
    one line. Without HARNESS_TEST_DATA, fetch what is missing first (`harness fetch-data --manifest`)."""
    from benchmarks.fetch import fetch_manifest, manifest_problems
    from harness import HarnessError

    if not GIVEN_DATA and manifest_problems(DATA_MANIFEST, SHARED_DATA):
        try:
            fetch_manifest(DATA_MANIFEST, SHARED_DATA)
        except HarnessError as e:
            return f"the test data could not be fetched into {SHARED_DATA} ({e}); set HARNESS_TEST_DATA"
    problems = manifest_problems(DATA_MANIFEST, SHARED_DATA)
    if problems:
        return f"{SHARED_DATA} is not the test data of {DATA_MANIFEST.name}: {'; '.join(problems[:3])}"
    return None


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
