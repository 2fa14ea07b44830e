"""UloRL's segment rollout (UloRL paper, Algorithm 1): its schedule, and segments ≡ one full rollout.

`decode_segment` decodes one segment per optimizer step and the next step resumes from prompt + prefix.
With weights that do not change, S segments of L/S tokens concatenate to one decode of L tokens, token for
token (greedy decoding, and sampling whose draw at a position depends only on the row and the position);
once the weights change between segments the continuation follows the new weights. A scripted engine
pins the three finish rules, the token budget of every engine call, and the pool's bookkeeping over a
multi-step loop (no token lost or duplicated, a checkpoint round-trip mid-run continues identically).

The engine over the tiny model decodes by a plain loop: every step re-runs the whole left-padded batch
(position ids from the attention mask) without a KV cache, so a segment boundary cannot change the
numbers. It decodes a batch at once; one test checks that this batch decode equals decoding each row
alone (left padding changes nothing).
"""

from __future__ import annotations

import copy
import math
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import torch

from trainers.engine import Generation, decode_segment
from trainers.integration.checkpoints import read_method_state, save_method_state
from trainers.methods.ulorl.pool import SegmentPool

EOS = 2
PAD = 0

# --- an engine over the tiny model ------------------------------------------------------------------------


class ModelEngine:
    """Greedy decoding (`sample=False`) or exact temperature-1 sampling by the Gumbel-max trick with noise
    drawn from a generator seeded by (row, completion position): the draw at position t is the same
    however the decode was split into calls. A row is the registered prompt its input starts with."""

    def __init__(
        self, model, tokenizer, prompts: Sequence[Sequence[int]], *, sample: bool = False, eos=(EOS,)
    ):
        self.model, self.tokenizer = model, tokenizer
        self.prompts = [list(p) for p in prompts]
        self.sample, self.eos = sample, set(eos)
        self.policy_version = 0
        self.calls: list[int | None] = []

    def _row(self, seq: Sequence[int]) -> int:
        rows = [i for i, p in enumerate(self.prompts) if list(seq[: len(p)]) == p]
        assert len(rows) == 1, f"input {list(seq)} does not start with exactly one registered prompt"
        return rows[0]

    def _noise(self, row: int, position: int, vocab: int) -> torch.Tensor:
        generator = torch.Generator().manual_seed(1_000_003 * (row + 1) + position)
        uniform = torch.rand(vocab, generator=generator, dtype=torch.float64).clamp(1e-12, 1 - 1e-12)
        return (-(-uniform.log()).log()).float()

    @torch.no_grad()
    def _next_logits(self, seqs: list[list[int]]) -> torch.Tensor:
        width = max(len(s) for s in seqs)
        ids = torch.tensor([[PAD] * (width - len(s)) + s for s in seqs])
        mask = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in seqs])
        positions = (mask.cumsum(1) - 1).clamp(min=0)
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions)
        return out.logits[:, -1].float()

    def generate(self, prompts: Sequence[Sequence[int]], max_tokens: int | None = None) -> list[Generation]:
        assert max_tokens is not None and max_tokens >= 1
        self.calls.append(max_tokens)
        rows = [self._row(p) for p in prompts]
        seqs = [list(p) for p in prompts]
        new: list[list[int]] = [[] for _ in prompts]
        logps: list[list[float]] = [[] for _ in prompts]
        live = list(range(len(prompts)))
        for _ in range(max_tokens):
            logits = self._next_logits([seqs[i] for i in live])
            logprobs = logits.log_softmax(-1)
            for k, i in enumerate(live):
                score = logits[k]
                if self.sample:
                    position = len(seqs[i]) - len(self.prompts[rows[i]])
                    score = score + self._noise(rows[i], position, score.numel())
                token = int(score.argmax())
                seqs[i].append(token)
                new[i].append(token)
                logps[i].append(float(logprobs[k, token]))
            live = [i for i in live if new[i][-1] not in self.eos]
            if not live:
                break
        return [
            Generation(n, lp, "stop" if n[-1] in self.eos else "length")
            for n, lp in zip(new, logps, strict=True)
        ]


