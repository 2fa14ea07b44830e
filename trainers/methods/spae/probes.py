"""SPAE's probes during training (SPAE paper, §3.1-3.2), on the policy being trained.

A rollout's generated ids are cut into steps exactly as `harness analyze --solve-check` cuts a response
(`harness/probing/steps.py`: the thinking region, `".\\n\\n"` boundaries inside it), every m-th boundary is
probed (`every_m`; the boundaries between probed ones join the following step), and each probe runs
through the harness's own probers (`harness/probing/probe.py`): the prompt + the response through the
boundary + `**Final Answer**\\n\\boxed{`, one teacher-forced pass over the gold answer (Acc) and N
sampled continuations of at most 10 tokens with the run's decoding settings (Conf), Phi (Eq. 8).

The prober is the engine's (`Engine.prober`): vLLM's (prefix caching) when the trainer generates with a
colocated vLLM engine of one GPU per process and Conf takes the top-K entropy (`entropy_mode: topk=K`,
K <= 20), else the transformers prober on the trainer's own model (gathered under ZeRO-3), exact, which
shares each context's KV cache between its N samples.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from harness.probing.probe import Decoding, HFProber, ProbeJob, ProbeResult, VLLMProber
from harness.probing.steps import Segments, Tokens, first_step, potential, segment, solve_check_fields
from harness.scoring.rules import accepted_answers


@dataclass(frozen=True)
class ProbeSettings:
    n_probe: int = 5  # N continuations per probe (§3.1)
    max_tokens: int = 10  # each at most this long
    every_m: int = 1  # probe every m-th boundary (our option)
    batch_size: int = 16  # probes per forward pass (transformers) or per vLLM call
    delimiter: str = ".\n\n"
    probe_text: str = "**Final Answer**\n\\boxed{"
    entropy_mode: str = "full"  # vLLM: full, or topk=K (the authors' approximation); transformers: full
    tau_sat: float = 0.9


@dataclass(frozen=True)
class Probed:
    """What the probes found on one rollout: its probed steps and their potentials."""

    boundaries: list[int]  # the probed boundary tokens; step k ends after boundaries[k-1]
    found: int  # boundaries in the thinking region before subsampling
    acc: list[float] = field(default_factory=list)
    conf: list[float] = field(default_factory=list)
    phi: list[float] = field(default_factory=list)
    accounting: dict[str, Any] = field(default_factory=dict)  # solve/check tokens, k*, R2W (paper Eq. 9-10)

    @property
    def step_ends(self) -> list[int]:
        """Exclusive token ends of the probed steps (the advantage builder's alignment)."""
        return [b + 1 for b in self.boundaries]


@dataclass(frozen=True)
class Target:
    """A rollout to probe."""

    prompt_ids: list[int]
    completion_ids: list[int]
    gold: str  # the reference answer (its first accepted form is teacher-forced)
    correct: bool  # the reward's verdict on the final answer
    seed: int  # probe k's continuation n samples from seed + N * k + n


def probe_seed(seed: int, step: int, key: str) -> int:
    """A probe seed fixed by the run's seed, the step and the rollout, whatever the batching: a resumed
    step probes exactly as the uninterrupted one did."""
    return zlib.crc32(f"{seed}/{step}/{key}".encode()) * 1024


def steps_of(tokens: Tokens, settings: ProbeSettings) -> tuple[Segments, list[int]]:
    """The response's segmentation with only its probed boundaries kept, and how many there were."""
    seg = segment(tokens, settings.delimiter)
    probed = seg.boundaries[settings.every_m - 1 :: settings.every_m]
    return replace(seg, boundaries=probed), len(seg.boundaries)


def probe_rollouts(
    prober: HFProber | VLLMProber,
    tokenizer: Any,
    targets: Sequence[Target],
    settings: ProbeSettings,
    decoding: Decoding,
    max_length: int | None = None,
) -> list[Probed]:
    """Probe every probed boundary of every target, `settings.batch_size` probes per call. A boundary whose
    probe would not fit in `max_length` tokens (the engine's context) is not probed: its step joins the
    next one."""
    probe_ids = tokenizer(settings.probe_text, add_special_tokens=False)["input_ids"]
    prepared = []
    for t in targets:
        ids = list(t.completion_ids)
        tokens = Tokens.from_pieces(ids, tokenizer.batch_decode([[i] for i in ids]))
        seg, found = steps_of(tokens, settings)
        answers = accepted_answers(t.gold)
        gold = tokenizer(answers[0], add_special_tokens=False)["input_ids"] if answers else []
        fixed = len(t.prompt_ids) + len(probe_ids) + max(len(gold), settings.max_tokens)
        room = math.inf if max_length is None else max_length - fixed  # response tokens a probe may keep
        # an empty reference has nothing to teacher-force: no probed steps (`found` stays)
        seg = replace(seg, boundaries=[b for b in seg.boundaries if gold and b + 1 <= room])
        prepared.append((t, seg, found, gold))
    jobs = [
        (
            i,
            ProbeJob(
                [*t.prompt_ids, *t.completion_ids[: b + 1], *probe_ids], gold, t.seed + k * settings.n_probe
            ),
        )
        for i, (t, seg, _, gold) in enumerate(prepared)
        for k, b in enumerate(seg.boundaries)
    ]
    results: list[list[ProbeResult]] = [[] for _ in targets]
    for start in range(0, len(jobs), settings.batch_size):
        batch = jobs[start : start + settings.batch_size]
        for (i, _), result in zip(batch, prober.probe([job for _, job in batch], decoding), strict=True):
            results[i].append(result)
    out = []
    for (t, seg, found, _), found_results in zip(prepared, results, strict=True):
        acc = [r.acc for r in found_results]
        conf = [r.conf for r in found_results]
        phi = [potential(a, c) for a, c in zip(acc, conf, strict=True)]
        k_star = first_step([p > settings.tau_sat for p in phi])
        accounting = solve_check_fields(seg, len(t.completion_ids), k_star, t.correct)
        out.append(Probed(seg.boundaries, found, acc, conf, phi, accounting))
    return out
