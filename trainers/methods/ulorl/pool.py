"""UloRL's segment rollout pool (UloRL paper, Algorithm 1): groups whose samples are decoded one
segment per optimizer step, carried across steps until every sample of the group is terminal.

A sample's segment ends by one of the three rules (`trainers.engine.decode_segment`): EOS ("stop": the
sample is complete), the segment budget ("unfinished": it waits for the next step's policy), or the
global cap ("length": truncated, reward 0). A group is released to training only when all its
samples are terminal (group gating, our choice); finished siblings wait in the pool meanwhile, and the
policy versions they waited are the group's staleness. Pure bookkeeping: the method decodes and scores.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from trainers.engine import Generation
from trainers.rollout import Rollout


@dataclass
class InFlight:
    """One prompt's G samples between admission and release; `samples[j]` is None until decoded."""

    key: str
    row: dict[str, Any]  # the dataset row: id, answer, prompt
    prompt_ids: list[int]
    admitted: int  # the policy version that decoded its first segment
    samples: list[Rollout | None]
    finished_at: list[int | None] = field(default_factory=list)  # version that ended each sample
    completed: int | None = None  # version at which its last sample ended

    @property
    def complete(self) -> bool:
        return all(s is not None and s.finished for s in self.samples)

    def state(self) -> dict[str, Any]:
        return {**asdict(self), "samples": [None if s is None else asdict(s) for s in self.samples]}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> InFlight:
        samples = [None if s is None else Rollout(**_with_reward(s)) for s in state["samples"]]
        return cls(**{**state, "samples": samples})


class SegmentPool:
    """The groups in flight, in admission order: decoding, waiting for siblings, or ready to train."""

    def __init__(self, group_size: int):
        self.group_size = group_size
        self.groups: dict[str, InFlight] = {}

    def admit(self, key: str, row: dict[str, Any], prompt_ids: list[int], version: int) -> None:
        if key in self.groups:
            raise ValueError(f"group {key!r} is already in flight")
        self.groups[key] = InFlight(
            key, dict(row), list(prompt_ids), version, [None] * self.group_size, [None] * self.group_size
        )

    def to_decode(self) -> list[tuple[str, int]]:
        """(group, sample) of every sample that decodes a segment this step: new and unfinished ones."""
        return [
            (g.key, j)
            for g in self.groups.values()
            for j, s in enumerate(g.samples)
            if s is None or not s.finished
        ]

    def prefix(self, key: str, j: int) -> list[int]:
        """The completion tokens sample j of group `key` has so far (none before its first segment)."""
        sample = self.groups[key].samples[j]
        return [] if sample is None else list(sample.completion_ids)

    def record(self, key: str, j: int, gen: Generation, version: int) -> Rollout:
        """Append one decoded segment (its `finish_reason` is `decode_segment`'s rule) to sample j."""
        g = self.groups[key]
        sample = g.samples[j]
        if sample is None:
            sample = Rollout(
                prompt_ids=g.prompt_ids,
                completion_ids=list(gen.ids),
                role="solver",
                group=key,
                task=str(g.row.get("task", "math")),
                finish_reason=gen.finish_reason,
                sampling_logprobs=list(gen.logprobs),
                segment_lengths=[len(gen.ids)],
                policy_versions=[version],
            )
        else:
            sample = sample.continued(gen.ids, gen.finish_reason, gen.logprobs, version)
        g.samples[j] = sample
        if sample.finished:
            g.finished_at[j] = version
            if g.complete:
                g.completed = version
        return sample

    def scored(self, key: str, j: int, reward: float, **meta: Any) -> None:
        """Give a finished sample its reward, and add `meta` to its meta."""
        g = self.groups[key]
        sample = g.samples[j]
        if sample is None:
            raise ValueError(f"sample {j} of group {key!r} has not been decoded")
        g.samples[j] = replace(sample, reward=reward, meta={**sample.meta, **meta})

    def complete(self) -> list[InFlight]:
        """Groups whose samples are all terminal, longest complete first, then in admission order."""
        done = [g for g in self.groups.values() if g.complete]
        return sorted(done, key=lambda g: g.completed)  # sorted() is stable: admission order within a step

    def pop(self, key: str) -> InFlight:
        return self.groups.pop(key)

    def unfinished(self) -> list[Rollout]:
        return [s for g in self.groups.values() for s in g.samples if s is not None and not s.finished]

    def waiting(self) -> list[Rollout]:
        """Finished samples held back because a sibling is still decoding."""
        return [
            s
            for g in self.groups.values()
            if not g.complete
            for s in g.samples
            if s is not None and s.finished
        ]

    def state_dict(self) -> dict[str, Any]:
        return {"groups": [g.state() for g in self.groups.values()]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.groups = {g["key"]: InFlight.from_state(g) for g in state["groups"]}


def _with_reward(sample: dict[str, Any]) -> dict[str, Any]:
    """A saved sample as `Rollout` takes it: checkpoints from before rollouts carried their reward kept
    it in meta."""
    if "reward" in sample or "reward" not in sample["meta"]:
        return sample
    meta = dict(sample["meta"])
    return {**sample, "reward": meta.pop("reward"), "meta": meta}
