"""Absolute Zero's rewards and advantages (absolute_zero.md §1.3, §1.7).

- The proposer's learnability reward, Eq. 4: 1 - r̄ over n Monte-Carlo solver rollouts, 0 when every or
  no rollout solves the task.
- The format-aware composite, Eq. 6, with the released code's reading (§1.3 "Code-level precision"):
  an invalid proposal or a malformed answer gets -1, a wrong but formatted answer -0.5, and a valid
  proposal whose learnability is 0 also -0.5 (`trivial="code"`) or the 0 of Eq. 4 read alone
  (`trivial="paper"`; §8 item 1).
- Task-Relative REINFORCE++ (Eq. 8): rewards whitened within each of the six (task, role) slices, with
  sequence-level statistics (the paper) or token-weighted ones (the code's veRL `masked_whiten`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from trainers.advantages import Advantages, masked_whiten_by_key, whiten_by_key

TASKS = ("deduction", "abduction", "induction")  # the code's code_o, code_i, code_f
ROLES = ("propose", "solve")
N_SAMPLES = 8  # n, Monte-Carlo solver rollouts per validated proposal (Table 3)

FORMAT_ERROR = -1.0  # a malformed answer, or a proposal that does not yield a valid task
WRONG = -0.5  # a formatted but wrong answer (the seed lost the minus; the code has -0.5)
TRIVIAL = {"code": -0.5, "paper": 0.0}  # a valid proposal every or no rollout solves
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


def composite_reward(
    role: str, format_ok: bool, valid: bool, value: float, *, trivial: str = "code"
) -> float:
    """Eq. 6 as the code applies it to either role.

    `format_ok` is the `<think>…</think><answer>…</answer>` check; `valid` is, for a proposer, whether
    the proposal parsed and passed the executor's filters (§1.5), and for a solver whether its answer
    block could be read at all. Either one false gives FORMAT_ERROR (-1).

    `value` is r_role: the learnability for a proposer, the correctness (1 or 0) for a solver. A positive
    value is the reward; a value of 0 gives WRONG (-0.5) to a solver and TRIVIAL[trivial] to a proposer
    (-0.5, the code's rule; 0, Eq. 4 read alone).
    """
    if role not in ROLES:
        raise ValueError(f"role {role!r} is not one of {ROLES}")
    if trivial not in TRIVIAL:
        raise ValueError(f"trivial-proposal rule {trivial!r} is not one of {tuple(TRIVIAL)}")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"r_{role} must lie in [0, 1], got {value}")
    if not (format_ok and valid):
        return FORMAT_ERROR
    if value > 0:
        return float(value)
    return TRIVIAL[trivial] if role == "propose" else WRONG


def proposer_reward(
    successes: int | None, n: int = N_SAMPLES, *, format_ok: bool = True, trivial: str = "code"
) -> float:
    """A proposal's reward from its solver rollouts; `successes=None` marks a proposal that did not
    yield a valid task (unparsable, failed or banned execution, non-deterministic)."""
    if successes is None:
        return composite_reward("propose", format_ok, False, 0.0, trivial=trivial)
    return composite_reward("propose", format_ok, True, learnability(successes, n), trivial=trivial)


def solver_reward(correct: bool, *, format_ok: bool = True, valid: bool = True) -> float:
    """1 correct, -0.5 wrong but formatted, -1 malformed (Eq. 5 inside Eq. 6)."""
    return composite_reward("solve", format_ok, valid, float(correct))


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
