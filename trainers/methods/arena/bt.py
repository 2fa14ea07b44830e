"""Bradley-Terry on a group's comparison graph (Reasoning Arena paper, §4, Eqs. 9-10): fit log-strengths by
L-BFGS-B on Eq. 10, then min-max them into judge rewards R_j in [0, 1]."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from trainers.methods.arena.tournament import Match, mirror

DEGENERATE_SPREAD = 1e-12  # max β - min β at most this: every trace equally strong


@dataclass(frozen=True)
class BTFit:
    """Fitted log-strengths of one group and how the solver ended."""

    beta: np.ndarray  # (n,)
    iterations: int  # L-BFGS-B iterations (scipy's nit)
    converged: bool


def bt_objective(beta: np.ndarray, matches: Sequence[Match], l2: float = 0.5) -> tuple[float, np.ndarray]:
    """Eq. 10 on `matches` as given, and its gradient:
    -sum [o log σ(β_i - β_j) + (1 - o) log σ(β_j - β_i)] + l2 ||β||².

    l2 is the coefficient of ||β||²: the default 0.5 is the paper's ½||β||². The caller mirrors (`mirror`);
    log σ is computed as -logaddexp(0, ·), which does not overflow.
    """
    i, j, o = _columns(matches)
    d = beta[i] - beta[j]
    nll = np.sum(o * np.logaddexp(0.0, -d) + (1.0 - o) * np.logaddexp(0.0, d))
    value = float(nll) + l2 * float(beta @ beta)
    residual = expit(d) - o  # d(loss)/d(d) per match
    grad = 2.0 * l2 * beta
    np.add.at(grad, i, residual)
    np.add.at(grad, j, -residual)
    return value, grad


def fit_bt(matches: Sequence[Match], n: int, l2: float = 0.5, mirrored: bool = True) -> BTFit:
    """Minimise Eq. 10 over n traces by L-BFGS-B from β = 0, scipy's default tolerances, no bounds.

    `mirrored` fits on `mirror(matches)` as the paper does; False fits on the matches as given, which halves
    the likelihood's weight against the ridge. A trace with no match keeps β = 0; no match at all returns
    zeros after no iteration.
    """
    if not matches:
        return BTFit(np.zeros(n), 0, True)
    data = mirror(matches) if mirrored else list(matches)
    result = minimize(bt_objective, np.zeros(n), args=(data, l2), method="L-BFGS-B", jac=True)
    return BTFit(result.x, int(result.nit), bool(result.success))


def minmax(beta: Sequence[float]) -> tuple[list[float], bool]:
    """R_j = (β - min β) / (max β - min β) in [0, 1] (§4), and whether the group is degenerate.

    With max - min at most DEGENERATE_SPREAD (e.g. all ties) every R_j is 0.5 and the flag is True: the
    group is "judge-uninformative" and yields zero advantage (our choice).
    """
    values = np.asarray(beta, dtype=np.float64)
    low, high = float(values.min()), float(values.max())
    if high - low <= DEGENERATE_SPREAD:
        return [0.5] * len(values), True
    return ((values - low) / (high - low)).tolist(), False


def _columns(matches: Sequence[Match]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not matches:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp), np.zeros(0)
    i, j, o = zip(*matches, strict=True)
    return np.asarray(i, dtype=np.intp), np.asarray(j, dtype=np.intp), np.asarray(o, dtype=np.float64)
