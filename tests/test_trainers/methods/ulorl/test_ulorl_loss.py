"""UloRL's loss on TRL's own `_compute_loss` (UloRL paper, Eqs. 8-10): POIS vs SAIS,
the DMMPT mask and its entropy sign, DAPO's token loss, with the tiny random causal LM and hand-made batches.

`loss_type="dapo"` in eval mode: the loss is sum_t per-token loss / `num_items_in_batch` with no
accumulation factor. The hand gradients come from a forward pass of our own: at ratio 1 the dapo
gradient is the REINFORCE one, -sum_t A_i grad log pi(o_t) / sum_i |o_i|.

- POIS: no old log-probs reach TRL, so the ratio is exactly 1, nothing clips, and stale sampling
  log-probs of older segments change nothing.
- SAIS: each token's old log-prob is its segment's sampling log-prob. With segment 0 sampled at half the
  current probability (ratio 2) and segment 1 at the current one, epsilon 0.2 clips exactly segment 0's
  tokens for positive advantages (their gradient vanishes) and none for negative ones (their gradient
  is doubled, the ratio's).
- DMMPT: masked tokens leave the loss's numerator only; the normaliser still counts them.
- DAPO: micro-batches given the whole batch's token count add up to the whole batch's loss.
"""

from __future__ import annotations

import math

import pytest
import torch
from trainer_helpers import scripted_trainer, segment_index

from trainers.data import RowOrder
from trainers.integration.engines import HFEngine
from trainers.masks import dmmpt_mask, sample_entropy
from trainers.method import Batch, Method
from trainers.methods.ulorl.method import UloRLMethod, UloRLOptions, segment_logps
from trainers.rewards import ScorerReward
from trainers.rollout import Rollout

PROMPT = [5, 6, 7]
COMPLETIONS = [[11, 12, 13, 14], [21, 22, 23, 24], [31, 32, 33], [41, 42]]  # 13 tokens
SEGMENTS = [[2, 2], [2, 2], [2, 1], [1, 1]]  # segment 0 holds 7 of the 13 tokens
TOKENS, SEGMENT0 = 13, 7
ADVANTAGES = [1.0, 0.5, 2.0, 0.3]
ROWS = [{"prompt": [{"role": "user", "content": "What is 1 + 1?"}], "answer": "2", "id": "a"}]
VOCAB = 418


@pytest.fixture(scope="module")
def trainer(plain_model, tmp_path_factory):
    trainer = scripted_trainer(
        Method(),
        plain_model,
        tmp_path_factory.mktemp("ulorl_loss"),
        [{"prompt": [{"role": "user", "content": "x"}], "id": "x"}] * 4,
        HFEngine,
        per_device_train_batch_size=4,
        num_generations=2,
        loss_type="dapo",
        beta=0.0,
        temperature=1.0,
    )
    trainer.model.eval()  # eval: TRL's dapo normaliser is num_items_in_batch alone (no accumulation factor)
    return trainer


def _method(**options) -> UloRLMethod:
    return UloRLMethod(ScorerReward("integer"), UloRLOptions(**options), RowOrder(ROWS, 0), 2, 8)


def _padded(completions=COMPLETIONS):
    width = max(len(c) for c in completions)
    ids = torch.tensor([c + [0] * (width - len(c)) for c in completions])
    mask = torch.tensor([[1] * len(c) + [0] * (width - len(c)) for c in completions])
    return torch.tensor([PROMPT] * len(completions)), ids, mask


def _inputs(advantages, completions=COMPLETIONS) -> dict:
    prompt, ids, mask = _padded(completions)
    return {
        "prompt_ids": prompt,
        "prompt_mask": torch.ones_like(prompt),
        "completion_ids": ids,
        "completion_mask": mask,
        "advantages": torch.as_tensor(advantages, dtype=torch.float32),
        "num_items_in_batch": mask.sum(),
    }


