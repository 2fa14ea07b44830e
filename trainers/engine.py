"""What methods generate with: token ids in, token ids and sampling log-probabilities out.

`Engine` is the interface (the trainer's engines are in `trainers.integration.engines`). A partial
completion is continued by generating from prompt + completion so far (`decode_segment`,
`continue_rollouts`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from trainers.rollout import Rollout


@dataclass(frozen=True)
class Generation:
    """One sampled continuation: its tokens (EOS included), their log-probs, and why it stopped."""

    ids: list[int]
    logprobs: list[float]  # log-softmax of logits / temperature at each sampled token
    finish_reason: str  # "stop" (EOS) or "length" (the call's budget); decode_segment adds "unfinished"


class Engine(Protocol):
    """What methods generate with.

    `generate` (and `logprobs`) may be a collective: under DeepSpeed ZeRO-3 each call gathers the
    sharded weights, and vLLM's server and tensor-parallel modes gather the processes' prompts. Every
    process must therefore make the same sequence of calls in a step, whatever its own work; a process
    with nothing to generate calls `generate([])`, which still takes part and returns [].
    """

    tokenizer: Any
    policy_version: int  # optimizer steps taken by the weights that sample

    def encode(self, messages: Sequence[dict[str, str]]) -> list[int]: ...

    def decode(self, ids: Sequence[int]) -> str: ...

    def generate(
        self, prompts: Sequence[Sequence[int]], max_tokens: int | None = None
    ) -> list[Generation]: ...

    @property
    def context_length(self) -> int | None:
        """The most tokens, prompt and completion together, the sampler accepts (None: it sets no limit)."""
        ...

    def prober(
        self, n: int, max_tokens: int, entropy_mode: str = "full"
    ) -> contextlib.AbstractContextManager[Any]:
        """A prober of the current policy (`harness.probing.probe`): `n` sampled continuations of at most
        `max_tokens` per context, entropy `full` or `topk=K`, and teacher-forced answers."""
        ...


def any_process(flag: bool) -> bool:
    """Whether `flag` is true on any process (a collective: every process must call it alike); for
    loops whose rounds generate, which every process runs as often as the one that needs the most."""
    from accelerate import PartialState

    if PartialState().num_processes == 1:
        return flag
    from accelerate.utils import gather_object

    return any(gather_object([flag]))


def decode_segment(
    engine: Engine,
    prompts: Sequence[Sequence[int]],
    prefixes: Sequence[Sequence[int]],
    segment_tokens: int,
    max_tokens: int,
) -> list[Generation]:
    """One segment after each prompt + prefix (UloRL's segment rollout, its Algorithm 1), with its rule:

    "stop" when it produced EOS; "length" when the prefix and the segment together reach `max_tokens`
    completion tokens (the global cap: truncated), or the engine stopped short of the budget without EOS
    (its context window is full); "unfinished" when only the segment's `segment_tokens` ran out.
    Prefixes needing the same budget share one engine call.
    """
    budgets = [min(segment_tokens, max_tokens - len(prefix)) for prefix in prefixes]
    if min(budgets, default=1) < 1:
        raise ValueError(f"a prefix already has {max_tokens} completion tokens; it cannot be continued")
    out: list[Generation | None] = [None] * len(prefixes)
    for budget in sorted(set(budgets)):
        batch = [i for i, b in enumerate(budgets) if b == budget]
        inputs = [[*prompts[i], *prefixes[i]] for i in batch]
        for i, gen in zip(batch, engine.generate(inputs, budget), strict=True):
            # the cap, or an engine that stopped short of the budget without EOS (its context window)
            cut = len(prefixes[i]) + len(gen.ids) >= max_tokens or len(gen.ids) < budget
            reason = gen.finish_reason if gen.finish_reason == "stop" else ("length" if cut else "unfinished")
            out[i] = Generation(gen.ids, gen.logprobs, reason)
    return out  # type: ignore[return-value]


def continue_rollouts(
    engine: Engine, rollouts: Sequence[Rollout], segment_tokens: int, max_tokens: int
) -> list[Rollout]:
    """Decode one more segment (at most `segment_tokens`) of each unfinished rollout (`decode_segment`)."""
    gens = decode_segment(
        engine,
        [r.prompt_ids for r in rollouts],
        [r.completion_ids for r in rollouts],
        segment_tokens,
        max_tokens,
    )
    return [
        r.continued(
            gen.ids,
            gen.finish_reason,
            gen.logprobs if r.sampling_logprobs is not None else None,
            engine.policy_version if r.policy_versions else None,
        )
        for r, gen in zip(rollouts, gens, strict=True)
    ]
