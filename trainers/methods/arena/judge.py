"""The Reasoning Arena judge (Reasoning Arena paper, §4, Eq. 7, App. D): pairwise A/B/Tie verdicts and
pointwise 1/0.5/0 scores from any servable model, or from the policy itself.

`ArenaJudge` builds the prompts, randomises the presentation order of every pair, cuts over-long responses
in the middle so the prompt fits the judge's context, parses the last `\\boxed{}` against a whitelist,
retries an unparsable reply once, caches verdicts and counts what happened. It asks for replies through a
`JudgeGenerate`: `ServedJudge` (a harness backend: an OpenAI-compatible server, a vLLM or an hf engine) or
`PolicyJudge` (the policy being trained).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from harness import HarnessError
from harness.backends import EngineConfig, check_engine, make_backend
from harness.core.types import Request
from trainers.engine import Engine

PAIRWISE = """You are given a math problem, its reference answer and two solution attempts. Compare the two attempts and decide which one is better.

[PROBLEM]
{problem}

[REFERENCE ANSWER]
The correct answer is {reference}.

[RESPONSE A]
{response_a}

[RESPONSE B]
{response_b}

Weigh both the final answers and the quality of the reasoning: its rigour, any logical gaps, and whether each step is justified. Keep your analysis under 500 words. End your reply with exactly one of \\boxed{A}, \\boxed{B} or \\boxed{Tie}."""  # noqa: E501 - the prompt's own lines

POINTWISE = """You are given a math problem, its reference answer and one solution attempt. Evaluate the attempt, judging both its final answer and the rigour of its proof or reasoning.

[PROBLEM]
{problem}

[REFERENCE ANSWER]
The correct answer is {reference}.

[RESPONSE]
{response}

Score the attempt: 1 if it is completely correct, 0.5 if it is correct apart from minor errors or omissions, 0 if it is incorrect or contains a fatal error. Keep your analysis under 500 words. End your reply with exactly one of \\boxed{1}, \\boxed{0.5} or \\boxed{0}."""  # noqa: E501 - the prompt's own lines

PAIR_VERDICTS = ("A", "B", "Tie")
POINT_SCORES = {"1": 1.0, "0.5": 0.5, "0": 0.0}
COUNTERS = (
    "calls", "requests", "cache_hits", "retries", "parse_failures",
    "ties", "presented_a", "presented_b", "truncated",
)  # fmt: skip
FIELD = re.compile(r"\{(problem|reference|response_a|response_b|response)\}")
NUMBER = re.compile(r"\d+(?:\.\d*)?|\.\d+")
BOXED = "\\boxed{"
RAW_CHARS = 2000  # characters of each raw reply kept for logging
RAW_KEPT = 256  # raw replies kept until take_raw()
SLACK_TOKENS = 128  # the chat template's wrapping, and re-tokenisation at a cut's edges


def last_boxed(text: str) -> str | None:
    """The stripped content of the last `\\boxed{...}` after the last `</think>`, nested braces included;
    None when there is none or it never closes."""
    text = text.rpartition("</think>")[2]
    start = text.rfind(BOXED)
    if start < 0:
        return None
    depth, begin = 1, start + len(BOXED)
    for i in range(begin, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[begin:i].strip()
    return None


def parse_boxed(text: str, allowed: Collection[str]) -> str | None:
    """The last boxed content as its whitelisted spelling, or None (no verdict, never a default).

    Letters match case-insensitively ("tie" is "Tie"); a plain decimal matches a whitelisted number of the
    same value ("1.0" is "1", ".5" and "0.50" are "0.5"); anything else, `\\text{A}` included, is None.
    An earlier valid box does not rescue an invalid last one."""
    content = last_boxed(text)
    if content is None:
        return None
    for option in allowed:
        if content.casefold() == option.casefold() or same_number(content, option):
            return option
    return None


def same_number(a: str, b: str) -> bool:
    """Both plain decimals of equal value."""
    return bool(NUMBER.fullmatch(a) and NUMBER.fullmatch(b)) and float(a) == float(b)


def fill(template: str, **values: str) -> str:
    """The template with its named fields replaced in one pass: braces in the values stay as they are."""
    return FIELD.sub(lambda m: values[m.group(1)], template)


def _head_tail(budget: int, keep_tail: int) -> tuple[int, int]:
    tail = min(keep_tail, budget)
    return budget - tail, tail


def truncate_middle(ids: Sequence[int], budget: int, keep_tail: int) -> tuple[list[int], int]:
    """At most `budget` tokens: the head and the last `keep_tail` (the boxed answer survives), the middle cut
    (our choice); returns the kept ids and how many were cut."""
    if len(ids) <= budget:
        return list(ids), 0
    head, tail = _head_tail(budget, keep_tail)
    return [*ids[:head], *ids[len(ids) - tail :]], len(ids) - budget


def cut_marker(count: int) -> str:
    return f"\n[… {count} tokens cut …]\n"


def cut_text(
    ids: Sequence[int], budget: int, keep_tail: int, decode: Callable[[Sequence[int]], str]
) -> tuple[str, int]:
    """`truncate_middle` decoded, with a marker naming the cut between head and tail; (text, cut count)."""
    kept, cut = truncate_middle(ids, budget, keep_tail)
    head, _ = _head_tail(budget, keep_tail)
    if not cut:
        return decode(kept), 0
    return decode(kept[:head]) + cut_marker(cut) + decode(kept[head:]), cut


def split_room(lengths: Sequence[int], room: int) -> list[int]:
    """Each text's token budget: an equal share of `room` plus what shorter texts leave unused (our choice);
    a text that fits keeps its length."""
    budgets, left = [0] * len(lengths), room
    for k, i in enumerate(sorted(range(len(lengths)), key=lambda i: lengths[i])):
        budgets[i] = min(lengths[i], left // (len(lengths) - k))
        left -= budgets[i]
    return budgets


def cache_key(kind: str, problem: str, reference: str, *responses: str) -> str:
    """sha256 of the prompt's kind, problem, reference and the responses' hashes in presented order."""
    hashed = [hashlib.sha256(r.encode()).hexdigest() for r in responses]
    return hashlib.sha256(json.dumps([kind, problem, reference, *hashed]).encode()).hexdigest()


class JudgeGenerate(Protocol):
    """One user-message prompt per entry -> the judge's reply texts, in the same order."""

    def __call__(self, prompts: Sequence[str], seeds: Sequence[int], temperature: float) -> list[str]: ...


