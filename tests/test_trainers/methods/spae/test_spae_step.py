"""One SPAE step through the real trainer with scripted samples and hand-set potentials (SPAE paper,
§3.3), checked against a hand computation: dynamic sampling drops a uniform group and refills it, the
probes' potentials become per-token advantages (Eq. 11-17), and those reach TRL's loss on the right tokens
with the right normaliser; then the step's metrics.

G = 2 samples per prompt, 2 prompts per step; the integer scorer reads each sample's last number.

| group | sample | text (D = ".\\n\\n", 3 tokens) | reward | Phi at its boundaries |
|---|---|---|---|---|
| P (7) | A | A D So 7 D So 7 D ok 7 | 1 | 0, 1, 1 (saturated at step 2) |
| P (7) | B | B D No 2 | 0 | 0.5 |
| Q (3) | A, B | A 3 / B 3 | 1, 1 | none: uniform, dropped |
| R (5), the refill | A | A D So 5 D No 6 | 0 | 1, -1 (saturated, then wrong: R2W) |
| R (5) | B | B 5 | 1 | no boundary |

Potentials are set through (Acc, Conf) at Phi's corners: (0, 0) -> 0, (1, 1) -> 1, (1, 0) -> 0.5,
(0, 1) -> -1 (Eq. 8).
"""

from __future__ import annotations

import contextlib
import math
from pathlib import Path
from typing import Any

import pytest
import torch
from trainer_helpers import scripted_trainer

from harness.core.types import Item
from harness.probing.probe import ProbeResult
from trainers.data import RowOrder, item_rows
from trainers.engine import Generation
from trainers.integration.engines import HFEngine
from trainers.methods.spae import method as spae_module
from trainers.methods.spae.method import SpaeMethod, SpaeOptions
from trainers.methods.spae.probes import ProbeSettings
from trainers.rewards import ScorerReward

G = 2
D = ".\n\n"
PROBLEMS = {"P": 7, "Q": 3, "R": 5}
# problem -> the two samples' pieces (each piece tokenised alone), and the (Acc, Conf) at each boundary
SCRIPT: dict[str, list[list[str]]] = {
    "P": [["A", D, "So", " 7", D, "So", " 7", D, "ok", " 7"], ["B", D, "No", " 2"]],
    "Q": [["A", " 3"], ["B", " 3"]],
    "R": [["A", D, "So", " 5", D, "No", " 6"], ["B", " 5"]],
}
PROBES = {("P", 0): [(0, 0), (1, 1), (1, 1)], ("P", 1): [(1, 0)], ("R", 0): [(1, 1), (0, 1)]}
ALPHA, XI = 0.5, 0.5


def rows() -> list[dict[str, Any]]:
    items = [Item(f"p{name}", f"Problem {name}.", str(answer)) for name, answer in PROBLEMS.items()]
    return item_rows(items, "{problem}")


def encode(tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False)


def scripted(tokenizer, name: str, j: int) -> tuple[list[int], list[int]]:
    """Sample j's ids (EOS last) and the indices of its boundary tokens (each delimiter's last token)."""
    ids, boundaries = [], []
    for piece in SCRIPT[name][j]:
        ids += encode(tokenizer, piece)
        if piece == D:
            boundaries.append(len(ids) - 1)
    return ids + [tokenizer.eos_token_id], boundaries


class ScriptedEngine(HFEngine):
    def generate(self, prompts, max_tokens=None):
        out = []
        for k, prompt in enumerate(prompts):
            name = self.tokenizer.decode(prompt).split("Problem ")[1][0]
            j = sum(1 for p in prompts[:k] if list(p) == list(prompt))
            ids, _ = scripted(self.tokenizer, name, j)
            out.append(Generation(ids, [-0.5] * len(ids), "stop"))
        return out


