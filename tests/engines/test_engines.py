"""The vllm and openai backends against the real engine and server: seeds, parity, context."""

from dataclasses import replace

import pytest
from serving import PROMPTS

from harness import HarnessError
from harness.backends.hf import HFBackend
from harness.backends.openai import OpenAIBackend
from harness.backends.vllm import sample_runs
from harness.core.types import Request
from harness.stages.generate import check_context
from harness.stages.plan import derive_seed


def greedy_requests(max_tokens: int = 40) -> list[Request]:
    return [
        Request("b", str(i), 0, ({"role": "user", "content": p},), i, 0.0, 1.0, max_tokens)
        for i, p in enumerate(PROMPTS)
    ]


def sampled_requests(items: int = 3, n: int = 4, first: int = 0) -> list[Request]:
    return [
        Request("b", str(i), k, ({"role": "user", "content": PROMPTS[i]},), derive_seed(5, "b", str(i), k),
                0.8, 0.95, 24)
        for i in range(items) for k in range(first, n)
    ]  # fmt: skip


def outcomes(backend, requests) -> dict:
    done = {c.request.key: c for batch in backend.generate(requests) for c in batch}
    assert sorted(done) == sorted(r.key for r in requests)
    return {key: (c.text, c.prompt_tokens, c.completion_tokens, c.finish_reason) for key, c in done.items()}


@pytest.fixture(scope="module")
def hf_greedy(tiny_model):
    return outcomes(HFBackend(str(tiny_model), dtype="float32"), greedy_requests())


def test_greedy_parity_hf_and_vllm(engine, hf_greedy):
    vllm_greedy = outcomes(engine, greedy_requests())
    assert vllm_greedy == hf_greedy
    assert len({text for text, *_ in hf_greedy.values()}) == len(PROMPTS)  # the prompts lead apart


@pytest.mark.parametrize("api", ["chat", "completions"])
def test_greedy_parity_hf_and_openai(server, tiny_model, hf_greedy, api):
    backend = OpenAIBackend(str(tiny_model), server, api=api, concurrency=4)
    assert outcomes(backend, greedy_requests()) == hf_greedy


def stopped_requests(hf_greedy) -> list[Request]:
    """The greedy requests, each with a stop string from the middle of its free text."""
    stops = {key[1]: text[len(text) // 2 :][:3] for key, (text, *_) in hf_greedy.items()}
    return [replace(r, stop=("never said", stops[r.item_id])) for r in greedy_requests()]


def test_stop_strings_parity_hf_vllm_and_openai(engine, server, tiny_model, hf_greedy):
    requests = stopped_requests(hf_greedy)
    hf = outcomes(HFBackend(str(tiny_model), dtype="float32"), requests)
    for r in requests:
        text, _, tokens, finish = hf[r.key]
        free_text, _, free_tokens, _ = hf_greedy[r.key]
        assert text == free_text[: free_text.find(r.stop[1])] and finish == "stop" and tokens < free_tokens
    # vLLM's incremental detokenizer may see a stop string one token later (after a split character)
    # than our count of the fewest tokens that hold it: texts agree, counts by at most one
    for other in (engine, OpenAIBackend(str(tiny_model), server, api="completions")):
        done = outcomes(other, requests)
        assert {k: (t, p, f) for k, (t, p, _, f) in done.items()} == {
            k: (t, p, f) for k, (t, p, _, f) in hf.items()
        }
        assert all(0 <= done[k][2] - hf[k][2] <= 1 for k in hf)


def test_n_samples_in_one_request_carry_their_own_seeds(engine):
    requests = sampled_requests()
    assert [len(run) for run in sample_runs(requests)] == [4, 4, 4]
    together = outcomes(engine, requests)
    assert len({text for text, *_ in together.values()}) == 12  # distinct samples
    resumed = outcomes(engine, sampled_requests(first=2))  # samples 2 and 3 only, as after a crash
    assert resumed == {key: together[key] for key in resumed}
    alone = outcomes(engine, [requests[5]])  # one sample, on its own
    assert alone == {requests[5].key: together[requests[5].key]}


def test_server_samples_equal_offline_samples(engine, server, tiny_model):
    backend = OpenAIBackend(str(tiny_model), server, concurrency=8)
    assert outcomes(backend, sampled_requests(items=2)) == outcomes(engine, sampled_requests(items=2))


def test_context_overflow_fails_before_generating(engine, server, tiny_model):
    too_long = [Request("b", "0", 0, ({"role": "user", "content": PROMPTS[0]},), 1, 0.0, 1.0, 32768)]
    for backend in (engine, OpenAIBackend(str(tiny_model), server)):
        with pytest.raises(HarnessError, match=r"exceeds the model's context of 32768 tokens"):
            check_context(backend, too_long)


def test_engine_facts_are_recorded(engine):
    facts = engine.describe()
    assert facts["vllm"].startswith("0.31.")
    assert (facts["dtype"], facts["tensor_parallel_size"], facts["max_model_len"]) == ("float32", 1, 32768)
    assert facts["enable_prefix_caching"] is True


def test_many_seeded_prompts_at_once(engine, shared_data):
    """More prompt tokens than one step takes: on the CPU a split seeded prefill used to kill vLLM."""
    from harness.backends import EngineConfig
    from harness.config import EvalConfig, SamplingOverrides
    from harness.stages.plan import plan

    cfg = EvalConfig(
        benchmarks=("aime24", "aime25"),
        engine=EngineConfig("m"),
        sampling=SamplingOverrides(n=8, max_tokens=4),
        data_dir=shared_data,
    )
    requests = plan(cfg).requests
    assert len(outcomes(engine, requests)) == 480
