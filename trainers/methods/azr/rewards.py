"""Absolute Zero's rewards and advantages (AZR paper, §3.1 and §3.3.5).

- The proposer's learnability reward, Eq. 4: 1 - r̄ over n Monte-Carlo solver rollouts, 0 when every or
  no rollout solves the task.
- The format-aware composite, Eq. 6. A malformed completion gets -1 and a wrong but formatted answer
  -0.5. For a proposal, `rule="paper"` (the default) reads Eq. 6 with the paper's definition of a
  proposer's format ("only responses that produce valid triplets and pass the filtering stage are
  considered to be correctly formatted", §3.1): a proposal that parses but fails validation is
  malformed, -1, and a valid one earns its learnability (0 when every or no rollout solves it).
  `rule="code"` is the released code, which differs: -1 for any proposal
  without a valid task too, but -0.5 for a valid one whose learnability is 0. `rule="constant"` is not
  the paper's: a control that keeps the format rule and pays every valid proposal the same `CONSTANT`,
  whatever its solvers did, so that a study can tell what learnability itself does.
- Task-Relative REINFORCE++ (Eq. 8): rewards whitened within each of the six (task, role) slices, with
  sequence-level statistics (the paper) or token-weighted ones (the code's veRL `masked_whiten`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from trainers.advantages import Advantages, masked_whiten_by_key, whiten_by_key
from trainers.methods.azr.options import N_SAMPLES, RULES

TASKS = ("deduction", "abduction", "induction")  # the code's code_o, code_i, code_f
ROLES = ("propose", "solve")

FORMAT_ERROR = -1.0  # a malformed answer, or a proposal that does not yield a valid task
WRONG = -0.5  # a formatted but wrong answer (the seed lost the minus; the code has -0.5)
CONSTANT = 0.5  # `rule="constant"`: every valid proposal's reward (TRR++ whitens it against the -1s)
EPS = 1e-8  # veRL's masked_whiten: rsqrt(var + 1e-8)


def learnability(successes: int, n: int = N_SAMPLES) -> float:
    """Eq. 4: 0 when r̄ = successes / n is 0 or 1, else 1 - r̄ (7/8 for 1 of 8, 1/8 for 7 of 8)."""
    if n <= 0:
        raise ValueError(f"learnability needs n >= 1 rollouts, got {n}")
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes out of {n} rollouts")
    if successes in (0, n):
        return 0.0
    return 1.0 - successes / n


def proposer_reward(
    successes: int | None,
    n: int = N_SAMPLES,
    *,
    format_ok: bool = True,
    parsed: bool = True,
    rule: str = "paper",
) -> float:
    """A proposal's reward. `format_ok` is the think/answer check, `parsed` whether a task could be read
    from it, `successes` its Monte-Carlo solves, None when it failed validation in the sandbox."""
    if rule not in RULES:
        raise ValueError(f"proposer reward rule {rule!r} is not one of {RULES}")
    if not (format_ok and parsed):
        return FORMAT_ERROR
    if successes is None:  # failed validation: not a valid triplet, so not correctly formatted
        return FORMAT_ERROR
    if rule == "constant":
        return CONSTANT
    value = learnability(successes, n)
    if value > 0:
        return value
    return 0.0 if rule == "paper" else WRONG


def solver_reward(correct: bool, *, format_ok: bool = True, valid: bool = True) -> float:
    """1 correct, -0.5 wrong but formatted, -1 malformed or without a readable answer (Eq. 5 in Eq. 6)."""
    if not (format_ok and valid):
        return FORMAT_ERROR
    return 1.0 if correct else WRONG


def trr_keys(tasks: Sequence[str], roles: Sequence[str]) -> list[tuple[str, str]]:
    """The (task, role) slice of each row; unknown task types or roles are refused."""
    if len(tasks) != len(roles):
        raise ValueError(f"{len(tasks)} task labels for {len(roles)} role labels")
    for task, role in zip(tasks, roles, strict=True):
        if task not in TASKS or role not in ROLES:
            raise ValueError(f"({task!r}, {role!r}) is not a (task, role) of {TASKS} x {ROLES}")
    return list(zip(tasks, roles, strict=True))


def trr_advantages(
    rewards: Tensor | Sequence[float],
    tasks: Sequence[str],
    roles: Sequence[str],
    lengths: Sequence[int] | Tensor | None = None,
    token_weighted: bool = False,
    *,
    eps: float = EPS,
) -> Advantages:
    """TRR++ (Eq. 8): (r - μ_{task,role}) / σ_{task,role} within each of the six slices.

    Sequence mode (the paper, default) weighs every row once and divides by σ + eps, σ the unbiased
    std (Bessel, n - 1) that `whiten_by_key` computes. `token_weighted=True` needs `lengths`, each row's
    response token count, and is veRL's `masked_whiten` of the reward broadcast over the response, as
    the official code runs it per (task, role) batch: token-weighted μ, Bessel's correction over tokens,
    (r - μ)·rsqrt(σ² + eps) (`masked_whiten_by_key`). Either way a slice whose rewards do not vary, or
    that holds a single row (sequence mode), gets exactly 0, flagged in `zero_std`.

    Equal lengths L do not reproduce sequence mode exactly: the centring is the same but the token
    Bessel correction scales every advantage by sqrt((nL - 1) / (L(n - 1))) (1 when L = 1).
    `lengths` is ignored in sequence mode, so a caller may always pass it.
    """
    keys = trr_keys(tasks, roles)
    values = rewards if isinstance(rewards, Tensor) else torch.tensor(list(rewards), dtype=torch.float32)
    if not token_weighted:
        return whiten_by_key(values, keys, unbiased=True, eps=eps)
    if lengths is None:
        raise ValueError("token-weighted TRR++ needs each row's response length")
    return masked_whiten_by_key(values, keys, lengths, eps=eps)
