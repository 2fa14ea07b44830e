"""Two nodes on one machine: two torchrun launches (`--nnodes 2`, one process each, a c10d rendezvous on
127.0.0.1) sharing one OUT, as two machines share one folder on shared storage.

- The run equals the one-node two-process run: the same metrics and the same checkpoint, bit for bit.
- Where the state lives: every file under OUT is written by one node only (strace records each
  process's opens for writing and renames); the node of rank 1 writes its own per-rank files and
  nothing else, so docs/training/multinode.md's table holds.
- A node killed mid-run ends both launches, and the same two commands resume the run to its end.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from launch import LIMIT_S, TORCHRUN, Done, children, finish, free_port, harness_train, start
from test_multiproc_cli import PROBLEMS, complete, grpo_args, jsonl

pytestmark = pytest.mark.multiproc

KILLED_WITHIN_S = 90
STEPS = 4
# what the node of global rank 1 writes under OUT (docs/training/multinode.md); rank 0 writes the rest
RANK1_FILES = ("checkpoint-*/method_state-rank1.json", "checkpoint-*/rng_state_1.pth")
# metrics that time the run, not what it computed
TIMED = re.compile(r"time|seconds|per_second|share_of_step")


def node(rank: int, port: int, run_id: str, argv: list[str], trace: Path | None = None) -> list[str]:
    """One node's launch: torchrun with one process, joining the others at the c10d endpoint; node 0
    hosts the rendezvous store. With `trace`, under strace, which logs every open and rename."""
    command = [*TORCHRUN, "--nnodes", "2", "--nproc_per_node", "1", "--node_rank", str(rank)]
    command += ["--rdzv_backend", "c10d", "--rdzv_endpoint", f"127.0.0.1:{port}", "--rdzv_id", run_id]
    command += ["--rdzv_conf", f"is_host={str(rank == 0).lower()}", "-m", "harness", "train", *argv]
    if trace is None:
        return command
    strace = ["strace", "-f", "--seccomp-bpf", "-qq", "-y", "-s", "4096", "-o", str(trace)]
    return [*strace, "-e", "trace=open,openat,creat,rename,renameat,renameat2", *command]


def start_nodes(argv: list[str], cwd: Path, traces: Path | None = None) -> list[subprocess.Popen]:
    """Both nodes' launches, started; with `traces`, each under strace into traces/nodeR.strace."""
    port, run_id = free_port(), f"run{free_port()}"
    traced = [traces / f"node{rank}.strace" if traces else None for rank in (0, 1)]
    return [start(node(rank, port, run_id, argv, traced[rank]), cwd) for rank in (0, 1)]


def two_nodes(argv: list[str], cwd: Path, traces: Path | None = None) -> list[Done]:
    return [finish(p) for p in start_nodes(argv, cwd, traces)]


# with strace -y an fd shows the path it refers to: an open's result names the file it opened, a
# rename's directory fds name the folder its target name is in
OPENS = re.compile(r"^\d+ +(open|openat|creat)\(.*, ([A-Z_|]+)(?:, 0\d+)?\) = \d+<([^>]+)>$")
FOLDER = r"(?:AT_FDCWD|\d+)(?:<([^>]+)>)?"
RENAMES = re.compile(rf'^\d+ +rename(?:at2?)?\((?:{FOLDER}, )?"[^"]*", (?:{FOLDER}, )?"([^"]+)"')


# the one writer's temporary for a file, renamed over it when complete
TEMPORARY = re.compile(r"\.(.+)\.[0-9a-f]{12}\.tmp")


def written(trace: Path, out: Path, cwd: Path) -> set[str]:
    """The files under `out` that a traced launch opened for writing or renamed into place (a
    temporary of the one writer's counted as the file it becomes)."""
    found = set()
    for line in trace.read_text(errors="replace").splitlines():
        if match := OPENS.match(line):
            call, flags, full = match.groups()
            if call != "creat" and not {"O_WRONLY", "O_RDWR", "O_CREAT"} & set(flags.split("|")):
                continue
            path = Path(full)
        elif match := RENAMES.match(line):
            _, folder, name = match.groups()
            path = Path(folder or cwd) / name
        else:
            continue
        if match := TEMPORARY.fullmatch(path.name):
            path = path.with_name(match.group(1))
        if path.resolve().is_relative_to(out.resolve()):
            found.add(path.resolve().relative_to(out.resolve()).as_posix())
    return found


