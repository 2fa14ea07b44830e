"""End to end through the CLI: the tiny model on the real AIME files."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import run_cli

from harness.report.summary import LEGEND
from harness.stages.plan import derive_seed

FILES = ("run.json", "generations.jsonl", "scores.jsonl", "results.json")


def eval_args(model: Path, data: Path, out: Path, *extra: str) -> list[str]:
    return [
        "eval", "--benchmarks", "aime24,aime25", "--model", str(model), "--backend", "hf", "--n", "4",
        "--max-tokens", "64", "--data-dir", str(data), "--out", str(out), "--seed", "7", *extra,
    ]  # fmt: skip


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def reference_run(tiny_model, shared_data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "reference"
    done = run_cli(*eval_args(tiny_model, shared_data, out))
    assert "aime24" in done.stdout and "avg@n [95% CI]" in done.stdout  # one table, with its legend
    assert LEGEND in done.stdout and "| run |" not in done.stdout and "avg@n [95% CI]" not in done.stderr
    return out


def test_run_directory_is_complete_and_consistent(reference_run):
    for name in FILES:
        assert (reference_run / name).is_file(), name
    info = json.loads((reference_run / "run.json").read_text())
    gens = jsonl(reference_run / "generations.jsonl")
    scores = jsonl(reference_run / "scores.jsonl")
    results = json.loads((reference_run / "results.json").read_text())

    assert len(gens) == len(scores) == 240
    keys = [(g["benchmark"], g["item_id"], g["sample_idx"]) for g in gens]
    assert len(set(keys)) == 240
    assert keys == [(s["benchmark"], s["item_id"], s["sample_idx"]) for s in scores]
    assert [g["item_id"] for g in gens[:8]] == ["60"] * 4 + ["61"] * 4  # canonical order
    for g in gens:
        assert g["seed"] == derive_seed(7, g["benchmark"], g["item_id"], g["sample_idx"])
        assert g["finish_reason"] in ("stop", "length")
        assert g["truncated"] == (g["finish_reason"] == "length")
        assert 0 < g["completion_tokens"] <= 64 and g["prompt_tokens"] > 50
        assert g["unclosed_think"] == (g["answer"] is None)  # the template opens <think>
    assert len({g["seed"] for g in gens}) == 240
    for s in scores:
        assert s["value"] in (0.0, 1.0)
        assert s["scorer"].startswith("math-") and "math-verify-" in s["scorer"]

    assert set(results) == {"aime24", "aime25"}
    for bench, metrics in results.items():
        assert metrics["n_items"] == 30 and metrics["n_samples"] == 120
        for key in ("avg@4", "pass@1", "pass@2", "pass@4", "maj@4", "ci95", "truncated_rate",
                    "unextracted_rate", "mean_completion_tokens"):  # fmt: skip
            assert key in metrics, key
        mine = [s["value"] for s in scores if s["benchmark"] == bench]
        assert metrics["avg@4"] == pytest.approx(sum(mine) / len(mine))
        truncated = [g["truncated"] for g in gens if g["benchmark"] == bench]
        assert metrics["truncated_rate"] == pytest.approx(sum(truncated) / len(truncated))

    assert info["config"]["sampling"]["aime24"] == {
        "n": 4,
        "temperature": 0.6,
        "top_p": 0.95,
        "max_tokens": 64,
    }
    assert [f["path"] for f in info["datasets"]["aime25"]["files"]] == [
        "test2025-I.jsonl",
        "test2025-II.jsonl",
    ]
    assert info["packages"]["math-verify"] == "0.9.0"
    assert info["answers"]["aime24"]["60"] == "204"
    assert info["engine"]["backend"] == "hf"


def test_same_seed_gives_identical_files(reference_run, tiny_model, shared_data, tmp_path):
    run_cli(*eval_args(tiny_model, shared_data, tmp_path / "again"))
    for name in FILES:
        assert (tmp_path / "again" / name).read_bytes() == (reference_run / name).read_bytes(), name


def test_sigkill_then_resume_equals_uninterrupted(reference_run, tiny_model, shared_data, tmp_path):
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", *eval_args(tiny_model, shared_data, out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    generations = out / "generations.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if generations.exists() and generations.read_text().count("\n") >= 60:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    written = generations.read_text().count("\n")
    assert 60 <= written < 240, written
    with open(generations, "a") as f:  # what a kill in the middle of a write leaves behind
        f.write('{"benchmark": "aime24", "item_id": "6')

    done = run_cli(*eval_args(tiny_model, shared_data, out))
    assert f"{written}/240 samples already generated" in done.stderr.replace("\n", " ")
    for name in FILES:
        assert (out / name).read_bytes() == (reference_run / name).read_bytes(), name


def test_different_configuration_is_refused(reference_run, tiny_model, shared_data):
    before = {name: (reference_run / name).read_bytes() for name in FILES}
    args = eval_args(tiny_model, shared_data, reference_run)
    args[args.index("--n") + 1] = "2"
    done = run_cli(*args, check=False)
    assert done.returncode == 2
    assert "different configuration" in done.stderr
    assert "sampling.aime24.n: existing run has 4, this command has 2" in done.stderr
    assert {name: (reference_run / name).read_bytes() for name in FILES} == before


def test_rescore_keeps_results(reference_run, tmp_path):
    results = (reference_run / "results.json").read_bytes()
    run_cli("score", str(reference_run))
    assert (reference_run / "results.json").read_bytes() == results


def test_table_formats(reference_run):
    md = run_cli("table", str(reference_run)).stdout
    assert md.splitlines()[0] == "| run | aime24 | aime25 |"
    latex = run_cli("table", str(reference_run), "--format", "latex", "--metric", "pass@4").stdout
    assert "\\toprule" in latex and "aime24 & aime25" in latex
    csv = run_cli("table", str(reference_run), "--format", "csv").stdout.splitlines()
    assert csv[0] == "run,aime24,aime24_ci95_halfwidth,aime25,aime25_ci95_halfwidth"
    results = json.loads((reference_run / "results.json").read_text())
    assert float(csv[1].split(",")[1]) == pytest.approx(100 * results["aime24"]["avg@4"], abs=1e-4)


def test_tiny_model_cli_is_deterministic(tiny_model, tmp_path):
    run_cli("tiny-model", str(tmp_path / "m"))
    for path in tiny_model.iterdir():
        assert (tmp_path / "m" / path.name).read_bytes() == path.read_bytes(), path.name
