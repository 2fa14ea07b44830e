"""Where bubblewrap is absent (hidden from PATH here), code scoring refuses to run model code unless
the user opts in with --unsafe-no-sandbox, which run.json records and every table marks.

CI also runs this file with PATH holding only the tox environment (`tox -e no-bwrap`)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from helpers import run_cli

GUESSES = ["```python\ndef add(a, b):\n    return a + b\n```", "```python\ndef add(a, b):\n    return 0\n```"]


def scoring(tmp_path: Path, *flags: str):
    bench = tmp_path / "mine.jsonl"
    bench.write_text(
        json.dumps({"id": "add", "prompt": "Write add(a, b).", "tests": "assert add(1, 2) == 3"})
    )
    generations = tmp_path / "gens.jsonl"
    rows = [{"item_id": "add", "sample_idx": i, "text": t} for i, t in enumerate(GUESSES)]
    generations.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run_cli(
        "score", "--generations", str(generations), "--benchmark", f"jsonl:{bench}", "--scorer", "code",
        "--out", str(tmp_path / "run"), *flags, check=False, PATH=str(Path(sys.executable).parent),
    )  # fmt: skip


def test_bubblewrap_is_hidden():
    assert shutil.which("bwrap", path=str(Path(sys.executable).parent)) is None
    if os.environ.get("HARNESS_CI_NO_BWRAP"):
        assert shutil.which("bwrap") is None


def test_code_scoring_refuses_without_bubblewrap(tmp_path):
    done = scoring(tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert (
        "bubblewrap" in lines[0] and "apt-get install bubblewrap" in lines[0] and "Traceback" not in lines[0]
    )
    assert not (tmp_path / "run" / "scores.jsonl").exists()


@pytest.mark.slow  # seconds each: `tox -e unit` leaves it to the full tier
def test_unsafe_opt_in_runs_records_and_marks_every_table(tmp_path):
    done = scoring(tmp_path, "--unsafe-no-sandbox")
    assert done.returncode == 0, done.stderr
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["sandbox"]["isolation"] == "none" and run["sandbox"]["unsafe_opt_in"] is True
    scores = [json.loads(line) for line in (tmp_path / "run" / "scores.jsonl").read_text().splitlines()]
    assert [s["value"] for s in sorted(scores, key=lambda s: s["sample_idx"])] == [1.0, 0.0]
    for fmt in ("md", "csv", "latex"):
        table = run_cli("table", str(tmp_path / "run"), "--format", fmt).stdout
        assert "[unsandboxed]" in table
        assert fmt == "csv" or "WITHOUT sandbox isolation" in table
    rescore = run_cli("score", str(tmp_path / "run"), check=False, PATH=str(Path(sys.executable).parent))
    assert rescore.returncode == 2 and "bubblewrap" in rescore.stderr


@pytest.mark.slow  # a model: `tox -e unit` leaves it to the full tier
def test_a_scorer_running_programs_is_refused_before_generating(tiny_model, shared_data, tmp_path):
    """Absolute Zero's held-out deduction runs programs too (its scorer is `sandboxed`, as `code` is):
    refused before a token is generated, and run with the opt-in recorded."""

    def evaluate(out: Path, *flags: str):
        return run_cli(
            "eval", "--benchmarks", "azr_deduction", "--model", str(tiny_model), "--backend", "hf",
            "--limit", "1", "--n", "1", "--max-tokens", "4", "--data-dir", str(shared_data),
            "--out", str(out), *flags, check=False, PATH=str(Path(sys.executable).parent),
        )  # fmt: skip

    refused = evaluate(tmp_path / "refused")
    assert refused.returncode == 2 and "bubblewrap" in refused.stderr, refused.stderr
    assert not (tmp_path / "refused" / "generations.jsonl").exists()
    done = evaluate(tmp_path / "opted", "--unsafe-no-sandbox")
    assert done.returncode == 0, done.stderr
    run = json.loads((tmp_path / "opted" / "run.json").read_text())
    assert run["sandbox"]["isolation"] == "none" and run["sandbox"]["unsafe_opt_in"] is True
