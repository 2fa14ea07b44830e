"""`harness regress BASE CAND` and `harness compare A B ...`: is a checkpoint better or worse, by how much,
and how sure are we.

Per benchmark, on the items both runs scored with the same gold answer: one sample per item in both
runs -> exact McNemar test on correctness (value 1); otherwise a paired sign-flip permutation test on
per-item mean values. Δ = candidate - base, with a paired bootstrap 95% CI over items; p-values are
Holm-corrected across benchmarks. A regression is Δ < 0 with Holm p < alpha and |Δ| >= min_effect.
A collapse is a candidate whose answers, on those items, concentrated on one answer
(`metrics.collapsed`), whatever its Δ, unless the benchmark regressed.

Harness drift (data, prompt, chat template, scorer or sampling that differ between the runs) is
reported apart from model change; it makes the runs not comparable unless allowed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness import HarnessError
from harness.core.metrics import (
    answer_of,
    answer_spread,
    bootstrap_ci,
    collapsed,
    constant_baseline,
    holm,
    mcnemar_exact,
    min_detectable_effect,
    sign_flip_p,
)
from harness.core.store import RUN, SCORES, RunDir, describes
from harness.scoring import exact_golds
from harness.scoring.rules import accepted_answers

NO_REGRESSION, REGRESSION, NOT_COMPARABLE, COLLAPSE = 0, 1, 2, 4  # 3: a usage error (harness.cli.app)


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
    base_answers: dict[str, Any]  # metrics.answer_spread over these items' samples
    candidate_answers: dict[str, Any]
    constant_baseline: float | None  # the most common gold's share of these items (exact_golds scorers)
    collapse: bool = False
    p_holm: float = 1.0
    verdict: str = ""
    drift: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Run:
    path: Path
    info: dict[str, Any]
    values: dict[str, dict[str, list[float]]]  # benchmark -> item -> sample values
    answers: dict[str, dict[str, list[str | None]]]  # benchmark -> item -> samples' metrics.answer_of

    @classmethod
    def load(cls, path: Path) -> Run:
        run = RunDir(path)
        info = run.read_json(RUN)
        values: dict[str, dict[str, list[float]]] = {}
        answers: dict[str, dict[str, list[str | None]]] = {}
        for s in run.records(SCORES):
            values.setdefault(s["benchmark"], {}).setdefault(s["item_id"], []).append(float(s["value"]))
            answers.setdefault(s["benchmark"], {}).setdefault(s["item_id"], []).append(answer_of(s))
        if not values:
            raise HarnessError(f"{path} has no scores: run `harness score {path}` first")
        describes(info, values, Path(path))
        return cls(Path(path), info, values, answers)

    def spread(self, benchmark: str, items: list[str]) -> dict[str, Any]:
        """`answer_spread` of the samples of `items`."""
        return answer_spread([k for i in items for k in self.answers[benchmark][i]])


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
    exact = exact_golds(candidate.info["config"]["scorers"].get(benchmark, ""))
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
        base_answers=base.spread(benchmark, shared),
        candidate_answers=candidate.spread(benchmark, shared),
        constant_baseline=constant_baseline(accepted_answers(golds_a[i]) for i in shared) if exact else None,
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
        c.collapse = collapsed(
            c.base_answers["mode_answer_share"], c.candidate_answers["mode_answer_share"], c.constant_baseline
        )
        c.verdict = _verdict(c, significant)
    messages += [collapse_warning(c) for c in comparisons if c.collapse]
    drifted = [c for c in comparisons if c.drift]
    if drifted and not allow_drift:
        messages += [f"harness drift in {c.benchmark}: " + "; ".join(c.drift) for c in drifted]
        messages.append("not comparable: the harness changed, not only the model (--allow-drift to compare)")
        return NOT_COMPARABLE, comparisons, messages
    verdicts = {c.verdict for c in comparisons}
    code = REGRESSION if "regression" in verdicts else COLLAPSE if "collapse" in verdicts else NO_REGRESSION
    return code, comparisons, messages


def _verdict(c: Comparison, significant: bool) -> str:
    if significant and c.delta < 0:
        return "regression"
    if c.collapse:
        return "collapse"
    return "improvement" if significant else "no significant change"


def collapse_warning(c: Comparison) -> str:
    """One line: how the candidate's answers collapsed on a benchmark, against the base and the golds."""
    base, cand = c.base_answers, c.candidate_answers
    mode = str(cand["mode_answer"])
    line = (
        f"warning: answer collapse in {c.benchmark}: {_share(cand)}% of the candidate's samples answer "
        f"{mode if len(mode) <= 40 else mode[:37] + '...'!r} (base's most common answer: {_share(base)}%); "
        f"distinct answers {base['distinct_answers']} -> {cand['distinct_answers']}"
    )
    if c.constant_baseline is None:
        return line
    beats = "beats" if c.candidate > c.constant_baseline else "does not beat"
    constant = _percent(c.constant_baseline)
    return f"{line}; its {100 * c.candidate:.1f} {beats} the constant-answer baseline {constant}"


def _share(spread: dict[str, Any]) -> str:
    return f"{100 * spread['mode_answer_share']:.1f}"


def render(comparisons: list[Comparison], base: str, candidate: str) -> str:
    """A Markdown table of the comparisons, in percent."""
    lines = [
        f"Base: {base}  Candidate: {candidate}",
        "",
        "| benchmark | items | base | candidate | Δ [95% CI] | test | p | p (Holm) | MDE | const "
        "| top answer | verdict |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for c in comparisons:
        low, high = c.ci95
        verdict = c.verdict + (" (drift)" if c.drift else "")
        lines.append(
            f"| {c.benchmark} | {c.items} | {100 * c.base:.1f} | {100 * c.candidate:.1f} | "
            f"{100 * c.delta:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}] | {c.test} | {c.p:.3g} | "
            f"{c.p_holm:.3g} | {100 * c.mde:.1f} | {_percent(c.constant_baseline)} | "
            f"{_share(c.base_answers)} → {_share(c.candidate_answers)} | {verdict} |"
        )
    return "\n".join(lines) + "\n\n" + NOTE


NOTE = (
    "Percent. MDE: the smallest |Δ| the test detects at 80% power with these items. const: the accuracy of "
    "answering every item with the most common gold answer (– where golds are not verbatim answers). "
    "top answer: the share of samples giving the most common answer, base → candidate.\n"
)


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def as_json(code: int, comparisons: list[Comparison], messages: list[str]) -> dict[str, Any]:
    return {"exit_code": code, "comparisons": [asdict(c) for c in comparisons], "messages": messages}