def _logps(model, prompt, completion, mask) -> torch.Tensor:
    """Per completion token log pi, by a forward pass of our own."""
    ids = torch.cat([prompt, completion], 1)
    logits = model(input_ids=ids, attention_mask=torch.cat([torch.ones_like(prompt), mask], 1)).logits
    logits = logits[:, prompt.size(1) - 1 : -1].float()
    return logits.log_softmax(-1).gather(-1, completion.unsqueeze(-1)).squeeze(-1)


def _current_logps(model) -> torch.Tensor:
    prompt, ids, mask = _padded()
    with torch.no_grad():
        return _logps(model, prompt, ids, mask)


def _grad(model, loss_fn) -> torch.Tensor:
    model.zero_grad(set_to_none=True)
    loss_fn().backward()
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in model.parameters()]
    return torch.cat([g.flatten() for g in grads]).clone()


def _hand(model, token_weights: torch.Tensor, normaliser: int):
    """-sum_t w_t grad log pi(o_t) / normaliser: the dapo gradient with per-token weights w (A x ratio)."""

    def loss():
        prompt, ids, mask = _padded()
        return -(token_weights * _logps(model, prompt, ids, mask) * mask).sum() / normaliser

    return loss


def _rollouts(stale: torch.Tensor) -> list[Rollout]:
    """Two-segment rollouts whose sampling log-probs are `stale` (B, T), segment by segment."""
    return [
        Rollout(
            PROMPT,
            c,
            "solver",
            "g",
            "math",
            "stop",
            sampling_logprobs=stale[i, : len(c)].tolist(),
            segment_lengths=s,
            policy_versions=[3, 4],
        )
        for i, (c, s) in enumerate(zip(COMPLETIONS, SEGMENTS, strict=True))
    ]


def _stale_logps(model) -> torch.Tensor:
    """Segment 0 sampled at half the current probability (log pi - log 2), segment 1 at the current one."""
    _, ids, _ = _padded()
    index = segment_index(SEGMENTS, ids.size(1))
    current = _current_logps(model)
    return torch.where(index == 0, current - math.log(2.0), torch.where(index == 1, current, 0.0))


def _loss_inputs(trainer, method, rollouts, advantages, rewards=None) -> dict:
    """What MethodGRPOTrainer hands TRL's loss for these rollouts under `method`."""
    trainer.method = method
    rewards = torch.ones(len(rollouts)) if rewards is None else torch.as_tensor(rewards, dtype=torch.float32)
    padded = torch.zeros(len(rollouts), dtype=torch.bool)
    return trainer._loss_inputs(rollouts, rewards, torch.as_tensor(advantages), padded, "eval")


def _metric(trainer, key: str) -> float:
    return trainer._metrics["eval"][key][-1]


# --- POIS vs SAIS -----------------------------------------------------------------------------------------


def test_pois_ratio_is_one_and_gradient_is_reinforce(trainer):
    model = trainer.model
    advantages = torch.tensor([1.5, -0.5, 0.7, -1.0])
    _, _, mask = _padded()
    hand = _grad(model, _hand(model, advantages[:, None].expand(-1, mask.size(1)), TOKENS))
    # TRL's inputs without old log-probs: TRL divides by its own detached log-probs
    direct = _grad(model, lambda: trainer._compute_loss(model, _inputs(advantages)))
    assert _metric(trainer, "clip_ratio/region_mean") == 0.0
    torch.testing.assert_close(direct, hand, rtol=1e-4, atol=1e-6)
    # POIS through the trainer: rollouts carrying stale sampling log-probs (ratio 2 on segment 0 were
    # they used) give TRL no old log-probs, so the gradient is the same REINFORCE one
    inputs = _loss_inputs(
        trainer, _method(segments=2, mpt_masking="none"), _rollouts(_stale_logps(model)), advantages
    )
    assert "old_per_token_logps" not in inputs
    assert int(inputs["num_items_in_batch"]) == TOKENS
    pois = _grad(model, lambda: trainer._compute_loss(model, inputs))
    assert _metric(trainer, "clip_ratio/region_mean") == 0.0
    torch.testing.assert_close(pois, hand, rtol=1e-4, atol=1e-6)
    assert hand.abs().sum() > 0


