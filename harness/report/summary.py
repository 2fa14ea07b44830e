"""The terminal summary of a run: one table, one row per benchmark, and a legend under it."""

from __future__ import annotations

from rich.console import Console

# (header, what it is); the legend under the table is these, in order, on one line
COLUMNS = (
    ("benchmark", ""),
    ("items", "items scored"),
    ("n", "samples per item"),
    ("avg@n [95% CI]", "mean accuracy over all samples, % (bootstrap 95% CI)"),
    ("pass@n", "items with at least one correct sample, %"),
    ("maj@n", "items whose most common answer is correct, %"),
    ("truncated", "samples cut at --max-tokens, %"),
    ("no answer", "samples with no answer to extract, %"),
    ("top answer", "samples giving their item's most common answer, % (- if scored before it was recorded)"),
    ("tokens", "mean completion tokens per sample"),
)
LEGEND = "; ".join(f"{header}: {meaning}" for header, meaning in COLUMNS if meaning) + "."


def print_summary(results: dict, title: str) -> None:
    """The run's one table (on stdout: it is the command's result) and the legend of its columns."""
    from rich.table import Table
    from rich.text import Text

    console = Console()
    if not console.is_terminal:  # logs and pipes: wide enough for every column
        console.width = max(console.width, 140)
    table = Table(title=Text(title), title_justify="left")  # names and paths from outside: never markup
    for header, _ in COLUMNS:
        table.add_column(header, no_wrap=True, justify="left" if header == "benchmark" else "right")
    for benchmark, m in results.items():
        avg = next((k for k in m if k.startswith("avg@")), None)
        if avg is None:
            continue
        n = avg.split("@")[1]
        low, high = m["ci95"]
        table.add_row(
            Text(benchmark),
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
    console.print(LEGEND, soft_wrap=True, markup=False, highlight=False)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"
