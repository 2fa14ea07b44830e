"""Multi-sample metrics: avg@N, unbiased pass@K, maj@N, a bootstrap CI, sample-level rates, and how
concentrated the answers are (to see a model that collapsed onto one answer).

Items may have unequal sample counts: avg@N averages each item's own mean (items weigh equally),
pass@K is reported for K up to the smallest per-item count, and maj@N votes over what each item has.
A sample counts as correct for pass@K when its value is 1.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from math import comb

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0
COLLAPSE_SHARE = 0.5  # at least half of the samples give one answer...
COLLAPSE_RISE = 0.25  # ...25 points more often than in the base run and than the most common gold


@dataclass(frozen=True)
class Outcome:
    """One scored sample, as the metrics see it."""

    item_id: str
    sample_idx: int
    value: float
    answer_key: str | None  # the extracted answer, normalised; None when nothing was extracted
    truncated: bool | None = None
    completion_tokens: int | None = None
    answer: str | None = None  # `answer_of` its score record, for the spread of answers
    gold: tuple[str, ...] | None = None  # the item's accepted answers, where a constant could match one


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: 1 - C(n-c, k) / C(n, k), computed as a stable product."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def k_values(n: int) -> list[int]:
    """1, 2, 4, ... below n, and n itself."""
    ks = [1 << i for i in range(n.bit_length()) if (1 << i) < n]
    return ks + [n]


def majority_value(outcomes: list[Outcome]) -> float:
    """The value of the most frequent extracted answer.

    Ties go to the answer that appears first (lowest sample_idx). Samples with no extracted
    answer do not vote; an item where nothing was extracted scores 0.
    """
    counts: dict[str, int] = defaultdict(int)
    first: dict[str, Outcome] = {}
    for o in sorted(outcomes, key=lambda o: o.sample_idx):
        if o.answer_key is None:
            continue
        counts[o.answer_key] += 1
        first.setdefault(o.answer_key, o)
    if not counts:
        return 0.0
    winner = max(counts, key=lambda key: (counts[key], -first[key].sample_idx))
    return first[winner].value


def bootstrap_ci(item_means: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED):
    """95% percentile interval of the mean, resampling items with replacement (fixed seed)."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(item_means), size=(resamples, len(item_means)))
    means = item_means[idx].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return [float(low), float(high)]


def answer_of(score: Mapping) -> str | None:
    """What a score record's sample answered: the scorer's canonical form of its extracted answer, or the
    extracted text where the scorer gives none (a judge); None when nothing was extracted."""
    if score.get("extracted") is None:
        return None
    return score["extracted"] if score.get("canonical") is None else score["canonical"]


def answer_spread(keys: Sequence[str | None]) -> dict:
    """`distinct_answers` (unextracted samples give none), `mode_answer` (the most common; ties go to the
    smallest string) and `mode_answer_share` (its count over all samples, unextracted ones included)."""
    counts = Counter(k for k in keys if k is not None)
    if not counts:
        return {"distinct_answers": 0, "mode_answer": None, "mode_answer_share": 0.0}
    mode = min(counts, key=lambda k: (-counts[k], k))
    return {
        "distinct_answers": len(counts),
        "mode_answer": mode,
        "mode_answer_share": counts[mode] / len(keys),
    }


def constant_baseline(golds: Iterable[Sequence[str]]) -> float:
    """The accuracy of giving every item the same answer, the one most items accept (each item's
    accepted answers compared as stripped strings: exact for integers, a lower bound where one value
    has several spellings)."""
    items = [{answer.strip() for answer in accepted} for accepted in golds]
    counts = Counter(answer for accepted in items for answer in accepted)
    return max(counts.values()) / len(items)


def collapsed(base_share: float, candidate_share: float, constant: float | None) -> bool:
    """Whether a candidate's answers collapsed: its most common answer takes at least half of its
    samples, and at least 25 points more than the base's most common answer and than the most common
    gold answer's share of items (`constant`, where known)."""
    rises = [base_share] + ([] if constant is None else [constant])
    return candidate_share >= max(COLLAPSE_SHARE, *(share + COLLAPSE_RISE for share in rises)) - 1e-12


def _rate(values: list) -> float | None:
    known = [v for v in values if v is not None]
    return float(np.mean(known)) if known else None