def test_segment_logps_map_each_token_to_its_segments_values(trainer):
    stale = _stale_logps(trainer.model)
    rollouts = _rollouts(stale)
    width = max(len(c) for c in COMPLETIONS)
    old = segment_logps(rollouts, width)
    current = _current_logps(trainer.model)
    index = segment_index([r.segments for r in rollouts], width)
    expected = torch.where(index == 0, current - math.log(2.0), torch.where(index == 1, current, 0.0))
    torch.testing.assert_close(old, expected, rtol=0, atol=1e-6)
    # the border of row 0 (segments [2, 2]): token 1 is segment 0's last, token 2 segment 1's first
    assert index[0].tolist() == [0, 0, 1, 1]
    torch.testing.assert_close(old[0, 1], current[0, 1] - math.log(2.0), rtol=0, atol=1e-6)
    torch.testing.assert_close(old[0, 2], current[0, 2], rtol=0, atol=1e-6)
    assert old[3, 2:].tolist() == [0.0, 0.0]  # padding
    # a wider batch pads with 0; a rollout without sampling log-probs is refused
    assert segment_logps(rollouts, width + 2)[:, width:].abs().sum() == 0
    bare = Rollout(PROMPT, [1, 2], "solver", "g", "math", "stop")
    with pytest.raises(ValueError, match="sampling log-probs"):
        segment_logps([bare], 2)


def test_old_logps_is_none_for_pois_and_tois_and_the_segments_for_sais(trainer):
    stale = _stale_logps(trainer.model)
    rollouts = _rollouts(stale)
    prompt, ids, mask = _padded()

    def policy():
        raise AssertionError("old_logps needs no forward pass")

    batch = Batch(rollouts, torch.ones(4), prompt, torch.ones_like(prompt), ids, mask, policy)
    assert _method(segments=2, importance_sampling="pois").old_logps(batch) is None
    assert _method(segments=1, importance_sampling="tois").old_logps(batch) is None
    sais = _method(segments=2, importance_sampling="sais").old_logps(batch)
    torch.testing.assert_close(sais, segment_logps(rollouts, ids.size(1)), rtol=0, atol=0)
    torch.testing.assert_close(sais, stale * mask, rtol=0, atol=1e-7)


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["positive", "negative"])
def test_sais_clips_exactly_the_stale_segment(trainer, sign):
    model = trainer.model
    stale = _stale_logps(model)
    rollouts = _rollouts(stale)
    advantages = sign * torch.tensor(ADVANTAGES)
    inputs = _loss_inputs(
        trainer, _method(segments=2, importance_sampling="sais", mpt_masking="none"), rollouts, advantages
    )
    torch.testing.assert_close(inputs["old_per_token_logps"], segment_logps(rollouts, 4), rtol=0, atol=0)
    assert trainer.epsilon_low == trainer.epsilon_high == 0.2
    sais = _grad(model, lambda: trainer._compute_loss(model, inputs))
    _, ids, mask = _padded()
    index = segment_index(SEGMENTS, ids.size(1))
    ratio = (_current_logps(model) - stale).exp() * mask  # 2 on segment 0, 1 on segment 1
    torch.testing.assert_close(ratio, torch.where(index == 0, 2.0, (index == 1).float()), rtol=1e-5, atol=0)
    if sign > 0:  # ratio 2 > 1 + epsilon with A > 0: segment 0 clipped, a constant; segment 1 REINFORCE
        assert _metric(trainer, "clip_ratio/region_mean") == pytest.approx(SEGMENT0 / TOKENS, rel=1e-6)
        assert _metric(trainer, "clip_ratio/high_mean") == pytest.approx(SEGMENT0 / TOKENS, rel=1e-6)
        weights = advantages[:, None] * (index == 1)
    else:  # A < 0: min(2A, 1.2A) = 2A, unclipped; the gradient carries the ratio
        assert _metric(trainer, "clip_ratio/region_mean") == 0.0
        assert _metric(trainer, "clip_ratio/high_mean") == 0.0
        assert _metric(trainer, "clip_ratio/low_mean") == 0.0
        weights = advantages[:, None] * ratio
    torch.testing.assert_close(sais, _grad(model, _hand(model, weights, TOKENS)), rtol=1e-4, atol=1e-6)


