"""Plain GRPO: G samples per problem, a harness scorer's reward, group-normalised advantages.

This is the baseline the other methods are compared with, and it reproduces stock TRL
`GRPOTrainer` with the same reward: `scale_rewards` has TRL's meaning ("group": (r - mean_g) /
(std_g + 1e-4) with Bessel's std; "batch": the same centring over the batch std; "none": Dr. GRPO's
r - mean_g).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from trainers.advantages import group_center, group_zscore
from trainers.engine import Engine
from trainers.method import Method
from trainers.rewards import ScorerReward
from trainers.rollout import Rollout
from trainers.solver import solver_groups

if TYPE_CHECKING:
    from trainers.config import TrainConfig

SCALE_REWARDS = ("group", "batch", "none")


class GRPOMethod(Method):
    """Rows carry `prompt` (chat messages), `answer` (the scorer's gold) and `id`."""

    name = "grpo"

    def __init__(self, reward: ScorerReward, num_generations: int, scale_rewards: str = "group"):
        if scale_rewards not in SCALE_REWARDS:
            raise ValueError(f"scale_rewards {scale_rewards!r} is not one of {SCALE_REWARDS}")
        self.reward = reward
        self.num_generations = num_generations
        self.scale_rewards = scale_rewards

    @classmethod
    def from_config(cls, config: TrainConfig, reward: ScorerReward) -> GRPOMethod:
        """The method `harness train grpo` builds from its `TrainConfig`."""
        return cls(reward, config.num_generations, config.scale_rewards)

    def rollout(self, rows: Sequence[dict[str, Any]], engine: Engine) -> list[Rollout]:
        return [r for group in solver_groups(rows, engine, self.num_generations) for r in group]

    def score(self, rollouts: Sequence[Rollout]) -> Tensor:
        values = self.reward(
            [r.meta["text"] for r in rollouts],
            [r.meta["answer"] for r in rollouts],
            [r.meta["think_opened"] for r in rollouts],
        )
        return torch.tensor(values, dtype=torch.float32)

    def advantages(self, rollouts: Sequence[Rollout], rewards: Tensor) -> Tensor:
        groups = [r.group for r in rollouts]
        if self.scale_rewards == "group":
            return group_zscore(rewards, groups).values
        centred = group_center(rewards, groups).values
        if self.scale_rewards == "none":
            return centred
        return centred / (rewards.std() + 1e-4) if rewards.numel() > 1 else torch.zeros_like(rewards)
