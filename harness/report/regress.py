"""`harness regress BASE CAND` and `harness compare A B ...`: is a checkpoint better or worse, by how much,
and how sure are we.

Per benchmark, on the items both runs scored with the same gold answer: one sample per item in both
runs -> exact McNemar test on correctness (value 1); otherwise a paired sign-flip permutation test on
per-item mean values. Δ = candidate - base, with a paired bootstrap 95% CI over items; p-values are
Holm-corrected across benchmarks. A regression is Δ < 0 with Holm p < alpha and |Δ| >= min_effect.

Harness drift (data, prompt, chat template, scorer or sampling that differ between the runs) is
reported apart from model change; it makes the runs not comparable unless allowed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness import HarnessError
from harness.metrics import bootstrap_ci, holm, mcnemar_exact, min_detectable_effect, sign_flip_p
from harness.store import RUN, SCORES, RunDir

NO_REGRESSION, REGRESSION, NOT_COMPARABLE = 0, 1, 2


@dataclass
class Comparison:
    """One benchmark's paired comparison (fractions, not percent)."""

    benchmark: str
    items: int
    base: float
    candidate: float
    delta: float
    ci95: list[float]
    test: str
    p: float
    mde: float  # the smallest |Δ| this test detects at 80% power with these items
    p_holm: float = 1.0
    verdict: str = ""
    drift: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Run:
    path: Path
    info: dict[str, Any]
    values: dict[str, dict[str, list[float]]]  # benchmark -> item -> sample values

    @classmethod
    def load(cls, path: Path) -> Run:
        run = RunDir(path)
        info = run.read_json(RUN)
        values: dict[str, dict[str, list[float]]] = {}
        for s in run.records(SCORES):
            values.setdefault(s["benchmark"], {}).setdefault(s["item_id"], []).append(float(s["value"]))
        if not values:
            raise HarnessError(f"{path} has no scores: run `harness score {path}` first")
        return cls(Path(path), info, values)


def drift(base: Run, candidate: Run, benchmark: str) -> list[str]:
    """What the harness did differently for `benchmark` (not the model): one line per difference."""

    def facts(run: Run) -> dict[str, Any]:
        config = run.info["config"]
        return {
            "dataset": config.get("dataset_hashes", {}).get(benchmark),
            "prompt": config.get("prompt_hashes", {}).get(benchmark),
            "chat template": run.info.get("engine", {}).get("chat_template_sha256"),
            "scorer": run.info.get("scorer_versions", {}).get(benchmark) or config["scorers"].get(benchmark),
            "sampling": config.get("sampling", {}).get(benchmark),
            "max input tokens": config.get("max_input_tokens", {}).get(benchmark),
            "judge": config.get("judge"),
            "scoring options": config.get("scoring"),
        }

    a, b = facts(base), facts(candidate)
    return [f"{key}: base {_short(a[key])}, candidate {_short(b[key])}" for key in a if a[key] != b[key]]


def _short(value: Any) -> str:
    text = str(value)
    return text[:12] if len(text) == 64 else text  # hashes


def compare_benchmark(base: Run, candidate: Run, benchmark: str, alpha: float) -> Comparison:
    golds_a = base.info["answers"][benchmark]
    golds_b = candidate.info["answers"][benchmark]
    shared = [
        i
        for i in golds_a
        if i in golds_b and golds_a[i] == golds_b[i] and i in base.values[benchmark]
        and i in candidate.values[benchmark]
    ]  # fmt: skip
    if not shared:
        raise HarnessError(f"{benchmark}: the runs share no scored item with the same gold answer")
    a = [base.values[benchmark][i] for i in shared]
    b = [candidate.values[benchmark][i] for i in shared]
    base_means = np.array([np.mean(v) for v in a])
    differences = np.array([np.mean(v) for v in b]) - base_means
    if all(len(v) == 1 for v in a + b):
        base_only = sum(x[0] >= 1.0 > y[0] for x, y in zip(a, b, strict=True))
        candidate_only = sum(y[0] >= 1.0 > x[0] for x, y in zip(a, b, strict=True))
        test, p = "McNemar exact", mcnemar_exact(base_only, candidate_only)
    else:
        test, p = "paired sign-flip", sign_flip_p(differences)
    return Comparison(
        benchmark=benchmark,
        items=len(shared),
        base=float(base_means.mean()),
        candidate=float(base_means.mean() + differences.mean()),
        delta=float(differences.mean()),
        ci95=bootstrap_ci(differences),
        test=test,
        p=p,
        mde=min_detectable_effect(differences, float(base_means.mean()), alpha),
    )


def compare_runs(
    base_dir: Path, candidate_dir: Path, *, alpha: float = 0.05, min_effect: float = 0.0, allow_drift=False
) -> tuple[int, list[Comparison], list[str]]:
    """(exit code, one comparison per shared benchmark, messages) for BASE vs CAND."""
    base, candidate = Run.load(base_dir), Run.load(candidate_dir)
    shared = [b for b in base.values if b in candidate.values]
    if not shared:
        return NOT_COMPARABLE, [], [f"no benchmark scored in both {base_dir} and {candidate_dir}"]
    messages = [f"only in one run (skipped): {b}" for b in {*base.values, *candidate.values} - {*shared}]
    comparisons = []
    for benchmark in shared:
        try:
            comparison = compare_benchmark(base, candidate, benchmark, alpha)
        except HarnessError as e:
            messages.append(str(e))
            continue
        comparison.drift = drift(base, candidate, benchmark)
        comparisons.append(comparison)
    if not comparisons:
        return NOT_COMPARABLE, [], messages
    for c, adjusted in zip(comparisons, holm([c.p for c in comparisons]), strict=True):
        c.p_holm = adjusted
        significant = adjusted < alpha and abs(c.delta) >= min_effect
        c.verdict = (
            ("regression" if c.delta < 0 else "improvement") if significant else "no significant change"
        )
    drifted = [c for c in comparisons if c.drift]
    if drifted and not allow_drift:
        messages += [f"harness drift in {c.benchmark}: " + "; ".join(c.drift) for c in drifted]
        messages.append("not comparable: the harness changed, not only the model (--allow-drift to compare)")
        return NOT_COMPARABLE, comparisons, messages
    code = REGRESSION if any(c.verdict == "regression" for c in comparisons) else NO_REGRESSION
    return code, comparisons, messages


def render(comparisons: list[Comparison], base: str, candidate: str) -> str:
    """A Markdown table of the comparisons, in percent."""
    lines = [
        f"Base: {base}  Candidate: {candidate}",
        "",
        "| benchmark | items | base | candidate | Δ [95% CI] | test | p | p (Holm) | MDE | verdict |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---|",
    ]
    for c in comparisons:
        low, high = c.ci95
        verdict = c.verdict + (" (drift)" if c.drift else "")
        lines.append(
            f"| {c.benchmark} | {c.items} | {100 * c.base:.1f} | {100 * c.candidate:.1f} | "
            f"{100 * c.delta:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}] | {c.test} | {c.p:.3g} | "
            f"{c.p_holm:.3g} | {100 * c.mde:.1f} | {verdict} |"
        )
    return (
        "\n".join(lines)
        + "\n\nPercent. MDE: the smallest |Δ| the test detects at 80% power with these items.\n"
    )


def as_json(code: int, comparisons: list[Comparison], messages: list[str]) -> dict[str, Any]:
    return {"exit_code": code, "comparisons": [asdict(c) for c in comparisons], "messages": messages}