# --- DMMPT ------------------------------------------------------------------------------------------------


def test_dmmpt_weights_zero_tokens_but_keep_them_in_the_normaliser(trainer):
    model = trainer.model
    _, ids, mask = _padded()
    keep = mask.clone()
    keep[0, 3] = 0  # row 0's last token
    keep[1, 1] = 0  # a token inside row 1
    keep[2, 0] = 0
    advantages = torch.tensor(ADVANTAGES)[:, None] * keep

    def trl(completions=COMPLETIONS, tool_mask=None):
        def loss():
            inputs = _inputs(advantages, completions)
            if tool_mask is not None:  # a loss mask (Method.loss_mask): out of the numerator and normaliser
                inputs["tool_mask"] = tool_mask
                inputs["num_items_in_batch"] = (inputs["completion_mask"] * tool_mask).sum()
            return trainer._compute_loss(model, inputs)

        return loss

    weighted = _grad(model, trl())
    assert int(mask.sum()) == TOKENS
    torch.testing.assert_close(weighted, _grad(model, _hand(model, advantages, TOKENS)), rtol=1e-4, atol=1e-6)
    # a masked token contributes nothing: changing row 0's last (masked) token changes no gradient...
    changed = [list(c) for c in COMPLETIONS]
    changed[0][3] = 99
    assert torch.equal(_grad(model, trl(changed)), weighted)
    # ...while changing an unmasked last token does
    changed = [list(c) for c in COMPLETIONS]
    changed[1][3] = 99
    assert not torch.allclose(_grad(model, trl(changed)), weighted, rtol=1e-3, atol=1e-6)
    # dropping the token with a loss mask instead also drops it from the normaliser: 12 tokens, not 13
    tool_mask = torch.ones_like(mask)
    tool_mask[0, 3] = 0
    dropped = _grad(model, trl(tool_mask=tool_mask))
    torch.testing.assert_close(dropped * (TOKENS - 1), weighted * TOKENS, rtol=1e-4, atol=1e-5)


def test_dmmpt_through_the_trainer_keeps_the_normaliser(trainer):
    """Static masking with tau = 0 masks every token of the reward-1 samples: their advantages are
    zeroed, but `num_items_in_batch` still counts them."""
    model = trainer.model
    rollouts = _rollouts(_stale_logps(model))
    advantages = torch.tensor([1.0, -1.0, 1.0, -1.0])
    method = _method(segments=2, mpt_masking="static", tau=0.0)
    inputs = _loss_inputs(trainer, method, rollouts, advantages, rewards=[1.0, 0.0, 1.0, 0.0])
    _, _, mask = _padded()
    weights = torch.tensor([0.0, -1.0, 0.0, -1.0])[:, None] * mask
    torch.testing.assert_close(inputs["advantages"], weights, rtol=0, atol=0)
    assert int(inputs["num_items_in_batch"]) == TOKENS
    trl = _grad(model, lambda: trainer._compute_loss(model, inputs))
    torch.testing.assert_close(trl, _grad(model, _hand(model, weights, TOKENS)), rtol=1e-4, atol=1e-6)
    masked = 4 + 3  # rows 0 and 2
    assert method._metrics["ulorl/dmmpt/masked_fraction"] == pytest.approx(masked / TOKENS)
    assert method._metrics["ulorl/dmmpt/mpt_fraction"] == pytest.approx(masked / TOKENS)
    assert method._metrics["ulorl/dmmpt/trigger_rate"] == 1.0


