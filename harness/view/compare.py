"""Two runs side by side: `harness regress`'s verdict (its own code, its test and interval) and the items
whose verdict flipped between the runs."""

from __future__ import annotations

from typing import Any

from harness import HarnessError
from harness.view.evalrun import CORRECT, EvalRun

CODES = {0: "no significant regression", 1: "regression", 2: "not comparable", 4: "answer collapse"}


def regression(base: EvalRun, candidate: EvalRun, alpha: float = 0.05) -> dict[str, Any]:
    """`harness regress BASE CAND`'s report as JSON (its exit code, the comparisons, its messages) and
    each shared benchmark's flipped items."""
    from harness.report.regress import as_json, compare_runs

    try:
        report = as_json(*compare_runs(base.path, candidate.path, alpha=alpha))
    except HarnessError as e:  # a run without scores
        report = {"exit_code": 2, "comparisons": [], "messages": [str(e)]}
    except (KeyError, TypeError, ValueError) as e:  # a run.json regress cannot read (not a missing page)
        report = {"exit_code": 2, "comparisons": [], "messages": [f"harness regress cannot compare: {e!r}"]}
    report["verdict"] = CODES.get(report["exit_code"], str(report["exit_code"]))
    report["flips"] = [flips(base, candidate, b) for b in base.benchmarks if b in candidate.benchmarks]
    return report


def _correct_share(run: EvalRun, benchmark: str) -> dict[str, tuple[float, int]]:
    """Per item: the share of its scored samples that are correct, and the position of its first sample."""
    counts: dict[str, list[int]] = {}
    for k, s in enumerate(run.samples[benchmark]):
        c = counts.setdefault(s.item_id, [0, 0, k])
        if s.score is not None:
            c[0] += bool(s.flags & CORRECT)
            c[1] += 1
    return {i: (right / n, first) for i, (right, n, first) in counts.items() if n}


def flips(base: EvalRun, candidate: EvalRun, benchmark: str) -> dict[str, Any]:
    """Items right in one run and wrong in the other (right: at least half its samples correct; with one
    sample, its verdict), with where each run's samples of the item start."""
    a, b = _correct_share(base, benchmark), _correct_share(candidate, benchmark)
    out: dict[str, list[dict[str, Any]]] = {"right_to_wrong": [], "wrong_to_right": []}
    for item in a:
        if item not in b:
            continue
        (share_a, first_a), (share_b, first_b) = a[item], b[item]
        before, after = share_a >= 0.5, share_b >= 0.5
        if before != after:
            entry = {"id": item, "base": [share_a, first_a], "candidate": [share_b, first_b]}
            out["right_to_wrong" if before else "wrong_to_right"].append(entry)
    return {
        "benchmark": benchmark,
        "base_index": base.benchmarks.index(benchmark),
        "candidate_index": candidate.benchmarks.index(benchmark),
        **out,
    }
