"""SPAE's probe (SPAE paper, §3.1-3.2, Eqs. 4-9) on copies of the tiny model whose
next-token distribution is known, seeded sampled Conf against a cache-free recomputation, and the
training-time probe module (trainers/methods/spae/probes.py) against the prober called by hand.

tests/test_harness/analysis/test_solve_check.py already checks segmentation, Phi's algebra and greedy Acc /
Conf on the tiny model; this file does not repeat those.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from harness.backends.hf import HFBackend, SeededSampler
from harness.probing.probe import Decoding, HFProber, ProbeJob
from harness.probing.steps import Tokens, potential, segment, solve_check_fields
from trainers.methods.spae.probes import (
    Probed,
    ProbeSettings,
    Target,
    probe_rollouts,
    probe_seed,
    steps_of,
)

D = ".\n\n"
PROBE_TEXT = "**Final Answer**\n\\boxed{"
# A completion after the prompt's "<think>\n": 3 delimiters in the thinking region, one in the summary
PIECES = ["Step one" + D, "Step two" + D, "So 7" + D, "Done", "</think>", "\n\nIt is 7" + D + "\\boxed{7}"]
UNCLOSED = ["We add" + D, "It is 7" + D, "Done"]  # the think block never closes
NO_STEP = ["Just 7", "</think>", "\n\n7"]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """The model is tiny: one thread is as fast, and much faster on a loaded machine (no spinning)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def backend(tiny_model) -> HFBackend:
    return HFBackend(str(tiny_model))


