"""CISPO as Reasoning Arena trains with it (Reasoning Arena paper, §3, Eqs. 1-2), on TRL's own
loss and a tiny random causal LM: `loss_type="cispo"` with `epsilon_high=3.0` is sg(clip(ratio, max=3)) *
A * log pi, normalised by the batch's token count.

At ratio 1 the gradient is exactly -A * sum_t grad log pi / tokens, computed here by a forward pass of
our own. At ratio 2 it is twice that and at ratio 5 three times (the cap): a weight that carried gradient
would add A * log pi * grad ratio, so the exact multiples show the weight is a stop-gradient constant.
"""

from __future__ import annotations

import math

import torch
from trainer_helpers import scripted_trainer

from trainers.integration.engines import HFEngine

ADVANTAGES = [1.5, -0.5]


def _inputs(trainer, log_ratio: float | None) -> dict:
    """Two completions of one prompt; old log-probs set so that ratio = exp(log_ratio) on every token."""
    prompt = torch.tensor([[5, 6, 7], [5, 6, 7]])
    completion = torch.tensor([[11, 12, 13, 14], [21, 22, 23, 2]])
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]])
    inputs = {
        "prompt_ids": prompt,
        "prompt_mask": torch.ones_like(prompt),
        "completion_ids": completion,
        "completion_mask": mask,
        "advantages": torch.tensor(ADVANTAGES),
        "num_items_in_batch": mask.sum(),
    }
    if log_ratio is not None:
        with torch.no_grad():
            current = _logps(trainer.model, prompt, completion, mask)
        inputs["old_per_token_logps"] = current - log_ratio
    return inputs


def _logps(model, prompt, completion, mask) -> torch.Tensor:
    ids = torch.cat([prompt, completion], 1)
    logits = model(input_ids=ids, attention_mask=torch.cat([torch.ones_like(prompt), mask], 1)).logits
    logits = logits[:, prompt.size(1) - 1 : -1].float()
    return logits.log_softmax(-1).gather(-1, completion.unsqueeze(-1)).squeeze(-1)


def _grad(trainer, loss_fn) -> torch.Tensor:
    trainer.model.zero_grad()
    loss_fn().backward()
    return torch.cat([p.grad.flatten() for p in trainer.model.parameters() if p.grad is not None]).clone()


def test_cispo_weight_is_a_clipped_stop_gradient_constant(plain_model, tmp_path):
    from trainers.method import Method

    trainer = scripted_trainer(
        Method(),
        plain_model,
        tmp_path,
        [{"prompt": [{"role": "user", "content": "x"}], "id": "x"}] * 2,
        HFEngine,
        per_device_train_batch_size=2,
        num_generations=2,
        loss_type="cispo",
        epsilon_high=3.0,
        temperature=1.0,
    )
    trainer.model.eval()  # eval mode: TRL's normaliser is the token count alone, with no accumulation factor
    model = trainer.model

    def trl_loss(log_ratio):
        return lambda: trainer._compute_loss(model, _inputs(trainer, log_ratio))

    at_one = _grad(trainer, trl_loss(0.0))
    inputs = _inputs(trainer, None)
    mask = inputs["completion_mask"].float()

    def reinforce():
        logps = _logps(model, inputs["prompt_ids"], inputs["completion_ids"], inputs["completion_mask"])
        return -(torch.tensor(ADVANTAGES)[:, None] * logps * mask).sum() / mask.sum()

    torch.testing.assert_close(at_one, _grad(trainer, reinforce), rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(_grad(trainer, trl_loss(math.log(2.0))), 2 * at_one, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(_grad(trainer, trl_loss(math.log(5.0))), 3 * at_one, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(_grad(trainer, trl_loss(math.log(50.0))), 3 * at_one, rtol=1e-4, atol=1e-6)
    assert at_one.abs().sum() > 0
