"""MethodGRPOTrainer against TRL: the loss contract, parity with stock GRPOTrainer, and learning on the
real SmolLM2."""

from __future__ import annotations

import inspect
import re
from collections import Counter

import pytest
import torch
import trl
from datasets import Dataset
from trainer_helpers import arithmetic_dataset_rows, cpu_args
from trl import GRPOTrainer

from benchmarks.arithmetic import sum_split
from harness.core.types import Item
from harness.scoring.integer import last_number
from trainers.data import item_rows
from trainers.integration.checkpoints import state_file
from trainers.integration.trainer import (
    CONSUMED_KEYS,
    EpochSeededSampler,
    MethodGRPOTrainer,
    _fit_rows,
)
from trainers.methods.grpo import GRPOMethod
from trainers.rewards import ScorerReward

# Keys TRL's loss reads only for vision-language models; our text rollouts never carry them
VISION_KEYS = {
    "image_grid_thw",
    "image_position_ids",
    "image_sizes",
    "mm_token_type_ids",
    "num_images",
    "num_tiles",
    "pixel_attention_mask",
    "pixel_values",
    "spatial_shapes",
    "token_type_ids",
}


def test_trl_is_the_pinned_minor_version():
    assert trl.__version__.startswith("1.16."), (
        f"trainers/ was written against TRL 1.16, found {trl.__version__}"
    )


def test_the_loss_reads_exactly_the_keys_we_provide():
    """Fails when TRL's loss starts (or stops) reading a batch key: the override must follow."""
    source = inspect.getsource(GRPOTrainer._compute_loss) + inspect.getsource(GRPOTrainer.compute_loss)
    read = (
        set(re.findall(r'inputs\[\s*"(\w+)"\s*\]', source))
        | set(re.findall(r'inputs\.get\(\s*"(\w+)"', source))
        | set(re.findall(r'"(\w+)"\s+in\s+inputs', source))
    )
    assert read - VISION_KEYS == set(CONSUMED_KEYS)


def _trainers(plain_model, tmp_path, **overrides):
    args = cpu_args(tmp_path / "a", **overrides)
    rows = arithmetic_dataset_rows(64)
    reward = ScorerReward("math")

    def harness_math(prompts, completions, answer, **kwargs):
        return reward([c[-1]["content"] for c in completions], answer, [False] * len(completions))

    ours = MethodGRPOTrainer(
        model=str(plain_model),
        args=args,
        train_dataset=Dataset.from_list(rows),
        method=GRPOMethod(reward, args.num_generations),
    )
    stock = GRPOTrainer(
        model=str(plain_model),
        reward_funcs=[harness_math],
        args=cpu_args(tmp_path / "b", **overrides),
        train_dataset=Dataset.from_list(rows),
    )
    return ours, stock, rows


def test_batch_has_the_keys_shapes_and_dtypes_of_trls_own(plain_model, tmp_path):
    ours, stock, rows = _trainers(
        plain_model, tmp_path, per_device_train_batch_size=8, num_generations=4, steps_per_generation=2
    )
    inputs = [row for row in rows[:4] for _ in range(4)]  # RepeatSampler order: G copies per row
    results = []
    for trainer in (ours, stock):
        trainer.model.train()
        torch.manual_seed(0)
        results.append(trainer._generate_and_score_completions([dict(r) for r in inputs]))
    mine, theirs = results
    assert set(theirs) <= set(mine) <= set(CONSUMED_KEYS)
    assert set(mine) - set(theirs) == {"sampling_per_token_logps"}  # the HF engine also returns them
    for key, value in theirs.items():
        assert mine[key].dtype == value.dtype, key
        assert mine[key].shape == value.shape, key
        assert torch.equal(mine[key], value) or key == "advantages", key
    torch.testing.assert_close(mine["advantages"], theirs["advantages"])
    assert mine["completion_ids"].size(0) == 16  # per_device_train_batch_size * steps_per_generation
    assert int(mine["num_items_in_batch"]) == int(mine["completion_mask"].sum())
    logps = mine["sampling_per_token_logps"]
    assert logps.shape == mine["completion_ids"].shape
    assert (logps[mine["completion_mask"].bool()] < 0).all()


def test_grpo_method_trains_like_stock_trl(plain_model, tmp_path):
    """Same seed, data, reward and settings: the two trained models agree to float precision."""
    ours, stock, _ = _trainers(plain_model, tmp_path, max_steps=3, per_device_train_batch_size=16)
    before = {k: v.clone() for k, v in ours.model.state_dict().items()}
    for trainer in (ours, stock):
        torch.manual_seed(0)  # sampling draws from the global RNG, which building a trainer moves
        trainer.train()
    theirs = stock.model.state_dict()
    changed = [k for k, v in ours.model.state_dict().items() if not torch.equal(v, before[k])]
    assert changed, "training did not change the weights"
    for key, value in ours.model.state_dict().items():
        torch.testing.assert_close(value, theirs[key], atol=1e-5, rtol=1e-4, msg=key)
    rewards = [[h["reward"] for h in t.state.log_history if "reward" in h] for t in (ours, stock)]
    assert rewards[0] == pytest.approx(rewards[1])


