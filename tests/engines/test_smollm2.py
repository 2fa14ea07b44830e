"""SmolLM2 from the package registry (`harness fetch-model`) in the hf, vllm and openai (`vllm serve`)
backends: identical greedy texts in float32. One engine and one server, started one after the other."""

from serving import PROMPTS, free_port, start_server, stop_server

from harness.backends.hf import HFBackend
from harness.backends.openai import OpenAIBackend
from harness.backends.vllm import VLLMBackend
from harness.core.types import Request

REQUESTS = [
    Request("b", str(i), 0, ({"role": "user", "content": p},), i, 0.0, 1.0, 48) for i, p in enumerate(PROMPTS)
]


def texts(backend) -> dict[str, tuple[str, int, str]]:
    done = [c for batch in backend.generate(REQUESTS) for c in batch]
    return {c.request.item_id: (c.text, c.completion_tokens, c.finish_reason) for c in done}


def test_greedy_texts_are_identical_in_hf_vllm_and_vllm_serve(smollm2, tmp_path):
    hf = texts(HFBackend(str(smollm2), dtype="float32"))
    assert hf["0"][0].endswith(" is 4.") and hf["0"][2] == "stop"  # a model that reads the question
    assert "(1/2) * base * height" in hf["1"][0] and len({text for text, *_ in hf.values()}) == len(PROMPTS)
    engine = VLLMBackend(str(smollm2), dtype="float32", enforce_eager=True)
    try:
        assert texts(engine) == hf
    finally:
        engine.close()  # before the server takes its memory
    port = free_port()
    server = start_server(smollm2, port, tmp_path / "vllm-serve.log")
    try:
        assert texts(OpenAIBackend(str(smollm2), f"http://127.0.0.1:{port}/v1", concurrency=6)) == hf
    finally:
        stop_server(server)
