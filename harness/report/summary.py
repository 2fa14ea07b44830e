"""The terminal summary of a run: one row per benchmark."""

from __future__ import annotations

from harness.progress import console


def print_summary(results: dict, title: str) -> None:
    """Percentages per benchmark: avg@N with its 95% CI, pass@N, maj@N, the sample-level rates, and the
    share of samples giving the most common answer (top; - for a run scored before it was recorded)."""
    from rich.table import Table

    table = Table(title=title)
    for column in (
        "benchmark",
        "items",
        "n",
        "avg@n [95% CI]",
        "pass@n",
        "maj@n",
        "trunc",
        "unextr",
        "top",
        "tokens",
    ):
        table.add_column(column, no_wrap=True)
    for benchmark, m in results.items():
        avg = next((k for k in m if k.startswith("avg@")), None)
        if avg is None:
            continue
        n = avg.split("@")[1]
        low, high = m["ci95"]
        table.add_row(
            benchmark,
            str(m["n_items"]),
            n,
            f"{100 * m[avg]:.1f} [{100 * low:.1f}, {100 * high:.1f}]",
            _pct(m.get(f"pass@{n}")),
            _pct(m[f"maj@{n}"]),
            _pct(m["truncated_rate"]),
            _pct(m["unextracted_rate"]),
            _pct(m.get("mode_answer_share")),
            "-" if m["mean_completion_tokens"] is None else f"{m['mean_completion_tokens']:.0f}",
        )
    console.print(table)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"