def encode(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def split_ids(tokenizer, pieces: list[str]) -> tuple[list[int], list[int]]:
    """The ids of "".join(pieces), checked to tokenise piece by piece, and the index of each piece's last
    token."""
    per_piece = [encode(tokenizer, p) for p in pieces]
    ids = sum(per_piece, [])
    assert ids == encode(tokenizer, "".join(pieces))
    ends, at = [], 0
    for piece_ids in per_piece:
        at += len(piece_ids)
        ends.append(at - 1)
    return ids, ends


def with_logits(tiny_model: Path, bias: torch.Tensor) -> HFBackend:
    """A fresh copy of the tiny model whose logits are `bias` at every position: its (untied) output
    layer becomes a linear map with zero weights and this bias."""
    backend = HFBackend(str(tiny_model))
    model = backend.model
    assert not model.config.tie_word_embeddings
    old = model.get_output_embeddings()
    head = torch.nn.Linear(old.in_features, old.out_features, bias=True)
    with torch.no_grad():
        head.weight.zero_()
        head.bias.copy_(bias)
    model.lm_head = head.to(old.weight.device, old.weight.dtype)
    return backend


def sample_jobs(tokenizer) -> list[ProbeJob]:
    """Three probes of different lengths (the batch is left padded), multi- and single-token golds."""
    return [
        ProbeJob(
            encode(tokenizer, "Find x.\n\nSo x = 2.\n\n" + PROBE_TEXT), encode(tokenizer, "204"), seed=11
        ),
        ProbeJob(encode(tokenizer, "Hi" + PROBE_TEXT), encode(tokenizer, "7"), seed=2000),
        ProbeJob(
            encode(tokenizer, "Let $a + b = 3$. Then we have a longer context.\n\n" + PROBE_TEXT),
            encode(tokenizer, "\\frac{1}{2}"),
            seed=5,
        ),
    ]


# --- Confidence and correctness on known distributions ---------------------------------------------------


def test_a_uniform_distribution_gives_conf_and_acc_one_over_the_vocabulary(tiny_model):
    backend = with_logits(tiny_model, torch.zeros(418))
    vocab = backend.model.config.vocab_size
    assert vocab == 418 == len(backend.tokenizer)
    jobs = sample_jobs(backend.tokenizer)
    for decoding in (Decoding(temperature=1.0, top_p=1.0), Decoding(temperature=0.0, top_p=1.0)):
        for result in HFProber(backend, n_probe=3).probe(jobs, decoding):
            assert result.acc == pytest.approx(1 / vocab, rel=1e-5)
            assert result.conf == pytest.approx(1 / vocab, rel=1e-5)  # H = log |V| at every position


def test_a_one_hot_distribution_gives_conf_one_and_a_known_peak_gives_exp_minus_its_entropy(tiny_model):
    seven = 25  # the tiny tokenizer's "7"
    one_hot = torch.zeros(418)
    one_hot[seven] = 100.0  # every other token: e^-100 relative
    backend = with_logits(tiny_model, one_hot)
    assert encode(backend.tokenizer, "7") == [seven]
    jobs = sample_jobs(backend.tokenizer)
    results = HFProber(backend, n_probe=3).probe(jobs, Decoding(temperature=1.0, top_p=1.0))
    assert [r.conf for r in results] == pytest.approx([1.0] * 3, abs=1e-6)  # H = 0
    assert [r.acc for r in results] == pytest.approx([0.0, 1.0, 0.0], abs=1e-6)  # only the gold "7"
    assert potential(results[1].acc, results[1].conf) == pytest.approx(1.0, abs=1e-6)

    # a softer peak: the same known distribution at every position, whatever is sampled
    peak = torch.zeros(418)
    peak[seven], peak[3] = 8.0, 6.0  # p('7') ~ 0.78
    p = peak.double().softmax(-1)
    entropy = float(-(p * p.log()).sum())
    assert 0.3 < entropy < 3  # neither one-hot nor uniform
    soft = with_logits(tiny_model, peak)
    results = HFProber(soft, n_probe=3).probe(jobs, Decoding(temperature=1.0, top_p=1.0))
    assert [r.conf for r in results] == pytest.approx([math.exp(-entropy)] * 3, rel=1e-5)
    assert results[1].acc == pytest.approx(float(p[seven]), rel=1e-5)


def reference_conf(model, job: ProbeJob, decoding: Decoding, n_probe: int, eos: list[int], max_tokens: int):
    """Each continuation's exp(-mean entropy), by full forward passes without a cache: continuation n
    samples with SeededSampler seeded job.seed + n, stops after an EOS (which counts) or max_tokens."""
    values = []
    with torch.inference_mode():
        for n in range(n_probe):
            sampler = SeededSampler([job.seed + n], decoding.temperature, decoding.top_p, decoding.top_k)
            sequence, entropies = list(job.context), []
            for _ in range(max_tokens):
                logits = model(torch.tensor([sequence])).logits[0, -1].float()
                p = logits.softmax(-1)
                entropies.append(float(torch.special.entr(p).sum()))
                sequence.append(int(sampler(None, logits[None]).argmax(-1)))
                if sequence[-1] in eos:
                    break
            values.append(math.exp(-sum(entropies) / len(entropies)))
    return values


def test_sampled_conf_is_the_mean_over_seeded_continuations(backend):
    jobs = sample_jobs(backend.tokenizer)
    decoding = Decoding(temperature=0.8, top_p=0.95, top_k=50)
    got = HFProber(backend, n_probe=3).probe(jobs, decoding)
    first_only = HFProber(backend, n_probe=1).probe(jobs, decoding)
    spread = 0.0
    for job, result, single in zip(jobs, got, first_only, strict=True):
        samples = reference_conf(backend.model, job, decoding, 3, backend.eos_ids, max_tokens=10)
        assert result.conf == pytest.approx(sum(samples) / 3, rel=1e-4)  # Conf ~ 4e-3 here
        assert single.conf == pytest.approx(samples[0], rel=1e-4)
        spread = max(spread, max(samples) - min(samples))
    assert spread > 0.01 * got[0].conf  # the continuations differ (by far more than the tolerance)


def test_single_token_acc_is_the_first_position_probability(backend):
    tokenizer = backend.tokenizer
    context = encode(tokenizer, "What is 3 + 4?\n\nSo it is 7.\n\n" + PROBE_TEXT)
    short = encode(tokenizer, "x" + PROBE_TEXT)
    golds = [encode(tokenizer, t) for t in ("7", "2", "\\", "}")]
    assert all(len(g) == 1 for g in golds)
    jobs = [ProbeJob(context, g, seed=1) for g in golds] + [ProbeJob(short, golds[0], seed=1)]
    got = HFProber(backend, n_probe=1, max_tokens=1).probe(jobs, Decoding(temperature=0.0, top_p=1.0))
    with torch.inference_mode():
        first = backend.model(torch.tensor([context])).logits[0, -1].float().softmax(-1)
        first_short = backend.model(torch.tensor([short])).logits[0, -1].float().softmax(-1)
    expected = [float(first[g[0]]) for g in golds] + [float(first_short[golds[0][0]])]
    assert [r.acc for r in got] == pytest.approx(expected, abs=1e-6)
    assert len({round(e, 6) for e in expected}) == len(expected)  # distinct: each gold is read at its own id


# --- trainers/methods/spae/probes.py ---------------------------------------------------------------------


def test_tokens_from_pieces_spans_follow_the_pieces():
    tokens = Tokens.from_pieces([7, 8, 9, 10], ["ab", "", ".\n", "\nc"])
    assert tokens.text == "ab.\n\nc" and tokens.ids == [7, 8, 9, 10]
    assert tokens.spans == [(0, 2), (2, 2), (2, 4), (4, 6)]
    assert [tokens.token_at(c) for c in range(7)] == [0, 0, 2, 2, 3, 3, 4]
    assert segment(tokens).boundaries == [3]  # the delimiter's last "\n" lies in the last token


def test_tokens_from_pieces_on_the_tiny_tokenizers_decoded_ids(backend):
    tokenizer = backend.tokenizer
    ids, ends = split_ids(tokenizer, PIECES)
    tokens = Tokens.from_pieces(ids, tokenizer.batch_decode([[i] for i in ids]))
    assert tokens.text == "".join(PIECES)
    seg = segment(tokens)
    assert seg.boundaries == ends[:3]  # the delimiter after </think> is not a boundary
    assert (seg.t0, seg.t1, seg.summary_start) == (0, ends[4], ends[4] + 1)


FIVE = ["A", D, "B", "b", D, "C", D, "X", "x", "x", D, "E", D, "tail", "</think>", "S", D]  # boundaries
# 1, 4, 6, 10, 12; the last delimiter is in the summary


@pytest.mark.parametrize(
    ("every_m", "kept"), [(1, [1, 4, 6, 10, 12]), (2, [4, 10]), (3, [6]), (5, [12]), (6, [])]
)
def test_steps_of_keeps_every_mth_boundary(every_m, kept):
    tokens = Tokens.from_pieces(range(len(FIVE)), FIVE)
    seg, found = steps_of(tokens, ProbeSettings(every_m=every_m, delimiter=D))
    assert (seg.boundaries, found) == (kept, 5)
    assert (seg.t0, seg.t1, seg.summary_start, seg.no_think_close) == (0, 14, 15, False)
    assert steps_of(tokens, ProbeSettings(every_m=every_m, delimiter="\n\n"))[1] == 5  # another delimiter


def test_probed_step_ends_are_one_past_the_boundaries():
    assert Probed([3, 8, 20], found=3).step_ends == [4, 9, 21]
    assert Probed([], found=0).step_ends == []


def test_probe_seed_is_fixed_and_spaced_per_step_and_rollout():
    seeds = {probe_seed(s, step, key) for s in (0, 1) for step in (0, 1, 2) for key in ("a", "b", "a/0")}
    assert len(seeds) == 18
    # the same in every process (a resumed run probes as the first did): not Python's salted hash()
    assert probe_seed(1, 2, "a") == 2979935844352
    ordered = sorted(seeds)
    assert ordered[0] >= 0 and all(s % 1024 == 0 for s in seeds)  # each rollout owns [seed, seed + 1024)
    # room for N * K < 1024 probe samples per rollout before two rollouts' seeds overlap
    assert min(b - a for a, b in zip(ordered, ordered[1:], strict=False)) >= 1024


def targets(tokenizer, seeds: tuple[int, ...]) -> list[Target]:
    def chat(question: str) -> list[int]:
        messages = [{"role": "user", "content": question}]
        return encode(
            tokenizer, tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        )

    return [
        Target(chat("What is 3 + 4?"), split_ids(tokenizer, PIECES)[0], "7", True, seeds[0]),
        Target(chat("Half?"), split_ids(tokenizer, UNCLOSED)[0], "\\frac{1}{2}", False, seeds[1]),
        Target(chat("Empty?"), split_ids(tokenizer, PIECES)[0], "", True, seeds[2]),
        Target(chat("No steps?"), split_ids(tokenizer, NO_STEP)[0], "7", True, seeds[3]),
    ]


SETTINGS = ProbeSettings(n_probe=2, max_tokens=4, delimiter=D)
DECODING = Decoding(temperature=1.0, top_p=0.9)


@pytest.fixture(scope="module")
def small_prober(backend) -> HFProber:
    return HFProber(backend, n_probe=SETTINGS.n_probe, max_tokens=SETTINGS.max_tokens)


def test_probe_rollouts_equal_the_prober_on_hand_built_jobs(backend, small_prober):
    tokenizer = backend.tokenizer
    batch = targets(tokenizer, tuple(probe_seed(3, 7, k) for k in "abcd"))
    got = probe_rollouts(small_prober, tokenizer, batch, SETTINGS, DECODING)

    probe_ids = encode(tokenizer, PROBE_TEXT)
    boundaries = [split_ids(tokenizer, PIECES)[1][:3], split_ids(tokenizer, UNCLOSED)[1][:2], [], []]
    found = [3, 2, 3, 0]
    jobs = [
        ProbeJob(
            [*t.prompt_ids, *t.completion_ids[: b + 1], *probe_ids],
            encode(tokenizer, t.gold),
            t.seed + k * SETTINGS.n_probe,
        )
        for t, bs in zip(batch, boundaries, strict=True)
        for k, b in enumerate(bs)
    ]
    expected = small_prober.probe(jobs, DECODING)
    assert len(got) == 4
    assert [p.boundaries for p in got] == boundaries and [p.found for p in got] == found
    assert [a for p in got for a in p.acc] == pytest.approx([r.acc for r in expected], rel=1e-4)
    assert [c for p in got for c in p.conf] == pytest.approx([r.conf for r in expected], rel=1e-4)
    for p in got:
        assert p.phi == [potential(a, c) for a, c in zip(p.acc, p.conf, strict=True)]
        assert all(phi <= 0.9 for phi in p.phi)  # the random tiny model never saturates
    assert len({round(c, 6) for p in got for c in p.conf}) == len(jobs)  # every probe has its own numbers

    # the accounting is solve_check_fields over the probed boundaries (none saturated: all solving)
    for t, p, bs in zip(batch, got, boundaries, strict=True):
        tokens = Tokens.from_pieces(t.completion_ids, tokenizer.batch_decode([[i] for i in t.completion_ids]))
        seg = segment(tokens, D)
        seg = replace(seg, boundaries=bs)
        assert p.accounting == solve_check_fields(seg, len(t.completion_ids), None, t.correct)
    think = split_ids(tokenizer, PIECES)[1][3] + 1
    assert (got[0].accounting["solve_tokens"], got[0].accounting["check_tokens"]) == (think, 0)
    assert got[1].accounting["no_think_close"] and got[1].accounting["n_steps"] == 2
    # an empty gold: nothing to teacher-force, no probed step, though the boundaries were found
    assert (got[2].acc, got[2].phi, got[2].accounting["n_steps"]) == ([], [], 0)


def test_probe_rollouts_do_not_depend_on_the_batch_size(backend, small_prober):
    tokenizer = backend.tokenizer
    batch = targets(tokenizer, (10, 20_000, 30, 40))
    one = probe_rollouts(small_prober, tokenizer, batch, replace(SETTINGS, batch_size=1), DECODING)
    many = probe_rollouts(small_prober, tokenizer, batch, SETTINGS, DECODING)
    assert SETTINGS.batch_size == 16
    for a, b in zip(one, many, strict=True):
        assert (a.boundaries, a.found, a.accounting) == (b.boundaries, b.found, b.accounting)
        # Acc and Conf are ~4e-3 on the tiny model: relative 1e-4 is well within 1e-5
        assert a.acc == pytest.approx(b.acc, rel=1e-4) and a.conf == pytest.approx(b.conf, rel=1e-4)
        assert a.phi == pytest.approx(b.phi, abs=1e-6)


def test_every_mth_boundary_probes_the_same_context(backend, small_prober):
    tokenizer = backend.tokenizer
    batch = targets(tokenizer, (5, 6, 7, 8))[:1]
    every = probe_rollouts(small_prober, tokenizer, batch, SETTINGS, DECODING)[0]
    second = probe_rollouts(small_prober, tokenizer, batch, replace(SETTINGS, every_m=2), DECODING)[0]
    assert (second.boundaries, second.found) == (every.boundaries[1:2], 3)
    assert second.acc == pytest.approx(every.acc[1:2], abs=1e-6)  # Acc does not depend on the seed


def test_boundaries_whose_probe_exceeds_the_context_are_not_probed(backend, small_prober):
    """With room for the first two probes only (prompt + prefix + probe text + the longer of the gold and
    the continuation budget), the third boundary is left unprobed: its step joins the tail."""
    tokenizer = backend.tokenizer
    batch = targets(tokenizer, (5, 6, 7, 8))[:1]
    every = probe_rollouts(small_prober, tokenizer, batch, SETTINGS, DECODING)[0]
    fixed = len(batch[0].prompt_ids) + len(encode(tokenizer, PROBE_TEXT)) + SETTINGS.max_tokens
    second = every.boundaries[1]
    for limit, kept in ((fixed + second + 1, 2), (fixed + second, 1), (fixed, 0)):
        got = probe_rollouts(small_prober, tokenizer, batch, SETTINGS, DECODING, max_length=limit)[0]
        assert (got.boundaries, got.found) == (every.boundaries[:kept], 3)
        assert got.acc == pytest.approx(every.acc[:kept], abs=1e-6)


def test_saturation_accounting_counts_probed_steps(tiny_model):
    """A model that always says "7": Acc = Conf = 1, Phi = 1 > 0.9 at the first probed step."""
    seven = 25
    bias = torch.zeros(418)
    bias[seven] = 100.0
    backend = with_logits(tiny_model, bias)
    tokenizer = backend.tokenizer
    prober = HFProber(backend, n_probe=SETTINGS.n_probe, max_tokens=SETTINGS.max_tokens)
    ids, ends = split_ids(tokenizer, PIECES)
    prompt = encode(tokenizer, "Q")
    batch = [Target(prompt, ids, "7", False, 1), Target(prompt, ids, "\\frac{1}{2}", True, 2)]
    wrong, never = probe_rollouts(prober, tokenizer, batch, SETTINGS, DECODING)
    think, n = ends[3] + 1, len(ids)
    assert wrong.phi == pytest.approx([1.0] * 3, abs=1e-6)
    assert len(never.phi) == 3 and all(p < 0 for p in never.phi)  # confidently wrong
    assert {k: wrong.accounting[k] for k in ("first_sat_step", "first_sat_token", "solve_tokens")} == {
        "first_sat_step": 1,
        "first_sat_token": ends[0],
        "solve_tokens": ends[0] + 1,
    }
    assert wrong.accounting["check_tokens"] == think - ends[0] - 1
    assert wrong.accounting["summary_tokens"] == n - (ends[4] + 1)
    assert wrong.accounting["r2w"] is True  # saturated, then wrong
    assert (never.accounting["saturated"], never.accounting["solve_tokens"], never.accounting["r2w"]) == (
        False,
        think,
        False,
    )
    # every 2nd boundary: the first probed step ends at the 2nd delimiter, and solving runs through it
    sparse = probe_rollouts(prober, tokenizer, batch[:1], replace(SETTINGS, every_m=2), DECODING)[0]
    assert (sparse.boundaries, sparse.found) == ([ends[1]], 3)
    assert sparse.accounting["first_sat_relpos"] == 1.0
    assert (sparse.accounting["solve_tokens"], sparse.accounting["check_tokens"]) == (
        ends[1] + 1,
        think - ends[1] - 1,
    )
