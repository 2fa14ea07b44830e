"""`Rollout`: one sampled completion as every training method sees it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

FINISH_REASONS = ("stop", "length", "unfinished")


@dataclass(frozen=True)
class Rollout:
    """One completion of one prompt, with what a method needs to score, normalise and continue it, and
    its reward once the method scored it.

    `finish_reason` is "stop" (EOS), "length" (the global token cap: truncated) or "unfinished" (a UloRL
    segment budget was hit; `continued` appends the next step's segment, UloRL paper, Algorithm 1).
    """

    prompt_ids: list[int]  # the prompt as trained on, chat template applied
    completion_ids: list[int]  # every sampled token so far, all segments, no padding
    role: str  # "solver", "questioner", "responder", "verifier", "proposer", ...
    group: str  # normalisation group: rollouts sharing it are compared with each other
    task: str  # task type, e.g. AZR's "deduction" or SPELL's "doc_mc"; keys per-task baselines
    finish_reason: str  # one of FINISH_REASONS
    sampling_logprobs: list[float] | None = None  # per completion token, from the sampling engine
    trainable: bool = True  # False for probes (AZR's Monte-Carlo solves): scored, never trained
    segment_lengths: list[int] = field(default_factory=list)  # tokens per segment, oldest first; [] = one
    policy_versions: list[int] = field(default_factory=list)  # step whose weights decoded each segment
    meta: dict[str, Any] = field(default_factory=dict)  # gold answer, doc ids, step boundaries, ...
    reward: float | None = None  # set where the method scored it (often `rollout`); `Method.score` returns it

    def __post_init__(self) -> None:
        where = self._where
        n = len(self.completion_ids)
        if self.finish_reason not in FINISH_REASONS:
            raise ValueError(f"{where}: finish_reason {self.finish_reason!r} is not one of {FINISH_REASONS}")
        if self.sampling_logprobs is not None and len(self.sampling_logprobs) != n:
            raise ValueError(f"{where}: {len(self.sampling_logprobs)} sampling log-probs for {n} tokens")
        if self.segment_lengths and (sum(self.segment_lengths) != n or min(self.segment_lengths) < 0):
            raise ValueError(f"{where}: segment lengths {self.segment_lengths} do not add up to {n} tokens")
        if self.reward is not None and not math.isfinite(self.reward):
            raise ValueError(f"{where}: reward {self.reward!r} is not a finite number")
        if self.policy_versions and len(self.policy_versions) != len(self.segments):
            raise ValueError(
                f"{where}: {len(self.policy_versions)} policy versions for {len(self.segments)} segments"
            )

    @property
    def _where(self) -> str:
        return f"rollout of group {self.group!r} (role {self.role!r})"

    @property
    def truncated(self) -> bool:
        """The completion hit the global token cap without EOS."""
        return self.finish_reason == "length"

    @property
    def finished(self) -> bool:
        """No further segment will be decoded: the rollout can be scored."""
        return self.finish_reason != "unfinished"

    @property
    def segments(self) -> list[int]:
        """Tokens decoded in each segment, oldest first (one segment unless continued)."""
        return self.segment_lengths or [len(self.completion_ids)]

    def continued(
        self,
        ids: Sequence[int],
        finish_reason: str,
        logprobs: Sequence[float] | None = None,
        policy_version: int | None = None,
    ) -> Rollout:
        """This rollout with one more segment appended, decoded from prompt + completion so far."""
        where = self._where
        if self.finished:
            raise ValueError(f"{where} finished ({self.finish_reason!r}); there is nothing to continue")
        if (logprobs is None) != (self.sampling_logprobs is None):
            raise ValueError(f"{where}: give log-probs for the new segment exactly when earlier ones exist")
        if (policy_version is None) != (not self.policy_versions):
            raise ValueError(f"{where}: give a policy version exactly when earlier segments have one")
        return replace(
            self,
            completion_ids=[*self.completion_ids, *ids],
            finish_reason=finish_reason,
            sampling_logprobs=None if logprobs is None else [*(self.sampling_logprobs or []), *logprobs],
            segment_lengths=[*self.segments, len(ids)],
            policy_versions=[*self.policy_versions, *([] if policy_version is None else [policy_version])],
        )