class HandProber:
    """Answers each probe with the (Acc, Conf) the table sets for its sample and boundary."""

    def __init__(self, tokenizer):
        probe = encode(tokenizer, ProbeSettings().probe_text)
        self.table = {}
        for (name, j), values in PROBES.items():
            prompt = encode_prompt(tokenizer, name)
            ids, boundaries = scripted(tokenizer, name, j)
            for b, (acc, conf) in zip(boundaries, values, strict=True):
                self.table[tuple(prompt + ids[: b + 1] + probe)] = ProbeResult(acc, conf)
        self.asked: list[tuple[int, ...]] = []

    def probe(self, jobs, decoding):
        self.asked += [tuple(job.context) for job in jobs]
        return [self.table[tuple(job.context)] for job in jobs]


def encode_prompt(tokenizer, name: str) -> list[int]:
    row = next(r for r in rows() if r["id"] == f"p{name}")
    rendered = tokenizer.apply_chat_template(
        row["prompt"], add_generation_prompt=True, tokenize=True, return_dict=True
    )
    return list(rendered["input_ids"])


def hand_advantages(tokenizer) -> list[list[float]]:
    """Eq. 11-17 by hand for the trained samples P/A, P/B, R/A, R/B, token by token."""
    f = lambda c: 1 - ALPHA * (1 - math.exp(-c))  # noqa: E731  Eq. 13
    # Phi per step: P/A 0, 1, 1; P/B 0.5; R/A 1, -1. Delta Phi (0 at a first step): 0, 1, 0; 0; 0, -2.
    # Min-max over the batch's six steps (-2 .. 1): 2/3, 1, 2/3; 2/3; 2/3, 0; g = e^x less its mean
    lifted = {("P", 0): [math.exp(2 / 3), math.e, math.exp(2 / 3)], ("P", 1): [math.exp(2 / 3)]}
    lifted[("R", 0)] = [math.exp(2 / 3), 1.0]
    centre = (4 * math.exp(2 / 3) + math.e + 1) / 6
    # saturation counts of earlier steps (Phi > 0.9), the virtual step after the last boundary last
    counts = {("P", 0): [0, 0, 1, 2], ("P", 1): [0, 0], ("R", 0): [0, 1, 1], ("R", 1): [0]}
    outcome = {("P", 0): 0.5, ("P", 1): -0.5, ("R", 0): -0.5, ("R", 1): 0.5}  # R - group mean, Eq. 16
    raw = []
    for key in [("P", 0), ("P", 1), ("R", 0), ("R", 1)]:
        ids, boundaries = scripted(tokenizer, *key)
        g = [v - centre for v in lifted.get(key, [])] + [0.0]
        starts = [0] + [b + 1 for b in boundaries]
        row = []
        for step, start in enumerate(starts):
            end = boundaries[step] + 1 if step < len(boundaries) else len(ids)
            row += [outcome[key] * f(counts[key][step]) + XI * g[step]] * (end - start)
        raw.append(row)
    tokens = [v for row in raw for v in row]
    mean = sum(tokens) / len(tokens)
    std = math.sqrt(sum((v - mean) ** 2 for v in tokens) / (len(tokens) - 1))  # Eq. 17
    return [[(v - mean) / (std + 1e-6) for v in row] for row in raw]


@pytest.fixture
def step(plain_model, tmp_path, monkeypatch):
    """The trainer after one generation step: (trainer, the batch TRL got, what rollout returned, prober)."""
    method = SpaeMethod(
        ScorerReward("integer"),
        SpaeOptions(alpha=ALPHA, xi=XI, delimiter=D, max_refill_rounds=2),
        RowOrder([r for r in rows() if r["id"] == "pR"], seed=0),  # the refill walk, here R alone
        G,
        spae_module.Decoding(1.0, 1.0),
    )
    trainer = scripted_trainer(
        method,
        plain_model,
        tmp_path,
        rows(),
        ScriptedEngine,
        per_device_train_batch_size=4,
        num_generations=G,
        loss_type="dapo",
        beta=0.0,
        max_completion_length=32,
    )
    prober = HandProber(trainer.processing_class)

    @contextlib.contextmanager
    def hand_prober(n, max_tokens, entropy_mode="full"):
        yield prober

    monkeypatch.setattr(trainer.engine, "prober", hand_prober)
    returned = []
    original = method.rollout
    monkeypatch.setattr(method, "rollout", lambda r, e: returned.extend(original(r, e)) or returned)
    by_id = {r["id"]: r for r in rows()}
    inputs = [by_id["pP"]] * G + [by_id["pQ"]] * G
    batch = trainer._generate_and_score_completions(inputs)
    return trainer, batch, returned, prober


