"""`harness train` itself under torchrun (2 processes, gloo, 127.0.0.1) on the tiny model: the first line
says how many processes run, logs, `trained:` and evaluations happen once (not once per rank), a rank
killed with SIGKILL ends the whole run within a bounded time and the same command resumes, and a
launcher that starts fewer processes than asked is caught. Every launch has a hard limit (launch.LIMIT_S)."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from launch import LIMIT_S, REPO, children, finish, harness_train, run, start

pytestmark = pytest.mark.multiproc

PROBLEMS = REPO / "configs" / "train" / "ulorl-cpu-problems.jsonl"
KILLED_WITHIN_S = 90  # after a rank is SIGKILLed, the launcher must have ended the run by then


def grpo_args(model: Path, out: Path, *extra: str) -> list[str]:
    return [
        "grpo",
        "--model",
        str(model),
        "--out",
        str(out),
        "--dataset",
        f"jsonl:{PROBLEMS}",
        "--scorer",
        "integer",
        "--num-generations",
        "2",
        "--prompts-per-step",
        "1",
        "--max-completion-length",
        "8",
        "--save-steps",
        "1",
        "--set",
        "report_to=none",
        *extra,
    ]


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_first_line_logs_trained_and_evaluations_once(plain_model, tmp_path):
    out = tmp_path / "out"
    evaluation = ["--eval-every", "2", "--eval-benchmarks", f"jsonl:{PROBLEMS}"]
    evaluation += ["--set", "eval_limit=2", "--set", "eval_scorer=integer", "--set", "eval_max_tokens=4"]
    done = run(harness_train(2, *grpo_args(plain_model, out, "--max-steps", "2", *evaluation)), tmp_path)
    assert done.returncode == 0, done.output[-4000:]
    lines = done.output.splitlines()
    assert lines[0] == "harness train grpo: 2 processes"
    assert sum(line.startswith("step 2/2:") for line in lines) == 1
    assert [line for line in lines if line.startswith("trained:")] == [f"trained: {out}"]
    assert sum(line.startswith("harness train") for line in lines) == 1
    records = jsonl(out / "metrics.jsonl")
    assert [r["step"] for r in records if "loss" in r] == [1, 2]  # one log line per step
    assert [r["step"] for r in records if "eval" in r] == [0, 2]  # once per evaluated checkpoint
    assert sorted(p.name for p in (out / "evals").iterdir()) == ["step-0", "step-2"]


def rank_pids(launcher: int, rank: int) -> list[int]:
    """The processes torchrun (`launcher`) started as `rank` (each in a session of its own)."""
    found = []
    for pid in children(launcher):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"RANK={rank}".encode() in environ:
            found.append(pid)
    return found


def complete(checkpoint: Path) -> bool:
    names = {p.name for p in checkpoint.iterdir()}
    return {"trainer_state.json"} <= names and any(n.startswith("method_state-rank1") for n in names)


def test_a_killed_rank_ends_the_run_and_the_same_command_resumes(plain_model, tmp_path):
    out = tmp_path / "out"
    command = harness_train(2, *grpo_args(plain_model, out, "--max-steps", "6"))
    process = start(command, tmp_path)
    deadline = time.monotonic() + LIMIT_S
    while not (out / "checkpoint-2").is_dir() or not complete(out / "checkpoint-2"):
        assert process.poll() is None and time.monotonic() < deadline, "no checkpoint-2 in time"
        time.sleep(0.2)
    victims = rank_pids(process.pid, 1)
    assert len(victims) == 1
    os.kill(victims[0], signal.SIGKILL)
    killed = time.monotonic()
    done = finish(process)
    assert time.monotonic() - killed < KILLED_WITHIN_S
    assert done.returncode != 0
    assert "Signal 9 (SIGKILL)" in done.output  # torchrun names the rank that died and how
    assert not (out / "checkpoint-6").exists()
    # the same command resumes from the last complete checkpoint and finishes
    again = run(command, tmp_path)
    assert again.returncode == 0, again.output[-4000:]
    assert again.output.splitlines()[0] == "harness train grpo: 2 processes"
    records = [r for r in jsonl(out / "metrics.jsonl") if "loss" in r]
    assert [r["step"] for r in records] == [1, 2, 3, 4, 5, 6]  # each step once, as one run
    assert complete(out / "checkpoint-6")
    # a kill during a save (here: rank 1's method state never written) is skipped with one note,
    # after the launch line, and the run resumes before it
    (out / "checkpoint-6" / "method_state-rank1.json").unlink()
    half = run(command, tmp_path)
    assert half.returncode == 0, half.output[-4000:]
    lines = half.output.splitlines()
    note = (
        "note: skipping checkpoint-6: its save did not finish (no method_state-rank1.json); "
        "resuming before it"
    )
    assert lines[0] == "harness train grpo: 2 processes" and lines.count(note) == 1, lines[:4]
    assert complete(out / "checkpoint-6")


def test_accelerate_cpu_launch_of_two_is_one_process_and_is_caught(plain_model, tmp_path):
    """`accelerate launch --cpu --num_processes 2` starts one process: with --num-processes 2 the run
    stops at once with a one-line error that says so."""
    command = [sys.executable, "-m", "accelerate.commands.launch", "--cpu", "--num_processes", "2"]
    command += ["--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no"]
    command += ["-m", "harness", "train", *grpo_args(plain_model, tmp_path / "out", "--num-processes", "2")]
    done = run(command, tmp_path, limit=120)
    assert done.returncode != 0
    errors = [line for line in done.output.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: --num-processes 2, but the launcher started 1 process (WORLD_SIZE); `accelerate launch "
        "--cpu` starts one process whatever --num_processes says: use torchrun --nproc_per_node N -m "
        "harness train ..."
    ]
    assert not (tmp_path / "out").exists()
