"""The Reasoning Arena judge (Reasoning Arena paper, §4 and App. D) with scripted replies: boxed
parsing, order randomisation and remapping, one retry, the cache, truncation, pointwise scores, counters;
ServedJudge against the scripted OpenAI-compatible server, PolicyJudge with a stub engine. The real judge
model is in tests/engines/test_arena_judge_served.py."""

from __future__ import annotations

import pickle
import random
import re
import socket
import time

import pytest
from fake_openai import FakeOpenAI

from harness import HarnessError
from harness.backends import EngineConfig
from trainers.engine import Generation
from trainers.methods.arena.judge import (
    PAIR_VERDICTS,
    POINT_SCORES,
    SLACK_TOKENS,
    ArenaJudge,
    PairAsk,
    PointAsk,
    PolicyJudge,
    ServedJudge,
    cache_key,
    cut_text,
    fill,
    last_boxed,
    parse_boxed,
    split_room,
    truncate_middle,
)

PROBLEM, REFERENCE = "Find n such that n + 1 = 28.", "27"
CUT = re.compile(r"\n\[… (\d+) tokens cut …\]\n")


class Chars:
    """A tokenizer with one token per character: counts are exact."""

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return [ord(c) for c in text]

    def decode(self, ids) -> str:
        return "".join(map(chr, ids))


class Scripted:
    """A JudgeGenerate answering `reply(prompt)`, recording every call's prompts, seeds and temperature."""

    def __init__(self, reply):
        self.reply, self.calls = reply, []

    def __call__(self, prompts, seeds, temperature):
        self.calls.append((list(prompts), list(seeds), temperature))
        return [self.reply(p) for p in prompts]

    @property
    def prompts(self) -> list[str]:
        return [p for prompts, _, _ in self.calls for p in prompts]


def shown(prompt: str) -> tuple[str, str]:
    """Responses A and B of a pairwise prompt, as presented."""
    a = prompt.split("[RESPONSE A]\n", 1)[1].split("\n\n[RESPONSE B]\n", 1)[0]
    b = prompt.split("[RESPONSE B]\n", 1)[1].rsplit("\n\nWeigh both", 1)[0]
    return a, b


def picks_good(prompt: str) -> str:
    return "Analysis.\n\\boxed{A}" if "GOOD" in shown(prompt)[0] else "Analysis.\n\\boxed{B}"


def judge_with(reply, **options) -> tuple[ArenaJudge, Scripted]:
    generate = Scripted(reply)
    return ArenaJudge(generate, tokenizer=Chars(), **options), generate


def pair(first: str, second: str) -> PairAsk:
    return PairAsk(PROBLEM, REFERENCE, first, second)


def point(response: str) -> PointAsk:
    return PointAsk(PROBLEM, REFERENCE, response)


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("so \\boxed{A}", "A"),
        ("\\boxed{A} on reflection \\boxed{B}", "B"),  # the last box wins
        ("\\boxed{A} on reflection \\boxed{C}", None),  # even over an earlier valid one
        ("\\boxed{ A }", "A"),
        ("\\boxed{tie}", "Tie"),
        ("\\boxed{C}", None),
        ("\\boxed{\\text{A}}", None),
        ("A is better.", None),
        ("\\boxed{A", None),  # never closes
        ("<think>\\boxed{A}</think>Final: \\boxed{B}", "B"),
        ("<think>\\boxed{A}</think>I cannot decide.", None),  # only after the last </think>
    ],
)
def test_parse_pairwise_verdicts(text, verdict):
    assert parse_boxed(text, PAIR_VERDICTS) == verdict


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("\\boxed{1}", "1"),
        ("\\boxed{0.5}", "0.5"),
        ("\\boxed{0}", "0"),
        ("\\boxed{1.0}", "1"),
        ("\\boxed{.5}", "0.5"),
        ("\\boxed{0.50}", "0.5"),
        ("\\boxed{0.0}", "0"),
        ("\\boxed{0.7}", None),
        ("\\boxed{2}", None),
        ("\\boxed{1/2}", None),
        ("\\boxed{\\frac{1}{2}}", None),
        ("\\boxed{A}", None),
    ],
)
def test_parse_pointwise_scores(text, score):
    assert parse_boxed(text, POINT_SCORES) == score


