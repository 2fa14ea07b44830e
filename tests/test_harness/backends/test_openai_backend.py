"""The openai backend against a fault-injecting server: retries, refusals, reasoning, kept records.

The same backend against a real `vllm serve` is tested in tests/engines.
"""

import json
import re
import time

import pytest
from fake_openai import MODEL, FakeOpenAI, answer
from helpers import run_cli

from harness import HarnessError
from harness.backends.openai import OpenAIBackend, ServerError, joined_reasoning
from harness.core.thinking import split_thinking
from harness.core.types import Request

MESSAGES = ({"role": "user", "content": "What is 2 + 2?"},)


def requests(count: int) -> list[Request]:
    return [Request("b", f"i{k}", 0, MESSAGES, 100 + k, 0.6, 0.95, 32) for k in range(count)]


def backend(fake: FakeOpenAI, **options) -> OpenAIBackend:
    return OpenAIBackend(MODEL, fake.base_url, backoff=0.01, **options)


def generate(backend: OpenAIBackend, batch: list[Request]) -> dict[str, str]:
    return {c.request.item_id: c.text for done in backend.generate(batch) for c in done}


def test_one_request_per_sample_with_its_seed_and_the_api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI() as fake:
        texts = generate(backend(fake, concurrency=3), requests(7))
    assert texts == {f"i{k}": f"The answer is \\boxed{{{100 + k}}}" for k in range(7)}
    assert sorted(b["seed"] for b in fake.bodies) == list(range(100, 107))
    body = fake.bodies[0]
    assert (body["model"], body["n"], body["max_tokens"], body["temperature"], body["top_p"]) == (
        MODEL, 1, 32, 0.6, 0.95,
    )  # fmt: skip
    assert body["messages"] == list(MESSAGES)
    assert fake.auth == ["Bearer sk-test"] * 7


def test_rate_limits_and_server_errors_are_retried():
    def flaky(body, count):
        if count == 1:
            return 429, {"error": "slow down"}, {"Retry-After": "0"}
        if count in (2, 3):
            return 503, {"error": "overloaded"}, {}
        return 200, answer(body), {}

    with FakeOpenAI(flaky) as fake:
        texts = generate(backend(fake, concurrency=1), requests(2))
    assert texts == {"i0": "The answer is \\boxed{100}", "i1": "The answer is \\boxed{101}"}
    assert len(fake.bodies) == 5


def test_a_server_that_keeps_failing_stops_with_the_reason():
    with FakeOpenAI(lambda body, count: (500, {"error": "boom"}, {})) as fake:
        with pytest.raises(ServerError, match=r"still failing after 2 retries in \d\.\d s: HTTP 500.*boom"):
            generate(backend(fake, max_retries=2), requests(1))
    assert len(fake.bodies) == 3


HTML = "<!DOCTYPE html>\n<html><body>\n<h1>Sign in to the proxy</h1></body></html>"


def test_a_reply_that_is_not_json_is_retried_then_named():
    html_first = lambda body, count: (200, HTML, {}) if count <= 2 else (200, answer(body), {})  # noqa: E731
    with FakeOpenAI(html_first) as fake:
        assert generate(backend(fake, concurrency=1, max_retries=2), requests(1)) == {
            "i0": "The answer is \\boxed{100}"
        }
    with FakeOpenAI(lambda body, count: (200, HTML, {})) as fake:
        with pytest.raises(ServerError) as error:
            generate(backend(fake, max_retries=1), requests(1))
    assert re.fullmatch(
        rf"POST {fake.base_url}/chat/completions still failing after 1 retries in \d\.\d s: "
        r"HTTP 200 with a body that is not a JSON object: "
        r"<!DOCTYPE html> <html><body> <h1>Sign in to the proxy</h1></body></html>",
        str(error.value),
    )


def dropping(seed: int, seconds: float):
    """Drop the request with this seed for `seconds` after the first request; answer the others slowly."""
    start: list[float] = []

    def reply(body, count):
        start.append(time.monotonic())
        if body["seed"] == seed and time.monotonic() - start[0] < seconds:
            return None, {}, {}
        time.sleep(0.05)
        return 200, answer(body), {}

    return reply


def test_an_unavailable_server_is_polled_until_nothing_answered_for_the_wait():
    with FakeOpenAI(dropping(100, seconds=60)) as fake:
        started = time.monotonic()
        with pytest.raises(ServerError) as error:
            generate(backend(fake, max_retries=0, server_wait=0.5), requests(1))
    assert 0.5 <= time.monotonic() - started < 1.5 and len(fake.bodies) > 10  # not counted as retries
    assert re.fullmatch(
        rf"POST {fake.base_url}/chat/completions: no answer for (0\.[5-9]|1\.[0-4]) s "
        r"\(the limit is 0\.5 s\); last: RemoteProtocolError: Server disconnected without sending a "
        r"response\.",
        str(error.value),
    )


