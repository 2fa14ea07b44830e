"""Ctrl-C and SIGTERM (harness/core/terminate.py): eval, score and train end with one line that says what
was kept and that the same command resumes, exit 130 or 143, and no process, worker or rank prints a
traceback; the same command then finishes the run as if nothing had happened.

The signal goes to the command's whole process group, as a terminal's Ctrl-C and a scheduler's stop do,
so the scorer's worker processes get it too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import run_cli

from benchmarks.arithmetic import arithmetic_rows, write_jsonl
from harness.core import terminate
from harness.core.terminate import Interrupted, final_line, keeping

FILES = ("generations.jsonl", "scores.jsonl", "results.json")
CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}


def interrupt(
    args: list[str], ready: Callable[[], bool], signum: int, timeout: float = 300
) -> tuple[int, str]:
    """Start `harness ARGS` in its own process group, wait until `ready()` (bounded), signal the group;
    return the exit code and stderr."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + timeout
        while not ready() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the command ended before it could be interrupted"
        os.killpg(proc.pid, signum)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, stderr


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def assert_clean_end(stderr: str, code: int, signum: int) -> str:
    """Exit 130/143, no traceback from any process; returns the last line."""
    assert code == CODES[signum], stderr[-3000:]
    for noise in ("Traceback", "SpawnProcess", "KeyboardInterrupt", "Aborted"):
        assert noise not in stderr, stderr[-3000:]
    return stderr.strip().splitlines()[-1]


