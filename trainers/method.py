"""The interface every training method implements, and the batch a loss mask is computed on.

One method object lives for the whole run. Per generation step the trainer calls, in order:
`rollout(rows, engine)` on this process's dataset rows, `score(rollouts)` on those rollouts (by default
the rewards the rollouts carry), then
`advantages(rollouts, rewards)` on the rollouts and rewards of all processes, and finally
`advantage_weights(batch)`, `old_logps(batch)` and `loss_mask(batch)` on the rows this process
trains, and `metrics(...)`. Each process's `state_dict()` is saved in every checkpoint and given back to
its `load_state_dict()` on resume.
`trainers/METHODS.md` maps each method onto it.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Self

from harness import HarnessError
from harness.core.settings import check
from trainers.rollout import Rollout

if TYPE_CHECKING:  # torch is imported where a tensor is made: options modules import this one without it
    from torch import Tensor

    from trainers.config import TrainConfig
    from trainers.engine import Engine
    from trainers.rewards import ScorerReward

# A rollout whose meta has this key stands in for a step with nothing to train: return it untrainable,
# and the trainer trains masked rows and logs no reward or length for the step (UloRL's early steps)
IDLE = "idle"


@dataclass
class Batch:
    """The rows one process trains this step, padded as TRL's loss consumes them."""

    rollouts: list[Rollout]
    rewards: Tensor  # (B,)
    prompt_ids: Tensor  # (B, P), left-padded
    prompt_mask: Tensor
    completion_ids: Tensor  # (B, T), right-padded
    completion_mask: Tensor  # (B, T), 1 on real completion tokens
    policy: Callable[[], tuple[Tensor, Tensor]] = field(repr=False)  # no-grad (log-probs, entropies)

    def policy_logps_and_entropies(self) -> tuple[Tensor, Tensor]:
        """Per-token log-probs and entropies of the current policy, (B, T) each, without gradient."""
        return self.policy()


