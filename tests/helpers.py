"""Helpers shared by the test modules."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("HARNESS_TEST_DATA", REPO.parent / "shared" / "data"))


def run_cli(
    *args: str, cwd: Path | None = None, check: bool = True, **env: str
) -> subprocess.CompletedProcess:
    """`python -m harness ARGS`, offline, capturing output."""
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **env}
    environment.pop("HARNESS_DATA_DIR", None)
    done = subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=cwd, env=environment, capture_output=True, text=True
    )
    if check and done.returncode != 0:
        raise AssertionError(f"harness {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done
