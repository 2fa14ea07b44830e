"""The transformers backend on the tiny model: seeds, greedy decoding, batching, token accounting."""

import pytest
import torch

from harness.backends.hf import HFBackend, SeededSampler
from harness.core.types import Request

MESSAGES = ({"role": "user", "content": "What is 2 + 2?"},)
OTHER = ({"role": "user", "content": "A much longer question about triangles and their areas, please."},)


def request(idx: int, seed: int, messages=MESSAGES, temperature=0.8, top_p=1.0, max_tokens=24) -> Request:
    return Request("b", "i", idx, messages, seed, temperature, top_p, max_tokens)


@pytest.fixture(scope="module")
def backend(tiny_model):
    return HFBackend(str(tiny_model), batch_size=4)


def texts(backend, requests):
    return [c.text for batch in backend.generate(requests) for c in batch]


def test_a_sample_depends_on_its_seed_not_its_batch(backend):
    requests = [request(0, 11), request(1, 12), request(2, 11, OTHER), request(3, 13)]
    together = texts(backend, requests)
    alone = [texts(backend, [r])[0] for r in requests]
    assert together == alone
    assert together[0] != together[1]  # different seeds, different samples


def test_temperature_zero_is_greedy(backend, tiny_model):
    outputs = texts(backend, [request(i, 100 + i, temperature=0.0) for i in range(3)])
    assert len(set(outputs)) == 1
    tiny_top_p = texts(backend, [request(0, 5, temperature=1.0, top_p=1e-6)])
    assert tiny_top_p == outputs[:1]  # top-p keeps only the most likely token


def test_token_counts_and_finish_reason(backend):
    [completion] = next(backend.generate([request(0, 3, max_tokens=16)]))
    assert completion.prompt_tokens == backend.prompt_tokens(MESSAGES)
    assert completion.think_opened  # the tiny template opens <think>
    if completion.finish_reason == "length":
        assert completion.completion_tokens == 16
    else:
        assert completion.finish_reason == "stop" and completion.completion_tokens <= 16


def test_stop_strings_end_the_text_before_them(backend):
    from dataclasses import replace

    [[free]] = backend.generate([request(0, 7, max_tokens=24)])
    stop = free.text[len(free.text) // 2 :][:3]  # a string from the middle of the free text
    assert stop.strip() and free.text.find(stop) > 0
    stopped = [replace(request(i, 7, max_tokens=24), stop=("never said", stop)) for i in range(2)]
    completions = [c for batch in backend.generate(stopped) for c in batch]
    assert [c.text for c in completions] == [free.text[: free.text.find(stop)]] * 2
    assert {c.finish_reason for c in completions} == {"stop"}
    assert all(c.completion_tokens < free.completion_tokens for c in completions)
    # the tokens counted are the fewest whose text holds the stop string
    tokens = backend.tokenizer(free.text, add_special_tokens=False)["input_ids"]
    k = backend._tokens_to_stop(tokens, (stop,))
    assert stop in backend.tokenizer.decode(tokens[:k]) and stop not in backend.tokenizer.decode(
        tokens[: k - 1]
    )


def test_sampler_draws_from_each_rows_generator():
    scores = torch.tensor([[0.0, 0.0, 0.0], [0.0, 5.0, 0.0]])
    first = SeededSampler([1, 2], temperature=1.0, top_p=1.0)(None, scores)
    again = SeededSampler([1, 2], temperature=1.0, top_p=1.0)(None, scores)
    assert torch.equal(first, again)
    assert (first == 0).sum(dim=1).tolist() == [1, 1]  # exactly one allowed token per row
    assert torch.equal(SeededSampler([1], temperature=0.0, top_p=1.0)(None, scores[:1]), scores[:1])
