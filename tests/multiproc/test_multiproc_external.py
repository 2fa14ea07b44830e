"""A method from another package (the docs' example, tests/example_packages.py) under torchrun: two
processes train it on a benchmark from another package, each saving and restoring its own state."""

from __future__ import annotations

import json

import pytest
from example_packages import install_examples
from launch import harness_train, run

from trainers.integration.checkpoints import read_method_state

pytestmark = pytest.mark.multiproc


def test_an_installed_method_trains_under_two_processes_and_resumes(plain_model, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(install_examples(tmp_path / "packages")))
    out = tmp_path / "out"
    command = harness_train(
        2, "brevity", "--model", str(plain_model), "--dataset", "sums", "--out", str(out), "--max-steps", "2",
        "--save-steps", "1", "--num-generations", "2", "--prompts-per-step", "1",
        "--max-completion-length", "4", "--set", "report_to=none",
    )  # fmt: skip
    done = run(command, tmp_path)
    assert done.returncode == 0, done.output[-4000:]
    assert done.output.splitlines()[0] == "harness train brevity: 2 processes"
    for rank in (0, 1):  # each process's own state, in each checkpoint
        assert read_method_state(out / "checkpoint-2", rank) == {"steps": 2}
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics if "brevity/tokens" in m] == [1, 2]

    weights = (out / "checkpoint-2" / "model.safetensors").read_bytes()
    for path in sorted((out / "checkpoint-2").iterdir()):
        path.unlink()
    (out / "checkpoint-2").rmdir()
    again = run(command, tmp_path)  # resumes from checkpoint-1 on both processes
    assert again.returncode == 0, again.output[-4000:]
    assert (out / "checkpoint-2" / "model.safetensors").read_bytes() == weights
    assert all(read_method_state(out / "checkpoint-2", rank) == {"steps": 2} for rank in (0, 1))
