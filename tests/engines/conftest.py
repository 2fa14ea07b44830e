"""A real vLLM engine (the CPU build) and a real `vllm serve` of the tiny model on 127.0.0.1."""

import os

import pytest
from serving import free_port, start_server, stop_server

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB of KV cache; the default reserves far more


@pytest.fixture(scope="session")
def engine(tiny_model):
    from harness.backends.vllm import VLLMBackend

    backend = VLLMBackend(str(tiny_model), dtype="float32", enforce_eager=True)
    yield backend
    backend.close()  # before pytest closes the streams vLLM logs to


@pytest.fixture(scope="session")
def server(tiny_model, tmp_path_factory):
    port = free_port()
    proc = start_server(tiny_model, port, tmp_path_factory.mktemp("server") / "vllm-serve.log")
    yield f"http://127.0.0.1:{port}/v1"
    stop_server(proc)