def test_teacher_forced_logprobs_equal_the_sampling_logprobs(plain_model, tmp_path):
    ours, _, rows = _trainers(plain_model, tmp_path, temperature=1.0)
    engine = ours.engine
    prompts = [engine.encode(row["prompt"]) for row in rows[:3]]
    generations = engine.generate(prompts, max_tokens=6)
    forced = engine.logprobs(prompts, [g.ids for g in generations], batch_size=2)
    for generation, logps in zip(generations, forced, strict=True):
        assert len(logps) == len(generation.ids) > 0
        torch.testing.assert_close(
            torch.tensor(logps), torch.tensor(generation.logprobs), atol=1e-4, rtol=1e-4
        )


def test_fit_rows_subsamples_or_pads_to_the_budget():
    rows, padded = _fit_rows([3, 5, 7], 5, step=0, filler=9, idle=1)
    assert rows == [3, 5, 7, 3, 3] and padded.tolist() == [False, False, False, True, True]
    rows, padded = _fit_rows(list(range(10)), 4, step=1, filler=0, idle=1)
    assert len(rows) == 4 == len(set(rows)) and rows == sorted(rows) and not padded.any()
    assert _fit_rows(list(range(10)), 4, step=1, filler=0, idle=1)[0] == rows  # seeded by the step
    # nothing trainable: one masked row per micro-batch, not a full batch of zero gradient
    rows, padded = _fit_rows([], 6, step=0, filler=6, idle=2)
    assert rows == [6, 6] and padded.all()


@pytest.mark.slow
def test_each_epoch_draws_its_order_from_the_seed_and_the_epoch():
    """A sampler started at epoch 2 (a resumed run) yields the rows of one that went through 0 and 1."""

    def sampler() -> EpochSeededSampler:
        return EpochSeededSampler(list(range(12)), mini_repeat_count=2, batch_size=3, seed=7)

    through = sampler()
    epochs = []
    for epoch in range(3):
        through.set_epoch(epoch)
        epochs.append(list(through))
    resumed = sampler()
    resumed.set_epoch(2)
    assert list(resumed) == epochs[2] and epochs[2] != epochs[1] != epochs[0]
    assert sorted(epochs[2]) == sorted(i for i in range(12) for _ in range(2))
    unshuffled = EpochSeededSampler(list(range(4)), mini_repeat_count=2, batch_size=2, shuffle=False, seed=7)
    unshuffled.set_epoch(1)  # TRL keeps no generator when it does not shuffle
    assert list(unshuffled) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_method_state_file_per_rank():
    assert state_file(0, "json") == "method_state.json"  # process 0's, what a single process writes
    assert state_file(2, "json") == "method_state-rank2.json"
    assert state_file(2, "safetensors") == "method_state-rank2.safetensors"


class RecordedReward(ScorerReward):
    """A scorer reward that keeps every completion it scores, step by step."""

    def __init__(self, scorer: str):
        super().__init__(scorer)
        self.texts: list[list[str]] = []

    def scores(self, texts, golds, think_opened):
        self.texts.append(list(texts))
        return super().scores(texts, golds, think_opened)


def test_smollm2_learns_to_add(smollm2, tmp_path):
    """The learning test, on the real SmolLM2-135M-Instruct and the demo's task ("Add a and b. Answer
    with the number only.", operands 0..30), scored `integer` so that an unevaluated "4 + 17" earns
    nothing: 8 GRPO steps of 4 prompts x 8 samples raise the mean reward by at least 0.25 while the
    answers stay spread. The random tiny model once "learned" here by answering 5 to every sum; a
    trainer that does nothing, or a collapse onto one answer, fails."""
    train, _ = sum_split(30, 100, seed=0)
    reward = RecordedReward("integer")
    args = cpu_args(
        tmp_path,
        max_steps=8,
        per_device_train_batch_size=32,
        num_generations=8,
        max_completion_length=12,
        learning_rate=3e-5,
        temperature=0.7,
    )
    trainer = MethodGRPOTrainer(
        model=str(smollm2),
        args=args,
        train_dataset=Dataset.from_list(item_rows([Item(**row) for row in train], "{problem}")),
        method=GRPOMethod(reward, args.num_generations),
    )
    trainer.train()
    rewards = [h["reward"] for h in trainer.state.log_history if "reward" in h]
    assert len(rewards) == 8
    first, last = sum(rewards[:3]) / 3, sum(rewards[-3:]) / 3
    assert last > first + 0.25, f"mean reward {first:.3f} over steps 1-3, {last:.3f} over steps 6-8"
    answers = Counter(last_number(text) for step in reward.texts[-3:] for text in step)
    assert len(answers) >= 15 and max(answers.values()) / answers.total() < 0.3, answers.most_common(5)
