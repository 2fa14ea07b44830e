"""Data parallel generation with the hf backend: sharding, merging, and a failed shard."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import run_cli

from harness.core.types import Request
from harness.stages.shards import deal


def test_deal_keeps_items_whole_and_round_robin():
    requests = [
        Request("b", item, k, (), 10 * i + k, 0.6, 1.0, 8) for i, item in enumerate("pqrst") for k in range(3)
    ]
    shards = deal(requests, 2)
    assert [[r.key for r in shard] for shard in shards] == [
        [("b", item, k) for item in "prt" for k in range(3)],
        [("b", item, k) for item in "qs" for k in range(3)],
    ]
    assert deal(requests[:3], 3) == [requests[:3], [], []]


def eval_args(model: Path, data: Path, out: Path, *extra: str) -> list[str]:
    return [
        "eval", "--benchmarks", "aime24", "--limit", "12", "--model", str(model), "--n", "2",
        "--max-tokens", "48", "--data-dir", str(data), "--out", str(out), *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def single_engine(tiny_model, shared_data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dp") / "single"
    run_cli(*eval_args(tiny_model, shared_data, out))
    return out


def test_two_shards_equal_one_engine(single_engine, tiny_model, shared_data, tmp_path):
    out = tmp_path / "two"
    run_cli(*eval_args(tiny_model, shared_data, out, "--data-parallel-size", "2"))
    for name in ("generations.jsonl", "scores.jsonl", "results.json"):
        assert (out / name).read_bytes() == (single_engine / name).read_bytes(), name
    engine = json.loads((out / "run.json").read_text())["engine"]
    assert engine["backend"] == "hf" and engine["data_parallel_size"] == 2


def shard_processes(parent: int) -> list[int]:
    """The shard processes among a process's children (not the scorer's workers, also spawned)."""
    children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    return [int(pid) for pid in children if Path(f"/proc/{pid}/comm").read_text().startswith("harness-shard")]


def start_sharded(args: list[str], generations: Path) -> tuple[subprocess.Popen, list[int]]:
    """`harness eval ARGS` with two shards, once its first sample is written: (process, shard pids)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", *args], env={**os.environ, "HF_HUB_OFFLINE": "1"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (generations.exists() and generations.read_text().count("\n") >= 1):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    shards = shard_processes(proc.pid)
    assert len(shards) == 2
    return proc, shards


def test_killed_shards_are_reported_and_the_run_resumes(single_engine, tiny_model, shared_data, tmp_path):
    out = tmp_path / "killed"
    args = eval_args(tiny_model, shared_data, out, "--data-parallel-size", "2", "--batch-size", "2")
    generations = out / "generations.jsonl"
    proc, shards = start_sharded(args, generations)
    for pid in shards:
        os.kill(pid, signal.SIGKILL)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 2
    for shard in (0, 1):
        assert re.search(rf"shard {shard} \(CPUs [\d,]+\) exited with code -9", stderr), stderr
    assert "run the same command again" in stderr
    written = generations.read_text().count("\n")
    assert 1 <= written < 24

    done = run_cli(*args)
    assert f"{written}/24 samples already generated" in done.stderr.replace("\n", " ")
    for name in ("generations.jsonl", "scores.jsonl", "results.json"):
        assert (out / name).read_bytes() == (single_engine / name).read_bytes(), name


def test_sigterm_stops_the_shards_and_the_run_resumes(tiny_model, shared_data, tmp_path):
    """A scheduler's SIGTERM to the harness: exit 143 at once, its shards stopped (not run to their
    end, and not left behind), and the same command finishes the run. Samples of up to 400 tokens,
    one at a time, keep the shards busy well past the signal."""
    out = tmp_path / "terminated"
    args = [
        *eval_args(tiny_model, shared_data, out, "--data-parallel-size", "2", "--batch-size", "1"),
        "--max-tokens", "400",
    ]  # fmt: skip
    generations = out / "generations.jsonl"
    proc, shards = start_sharded(args, generations)
    proc.terminate()
    proc.communicate(timeout=90)
    assert proc.returncode == 143
    assert not [pid for pid in shards if Path(f"/proc/{pid}").exists()]
    written = generations.read_text().count("\n")
    assert 1 <= written < 24

    done = run_cli(*args)
    assert f"{written}/24 samples already generated" in done.stderr.replace("\n", " ")
    results = json.loads((out / "results.json").read_text())["aime24"]
    assert results["n_samples"] == 24 == generations.read_text().count("\n")