class ServedJudge:
    """`JudgeGenerate` through a harness backend (openai server, vllm or hf engine), started on the first
    call and kept until `close()`. A dead server raises the backend's HarnessError."""

    def __init__(self, engine: EngineConfig, max_tokens: int):
        check_engine(engine)
        self.engine, self.max_tokens = engine, max_tokens
        self.backend: Any = None

    def __call__(self, prompts: Sequence[str], seeds: Sequence[int], temperature: float) -> list[str]:
        requests = [
            Request(
                "arena-judge",
                str(k),
                0,
                ({"role": "user", "content": prompt},),
                seed,
                temperature,
                1.0,
                self.max_tokens,
            )
            for k, (prompt, seed) in enumerate(zip(prompts, seeds, strict=True))
        ]
        if not requests:
            return []
        if self.backend is None:
            self.backend = make_backend(self.engine)
        texts: dict[int, str] = {}
        for batch in self.backend.generate(requests):
            for completion in batch:
                texts[int(completion.request.item_id)] = completion.text
        if len(texts) < len(requests):
            raise HarnessError(f"the judge replied to {len(texts)} of {len(requests)} prompts")
        return [texts[k] for k in range(len(requests))]

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()
            self.backend = None


class PolicyJudge:
    """`JudgeGenerate` with the policy being trained (trainers/engine.py). The policy samples with the
    trainer's own sampling settings: the seeds and temperature asked for are not used.

    `prefill` starts every reply (e.g. "The better response is \\boxed{" for a model too small to box a
    verdict unprompted); the reply returned includes it, so it is parsed as if the judge wrote it."""

    def __init__(self, engine_getter: Callable[[], Engine], max_tokens: int, prefill: str = ""):
        self.engine_getter, self.max_tokens, self.prefill = engine_getter, max_tokens, prefill

    def __call__(self, prompts: Sequence[str], seeds: Sequence[int], temperature: float) -> list[str]:
        engine = self.engine_getter()
        start = engine.tokenizer.encode(self.prefill, add_special_tokens=False) if self.prefill else []
        ids = [[*engine.encode([{"role": "user", "content": prompt}]), *start] for prompt in prompts]
        return [self.prefill + engine.decode(g.ids) for g in engine.generate(ids, self.max_tokens)]


@dataclass(frozen=True)
class PairAsk:
    """One comparison in canonical order: `first` is trace i, `second` trace j."""

    problem: str
    reference: str
    first: str
    second: str