def chunked(
    engine, prompts, total: int, segments: int, between: Callable[[int], None] | None = None
) -> tuple[list[list[int]], list[list[float]], list[list[str]]]:
    """Decode in segments of total // segments tokens, feeding each row's prefix back, until every row
    ends; `between(k)` runs after segment k (e.g. an optimizer step). Tokens, log-probs, reasons."""
    ids: list[list[int]] = [[] for _ in prompts]
    logps: list[list[float]] = [[] for _ in prompts]
    reasons: list[list[str]] = [[] for _ in prompts]
    k = 0
    while live := [i for i in range(len(prompts)) if not reasons[i] or reasons[i][-1] == "unfinished"]:
        gens = decode_segment(
            engine, [prompts[i] for i in live], [ids[i] for i in live], total // segments, total
        )
        for i, gen in zip(live, gens, strict=True):
            ids[i] += gen.ids
            logps[i] += gen.logprobs
            reasons[i].append(gen.finish_reason)
        k += 1
        if between is not None:
            between(k)
    return ids, logps, reasons


L = 16


class Tiny:
    """The tiny model, four chat prompts of different lengths, and full decodes of L tokens, cached."""

    def __init__(self, model, tokenizer, prompts):
        self.model, self.tokenizer, self.prompts = model, tokenizer, prompts
        self._full: dict[tuple[bool, tuple[int, ...]], tuple] = {}
        ids = self.full(False)[0][0]
        fresh = [ids[t] for t in range(5, L - 1) if ids[t] not in ids[:t]]
        assert fresh, f"no fresh token in the greedy decode {ids}"
        # a token greedy row 0 first emits mid-way: as an extra EOS it ends row 0 inside a segment, so
        # the tests cover rows that stop while others go on
        self.stop = fresh[0]

    def engine(self, sample: bool, eos: tuple[int, ...] = (EOS,), model=None) -> ModelEngine:
        return ModelEngine(model or self.model, self.tokenizer, self.prompts, sample=sample, eos=eos)

    def full(self, sample: bool, eos: tuple[int, ...] = (EOS,)):
        """One decode of L tokens of the whole batch: tokens, log-probs, finish reasons."""
        if (sample, eos) not in self._full:
            gens = self.engine(sample, eos).generate(self.prompts, L)
            self._full[sample, eos] = (
                [g.ids for g in gens],
                [g.logprobs for g in gens],
                [g.finish_reason for g in gens],
            )
        return self._full[sample, eos]


@pytest.fixture(scope="module")
def tiny(plain_model) -> Tiny:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(plain_model)
    model = AutoModelForCausalLM.from_pretrained(plain_model).eval()
    texts = ["What is 2 + 3?", "Sum the digits of 1234567 and 89.", "Hi", "Find x with x * x = 49."]
    prompts = [
        list(
            tokenizer.apply_chat_template(
                [{"role": "user", "content": t}], add_generation_prompt=True, tokenize=True, return_dict=True
            )["input_ids"]
        )
        for t in texts
    ]
    assert len({len(p) for p in prompts}) == len(prompts)  # different lengths: the batch is left-padded
    return Tiny(model, tokenizer, prompts)


@pytest.mark.parametrize("sample", [False, True], ids=["greedy", "per-position-rng"])
def test_batched_left_padded_decode_equals_each_row_alone(tiny, sample):
    ids, logps, reasons = tiny.full(sample)
    engine = tiny.engine(sample)
    for i, p in enumerate(tiny.prompts):
        alone = engine.generate([p], L)[0]
        assert alone.ids == ids[i] and alone.finish_reason == reasons[i]
        torch.testing.assert_close(alone.logprobs, logps[i], rtol=0, atol=1e-5)