def test_dropped_group_is_refilled_and_probed_samples_train(step):
    trainer, batch, returned, prober = step
    tok = trainer.processing_class
    groups = [(r.group.split(":"), r.trainable, r.reward) for r in returned]  # rank/step:round:i:id
    # P and R train (R from the refill round); Q is uniform and comes back untrainable
    assert [(g[-1], t, w) for g, t, w in groups] == [
        ("pP", True, 1.0),
        ("pP", True, 0.0),
        ("pR", True, 0.0),
        ("pR", True, 1.0),
        ("pQ", False, 1.0),
        ("pQ", False, 1.0),
    ]
    assert [g[1] for g, _, _ in groups] == ["0", "0", "1", "1", "0", "0"]  # R came in refill round 1
    # every boundary of every trained sample was probed once; Q's samples were not
    assert sorted(prober.asked) == sorted(prober.table)
    expected = [scripted(tok, *key)[0] for key in [("P", 0), ("P", 1), ("R", 0), ("R", 1)]]
    width = max(len(ids) for ids in expected)
    padded = [ids + [tok.pad_token_id] * (width - len(ids)) for ids in expected]
    assert batch["completion_ids"].tolist() == padded


def test_hand_set_potentials_give_the_hand_computed_token_advantages(step):
    trainer, batch, _, _ = step
    hand = hand_advantages(trainer.processing_class)
    advantages, mask = batch["advantages"], batch["completion_mask"]
    assert advantages.shape == mask.shape
    for row, values in enumerate(hand):
        assert mask[row].sum() == len(values) and mask[row, len(values) :].sum() == 0
        assert advantages[row, : len(values)].tolist() == pytest.approx(values, abs=1e-5)
        assert advantages[row, len(values) :].abs().sum() == 0  # padding carries nothing
    assert batch["num_items_in_batch"] == sum(len(v) for v in hand)  # DAPO: every trained token


def test_the_advantages_reach_trls_loss_on_the_right_tokens_with_the_right_normaliser(step):
    """TRL's dapo loss at ratio 1 has the REINFORCE gradient -sum_ij A_ij grad log pi(o_ij) / N."""
    trainer, batch, _, _ = step
    model = trainer.model
    model.eval()  # dapo's normaliser is num_items_in_batch alone, no accumulation factor

    def grad(loss_fn) -> torch.Tensor:
        model.zero_grad(set_to_none=True)
        loss_fn().backward()
        return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None]).clone()

    def hand() -> torch.Tensor:
        ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], 1)
        mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], 1)
        width = batch["completion_ids"].size(1)
        logits = model(input_ids=ids, attention_mask=mask).logits[:, -width - 1 : -1].float()
        logps = logits.log_softmax(-1).gather(-1, batch["completion_ids"].unsqueeze(-1)).squeeze(-1)
        weighted = batch["advantages"] * logps * batch["completion_mask"]
        return -weighted.sum() / batch["num_items_in_batch"]

    ours = grad(lambda: trainer._compute_loss(model, dict(batch)))
    assert ours.abs().sum() > 0
    assert torch.allclose(ours, grad(hand), atol=1e-6, rtol=1e-4)