def aggregate(outcomes: Iterable[Outcome], extra_k: Iterable[int] = ()) -> dict:
    """All metrics for one benchmark, named as in the run-directory contract, and the spread of its
    answers; `constant_baseline` too when every outcome carries its item's gold.

    `extra_k`: pass@k values a benchmark's paper reports besides the powers of two (when k <= n)."""
    by_item: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_item[o.item_id].append(o)
    if not by_item:
        return {"n_items": 0, "n_samples": 0}
    groups = list(by_item.values())
    counts = [len(g) for g in groups]
    n_max, n_min = max(counts), min(counts)
    item_means = np.array([np.mean([o.value for o in g]) for g in groups])
    samples = [o for g in groups for o in g]
    result: dict = {"n_items": len(groups), "n_samples": len(samples)}
    if n_min != n_max:
        result["samples_per_item"] = {"min": n_min, "max": n_max}
    result[f"avg@{n_max}"] = float(item_means.mean())
    for k in sorted(set(k_values(n_min)) | {k for k in extra_k if k <= n_min}):
        per_item = [pass_at_k(len(g), sum(o.value >= 1.0 for o in g), k) for g in groups]
        result[f"pass@{k}"] = float(np.mean(per_item))
    result[f"maj@{n_max}"] = float(np.mean([majority_value(g) for g in groups]))
    result["ci95"] = bootstrap_ci(item_means)
    result["truncated_rate"] = _rate([o.truncated for o in samples])
    result["unextracted_rate"] = float(np.mean([o.answer_key is None for o in samples]))
    result["mean_completion_tokens"] = _rate([o.completion_tokens for o in samples])
    result.update(answer_spread([o.answer for o in samples]))
    if all(o.gold is not None for o in samples):
        result["constant_baseline"] = constant_baseline([g[0].gold for g in groups])
    return result


# Paired comparisons of two runs on the items both have (harness regress / compare).

EXACT_SIGN_FLIPS = 16  # up to 2**16 sign patterns are enumerated; beyond, a seeded Monte Carlo
PERMUTATIONS = 20_000


def mcnemar_exact(base_only: int, candidate_only: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of the discordant pairs at 1/2."""
    n = base_only + candidate_only
    if n == 0:
        return 1.0
    k = min(base_only, candidate_only)
    tail = sum(comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def sign_flip_p(differences: np.ndarray, seed: int = BOOTSTRAP_SEED) -> float:
    """Two-sided paired permutation p-value for a zero mean difference (signs flipped per item).

    Exact over all sign patterns of the non-zero differences when there are at most 16 of them,
    otherwise a Monte Carlo estimate (count + 1) / (draws + 1) with a fixed seed."""
    d = differences[differences != 0]
    if len(d) == 0:
        return 1.0
    observed = abs(d.sum())
    if len(d) <= EXACT_SIGN_FLIPS:
        signs = 1 - 2 * ((np.arange(2 ** len(d))[:, None] >> np.arange(len(d))) & 1)
        sums = np.abs(signs @ d)
        return float(np.mean(sums >= observed - 1e-12))
    rng = np.random.default_rng(seed)
    signs = rng.choice((-1.0, 1.0), size=(PERMUTATIONS, len(d)))
    hits = int(np.sum(np.abs(signs @ d) >= observed - 1e-12))
    return (hits + 1) / (PERMUTATIONS + 1)


def holm(p_values: list[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input order."""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def min_detectable_effect(
    differences: np.ndarray, base_mean: float, alpha: float, power: float = 0.8
) -> float:
    """The smallest mean difference a two-sided paired test at `alpha` detects with `power`,
    from the normal approximation (z_{1-alpha/2} + z_power) * sd / sqrt(n). The sd is the observed
    sd of the paired differences, or, when they are all equal, sqrt(2 p (1 - p)) at the base's
    accuracy p (independent errors; p kept within [1/2n, 1 - 1/2n]), so an identical pair of runs
    still gets an honest bound."""
    from statistics import NormalDist

    n = len(differences)
    sd = float(np.std(differences, ddof=1)) if n > 1 else 0.0
    if sd == 0.0 and n:
        p = min(max(base_mean, 0.5 / n), 1 - 0.5 / n)
        sd = (2 * p * (1 - p)) ** 0.5
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return z * sd / n**0.5 if n else float("inf")