@pytest.mark.parametrize("sample", [False, True], ids=["greedy", "per-position-rng"])
@pytest.mark.parametrize("segments", [1, 2, 4, 8])
def test_segments_concatenate_to_one_full_decode(tiny, segments, sample):
    eos = (EOS, tiny.stop)
    full_ids, full_logps, full_reasons = tiny.full(sample, eos)
    engine = tiny.engine(sample, eos)
    ids, logps, reasons = chunked(engine, tiny.prompts, L, segments)
    assert ids == full_ids
    torch.testing.assert_close(logps, full_logps, rtol=0, atol=1e-5)
    assert [r[-1] for r in reasons] == full_reasons
    for row, rs in zip(ids, reasons, strict=True):
        assert rs[:-1] == ["unfinished"] * (len(rs) - 1)  # every segment but the last one carried over
        assert len(rs) == math.ceil(len(row) / (L // segments))  # one segment per L / S tokens
    assert set(engine.calls) == {L // segments}
    if not sample:
        assert full_reasons[0] == "stop" and len(full_ids[0]) < L  # row 0 stopped early (the extra EOS)
        assert "length" in full_reasons  # and some row ran to the cap
    else:  # the sampler is not greedy in disguise
        assert full_ids != tiny.full(False, eos)[0]


@pytest.mark.parametrize("sample", [False, True], ids=["greedy", "per-position-rng"])
def test_a_segment_after_a_weight_change_follows_the_new_weights(tiny, sample):
    model = copy.deepcopy(tiny.model)
    engine = tiny.engine(sample, model=model)
    full_ids = tiny.full(sample)[0]

    def step(k: int) -> None:  # an "optimizer step" between segment 1 and 2
        if k == 1:
            with torch.no_grad():
                noise = torch.randn(model.lm_head.weight.shape, generator=torch.Generator().manual_seed(7))
                model.lm_head.weight.add_(noise)
            engine.policy_version += 1

    ids, _, _ = chunked(engine, tiny.prompts, L, 2, between=step)
    half = L // 2
    assert [r[:half] for r in ids] == [r[:half] for r in full_ids]  # segment 1: the old weights
    assert ids != full_ids  # segment 2 used the perturbed weights...
    resumed = engine.generate([[*p, *r[:half]] for p, r in zip(tiny.prompts, ids, strict=True)], half)
    assert [r[half:] for r in ids] == [g.ids for g in resumed]  # ...exactly as a fresh decode with them


# --- a scripted engine: fixed replies per prompt ----------------------------------------------------------


def _logprob(position: int) -> float:
    """The scripted log-prob of the completion token at `position`: checks log-probs stay aligned."""
    return -0.01 - position / 16


class ScriptedEngine:
    """Replies fixed per prompt (siblings start with different tokens); a new sample takes the prompt's
    replies in order within one call, a continuation the reply its prefix starts. Records every call."""

    def __init__(self, replies: dict[tuple[int, ...], list[list[int]]]):
        self.replies = {tuple(p): [list(r) for r in rs] for p, rs in replies.items()}
        self.policy_version = 0
        self.calls: list[tuple[int, list[int]]] = []  # (max_tokens, the prefix length of every input)

    def generate(self, prompts: Sequence[Sequence[int]], max_tokens: int | None = None) -> list[Generation]:
        assert max_tokens is not None
        fresh: Counter[tuple[int, ...]] = Counter()
        out, prefixes = [], []
        for seq in prompts:
            (prompt,) = [p for p in self.replies if tuple(seq[: len(p)]) == p]
            done = list(seq[len(prompt) :])
            prefixes.append(len(done))
            if done:
                (reply,) = [r for r in self.replies[prompt] if r[: len(done)] == done]
            else:
                reply = self.replies[prompt][fresh[prompt]]
                fresh[prompt] += 1
            new = reply[len(done) : len(done) + max_tokens]
            assert new, f"asked to continue {done}, the whole reply"
            if EOS in new:
                new = new[: new.index(EOS) + 1]
            out.append(
                Generation(
                    new,
                    [_logprob(len(done) + t) for t in range(len(new))],
                    "stop" if new[-1] == EOS else "length",
                )
            )
        self.calls.append((max_tokens, prefixes))
        return out


def _reasons(reply: list[int], total: int, segments: int) -> list[str]:
    prompt = [300 + len(reply)]
    ids, _, reasons = chunked(ScriptedEngine({tuple(prompt): [reply]}), [prompt], total, segments)
    assert ids[0] == reply[: len(ids[0])]
    return reasons[0]


def test_finish_rules_per_segment():
    # L = 12 in S = 3 segments of 4 tokens
    assert _reasons([10, 11, EOS], 12, 3) == ["stop"]  # EOS inside a segment
    assert _reasons([10, 11, 12, EOS], 12, 3) == ["stop"]  # EOS as a segment's last token
    assert _reasons([*range(10, 16), EOS], 12, 3) == ["unfinished", "stop"]  # segment limit, total < L
    assert _reasons(list(range(10, 30)), 12, 3) == ["unfinished", "unfinished", "length"]  # L, no EOS
    assert _reasons([*range(10, 21), EOS], 12, 3) == ["unfinished", "unfinished", "stop"]  # EOS = L-th token
    assert _reasons([*range(10, 22), EOS], 12, 3) == ["unfinished", "unfinished", "length"]  # EOS after L
    assert _reasons([*range(10, 21), EOS], 12, 1) == ["stop"]  # one segment (TOIS)
    assert _reasons(list(range(10, 30)), 12, 1) == ["length"]


def test_budgets_are_capped_by_the_segment_and_the_global_length():
    total, segment = 12, 4
    prompts = [[200 + i] for i in range(7)]
    replies = [list(range(10, 30)) for _ in prompts]
    replies[6] = [*range(10, 21), EOS]  # EOS at the cap
    prefix_lengths = [0, 3, 9, 10, 11, 8, 8]
    engine = ScriptedEngine({tuple(p): [r] for p, r in zip(prompts, replies, strict=True)})
    prefixes = [r[:n] for r, n in zip(replies, prefix_lengths, strict=True)]
    gens = decode_segment(engine, prompts, prefixes, segment, total)
    # one call per distinct budget min(segment, total - prefix), smallest first
    assert engine.calls == [(1, [11]), (2, [10]), (3, [9]), (4, [0, 3, 8, 8])]
    for budget, lengths in engine.calls:
        assert all(budget <= min(segment, total - n) for n in lengths)
    assert [len(g.ids) for g in gens] == [4, 4, 3, 2, 1, 4, 4]
    assert [g.finish_reason for g in gens] == [
        "unfinished",
        "unfinished",
        "length",
        "length",
        "length",
        "length",
        "stop",
    ]
    for g, prefix, reply in zip(gens, prefixes, replies, strict=True):
        assert [*prefix, *g.ids] == reply[: len(prefix) + len(g.ids)]
        assert g.logprobs == [_logprob(len(prefix) + t) for t in range(len(g.ids))]
    with pytest.raises(ValueError, match="12 completion tokens"):
        decode_segment(engine, prompts[:2], [[], replies[1][:12]], segment, total)
    assert len(engine.calls) == 4  # refused before any engine call


# --- the pool over several steps --------------------------------------------------------------------------

G, IN_FLIGHT, TOTAL, SEGMENTS = 3, 2, 12, 3
SEGMENT = TOTAL // SEGMENTS


def _script() -> dict[str, tuple[list[int], list[list[int]]]]:
    """Six groups of G samples: prompt and replies, siblings starting with different tokens. A reply is
    n tokens then EOS (n = None: 16 tokens, no EOS): EOS inside a segment, as a segment's last token
    (n = 3, 7), as the L-th token (n = 11), just after it (n = 12: truncated), alone (n = 0)."""
    lengths = [[2, 5, None], [3, 7, 11], [0, 12, 1], [None, 9, 6], [4, 4, 4], [10, None, 2]]
    script = {}
    for g, row in enumerate(lengths):
        replies = []
        for j, n in enumerate(row):
            body = [100 + 10 * g + j] + [20 + 40 * j + g + t for t in range(1, 16 if n is None else n)]
            replies.append(body if n is None else [*body[:n], EOS])
        script[f"g{g}"] = ([400 + g, 5, 6], replies)
    return script


def _sample_ids(rollouts) -> set[tuple[str, tuple[int, ...]]]:
    ids = [(r.group, tuple(r.completion_ids)) for r in rollouts]
    assert len(ids) == len(set(ids))
    return set(ids)


def _check_invariants(pool: SegmentPool) -> None:
    unfinished = _sample_ids(pool.unfinished())
    waiting = _sample_ids(pool.waiting())
    complete = _sample_ids([s for g in pool.complete() for s in g.samples])
    decoded = _sample_ids([s for g in pool.groups.values() for s in g.samples if s is not None])
    assert not unfinished & waiting and not unfinished & complete and not waiting & complete
    assert unfinished | waiting | complete == decoded
    todo = pool.to_decode()
    assert len(todo) == len(set(todo))
    undecoded = {(k, j) for k, g in pool.groups.items() for j, s in enumerate(g.samples) if s is None}
    carried = {
        (k, j)
        for k, g in pool.groups.items()
        for j, s in enumerate(g.samples)
        if s is not None and not s.finished
    }
    assert set(todo) == undecoded | carried


def _checkpoint(pool: SegmentPool) -> SegmentPool:
    """The pool as a resumed run has it: saved as checkpoints save method state, loaded fresh."""
    with tempfile.TemporaryDirectory() as folder:
        save_method_state(Path(folder), 0, pool.state_dict())
        restored = SegmentPool(pool.group_size)
        restored.load_state_dict(read_method_state(Path(folder), 0))
    return restored


def _run_pool(save_at: int | None = None):
    script = _script()
    engine = ScriptedEngine({tuple(p): rs for p, rs in script.values()})
    pool, queue = SegmentPool(G), list(script)
    released, admitted_at, saved = {}, {}, None
    for version in range(50):
        if version == save_at:
            saved = (len(pool.unfinished()), len(pool.waiting()))
            pool = _checkpoint(pool)
        engine.policy_version = version
        while len(pool.groups) < IN_FLIGHT and queue:
            key = queue.pop(0)
            pool.admit(key, {"id": key, "answer": "1"}, script[key][0], version)
            admitted_at[key] = version
        _check_invariants(pool)
        todo = pool.to_decode()
        prompts = [pool.groups[k].prompt_ids for k, _ in todo]
        prefixes = [pool.prefix(k, j) for k, j in todo]
        gens = decode_segment(engine, prompts, prefixes, SEGMENT, TOTAL)
        for (k, j), gen in zip(todo, gens, strict=True):
            pool.record(k, j, gen, version)
        for budget, lengths in engine.calls:
            assert all(budget <= min(SEGMENT, TOTAL - n) for n in lengths)
        _check_invariants(pool)
        for g in pool.complete():
            released[g.key] = (version, pool.pop(g.key))
        if not pool.groups and not queue:
            break
    else:
        pytest.fail("the pool never drained")
    return script, released, admitted_at, saved


def _summary(released):
    return {
        key: (
            version,
            g.finished_at,
            [
                (s.completion_ids, s.finish_reason, s.segments, s.policy_versions, s.sampling_logprobs)
                for s in g.samples
            ],
        )
        for key, (version, g) in released.items()
    }


def test_pool_loses_and_duplicates_no_token():
    script, released, admitted_at, _ = _run_pool()
    assert set(released) == set(script)
    for key, (version, g) in released.items():
        replies = script[key][1]
        got = sorted(s.completion_ids for s in g.samples)
        assert got == sorted(r[:TOTAL] for r in replies)  # every reply exactly once, cut at L
        assert g.completed == version == max(g.finished_at)
        for s in g.samples:
            (reply,) = [r for r in replies if r[: len(s.completion_ids)] == s.completion_ids]
            assert s.completion_ids == reply[: min(len(reply), TOTAL)]
            assert s.finish_reason == ("stop" if EOS in reply[:TOTAL] else "length")
            assert sum(s.segments) == len(s.completion_ids)
            assert all(n == SEGMENT for n in s.segments[:-1]) and 1 <= s.segments[-1] <= SEGMENT
            start = admitted_at[key]
            assert s.policy_versions == list(range(start, start + len(s.segments)))  # one per segment
            assert s.sampling_logprobs == [_logprob(t) for t in range(len(s.completion_ids))]
    # some group waited: a finished sample held while a sibling decoded
    assert any(min(g.finished_at) < max(g.finished_at) for _, g in released.values())


def test_pool_checkpoint_mid_run_continues_identically():
    _, plain, _, _ = _run_pool()
    waiting = 0
    for save_at in (1, 2, 4, 5, 7):  # steps that start with groups in flight
        _, resumed, _, saved = _run_pool(save_at=save_at)
        assert saved is not None and saved[0] > 0  # samples were mid-decode when saved
        waiting += saved[1]
        assert _summary(resumed) == _summary(plain)
    assert waiting > 0  # and, at some save, finished samples waited for their siblings


def test_vllm_prompts_are_padded_to_the_largest_count_of_any_process(monkeypatch):
    """TRL's vLLM server and tensor-parallel modes hand each process an equal slice of everyone's prompts:
    a process sending fewer (UloRL's pools differ) pads with copies, and the copies' replies are dropped.
    Two processes are simulated: their counts come from a stand-in for accelerate's gather."""
    from types import SimpleNamespace

    from trainers.integration.engines import VLLMEngine

    def engine_in(mode: str, tensor_parallel: int) -> VLLMEngine:
        engine = VLLMEngine.__new__(VLLMEngine)
        vllm = SimpleNamespace(mode=mode, tensor_parallel_size=tensor_parallel)
        engine.trainer = SimpleNamespace(accelerator=SimpleNamespace(num_processes=2), vllm_generation=vllm)
        engine.tokenizer = SimpleNamespace(eos_token_id=2)
        return engine

    monkeypatch.setattr("accelerate.utils.gather_object", lambda values: [3, 5])
    for engine in (engine_in("server", 1), engine_in("colocate", 2)):
        assert engine._same_count_as_peers([[7, 8], [9], [10]]) == [[7, 8], [9], [10], [7, 8], [7, 8]]
        assert engine._same_count_as_peers([]) == [[2]] * 5  # nothing to decode: still the peers' count
    # colocated without tensor parallelism: each process's own engine, nothing gathered, nothing padded
    monkeypatch.setattr("accelerate.utils.gather_object", lambda values: pytest.fail("a needless gather"))
    assert engine_in("colocate", 1)._same_count_as_peers([[7, 8], [9]]) == [[7, 8], [9]]