def test_answers_to_other_requests_restart_the_wait():
    with FakeOpenAI(dropping(100, seconds=1.0)) as fake:
        texts = generate(backend(fake, concurrency=2, server_wait=0.3), requests(30))
    assert texts == {f"i{k}": f"The answer is \\boxed{{{100 + k}}}" for k in range(30)}
    assert len([b for b in fake.bodies if b["seed"] == 100]) > 10


def test_the_recorded_server_model_keeps_only_stable_fields():
    with FakeOpenAI() as fake:
        described = backend(fake).describe()["server_model"]
    stable = {"id": MODEL, "object": "model", "owned_by": "vllm", "root": MODEL, "parent": None}
    assert described == {**stable, "max_model_len": 4096}


def test_a_request_that_times_out_counts_as_failed_not_as_a_server_gone():
    def slow(body, count):
        time.sleep(0.5)
        return 200, answer(body), {}

    with FakeOpenAI(slow) as fake:
        with pytest.raises(ServerError, match=r"still failing after 1 retries in \d\.\d s: ReadTimeout"):
            generate(backend(fake, request_timeout=0.2, max_retries=1), requests(1))
    assert len(fake.bodies) == 2


def test_a_refused_request_is_not_retried():
    with FakeOpenAI(lambda body, count: (400, {"error": "max_tokens is too large"}, {})) as fake:
        with pytest.raises(ServerError, match="HTTP 400.*max_tokens is too large"):
            generate(backend(fake), requests(1))
    assert len(fake.bodies) == 1


def test_dead_server_and_wrong_model_are_clear():
    with FakeOpenAI() as fake:
        url = fake.base_url
        with pytest.raises(ServerError, match="does not serve model 'other/model'; it serves: fake/model"):
            OpenAIBackend("other/model", url)
    with pytest.raises(
        ServerError, match=r"GET .*/models: no answer for 0\.\d s \(the limit is 0\.2 s\); last: ConnectError"
    ):
        OpenAIBackend(MODEL, url, server_wait=0.2, backoff=0.01)


def test_completions_endpoint_needs_the_local_template():
    with FakeOpenAI() as fake:
        with pytest.raises(HarnessError, match="--api completions renders prompts locally"):
            backend(fake, api="completions")


def test_reasoning_fields_join_into_one_text():
    def reasoner(body, count):
        message = {"reasoning_content": "2 plus 2 is 4.", "content": "\\boxed{4}"}
        if count == 2:
            message = {"reasoning": "still thinking", "content": None}  # ran out of tokens
        return 200, {"choices": [{"message": message, "finish_reason": "stop"}]}, {}

    with FakeOpenAI(reasoner) as fake:
        done = [c for batch in backend(fake, concurrency=1).generate(requests(2)) for c in batch]
    first, second = (split_thinking(c.text, c.think_opened) for c in done)
    assert (first.reasoning, first.answer, first.unclosed_think) == ("2 plus 2 is 4.", "\\boxed{4}", False)
    assert (second.reasoning, second.answer, second.unclosed_think) == ("still thinking", None, True)
    assert joined_reasoning({"content": "plain"}, think_opened=False) == ("plain", False)


def eval_args(base_url: str, data, out) -> list[str]:
    return [
        "eval", "--benchmarks", "aime24", "--limit", "4", "--n", "3", "--model", MODEL, "--backend", "openai",
        "--base-url", base_url, "--concurrency", "1", "--max-retries", "1", "--data-dir", str(data),
        "--out", str(out),
    ]  # fmt: skip


@pytest.mark.slow  # seconds each: `tox -e unit` leaves it to the full tier
def test_failing_server_keeps_finished_records_and_resume_asks_only_for_the_rest(shared_data, tmp_path):
    out = tmp_path / "run"
    fails_after_five = lambda body, count: (200, answer(body), {}) if count <= 5 else (500, {}, {})  # noqa: E731
    with FakeOpenAI(fails_after_five) as fake:
        done = run_cli(*eval_args(fake.base_url, shared_data, out), check=False)
    assert done.returncode == 2
    assert "still failing after 1 retries in" in done.stderr and "HTTP 500" in done.stderr
    kept = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    assert len(kept) == 5

    with FakeOpenAI() as healthy:
        run_cli(*eval_args(healthy.base_url, shared_data, out))
    asked = {b["seed"] for b in healthy.bodies}
    assert len(healthy.bodies) == 7 and asked.isdisjoint(g["seed"] for g in kept)
    final = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    assert len(final) == 12 and all(
        g["text"] == f"The answer is \\boxed{{{g['seed'] % 1000}}}" for g in final
    )
    info = json.loads((out / "run.json").read_text())
    assert info["engine"]["backend"] == "openai" and info["engine"]["server_model"]["max_model_len"] == 4096
    assert json.loads((out / "results.json").read_text())["aime24"]["n_samples"] == 12