# Hand-made policy numbers. Row 0: reward 1, entropy 0.1, two mastered tokens; row 1: reward 0, all
# mastered (never masked); row 2: reward 1, entropy 0.5 >= sigma, two mastered tokens; row 3: reward 1,
# two real tokens (both mastered, entropy 0.1) then padding with a high entropy that must not count.
PROBS = torch.tensor(
    [[0.999, 0.5, 0.995, 0.2], [0.999] * 4, [0.999, 0.3, 0.999, 0.4], [0.999, 0.999, 0.999, 0.1]]
)
ENTROPY = torch.tensor([[0.1] * 4, [0.1] * 4, [0.5] * 4, [0.1, 0.1, 5.0, 5.0]])
MASK = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 0, 0]])
REWARDS = torch.tensor([1.0, 0.0, 1.0, 1.0])
N = 14  # real tokens


def _batch() -> Batch:
    prompt = torch.tensor([PROMPT] * 4)
    ids = torch.full((4, 4), 11) * MASK
    return Batch([], REWARDS, prompt, torch.ones_like(prompt), ids, MASK, lambda: (PROBS.log(), ENTROPY))


@pytest.mark.parametrize(
    ("masking", "scope", "kept", "masked", "trigger"),
    [
        # Eq. 10 per sample: rows 0 and 3 are positive with H_i = 0.1 < 0.2; row 2's H_i = 0.5
        ("dynamic", "sample", [[0, 1, 0, 1], [1] * 4, [1] * 4, [0, 0, 0, 0]], 4, 2 / 3),
        # the batch's token mean (0.4 + 0.4 + 2.0 + 0.2) / 14 = 0.214 >= 0.2: nothing masked
        ("dynamic", "batch", [[1] * 4, [1] * 4, [1] * 4, [1, 1, 0, 0]], 0, 0.0),
        # static: every mastered token of a positive sample, whatever the entropy
        ("static", "sample", [[0, 1, 0, 1], [1] * 4, [0, 1, 0, 1], [0, 0, 0, 0]], 6, 1.0),
        ("static", "batch", [[0, 1, 0, 1], [1] * 4, [0, 1, 0, 1], [0, 0, 0, 0]], 6, 1.0),
    ],
)
def test_advantage_weights_and_their_numbers(masking, scope, kept, masked, trigger):
    method = _method(segments=2, mpt_masking=masking, entropy_scope=scope)
    weights = method.advantage_weights(_batch())
    assert weights.tolist() == kept
    if masking == "dynamic":
        expected = dmmpt_mask(
            PROBS.log().exp(), ENTROPY, MASK, REWARDS, tau=0.99, sigma=0.2, entropy_scope=scope
        )
        assert torch.equal(weights, expected)
    metrics = method._metrics
    assert metrics["ulorl/entropy"] == pytest.approx((0.4 + 0.4 + 2.0 + 0.2) / N)
    assert metrics["ulorl/dmmpt/mpt_fraction"] == pytest.approx(6 / N)  # rows 0, 2, 3: two each
    assert metrics["ulorl/dmmpt/masked_fraction"] == pytest.approx(masked / N)
    assert metrics["ulorl/dmmpt/trigger_rate"] == pytest.approx(trigger)


def test_without_masking_there_are_no_weights_and_no_extra_forward_pass():
    def no_forward():
        raise AssertionError("mpt_masking: none needs no policy forward pass")

    method = _method(segments=2, mpt_masking="none")
    batch = _batch()
    batch.policy = no_forward
    assert method.advantage_weights(batch) is None and "ulorl/entropy" not in method._metrics


# --- entropy sign -----------------------------------------------------------------------------------------