def test_last_boxed_reads_nested_braces():
    assert last_boxed("x \\boxed{\\frac{1}{2}} y") == "\\frac{1}{2}"
    assert last_boxed("\\boxed{a{b}c} and \\boxed{ {d} }") == "{d}"
    assert last_boxed("nothing boxed") is None


def test_truncate_middle_keeps_head_and_tail():
    assert truncate_middle(range(10), 10, 4) == (list(range(10)), 0)
    assert truncate_middle(range(20), 10, 4) == ([0, 1, 2, 3, 4, 5, 16, 17, 18, 19], 10)
    assert truncate_middle(range(20), 3, 5) == ([17, 18, 19], 17)  # the tail alone when it fills the budget
    assert truncate_middle(range(20), 0, 5) == ([], 20)


def test_cut_text_marks_the_cut():
    text, cut = cut_text([ord(c) for c in "HEAD" + "x" * 50 + "TAIL"], 8, 4, Chars().decode)
    assert (text, cut) == ("HEAD\n[… 50 tokens cut …]\nTAIL", 50)


def test_split_room_gives_short_texts_their_length_and_long_ones_the_rest():
    assert split_room([10, 100], 60) == [10, 50]
    assert split_room([100, 100], 60) == [30, 30]
    assert split_room([5, 5], 60) == [5, 5]
    assert split_room([100, 10, 40], 90) == [40, 10, 40]


def test_fill_leaves_braces_in_responses_alone():
    text = fill(
        "{problem}|{response_a}|{response_b}", problem="p {x}", response_a="{response_b}", response_b="b"
    )
    assert text == "p {x}|{response_b}|b"


def test_pairwise_prompt_carries_problem_reference_and_both_responses():
    judge, generate = judge_with(lambda p: "\\boxed{Tie}")
    assert judge.compare([pair("first {braces}", "second")]) == ["Tie"]
    (prompt,) = generate.prompts
    assert f"[PROBLEM]\n{PROBLEM}\n" in prompt
    assert "[REFERENCE ANSWER]\nThe correct answer is 27." in prompt
    assert sorted(shown(prompt)) == ["first {braces}", "second"]
    assert "500 words" in prompt and prompt.endswith("\\boxed{A}, \\boxed{B} or \\boxed{Tie}.")


def test_order_is_drawn_per_ask_and_verdicts_are_remapped():
    asks = [pair(f"GOOD {k}", f"bad {k}") if k % 2 else pair(f"bad {k}", f"GOOD {k}") for k in range(40)]
    judge, generate = judge_with(picks_good, seed=7)
    verdicts = judge.compare(asks)
    assert verdicts == ["A" if k % 2 else "B" for k in range(40)]  # right in both orders
    draws = random.Random(7)
    swaps = [draws.random() < 0.5 for _ in asks]  # one independent draw per ask
    assert [r["swapped"] for r in judge.take_raw()] == swaps and 10 < sum(swaps) < 30
    assert [shown(p)[0] for p in generate.prompts] == [
        a.second if s else a.first for a, s in zip(asks, swaps, strict=True)
    ]
    counters = judge.take_counters()
    assert counters["presented_a"] + counters["presented_b"] == counters["requests"] == 40


def test_a_judge_that_always_says_a_splits_by_the_swap():
    judge, _ = judge_with(lambda p: "\\boxed{A}", seed=3)
    verdicts = judge.compare([pair(f"x{k}", f"y{k}") for k in range(30)])
    swaps = [r["swapped"] for r in judge.take_raw()]
    assert verdicts == ["B" if s else "A" for s in swaps] and {"A", "B"} == set(verdicts)
    counters = judge.take_counters()
    assert counters["presented_a"] == counters["requests"] == counters["calls"] == 30
    assert counters["presented_b"] == counters["ties"] == counters["parse_failures"] == 0


def test_an_unparsable_reply_is_retried_once_hotter_with_the_next_seed():
    replies = iter(["I cannot decide.", "\\boxed{Tie}"])
    judge, generate = judge_with(lambda p: next(replies), temperature=0.0, retry_temperature=0.8)
    assert judge.compare([pair("x", "y")]) == ["Tie"]
    (first, seeds, t0), (again, retry_seeds, t1) = generate.calls
    assert first == again and (t0, t1) == (0.0, 0.8) and retry_seeds == [seeds[0] + 1]
    assert [r["attempt"] for r in judge.take_raw()] == [0, 1]
    counters = judge.take_counters()
    assert (counters["requests"], counters["retries"], counters["parse_failures"], counters["ties"]) == (
        2,
        1,
        0,
        1,
    )