def test_the_step_logs_phi_saturation_check_share_r2w_f_and_g(step):
    trainer, _, _, _ = step
    mode = "train" if trainer.model.training else "eval"
    logged = {k: sum(v) / len(v) for k, v in trainer._metrics[mode].items() if k.startswith("spae/")}
    tok = trainer.processing_class
    pa, pa_bounds = scripted(tok, "P", 0)
    rb, _ = scripted(tok, "R", 1)
    # correct samples P/A (saturated at step 2: solve through its 2nd boundary) and R/B (no boundary)
    solve = pa_bounds[1] + 1 + len(rb)
    check = len(pa) - (pa_bounds[1] + 1)
    assert logged["spae/phi/mean"] == pytest.approx(2.5 / 6)
    assert logged["spae/saturated_steps"] == pytest.approx(3 / 6)
    assert logged["spae/saturated_rollouts"] == pytest.approx(2 / 4)
    assert logged["spae/r2w_rate"] == pytest.approx(1 / 2)  # R/A saturated then answered 6; P/B never did
    assert logged["spae/check_share"] == pytest.approx(check / (solve + check))
    assert logged["spae/probes"] == 6 and logged["spae/boundaries/found"] == 6
    groups = ("spae/refill_rounds", "spae/dropped_groups", "spae/trained_groups")
    assert [logged[k] for k in groups] == [1, 1, 2]
    assert logged["spae/sampled_groups"] == 3
    counts_by_sample = {("P", 0): [0, 0, 1, 2], ("P", 1): [0, 0], ("R", 0): [0, 1, 1], ("R", 1): [0]}
    f_values = [
        f
        for key, counts in counts_by_sample.items()
        for f, n in zip([1 - ALPHA * (1 - math.exp(-c)) for c in counts], step_sizes(tok, key), strict=True)
        for _ in range(n)
    ]
    assert logged["spae/f/mean"] == pytest.approx(sum(f_values) / len(f_values))
    assert "spae/g/mean" in logged and "spae/seconds/probe" in logged


def step_sizes(tokenizer, key: tuple[str, int]) -> list[int]:
    """Tokens per step of a sample, the virtual last step included."""
    ids, boundaries = scripted(tokenizer, *key)
    ends = [b + 1 for b in boundaries] + [len(ids)]
    return [e - s for s, e in zip([0, *ends], ends, strict=False)]


def test_without_probes_rfb_is_the_group_mean_whitened_over_tokens(plain_model, tmp_path: Path):
    """The RF-B baseline (§4.1): R - group mean on every token, standardised over the batch's tokens."""
    method = SpaeMethod(
        ScorerReward("integer"),
        SpaeOptions(advantage="rfb"),
        RowOrder(rows(), 0),
        G,
        spae_module.Decoding(1.0, 1.0),
    )
    args = dict(per_device_train_batch_size=4, num_generations=G)
    trainer = scripted_trainer(method, plain_model, tmp_path, rows(), ScriptedEngine, **args)
    by_id = {r["id"]: r for r in rows()}
    batch = trainer._generate_and_score_completions([by_id["pP"]] * G + [by_id["pR"]] * G)
    tok = trainer.processing_class
    lengths = [len(scripted(tok, *key)[0]) for key in [("P", 0), ("P", 1), ("R", 0), ("R", 1)]]
    raw = [v for value, n in zip([0.5, -0.5, -0.5, 0.5], lengths, strict=True) for v in [value] * n]
    mean = sum(raw) / len(raw)
    std = math.sqrt(sum((v - mean) ** 2 for v in raw) / (len(raw) - 1))
    start = 0
    for row, n in enumerate(lengths):
        expected = [(v - mean) / (std + 1e-6) for v in raw[start : start + n]]
        assert batch["advantages"][row, :n].tolist() == pytest.approx(expected, abs=1e-5)
        start += n
    assert not any(k.startswith("spae/phi") for m in trainer._metrics.values() for k in m)  # no probes ran
