"""The Reasoning Arena judge (Reasoning Arena paper, §4 and App. D) against a real `vllm serve` of
SmolLM2-135M-Instruct: every verdict is whitelisted or None and the counters add up. The small model often
fails to box a verdict, which runs the retry and parse-failure path for real: counted, never defaulted."""

from __future__ import annotations

import itertools
import time

import pytest
from serving import free_port, start_server, stop_server

from harness import HarnessError
from harness.backends import EngineConfig
from trainers.methods.arena.judge import (
    PAIR_VERDICTS,
    POINT_SCORES,
    ArenaJudge,
    PairAsk,
    PointAsk,
    ServedJudge,
    parse_boxed,
)

PROBLEM, REFERENCE = "Compute 17 * 23.", "391"
RESPONSES = [
    "17 * 23 = 17 * 20 + 17 * 3 = 340 + 51 = 391. The answer is \\boxed{391}.",
    "17 * 23 = 17 * 20 + 17 * 3 = 340 + 41 = 381. The answer is \\boxed{381}.",
    "\\boxed{391}",
    "It is about 400, so \\boxed{400}.",
]
SWAP = {"A": "B", "B": "A", "Tie": "Tie"}


@pytest.fixture(scope="module")
def served(smollm2, tmp_path_factory):
    port = free_port()
    proc = start_server(smollm2, port, tmp_path_factory.mktemp("arena-serve") / "vllm-serve.log")
    yield f"http://127.0.0.1:{port}/v1"
    stop_server(proc)


@pytest.fixture(scope="module")
def tokenizer(smollm2):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(smollm2)


@pytest.fixture
def judge(served, smollm2, tokenizer):
    generate = ServedJudge(EngineConfig(str(smollm2), backend="openai", base_url=served), max_tokens=64)
    yield ArenaJudge(generate, tokenizer=tokenizer, context_tokens=4096, max_tokens=64, seed=5)
    generate.close()


def presented(raw: list[dict], asked: int) -> list[str | None]:
    """Each fresh ask's verdict as presented: the first attempts in order, then the retries of the
    unparsable ones in order."""
    first, retries = raw[:asked], iter(raw[asked:])
    return [r["verdict"] if r["verdict"] is not None else next(retries)["verdict"] for r in first]


def test_pairwise_verdicts_from_a_real_judge_are_counted_and_cached(judge):
    asks = [PairAsk(PROBLEM, REFERENCE, a, b) for a, b in itertools.combinations(RESPONSES, 2)]
    draws = judge.state_dict()["rng"]
    verdicts = judge.compare(asks)
    assert len(verdicts) == 6 and set(verdicts) <= {*PAIR_VERDICTS, None}
    raw = judge.take_raw()
    assert all(r["verdict"] == parse_boxed(r["raw"], PAIR_VERDICTS) for r in raw)
    shown = presented(raw, len(asks))
    swaps = [r["swapped"] for r in raw[: len(asks)]]
    assert verdicts == [SWAP[v] if s and v else v for v, s in zip(shown, swaps, strict=True)]
    c = judge.take_counters()
    assert (c["calls"], c["cache_hits"]) == (6, 0)
    assert c["retries"] == sum(r["verdict"] is None for r in raw[: len(asks)]) == len(raw) - len(asks)
    assert c["requests"] == len(asks) + c["retries"]
    assert c["parse_failures"] == verdicts.count(None)  # no verdict is not a Tie
    assert (
        c["presented_a"] + c["presented_b"] + c["ties"] + c["parse_failures"] == c["calls"] - c["cache_hits"]
    )
    assert (c["presented_a"], c["presented_b"], c["ties"]) == tuple(shown.count(v) for v in PAIR_VERDICTS)

    judge.load_state_dict({**judge.state_dict(), "rng": draws})  # the same orders again
    again = judge.compare(asks)
    c = judge.take_counters()
    parsed = [k for k, v in enumerate(verdicts) if v is not None]
    assert c["cache_hits"] == len(parsed) and [again[k] for k in parsed] == [verdicts[k] for k in parsed]
    assert c["requests"] == verdicts.count(None) + c["retries"]  # only the unparsed are asked again


def test_pointwise_scores_from_a_real_judge_are_counted_and_cached(judge):
    asks = [PointAsk(PROBLEM, REFERENCE, r) for r in RESPONSES]
    scores = judge.rate(asks)
    assert set(scores) <= {*POINT_SCORES.values(), None}
    raw = judge.take_raw()
    assert all(r["verdict"] == parse_boxed(r["raw"], POINT_SCORES) for r in raw)
    assert [POINT_SCORES.get(v) for v in presented(raw, len(asks))] == scores
    c = judge.take_counters()
    assert c["requests"] == len(asks) + c["retries"] and c["parse_failures"] == scores.count(None)
    assert c["presented_a"] + c["presented_b"] + c["ties"] == 0

    again = judge.rate(asks)
    c = judge.take_counters()
    parsed = [k for k, s in enumerate(scores) if s is not None]
    assert c["cache_hits"] == len(parsed) and [again[k] for k in parsed] == [scores[k] for k in parsed]
    assert c["requests"] == scores.count(None) + c["retries"]


def test_a_dead_judge_server_is_a_clear_error(smollm2, tokenizer):
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    engine = EngineConfig(str(smollm2), backend="openai", base_url=url, server_wait=1, max_retries=0)
    judge = ArenaJudge(
        ServedJudge(engine, max_tokens=16), tokenizer=tokenizer, context_tokens=4096, max_tokens=16
    )
    started = time.monotonic()
    with pytest.raises(HarnessError, match="no answer for"):
        judge.compare([PairAsk(PROBLEM, REFERENCE, *RESPONSES[:2])])
    assert time.monotonic() - started < 30
    assert judge.take_counters()["requests"] == 0  # nothing was judged