def test_only_the_unparsable_are_retried_and_two_failures_give_none():
    judge, generate = judge_with(lambda p: "\\boxed{A}" if "GOOD" in p else "no idea")
    assert judge.compare([pair("GOOD", "y"), pair("x", "y"), pair("y", "GOOD")]) == ["A", None, "B"]
    assert [len(prompts) for prompts, _, _ in generate.calls] == [3, 1]
    counters = judge.take_counters()
    assert (counters["requests"], counters["retries"], counters["parse_failures"]) == (4, 1, 1)
    assert counters["ties"] == 0  # no default Tie
    assert judge.compare([pair("x", "y")]) == [None]  # a failure is not cached: asked again
    assert judge.take_counters()["requests"] == 2


def test_a_repeated_ask_is_asked_once_per_presented_order():
    judge, generate = judge_with(picks_good, seed=0)
    verdicts = [judge.compare([pair("GOOD x", "bad y")])[0] for _ in range(8)]
    assert verdicts == ["A"] * 8
    counters = judge.take_counters()
    assert (counters["requests"], counters["cache_hits"], counters["calls"]) == (2, 6, 8)
    assert sorted(shown(p) for p in generate.prompts) == [("GOOD x", "bad y"), ("bad y", "GOOD x")]
    # the mirror ask is the same prompts: served from the cache, remapped to its own order
    assert judge.compare([pair("bad y", "GOOD x")] * 5) == ["B"] * 5
    assert len(generate.calls) == 2 and judge.take_counters()["cache_hits"] == 5


def test_cache_keys_separate_order_kind_and_problem():
    key = cache_key("pair", PROBLEM, REFERENCE, "x", "y")
    assert key == cache_key("pair", PROBLEM, REFERENCE, "x", "y")
    others = [
        cache_key("pair", PROBLEM, REFERENCE, "y", "x"),
        cache_key("pair", "another problem", REFERENCE, "x", "y"),
        cache_key("pair", PROBLEM, "26", "x", "y"),
        cache_key("point", PROBLEM, REFERENCE, "x", "y"),
    ]
    assert len({key, *others}) == 5


def test_the_cache_keeps_the_most_recently_used():
    judge, generate = judge_with(lambda p: "\\boxed{1}", cache_size=3)
    judge.rate([point(f"r{k}") for k in range(5)])  # r2, r3, r4 kept
    judge.rate([point("r2")])  # a hit: r2 becomes the most recent
    judge.rate([point("r5")])  # drops r3, the least recently used
    assert list(judge.cache) == [cache_key("point", PROBLEM, REFERENCE, f"r{k}") for k in (4, 2, 5)]
    judge.take_counters()
    judge.rate([point("r2"), point("r4"), point("r5"), point("r3")])
    counters = judge.take_counters()
    assert (counters["cache_hits"], counters["requests"]) == (3, 1)
    assert len(judge.cache) == 3


def test_state_round_trip_gives_the_same_draws_and_hits():
    asks = [pair(f"GOOD {k}", f"bad {k}") for k in range(6)]
    judge, _ = judge_with(picks_good, seed=11)
    judge.compare(asks)
    judge.take_counters(), judge.take_raw()
    state = pickle.loads(pickle.dumps(judge.state_dict()))  # as a checkpoint stores it
    resumed, generate = judge_with(picks_good, seed=999)
    resumed.load_state_dict(state)
    assert list(resumed.cache) == [k for k, _ in judge.state_dict()["cache"]]
    later = asks + [pair(f"GOOD {k}", f"bad {k}") for k in range(6, 10)]
    assert resumed.compare(later) == judge.compare(later) == ["A"] * 10
    assert [r["swapped"] for r in resumed.take_raw()] == [r["swapped"] for r in judge.take_raw()]
    assert resumed.take_counters() == judge.take_counters()
    assert resumed.state_dict()["cache"] == judge.state_dict()["cache"]