def eval_args(model: Path, data: Path, out: Path) -> list[str]:
    return [
        "eval", "--benchmarks", "aime24,aime25", "--model", str(model), "--n", "4", "--max-tokens", "64",
        "--batch-size", "4", "--data-dir", str(data), "--out", str(out), "--seed", "7",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def uninterrupted(tiny_model, shared_data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "whole"
    run_cli(*eval_args(tiny_model, shared_data, out))
    return out


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_eval_says_what_it_kept_and_the_same_command_finishes_it(
    signum, uninterrupted, tiny_model, shared_data, tmp_path
):
    out = tmp_path / "run"
    args = eval_args(tiny_model, shared_data, out)
    code, stderr = interrupt(args, lambda: lines(out / "generations.jsonl") >= 8, signum)
    last = assert_clean_end(stderr, code, signum)
    kept = lines(out / "generations.jsonl")
    assert 8 <= kept < 240
    assert last == (
        f"interrupted: {out} keeps {kept}/240 generations and {lines(out / 'scores.jsonl')} scores; "
        "the same command resumes"
    )

    done = run_cli(*args)
    assert f"{kept}/240 samples already generated" in done.stderr.replace("\n", " ")
    for name in FILES:
        assert (out / name).read_bytes() == (uninterrupted / name).read_bytes(), name


@pytest.mark.slow  # seconds each: `tox -e unit` leaves it to the full tier
def test_an_interrupted_score_keeps_its_scores_and_the_same_command_finishes_it(shared_data, tmp_path):
    """`score --generations` of many answers: interrupted once it has written scores, it resumes from
    them, and its results are those of an uninterrupted scoring; so does a rescore (`score RUN_DIR`),
    which starts over."""
    items = [
        str(json.loads(line)["id"])
        for line in (shared_data / "aime24" / "test.jsonl").read_text().splitlines()
    ]
    rows = [
        {"item_id": item, "sample_idx": k, "text": f"So the answer is $\\boxed{{{k * 37 % 1000}}}$."}
        for item in items
        for k in range(40)
    ]
    generations = write_jsonl(tmp_path / "generations.jsonl", rows)
    args = [
        "score",
        "--generations",
        str(generations),
        "--benchmark",
        "aime24",
        "--data-dir",
        str(shared_data),
    ]
    out = tmp_path / "run"
    code, stderr = interrupt(
        [*args, "--out", str(out)], lambda: lines(out / "scores.jsonl") >= 64, signal.SIGINT
    )
    last = assert_clean_end(stderr, code, signal.SIGINT)
    scored = lines(out / "scores.jsonl")
    assert 64 <= scored < len(rows) and lines(out / "generations.jsonl") == len(rows)
    assert last == (
        f"interrupted: {out} keeps {len(rows)} generations and {scored} scores; the same command resumes"
    )
    assert not (out / "results.json").exists()

    run_cli(*args, "--out", str(out))
    whole = tmp_path / "whole"
    run_cli(*args, "--out", str(whole))
    for name in FILES:
        assert (out / name).read_bytes() == (whole / name).read_bytes(), name

    # `score RUN_DIR` rescores every sample: interrupted, it says so, and the same command does it all
    before = lines(out / "scores.jsonl")
    code, stderr = interrupt(
        ["score", str(out)], lambda: lines(out / "scores.jsonl") >= before + 64, signal.SIGTERM
    )
    last = assert_clean_end(stderr, code, signal.SIGTERM)
    assert last == (
        f"interrupted: {out} keeps {len(rows)} generations and {lines(out / 'scores.jsonl')} scores; "
        "the same command rescores it from the start"
    )
    run_cli("score", str(out))
    for name in FILES:
        assert (out / name).read_bytes() == (whole / name).read_bytes(), name


@pytest.mark.slow  # seconds each: `tox -e unit` leaves it to the full tier
def test_an_interrupted_one_process_train_names_its_checkpoint_and_resumes(tmp_path):
    from harness.core.tiny_model import build_tiny_model

    model = build_tiny_model(tmp_path / "model", thinking=False)
    train_file = write_jsonl(tmp_path / "train.jsonl", arithmetic_rows(64, seed=1))
    out = tmp_path / "run"
    args = [
        "train", "grpo", "--model", str(model), "--dataset", str(train_file), "--out", str(out),
        "--max-steps", "12", "--save-steps", "1", "--num-generations", "2", "--prompts-per-step", "2",
        "--max-completion-length", "4",
    ]  # fmt: skip
    code, stderr = interrupt(
        args, lambda: (out / "checkpoint-2" / "trainer_state.json").exists(), signal.SIGINT
    )
    last = assert_clean_end(stderr, code, signal.SIGINT)
    saved = sorted(int(p.name.split("-")[1]) for p in out.glob("checkpoint-*"))
    assert saved and last.startswith(f"interrupted: {out} keeps checkpoint-")
    assert last.endswith("of 12); the same command resumes")
    step = int(last.split("checkpoint-")[1].split(" ")[0])
    assert step in saved  # the last one saved whole (a save the signal cut short is skipped)

    done = run_cli(*args)
    assert "step 12/12" in done.stdout
    assert f"step {step}/12" not in done.stdout  # resumed after the kept checkpoint
    assert (out / "checkpoint-12").is_dir()


def test_the_line_names_what_the_innermost_command_keeps_and_a_silent_rank_says_nothing(monkeypatch):
    monkeypatch.setattr(terminate, "_kept", [])
    assert final_line() == "interrupted: nothing was written; the same command resumes"
    with keeping(lambda: "runs/x keeps 3/8 generations and 1 scores"):
        with keeping(lambda: "runs/x keeps 2 scores", then="the same command rescores it from the start"):
            assert (
                final_line()
                == "interrupted: runs/x keeps 2 scores; the same command rescores it from the start"
            )
        assert (
            final_line() == "interrupted: runs/x keeps 3/8 generations and 1 scores; the same command resumes"
        )
        with keeping(lambda: None):  # a rank that is not the main process
            assert final_line() is None
        with keeping(lambda: 1 / 0):  # type: ignore[arg-type, return-value]
            assert final_line() == (
                "interrupted: what was written stays (ZeroDivisionError while counting it); "
                "the same command resumes"
            )


def test_what_was_kept_is_said_after_the_command_has_unwound(monkeypatch):
    """The line is written once the interrupt has unwound every block (files closed, workers stopped):
    the command's own entry outlives its block then, and only then."""
    monkeypatch.setattr(terminate, "_kept", [])
    written: list[str] = []
    with pytest.raises(Interrupted):
        with keeping(lambda: f"runs/x keeps {len(written)}/3 generations and 0 scores"):
            written.append("a record")
            try:
                raise Interrupted(signal.SIGINT)
            finally:
                written.append("the last batch, written while unwinding")
    assert final_line() == "interrupted: runs/x keeps 2/3 generations and 0 scores; the same command resumes"
    monkeypatch.setattr(terminate, "_kept", [])
    with pytest.raises(ValueError), keeping(lambda: "runs/x keeps it all"):
        raise ValueError("a bug, not an interrupt")
    assert final_line() == "interrupted: nothing was written; the same command resumes"


@pytest.mark.slow
def test_an_interrupted_two_process_train_says_its_line_once_and_no_rank_prints_a_traceback(tmp_path):
    """Under torchrun each rank gets the Ctrl-C: the main one says what was kept, the other says
    nothing, and neither prints a traceback (torchrun, the launcher, reports the signal its own way)."""
    from harness.core.tiny_model import build_tiny_model

    model = build_tiny_model(tmp_path / "model", thinking=False)
    train_file = write_jsonl(tmp_path / "train.jsonl", arithmetic_rows(64, seed=1))
    out = tmp_path / "run"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "-m", "harness", "train",
         "grpo", "--model", str(model), "--dataset", str(train_file), "--out", str(out), "--max-steps", "12",
         "--save-steps", "1", "--num-generations", "2", "--prompts-per-step", "2",
         "--max-completion-length", "4"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not (out / "checkpoint-2" / "trainer_state.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    said = [line for line in stderr.splitlines() if line.startswith("interrupted: ")]
    assert len(said) == 1 and said[0].startswith(f"interrupted: {out} keeps checkpoint-"), stderr[-3000:]
    assert said[0].endswith("of 12); the same command resumes")
    harness_frames = [line for line in stderr.splitlines() if "/harness/" in line or "/trainers/" in line]
    assert not harness_frames and "KeyboardInterrupt" not in stderr, stderr[-3000:]


SLOW_CLEANUP = """
import sys, time
from harness.core.terminate import Interrupted, final_line, interrupt_on_signals, keeping
interrupt_on_signals()
try:
    with keeping(lambda: "runs/x keeps 5/9 generations and 5 scores"):
        try:
            print("ready", flush=True)
            time.sleep(60)
        finally:
            print("cleaning up", flush=True)
            time.sleep(60)  # an engine that takes its time to stop
except Interrupted as e:
    print(final_line(), file=sys.stderr)
    sys.exit(e.exit_code)
"""


def test_a_second_signal_while_the_first_unwinds_ends_the_process_at_once_with_the_same_line():
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_CLEANUP], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGINT)
        assert proc.stdout.readline() == "cleaning up\n"
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143
    assert stderr.splitlines() == [
        "interrupted: runs/x keeps 5/9 generations and 5 scores; the same command resumes"
    ]


ABANDONED_POOL = """
import math, os, sys, time
from harness.scoring.pool import TimeoutPool
if __name__ == "__main__":
    pool = TimeoutPool(math.sqrt, timeout=10, workers=2)
    assert sorted(pool.map([4.0, 9.0])) == [(0, 2.0), (1, 3.0)]
    pool.pool[0].conn.send(16.0)  # a result it will never read: the pipe is reset, not just closed
    time.sleep(float(sys.argv[1]))
    os._exit(0)  # gone without closing the pool
"""


@pytest.mark.parametrize("wait", [0.0, 2.0], ids=["at once", "with a reply unread"])
def test_scorer_workers_whose_parent_is_gone_exit_without_a_traceback(tmp_path, wait):
    script = tmp_path / "abandon.py"
    script.write_text(ABANDONED_POOL)
    done = subprocess.run(
        [sys.executable, str(script), str(wait)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )  # returns once every process holding its stderr, the workers included, has ended
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_a_signal_ends_score_within_five_seconds_while_it_parses_hostile_answers(shared_data, tmp_path):
    """Megabyte answers crafted against the CRUXEval parser (blank space, unclosed tags): SIGTERM, sent
    while they are parsed, ends `score` within 5 s with its line (the parsers are linear-time, so no
    call holds the signal for long)."""
    ids = [json.loads(line)["id"] for line in (shared_data / "cruxeval" / "cruxeval.jsonl").open()][:12]
    crafted = ("x" + " " * 1_000_000 + "y", "[ANSWER]" * 125_000, "```x\n" * 200_000)
    rows = [
        {"item_id": item, "sample_idx": k, "text": text} for item in ids for k, text in enumerate(crafted)
    ]
    generations = write_jsonl(tmp_path / "generations.jsonl", rows)
    out = tmp_path / "run"
    args = ["score", "--generations", str(generations), "--benchmark", "cruxeval_o"]
    started = time.monotonic()
    signalled = []

    def parsing() -> bool:
        if (out / "generations.jsonl").exists() and time.monotonic() - started > 2:
            signalled.append(time.monotonic())
            return True
        return False

    code, stderr = interrupt(
        [*args, "--data-dir", str(shared_data), "--out", str(out)], parsing, signal.SIGTERM
    )
    assert time.monotonic() - signalled[0] < 5.0, stderr[-2000:]
    assert_clean_end(stderr, code, signal.SIGTERM)