def test_entropy_is_non_negative_and_log_vocab_when_uniform(trainer):
    from trl.trainer.utils import entropy_from_logits

    logits = torch.randn(3, 5, VOCAB, generator=torch.Generator().manual_seed(0)) * 4
    assert (entropy_from_logits(logits) >= 0).all()
    peaked = torch.zeros(2, VOCAB)
    peaked[:, 7] = 200.0
    assert (entropy_from_logits(peaked) >= 0).all() and entropy_from_logits(peaked).max() < 1e-6
    uniform = entropy_from_logits(torch.zeros(2, 3, VOCAB))
    torch.testing.assert_close(uniform, torch.full((2, 3), math.log(VOCAB)))
    # sample_entropy of a uniform batch is log |V| for both scopes (padding ignored)
    _, _, mask = _padded()
    for scope in ("sample", "batch"):
        values = sample_entropy(torch.full(mask.shape, math.log(VOCAB)) * mask, mask, scope)
        torch.testing.assert_close(values, torch.full((4,), math.log(VOCAB), dtype=torch.float64))

    # TRL's per-token entropy in the loss (its fused LM head), on the model and on uniform logits
    model = trainer.model
    prompt, ids, mask = _padded()
    full = torch.cat([prompt, ids], 1)
    attention = torch.cat([torch.ones_like(prompt), mask], 1)
    with torch.no_grad():
        _, entropies, _ = trainer._get_per_token_logps_and_entropies(
            model, full, attention, 4, compute_entropy=True
        )
    assert (entropies[mask.bool()] > 0).all()
    head = model.lm_head.weight.detach().clone()
    try:
        with torch.no_grad():
            model.lm_head.weight.zero_()
            _, entropies, _ = trainer._get_per_token_logps_and_entropies(
                model, full, attention, 4, compute_entropy=True
            )
        torch.testing.assert_close(entropies[mask.bool()], torch.full((TOKENS,), math.log(VOCAB)))
        # UloRL's logged entropy is that positive number, above sigma: DMMPT does not trigger
        method = _method(segments=2)
        _loss_inputs(trainer, method, _rollouts(torch.zeros(4, 4)), torch.ones(4))
        assert method._metrics["ulorl/entropy"] == pytest.approx(math.log(VOCAB), rel=1e-5)
        assert method._metrics["ulorl/dmmpt/trigger_rate"] == 0.0
    finally:
        with torch.no_grad():
            model.lm_head.weight.copy_(head)


# --- DAPO token loss --------------------------------------------------------------------------------------


def test_dapo_micro_batches_add_up_to_the_whole_batch(trainer):
    model = trainer.model
    advantages = torch.tensor([0.7, -1.2, 0.4, 1.5])
    whole = _inputs(advantages)
    assert int(whole["num_items_in_batch"]) == TOKENS

    def micro(rows: slice, normaliser=None) -> dict:
        part = {k: v[rows] for k, v in whole.items() if k != "num_items_in_batch"}
        part["num_items_in_batch"] = whole["num_items_in_batch"] if normaliser is None else normaliser(part)
        return part

    halves = [micro(slice(0, 2)), micro(slice(2, 4))]
    loss = trainer._compute_loss(model, whole)
    parts = [trainer._compute_loss(model, h) for h in halves]
    torch.testing.assert_close(sum(parts), loss)
    lengths = torch.tensor([len(c) for c in COMPLETIONS], dtype=torch.float32)
    # at ratio 1 each token's loss is -A_i: the value is sum over all tokens / all tokens
    torch.testing.assert_close(loss.detach(), -(advantages * lengths).sum() / TOKENS)
    whole_grad = _grad(model, lambda: trainer._compute_loss(model, whole))
    summed = sum(_grad(model, lambda h=h: trainer._compute_loss(model, h)) for h in halves)
    torch.testing.assert_close(summed, whole_grad, rtol=1e-4, atol=1e-7)
    hand = _hand(model, advantages[:, None].expand(-1, 4), TOKENS)
    torch.testing.assert_close(whole_grad, _grad(model, hand), rtol=1e-4, atol=1e-6)
    # each micro-batch normalised by its own tokens (8 and 5) would not add up: the test can tell
    own = [
        micro(slice(0, 2), lambda p: p["completion_mask"].sum()),
        micro(slice(2, 4), lambda p: p["completion_mask"].sum()),
    ]
    assert not torch.allclose(sum(trainer._compute_loss(model, h) for h in own), loss)