def test_a_long_response_is_cut_in_the_middle_to_fit_the_context():
    long = "HEAD " + "step " * 2000 + "so the answer is \\boxed{27}"
    judge, generate = judge_with(
        lambda p: "\\boxed{A}", context_tokens=3000, max_tokens=500, keep_tail_tokens=40
    )
    judge.compare([pair(long, "short \\boxed{26}")])
    (prompt,) = generate.prompts
    assert len(prompt) <= 3000 - 500 - SLACK_TOKENS
    cut = next(r for r in shown(prompt) if r != "short \\boxed{26}")
    head, count, tail = CUT.split(cut)
    assert head.startswith("HEAD step") and tail == long[-40:]  # the boxed answer survives
    assert len(head) + int(count) + len(tail) == len(long)
    assert judge.take_counters()["truncated"] == 1


def test_two_long_responses_share_the_room():
    judge, generate = judge_with(lambda p: "\\boxed{B}", context_tokens=3000, max_tokens=500)
    judge.compare([pair("a" * 5000, "b" * 4000)])
    (prompt,) = generate.prompts
    assert len(prompt) <= 3000 - 500 - SLACK_TOKENS
    assert len(shown(prompt)[0]) == len(shown(prompt)[1])  # equal shares of the room
    assert judge.take_counters()["truncated"] == 2


def test_the_chat_templated_prompt_fits_with_a_bpe_tokenizer(plain_model):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(plain_model)
    generate = Scripted(lambda p: "\\boxed{0}")
    judge = ArenaJudge(
        generate, tokenizer=tokenizer, context_tokens=2048, max_tokens=256, keep_tail_tokens=64
    )
    words = "Let $x^2 + y^2 = r^2$, so by \\frac{1}{a} the area is $\\sqrt{3}$. "
    assert judge.rate([point(words * 400 + "Hence \\boxed{27}.")]) == [0.0]
    (prompt,) = generate.prompts
    ids = tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=True, return_dict=True
    )["input_ids"]
    assert 2048 - 256 - SLACK_TOKENS < len(ids) <= 2048 - 256
    assert "tokens cut" in prompt and prompt.endswith("\\boxed{1}, \\boxed{0.5} or \\boxed{0}.")
    assert "Hence \\boxed{27}." in prompt


def test_a_problem_too_long_for_the_context_is_refused():
    judge, _ = judge_with(lambda p: "\\boxed{A}", context_tokens=1000, max_tokens=100)
    with pytest.raises(ValueError, match="before any response"):
        judge.compare([PairAsk("p" * 1000, REFERENCE, "x", "y")])
    with pytest.raises(ValueError, match="no room"):
        ArenaJudge(Scripted(str), tokenizer=Chars(), context_tokens=1000, max_tokens=900)


POINT_REPLIES = {  # response: (first reply, the retry's reply)
    "right": ("\\boxed{1}", ""),
    "sloppy": ("\\boxed{0.5}", ""),
    "wrong": ("\\boxed{0}", ""),
    "odd": ("\\boxed{0.7}", "\\boxed{1.0}"),
    "mute": ("hmm", "hmm"),
}


def test_pointwise_scores_whitelist_and_retry():
    attempts: dict[str, int] = {}

    def reply(prompt: str) -> str:
        response = prompt.split("[RESPONSE]\n", 1)[1].split("\n\n", 1)[0]
        attempts[response] = attempts.get(response, 0) + 1
        first, again = POINT_REPLIES[response]
        return first if attempts[response] == 1 else again

    judge, generate = judge_with(reply, retry_temperature=0.6)
    scores = judge.rate([point(r) for r in ("right", "sloppy", "wrong", "odd", "mute")])
    assert scores == [1.0, 0.5, 0.0, 1.0, None]
    assert "[RESPONSE]\nright\n" in generate.prompts[0] and "The correct answer is 27." in generate.prompts[0]
    assert [(len(prompts), t) for prompts, _, t in generate.calls] == [(5, 0.0), (2, 0.6)]
    counters = judge.take_counters()
    assert (counters["requests"], counters["retries"], counters["parse_failures"]) == (7, 2, 1)
    assert counters["presented_a"] + counters["presented_b"] + counters["ties"] == 0
    assert judge.rate([point("right"), point("odd")]) == [1.0, 1.0] and len(generate.calls) == 2  # cached