class Method:
    """Base class of training methods: a method declares its `name` and `options_class`, builds itself
    in `from_config`, and overrides `rollout` and `advantages`.

    `rollout` returns rollouts that carry their `reward` wherever the method scored them there (the base
    `score` returns those); a method that scores afterwards overrides `score`. `advantages` returns (N,)
    per-sequence values or (N, T) per-token values over the completions right-padded to the longest one
    of the N rollouts. Rollouts with `trainable=False` are scored and passed to `advantages`, then dropped
    before the loss. A step's extra numbers go in `self._metrics` and its readable records in
    `self._samples`; the base `metrics` and `take_samples` hand them over.
    """

    name: ClassVar[str] = "base"  # `harness train NAME`, as registered (pyproject.toml's harness.methods)
    options_class: ClassVar[type[MethodOptions] | None] = None  # its `options:` dataclass; None: no options
    _metrics: Mapping[str, float] = MappingProxyType({})  # this step's extra numbers (`metrics`)
    _samples: Sequence[dict[str, Any]] = ()  # what this step generated, readable (`take_samples`)

    @classmethod
    def from_config(cls, config: TrainConfig, reward: ScorerReward | None) -> Self:
        """The method `harness train NAME` builds from its config; `reward` wraps the dataset's scorer
        (None where `dataset_rows` gives the method its own rows)."""
        raise NotImplementedError

    @classmethod
    def options_of(cls, config: TrainConfig) -> Any:
        """The config's `options:` as `options_class` (checked; None for a method without options)."""
        if cls.options_class is None:
            if config.options:
                raise HarnessError(
                    f"method {cls.name!r} has no options, but the config sets {sorted(config.options)}"
                )
            return None
        return cls.options_class.from_mapping(dict(config.options))

    @classmethod
    def resolved_options(cls, config: TrainConfig) -> dict[str, Any]:
        """The method's own settings with their defaults filled in (`--dry-run` prints them)."""
        options = cls.options_of(config)
        return {} if options is None else asdict(options)

    @classmethod
    def dataset_rows(cls, config: TrainConfig) -> list[dict[str, Any]] | None:
        """The rows TRL iterates (each with a `prompt`), or None for the config's benchmark, prompted as
        `harness eval` prompts it."""
        return None

    @classmethod
    def demonstrations(cls, config: TrainConfig, tokenizer: Any, examples: int) -> list:
        """The cold start's demonstrations of every role (`trainers/coldstart/`), `examples` per (role,
        task) before the contamination check."""
        raise HarnessError(f"method {cls.name!r} has no cold-start demonstrations; remove cold_start:")

    @classmethod
    def check_batch(cls, config: TrainConfig, processes: int) -> None:
        """Refuse a batch the method cannot learn from, `processes` processes training it (any, here)."""

    @classmethod
    def rows_per_step(cls, config: TrainConfig) -> int:
        """Rows one process trains per step: TRL's `per_device_train_batch_size`."""
        return config.prompts_per_step * config.num_generations

    @classmethod
    def sampler_group(cls, config: TrainConfig) -> int:
        """TRL's `num_generations`: how many copies of a dataset row its sampler puts in a batch, which
        must divide `rows_per_step`; `rollout` gets one row per copy group."""
        return config.num_generations

    def rollout(self, rows: Sequence[dict[str, Any]], engine: Engine) -> list[Rollout]:
        raise NotImplementedError

    def score(self, rollouts: Sequence[Rollout]) -> Tensor:
        """(N,) float rewards, every one finite: each rollout's own `reward`."""
        unscored = [r for r in rollouts if r.reward is None]
        if unscored:
            raise ValueError(
                f"method {self.name!r}: {len(unscored)} rollouts have no reward (the first: "
                f"{unscored[0]._where}); set Rollout.reward in `rollout`, or override `score`"
            )
        import torch

        return torch.tensor([r.reward for r in rollouts], dtype=torch.float32)

    def advantages(self, rollouts: Sequence[Rollout], rewards: Tensor) -> Tensor:
        raise NotImplementedError

    def advantage_weights(self, batch: Batch) -> Tensor | None:
        """(B, T) weights multiplied into the advantages, or None. Zeroed tokens leave the loss but still
        count in its normaliser: UloRL's DMMPT (UloRL paper, Eq. 10)."""
        return None

    def old_logps(self, batch: Batch) -> Tensor | None:
        """(B, T) log-probs of the policy that sampled each token, the denominators of TRL's ratio
        (UloRL's SAIS, its paper's Eq. 8), or None for TRL's own (the weights before this step's update)."""
        return None

    def loss_mask(self, batch: Batch) -> Tensor | None:
        """(B, T) 0/1 tokens the loss keeps, or None for all. Masked tokens also leave the normaliser
        (TRL's `tool_mask`, and `num_items_in_batch` recomputed from it)."""
        return None

    def metrics(self, rollouts: Sequence[Rollout], rewards: Tensor) -> dict[str, float]:
        """Extra numbers to log for this step (e.g. buffer sizes): `self._metrics`."""
        return dict(self._metrics)

    def take_samples(self) -> list[dict[str, Any]]:
        """What the last rollout generated, as readable records for OUT/samples.jsonl (`self._samples`);
        cleared once taken (a generation batch can serve several optimizer steps)."""
        samples = list(self._samples)
        self._samples = []
        return samples

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state:
            raise ValueError(f"method {self.name!r} keeps no state, but the checkpoint has {sorted(state)}")


class MethodOptions:
    """Base of a method's `options:` dataclass: bounds and choices (`setting`) checked on creation,
    unknown keys refused by `from_mapping` with the valid ones named."""

    method: ClassVar[str] = ""  # the method's name in messages

    def __post_init__(self) -> None:
        check(type(self), vars(self), name=lambda f: f"options.{f}")

    @classmethod
    def from_mapping(cls, values: dict[str, Any]):
        valid = [f.name for f in fields(cls)]
        unknown = sorted(set(values) - set(valid))
        if unknown:
            raise HarnessError(f"unknown {cls.method} options {unknown}; valid: {', '.join(valid)}")
        return cls(**values)


class StageClock:
    """Seconds a step spends per stage: `with clock("generate"): ...` adds to `seconds["generate"]`."""

    def __init__(self) -> None:
        self.seconds: Counter[str] = Counter()

    @contextlib.contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[stage] += time.perf_counter() - start


def readable(text: str, keep: int = 1000) -> str:
    """A completion for samples.jsonl: whole when short, else its first and last `keep` characters."""
    if len(text) <= 2 * keep:
        return text
    return f"{text[:keep]}\n[... {len(text) - 2 * keep} characters ...]\n{text[-keep:]}"
