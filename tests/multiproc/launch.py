"""Launching real process groups for the multi-process tier: torchrun on 127.0.0.1 with gloo, every
launch under a hard time limit that kills the launcher and every rank (a hang fails, it never stalls CI)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).resolve().parent / "worker.py"
TORCHRUN = [sys.executable, "-m", "torch.distributed.run"]
# every launch: a run that has not ended by then has hung, and fails (a loaded machine may raise it)
LIMIT_S = float(os.environ.get("HARNESS_MULTIPROC_LIMIT_S", "420"))


@dataclass
class Done:
    returncode: int
    output: str
    seconds: float


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(nproc: int, *argv: str) -> list[str]:
    return [
        *TORCHRUN,
        "--nproc_per_node",
        str(nproc),
        "--master_addr",
        "127.0.0.1",
        "--master_port",
        str(free_port()),
        *argv,
    ]


def environment() -> dict[str, str]:
    env = os.environ.copy()
    env.update(OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return env


def start(command: list[str], cwd: Path) -> subprocess.Popen:
    """A process group of its own (the launcher and every rank), output to one pipe."""
    return subprocess.Popen(
        command,
        cwd=cwd,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        kids = children(todo.pop())
        out += kids
        todo += kids
    return out


def kill_all(process: subprocess.Popen) -> None:
    """SIGKILL the launcher, its process group, and every process under it: torchrun starts each rank
    in a session of its own, which killing the launcher's group would leave running."""
    for pid in [*descendants(process.pid), process.pid]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def finish(process: subprocess.Popen, limit: float = LIMIT_S) -> Done:
    """Wait up to `limit` seconds; past it, SIGKILL the launcher and every rank and fail the test."""
    started = time.monotonic()
    try:
        output, _ = process.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        kill_all(process)
        output, _ = process.communicate()
        pytest.fail(f"the launch hung: still running after {limit} s, killed. Output:\n{output[-4000:]}")
    return Done(process.returncode, output, time.monotonic() - started)


def run(command: list[str], cwd: Path, limit: float = LIMIT_S) -> Done:
    return finish(start(command, cwd), limit)


def run_worker(nproc: int, spec: dict[str, Any], folder: Path, limit: float = LIMIT_S) -> Done:
    """tests/multiproc/worker.py under torchrun with `spec` (its records go to folder/record)."""
    folder.mkdir(parents=True, exist_ok=True)
    spec = {"record": str(folder / "record"), **spec}
    path = folder / "spec.json"
    path.write_text(json.dumps(spec))
    return run(torchrun(nproc, str(WORKER), str(path)), REPO, limit)


def records(folder: Path, nproc: int) -> list[dict[str, Any]]:
    return [json.loads((folder / "record" / f"rank{r}.json").read_text()) for r in range(nproc)]


def harness_train(nproc: int, *argv: str) -> list[str]:
    return torchrun(nproc, "-m", "harness", "train", *argv)