def test_take_counters_returns_every_counter_and_clears():
    judge, _ = judge_with(lambda p: "\\boxed{A}")
    judge.compare([pair("x", "y")])
    taken = judge.take_counters()
    assert taken["calls"] == 1 and taken["requests"] == 1 and taken["cache_hits"] == 0
    assert set(taken) == {"calls", "requests", "cache_hits", "retries", "parse_failures", "ties",
                          "presented_a", "presented_b", "truncated"}  # fmt: skip
    assert set(judge.take_counters().values()) == {0}
    assert len(judge.take_raw()) == 1 and judge.take_raw() == []


def served_reply(body: dict, count: int):
    prompt = body["messages"][0]["content"]
    if "slow" in prompt:
        time.sleep(0.3)  # finishes after the others: replies come back out of order
    text = picks_good(prompt)
    return 200, {"choices": [{"message": {"content": text}, "finish_reason": "stop"}], "usage": {}}, {}


def test_served_judge_keeps_one_backend_and_returns_replies_in_order():
    asks = [
        pair("GOOD slow", "bad"),
        pair("bad 1", "GOOD 1"),
        pair("GOOD 2", "bad 2"),
        pair("bad 3", "GOOD 3"),
    ]
    with FakeOpenAI(served_reply) as fake:
        served = ServedJudge(
            EngineConfig("fake/model", backend="openai", base_url=fake.base_url), max_tokens=32
        )
        judge = ArenaJudge(served, tokenizer=Chars())
        assert judge.compare(asks) == ["A", "B", "A", "B"]
        backend = served.backend
        assert judge.compare([pair("GOOD 4", "bad 4")]) == ["A"] and served.backend is backend
        served.close()
    assert served.backend is None
    assert {(b["model"], b["max_tokens"], b["temperature"]) for b in fake.bodies} == {("fake/model", 32, 0.0)}
    shown_first = [r["swapped"] for r in judge.take_raw()]
    keys = [
        cache_key("pair", PROBLEM, REFERENCE, *((a.second, a.first) if s else (a.first, a.second)))
        for a, s in zip([*asks, pair("GOOD 4", "bad 4")], shown_first, strict=True)
    ]
    assert sorted(b["seed"] for b in fake.bodies) == sorted(int(k[:15], 16) for k in keys)


def test_served_judge_on_a_dead_server_raises():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    engine = EngineConfig(
        "fake/model", backend="openai", base_url=f"http://127.0.0.1:{port}/v1", server_wait=0
    )
    judge = ArenaJudge(ServedJudge(engine, max_tokens=8), tokenizer=Chars())
    with pytest.raises(HarnessError, match=f"127.0.0.1:{port}"):
        judge.compare([pair("x", "y")])


class ByteTokenizer:
    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return list(text.encode())


class StubEngine:
    """encode: the prompt's bytes; generate: the prompt reversed, cut to max_tokens, then EOS (0)."""

    def __init__(self):
        self.budgets: list[int | None] = []
        self.prompts: list[list[int]] = []
        self.tokenizer = ByteTokenizer()

    def encode(self, messages) -> list[int]:
        ((message,),) = [messages]
        assert message["role"] == "user"
        return list(message["content"].encode())

    def generate(self, prompts, max_tokens=None) -> list[Generation]:
        self.budgets.append(max_tokens)
        self.prompts += [list(p) for p in prompts]
        return [
            Generation([*p[::-1][:max_tokens], 0], [0.0] * (min(len(p), max_tokens) + 1), "stop")
            for p in prompts
        ]

    def decode(self, ids) -> str:
        return bytes(i for i in ids if i).decode()


def test_policy_judge_maps_prompts_to_texts_in_order():
    engine = StubEngine()
    policy = PolicyJudge(lambda: engine, max_tokens=3)
    assert policy(["abcd", "xyz", "q"], [1, 2, 3], 0.0) == ["dcb", "zyx", "q"]
    assert engine.budgets == [3]  # one batch with the judge's budget


def test_policy_judge_prefill_starts_every_reply():
    """The prefill's tokens follow the chat prompt, and the reply handed back begins with it."""
    engine = StubEngine()
    policy = PolicyJudge(lambda: engine, max_tokens=2, prefill="\\boxed{")
    assert policy(["ab"], [1], 0.0) == ["\\boxed{" + "{d"]  # the stub answers the prompt reversed
    assert engine.prompts == [list(b"ab\\boxed{")]
