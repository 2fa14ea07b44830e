"""Paper-style tables from run directories: one row per run, one column per benchmark."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from harness import HarnessError
from harness.core.runinfo import UNSANDBOXED, UNSANDBOXED_NOTE, unsandboxed
from harness.core.store import RESULTS, RUN, RunDir

COUNTS = ("n_items", "n_samples", "distinct_answers", "mean_completion_tokens")  # shown as they are
SPREAD = ("distinct_answers", "mode_answer_share")  # missing only where scored before they were recorded


def _avg_key(metrics: dict) -> str | None:
    return next((k for k in metrics if k.startswith("avg@")), None)


def collect(run_dirs: list[Path]) -> tuple[list[str], list[str], list[dict]]:
    """Row labels (marked for runs whose model code ran unsandboxed), benchmark columns (first-seen
    order) and each run's results."""
    results, labels, columns, unsafe = [], [], [], []
    for path in run_dirs:
        run = RunDir(path)
        results.append(run.read_json(RESULTS))
        info = run.read_json(RUN)
        missing = [b for b in info["config"]["benchmarks"] if b not in results[-1]]
        if missing:
            raise HarnessError(f"{run.file(RESULTS)} has no results for {', '.join(map(str, missing))}: "
                               f"run `harness score {path}`")  # fmt: skip
        labels.append(Path(info["config"].get("model") or path.name).name)
        unsafe.append(unsandboxed(info))
        columns += [b for b in results[-1] if b not in columns]
    if len(set(labels)) != len(labels):
        labels = [Path(p).name for p in run_dirs]
    labels = [f"{label} {UNSANDBOXED}" if u else label for label, u in zip(labels, unsafe, strict=True)]
    return labels, columns, results


def _note(labels: list[str]) -> str:
    return f" {UNSANDBOXED_NOTE}" if any(label.endswith(UNSANDBOXED) for label in labels) else ""


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def cell_value(metrics: dict | None, metric: str) -> tuple[float, float | None] | None:
    """(value, CI half-width) in percent (a count as it is); `metric` is "avg" (avg@N with its CI) or a name
    like pass@4."""
    if not metrics:
        return None
    if metric == "avg":
        key = _avg_key(metrics)
        if key is None:
            return None
        low, high = metrics["ci95"]
        return 100 * metrics[key], 100 * (high - low) / 2
    if not _number(metrics.get(metric)):
        return None
    return (1 if metric in COUNTS else 100) * metrics[metric], None


def _header(metric: str, results: list[dict], labels: list[str]) -> str:
    """What the cells are, and which runs predate the metric."""
    header = "avg@N ± 95% CI (%)" if metric == "avg" else metric if metric in COUNTS else f"{metric} (%)"
    older = [
        label for label, r in zip(labels, results, strict=True) if any(metric not in m for m in r.values())
    ]
    if metric in SPREAD and older:
        header += (
            f"; – for {', '.join(older)}: scored before answer spreads were recorded (`harness score RUN`)"
        )
    return header


def render(run_dirs: list[Path], fmt: str = "md", metric: str = "avg") -> str:
    if fmt not in ("md", "csv", "latex"):
        raise HarnessError(f"unknown table format {fmt!r}; choose md, csv or latex")
    labels, columns, results = collect(run_dirs)
    known = sorted({k for r in results for m in r.values() for k, v in m.items() if _number(v)})
    if metric != "avg" and metric not in known:
        raise HarnessError(f"unknown --metric {metric!r}; these runs have: avg, {', '.join(known)}")
    cells = [[cell_value(r.get(b), metric) for b in columns] for r in results]
    ranked = metric == "avg" or "@" in metric  # an accuracy: the best is bold
    best = [
        max((row[j][0] for row in cells if row[j]), default=None) if ranked else None
        for j in range(len(columns))
    ]
    header = _header(metric, results, labels)
    if fmt == "csv":
        return _csv(labels, columns, cells)
    if fmt == "latex":
        return _latex(labels, columns, cells, best, header)
    return _markdown(labels, columns, cells, best, header)


def _text(cell: tuple[float, float | None] | None) -> str:
    if cell is None:
        return "–"
    value, half = cell
    return f"{value:.1f}" if half is None else f"{value:.1f} ± {half:.1f}"


def _markdown(labels, columns, cells, best, header) -> str:
    lines = [f"| run | {' | '.join(columns)} |", "|---|" + "---:|" * len(columns)]
    for label, row in zip(labels, cells, strict=True):
        texts = [
            f"**{_text(c)}**" if c and len(labels) > 1 and c[0] == b else _text(c)
            for c, b in zip(row, best, strict=True)
        ]
        lines.append(f"| {label} | {' | '.join(texts)} |")
    return "\n".join(lines) + f"\n\nCells: {header}.{_note(labels)}\n"


def _latex_escape(text: str) -> str:
    for char in "\\&%$#_{}":
        text = text.replace(char, "\\" + char)
    return text


def _latex(labels, columns, cells, best, header) -> str:
    lines = [
        "\\begin{tabular}{l" + "r" * len(columns) + "}",
        "\\toprule",
        "Run & " + " & ".join(_latex_escape(c) for c in columns) + " \\\\",
        "\\midrule",
    ]
    for label, row in zip(labels, cells, strict=True):
        texts = []
        for c, b in zip(row, best, strict=True):
            text = _text(c).replace("±", "$\\pm$").replace("–", "--")
            texts.append(f"\\textbf{{{text}}}" if c and len(labels) > 1 and c[0] == b else text)
        lines.append(_latex_escape(label) + " & " + " & ".join(texts) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", f"% Cells: {header}.{_note(labels)}"]
    return "\n".join(lines) + "\n"


def _csv(labels, columns, cells) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["run"] + [f"{c}{suffix}" for c in columns for suffix in ("", "_ci95_halfwidth")])
    for label, row in zip(labels, cells, strict=True):
        values = []
        for c in row:
            values += ["", ""] if c is None else [f"{c[0]:.4f}", "" if c[1] is None else f"{c[1]:.4f}"]
        writer.writerow([label] + values)
    return out.getvalue()
