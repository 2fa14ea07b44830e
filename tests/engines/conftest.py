"""A real vLLM engine (the CPU build) and a real `vllm serve` of the tiny model on 127.0.0.1."""

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest
from serving import VLLM_OPTIONS

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB of KV cache; the default reserves far more


@pytest.fixture(scope="session")
def engine(tiny_model):
    from harness.backends.vllm import VLLMBackend

    backend = VLLMBackend(str(tiny_model), dtype="float32", enforce_eager=True)
    yield backend
    backend.close()  # before pytest closes the streams vLLM logs to


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server(tiny_model, tmp_path_factory):
    """`vllm serve` (its module: vllm-cpu ships no `vllm` distribution for the CLI to find)."""
    port = free_port()
    log = tmp_path_factory.mktemp("server") / "vllm-serve.log"
    with open(log, "w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(tiny_model),
             "--host", "127.0.0.1", "--port", str(port), "--no-enable-chunked-prefill", *VLLM_OPTIONS],
            stdout=sink, stderr=subprocess.STDOUT,
        )  # fmt: skip
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 300
    while True:
        if proc.poll() is not None:
            pytest.fail(f"vllm serve exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"vllm serve did not come up in 300 s:\n{log.read_text()[-3000:]}")
        time.sleep(1)
    yield base_url
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