def comparable(metrics: Path) -> list[dict]:
    return [{k: v for k, v in r.items() if not TIMED.search(k)} for r in jsonl(metrics)]


def test_two_nodes_equal_one_node_and_each_file_has_one_writer(plain_model, tmp_path):
    if shutil.which("strace") is None:
        pytest.fail("strace is needed to see which process writes which file (.ci/run installs it)")
    one, two = tmp_path / "one", tmp_path / "two"
    evaluation = ["--eval-every", "2", "--eval-benchmarks", f"jsonl:{PROBLEMS}"]
    evaluation += ["--set", "eval_limit=2", "--set", "eval_scorer=integer", "--set", "eval_max_tokens=4"]
    argv = grpo_args(plain_model, one, "--max-steps", str(STEPS), *evaluation)
    done = finish(start(harness_train(2, *argv), tmp_path))
    assert done.returncode == 0, done.output[-4000:]

    argv = grpo_args(plain_model, two, "--max-steps", str(STEPS), *evaluation)
    nodes = two_nodes(argv, tmp_path, traces=tmp_path)
    for launch in nodes:
        assert launch.returncode == 0, launch.output[-4000:]
    output = "\n".join(launch.output for launch in nodes).splitlines()
    assert output.count("harness train grpo: 2 processes") == 1  # the launch line, from rank 0 only
    assert [line for line in output if line.startswith("trained:")] == [f"trained: {two}"]

    # the same run: every computed metric, and each checkpoint's weights, optimizer and per-rank states
    assert comparable(two / "metrics.jsonl") == comparable(one / "metrics.jsonl")
    for step in (2, STEPS):
        names = ["model.safetensors", "optimizer.pt", "scheduler.pt", "method_state-rank1.json"]
        for name in names:
            a, b = one / f"checkpoint-{step}" / name, two / f"checkpoint-{step}" / name
            assert a.read_bytes() == b.read_bytes(), name

    # one writer per file; the node of rank 1 writes its own per-rank files only
    writes = [written(tmp_path / f"node{rank}.strace", two, tmp_path) for rank in (0, 1)]
    assert writes[0] and writes[1]
    assert writes[0] & writes[1] == set()
    present = {p.relative_to(two).as_posix() for p in two.rglob("*") if p.is_file()}
    assert present <= writes[0] | writes[1]  # every file there was seen written, by one node
    main, other = sorted(writes, key=lambda files: "metrics.jsonl" not in files)
    assert {"metrics.jsonl", "train.json", "README.md", f"checkpoint-{STEPS}/model.safetensors"} <= main
    evaluated = {f"evals/step-{STEPS}/{name}" for name in ("run.json", "generations.jsonl", "results.json")}
    assert evaluated <= main
    assert {f for f in other if not any(fnmatch.fnmatch(f, p) for p in RANK1_FILES)} == set()
    assert {f"checkpoint-{STEPS}/method_state-rank1.json", f"checkpoint-{STEPS}/rng_state_1.pth"} <= other


def worker_of(launcher: int) -> int:
    """The one training process a node's torchrun started."""
    workers = children(launcher)
    assert len(workers) == 1, workers
    return workers[0]


def test_a_killed_node_ends_both_and_the_same_commands_resume(plain_model, tmp_path):
    out = tmp_path / "out"
    argv = grpo_args(plain_model, out, "--max-steps", "6")
    launches = start_nodes(argv, tmp_path)
    deadline = time.monotonic() + LIMIT_S
    while not (out / "checkpoint-2").is_dir() or not complete(out / "checkpoint-2"):
        assert all(p.poll() is None for p in launches) and time.monotonic() < deadline, "no checkpoint-2"
        time.sleep(0.2)
    os.kill(worker_of(launches[1].pid), signal.SIGKILL)
    killed = time.monotonic()
    ended = [finish(p) for p in launches]
    assert time.monotonic() - killed < KILLED_WITHIN_S
    assert all(launch.returncode != 0 for launch in ended), [launch.returncode for launch in ended]
    assert not (out / "checkpoint-6").exists()

    # the same two commands resume from the last complete checkpoint: each step logged once
    again = two_nodes(argv, tmp_path)
    for launch in again:
        assert launch.returncode == 0, launch.output[-4000:]
    assert [r["step"] for r in jsonl(out / "metrics.jsonl") if "loss" in r] == [1, 2, 3, 4, 5, 6]
    assert complete(out / "checkpoint-6")
    assert json.loads((out / "checkpoint-6" / "trainer_state.json").read_text())["global_step"] == 6