@dataclass(frozen=True)
class PointAsk:
    """One response to score on its own."""

    problem: str
    reference: str
    response: str


@dataclass(frozen=True)
class _Kind:
    """A prompt kind: its template, the replies it accepts, and the counter each fresh verdict adds to."""

    name: str
    template: str
    allowed: tuple[str, ...]
    tallies: dict[str, str]


PAIR = _Kind("pair", PAIRWISE, PAIR_VERDICTS, {"A": "presented_a", "B": "presented_b", "Tie": "ties"})
POINT = _Kind("point", POINTWISE, tuple(POINT_SCORES), {})
SWAP = {"A": "B", "B": "A", "Tie": "Tie"}


class ArenaJudge:
    """Pairwise and pointwise verdicts: order randomisation, retry, cache, counters (§4, App. D).

    Every pair's presentation order is drawn from `rng` (seeded by `seed`) before the cache is looked up, so
    the order stream does not depend on the cache's contents. The cache is keyed by the prompt as presented
    (kind, problem, reference, the responses' hashes in presented order) and holds the presented verdict:
    asking (i, j) shown as B, A reuses the verdict of (j, i) shown as A, B. Only parsed verdicts are cached;
    it keeps the `cache_size` most recently used and survives a resume through `state_dict`.

    Uncached prompts go to `generate` in one batch at `temperature`; the unparsable ones go once more in one
    batch at `retry_temperature` with the next seed (seeds derive from the cache key); still unparsable is
    None and a parse failure, never a default Tie. Responses are cut in the middle (`truncate_middle`,
    keeping `keep_tail_tokens`) so the prompt fits `context_tokens - max_tokens`, less `SLACK_TOKENS` for the
    chat template. `tokenizer` counts the tokens: the judge's own when at hand, else the policy's, an
    approximation the slack only partly covers.

    `counters`: calls (asks, cache hits included), requests (prompts sent, retries included), cache_hits,
    retries, parse_failures (None results), ties, presented_a, presented_b (fresh pairwise verdicts as
    presented, before remapping: the position bias) and truncated (responses cut).
    """

    def __init__(
        self,
        generate: JudgeGenerate,
        *,
        tokenizer: Any,
        context_tokens: int = 32768,
        max_tokens: int = 4096,
        keep_tail_tokens: int = 2048,
        temperature: float = 0.0,
        retry_temperature: float = 1.0,
        seed: int = 0,
        cache_size: int = 100_000,
    ):
        if context_tokens - max_tokens - SLACK_TOKENS <= 0:
            raise ValueError(
                f"the judge's context ({context_tokens}) leaves no room for a prompt after its "
                f"{max_tokens} completion tokens and {SLACK_TOKENS} tokens of slack"
            )
        self.generate, self.tokenizer = generate, tokenizer
        self.room = context_tokens - max_tokens - SLACK_TOKENS
        self.keep_tail_tokens = keep_tail_tokens
        self.temperature, self.retry_temperature = temperature, retry_temperature
        self.rng = random.Random(seed)
        self.cache: OrderedDict[str, str] = OrderedDict()
        self.cache_size = cache_size
        self.counters: Counter[str] = Counter()
        self.last_raw: deque[dict[str, Any]] = deque(maxlen=RAW_KEPT)
        self._encode = lru_cache(maxsize=32)(self._tokens)

    def compare(self, asks: Sequence[PairAsk]) -> list[str | None]:
        """Canonical verdicts ("A": first wins, "B", "Tie") or None (no verdict after one retry)."""
        swaps = [self.rng.random() < 0.5 for _ in asks]
        shown = [(a.second, a.first) if s else (a.first, a.second) for a, s in zip(asks, swaps, strict=True)]
        keys = [cache_key("pair", a.problem, a.reference, *r) for a, r in zip(asks, shown, strict=True)]
        verdicts = self._verdicts(
            PAIR,
            keys,
            lambda k: self._prompt(PAIR, asks[k], response_a=shown[k][0], response_b=shown[k][1]),
            [{"kind": "pair", "swapped": s} for s in swaps],
        )
        return [SWAP[v] if s and v is not None else v for v, s in zip(verdicts, swaps, strict=True)]

    def rate(self, asks: Sequence[PointAsk]) -> list[float | None]:
        """Pointwise scores 1, 0.5 or 0, or None (no score after one retry)."""
        keys = [cache_key("point", a.problem, a.reference, a.response) for a in asks]
        verdicts = self._verdicts(
            POINT,
            keys,
            lambda k: self._prompt(POINT, asks[k], response=asks[k].response),
            [{"kind": "point", "swapped": None}] * len(asks),
        )
        return [None if v is None else POINT_SCORES[v] for v in verdicts]

    def take_counters(self) -> dict[str, int]:
        """Every counter (zeros included) since the last take, then cleared."""
        taken = {name: self.counters[name] for name in COUNTERS}
        self.counters.clear()
        return taken

    def take_raw(self) -> list[dict[str, Any]]:
        """The most recent raw replies (kind, swapped, attempt, the reply's last characters, verdict),
        then cleared."""
        taken = list(self.last_raw)
        self.last_raw.clear()
        return taken

    def state_dict(self) -> dict[str, Any]:
        return {"rng": self.rng.getstate(), "cache": list(self.cache.items())}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.setstate(state["rng"])
        self.cache = OrderedDict(state["cache"])

    def _verdicts(
        self, kind: _Kind, keys: Sequence[str], prompt: Callable[[int], str], notes: Sequence[dict]
    ) -> list[str | None]:
        """Presented verdicts: cached ones, then the judge's for the rest (cached when parsed)."""
        self.counters["calls"] += len(keys)
        verdicts: list[str | None] = [self._cached(key) for key in keys]
        todo = [k for k, v in enumerate(verdicts) if v is None]
        self.counters["cache_hits"] += len(keys) - len(todo)
        asked = [keys[k] for k in todo]
        fresh = self._judge(kind, asked, [prompt(k) for k in todo], [notes[k] for k in todo])
        for k, verdict in zip(todo, fresh, strict=True):
            verdicts[k] = verdict
            if verdict is not None:
                self._remember(keys[k], verdict)
            if verdict in kind.tallies:
                self.counters[kind.tallies[verdict]] += 1
        return verdicts

    def _judge(
        self, kind: _Kind, keys: Sequence[str], prompts: Sequence[str], notes: Sequence[dict]
    ) -> list[str | None]:
        """One batch at `temperature`, then one batched retry of the unparsable at `retry_temperature`."""
        verdicts: list[str | None] = [None] * len(prompts)
        todo = list(range(len(prompts)))
        for attempt, temperature in enumerate((self.temperature, self.retry_temperature)):
            if not todo:
                break
            seeds = [int(keys[k][:15], 16) + attempt for k in todo]
            replies = self.generate([prompts[k] for k in todo], seeds, temperature)
            self.counters["requests"] += len(todo)
            self.counters["retries"] += len(todo) if attempt else 0
            for k, text in zip(todo, replies, strict=True):
                verdicts[k] = parse_boxed(text, kind.allowed)
                self.last_raw.append(
                    {**notes[k], "attempt": attempt, "raw": text[-RAW_CHARS:], "verdict": verdicts[k]}
                )
            todo = [k for k in todo if verdicts[k] is None]
        self.counters["parse_failures"] += len(todo)
        return verdicts

    def _prompt(self, kind: _Kind, ask: PairAsk | PointAsk, **responses: str) -> str:
        """The filled template, each response cut in the middle to its share of the room left."""
        fixed = {"problem": ask.problem, "reference": ask.reference}
        base = len(self._encode(fill(kind.template, **fixed, **dict.fromkeys(responses, ""))))
        room = self.room - base
        if room < 0:
            raise ValueError(
                f"the judge's {kind.name} prompt needs {base} tokens before any response; "
                f"its context leaves {self.room}"
            )
        ids = {name: self._encode(text) for name, text in responses.items()}
        budgets = split_room([len(i) for i in ids.values()], room)
        for name, budget in zip(responses, budgets, strict=True):
            if len(ids[name]) > budget:
                marker = len(self._encode(cut_marker(len(ids[name]))))
                responses[name], _ = cut_text(
                    ids[name], max(budget - marker, 0), self.keep_tail_tokens, self.tokenizer.decode
                )
                self.counters["truncated"] += 1
        return fill(kind.template, **fixed, **responses)

    def _tokens(self, text: str) -> tuple[int, ...]:
        return tuple(self.tokenizer.encode(text, add_special_tokens=False))

    def _cached(self, key: str) -> str | None:
        verdict = self.cache.get(key)
        if verdict is not None:
            self.cache.move_to_end(key)
        return verdict

    def _remember(self, key: str, verdict: str) -> None:
        self.cache[key] = verdict
        self.cache.move_to_end(key)
        while len(self.cache) > self.cache_size:
            self.cache.popitem(last=False)
