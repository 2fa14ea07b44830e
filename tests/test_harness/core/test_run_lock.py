"""One process writes a run folder at a time: a second harness on it stops at once (issue 16, point 9)."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from helpers import REPO
from inprocess import harness, one_line_error

from harness.core.store import GENERATIONS, LOCK, RESULTS, RUN, RunDir

DATA = "".join(
    json.dumps({"id": str(i), "problem": f"{i}+1?", "answer": str(i + 1)}) + "\n" for i in range(3)
)


def wait_for(condition, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_a_second_harness_on_a_locked_run_stops_at_once_and_the_lock_dies_with_its_holder(
    tmp_path, tiny_model
):
    data, out = tmp_path / "data.jsonl", tmp_path / "run"
    data.write_text(DATA)
    command = ["eval", "--model", str(tiny_model), "--benchmarks", f"jsonl:{data}", "--scorer", "math",
               "--out", str(out), "--n", "2", "--max-tokens", "1500", "--batch-size", "1"]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    first = subprocess.Popen([sys.executable, "-m", "harness", *command], cwd=REPO, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        lock = out / LOCK
        wait_for(lambda: lock.is_file() and lock.read_text().strip() and (out / RUN).is_file())
        assert lock.read_text() == f"{first.pid}\n"
        started = time.monotonic()
        second = harness(*command)
        assert second.code == 2
        assert one_line_error(second) == (
            f"{out} is in use by another harness process (pid {first.pid}); "
            "wait for it to finish, or use another directory"
        )
        assert time.monotonic() - started < 30  # no engine was started
        assert "is in use by another harness process" in one_line_error(harness("score", str(out)))
        assert first.poll() is None  # the first one was still at work
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    done = harness(*command)  # the kernel released the dead holder's lock: this run resumes and finishes
    assert done.code == 0, done.stderr
    keys = [(r["item_id"], r["sample_idx"]) for r in RunDir(out).records(GENERATIONS)]
    assert sorted(keys) == [(str(i), k) for i in range(3) for k in range(2)]
    assert (out / RESULTS).is_file()


def test_concurrent_atomic_writes_never_mix_or_collide(tmp_path):
    run = RunDir(tmp_path)
    texts = [{"writer": w, "fill": str(w) * 200_000} for w in range(4)]
    errors = []

    def write(obj) -> None:
        try:
            for _ in range(10):
                run.write_json("x.json", obj)
        except Exception as e:  # with one shared temporary file, a rename finds it gone
            errors.append(e)

    threads = [threading.Thread(target=write, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert json.loads((tmp_path / "x.json").read_text()) in texts
    assert [p.name for p in Path(tmp_path).iterdir()] == ["x.json"]
