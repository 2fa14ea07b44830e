"""`harness table --layout NAME`: a paper's main table rebuilt from runs, with the paper's own numbers
beside ours (`--with-paper`), Δ against a base run, and a footnote from the runs' configuration.

Our cells are percent with a 95% CI half-width; an average column's CI combines its parts' as
independent (half = sqrt(sum h_i^2) / k). Length columns are mean completion tokens (lower is better).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness import HarnessError
from harness.core.runinfo import UNSANDBOXED, UNSANDBOXED_NOTE, unsandboxed
from harness.core.store import RESULTS, RUN, RunDir
from harness.papers import PAPERS, Column, Layout, PaperProfile
from harness.report.comparable import differences
from harness.report.paper import paper_rows

Cell = tuple[float, float | None]  # value, CI half-width


@dataclass
class Row:
    label: str
    source: str  # "ours" or "paper"
    cells: dict[tuple[str, int], Cell] = field(default_factory=dict)  # (group, column index) -> cell
    delta: dict[tuple[str, int], float] = field(default_factory=dict)
    # with --with-paper: how its runs depart from the paper's protocol (then it is never ranked best)
    differs: list[str] = field(default_factory=list)


def get_profile(name: str) -> PaperProfile:
    if name not in PAPERS:
        raise HarnessError(f"unknown layout {name!r}; choose {', '.join(PAPERS)}")
    return PAPERS[name]


def run_group(layout: Layout, info: dict) -> str:
    """The column group a run fills: SPELL's input setting from its max input tokens, else ""."""
    if layout.groups == ("",):
        return ""
    longest = max(info["config"].get("max_input_tokens", {}).values(), default=16384)
    return "100K" if longest > 65536 else "16K"


def benchmark_cell(metrics: dict | None, column: Column) -> Cell | None:
    if not metrics:
        return None
    if column.metric == "len":
        tokens = metrics.get("mean_completion_tokens")
        return None if tokens is None else (tokens, None)
    if column.metric.startswith("pass@") and column.metric != "pass@1":
        return (100 * metrics[column.metric], None) if column.metric in metrics else None
    avg = next((k for k in metrics if k.startswith("avg@")), None)
    if avg is None:
        return None
    low, high = metrics["ci95"]
    return 100 * metrics[avg], 100 * (high - low) / 2


def fill(layout: Layout, results: dict, group: str, row: Row) -> None:
    """Every column of `group` from one run's results.json. An average's part is the earlier column
    with that key (of the same metric if there is one: SPAE's Acc and Len), else the benchmark."""
    done: dict[tuple[str, str], Cell | None] = {}
    for index, column in enumerate(layout.columns):
        if column.is_average:
            cell = average([_part(done, p, column, results) for p in column.parts])
        else:
            cell = benchmark_cell(results.get(column.key), column)
        done[(column.key, column.metric)] = cell
        if cell is not None:
            row.cells[(group, index)] = cell


def _part(done: dict, part: str, column: Column, results: dict) -> Cell | None:
    if (part, column.metric) in done:
        return done[(part, column.metric)]
    earlier = [cell for (key, _), cell in done.items() if key == part]
    return earlier[-1] if earlier else benchmark_cell(results.get(part), column)


def average(parts: list[Cell | None]) -> Cell | None:
    if not parts or any(p is None for p in parts):
        return None
    value = sum(p[0] for p in parts) / len(parts)
    halves = [p[1] for p in parts]
    half = None if None in halves else sum(h * h for h in halves) ** 0.5 / len(parts)
    return value, half


def our_rows(layout: Layout, run_dirs: list[Path]) -> tuple[dict[str, Row], list[dict], dict[Path, str]]:
    """One row per model (runs of it at different settings share it); per run directory when two
    runs of one model fill the same columns (checkpoints saved under one name)."""
    runs = []
    for path in run_dirs:
        run = RunDir(path)
        info = run.read_json(RUN)
        runs.append((Path(path), info, run.read_json(RESULTS), run_group(layout, info)))
    keys = [(Path(info["config"].get("model") or path.name).name, group) for path, info, _, group in runs]
    by_directory = len(set(keys)) != len(keys)
    rows: dict[str, Row] = {}
    labels: dict[Path, str] = {}
    for (path, info, results, group), (model, _) in zip(runs, keys, strict=True):
        label = path.name if by_directory else model
        label = labels[path.resolve()] = f"{label} {UNSANDBOXED}" if unsandboxed(info) else label
        row = rows.setdefault(label, Row(label, "ours"))
        if any(g == group for g, _ in row.cells):
            raise HarnessError(f"two runs named {label} fill the {group or 'same'} columns; rename one")
        fill(layout, results, group, row)
    return rows, [info for _, info, _, _ in runs], labels


def published_rows(profile: PaperProfile) -> list[Row]:
    """The paper's own rows, as in results/paper/<paper>.csv."""
    rows: dict[tuple[str, str], Row] = {}
    layout = profile.layout
    index = {(c.key, c.paper_metric): i for i, c in enumerate(layout.columns)}
    for r in paper_rows(profile.paper):
        if r.table != layout.table or (r.benchmark, r.metric) not in index:
            continue
        row = rows.setdefault((r.model, r.method), Row(f"{r.model} {r.method} (paper)", "paper"))
        row.cells[(r.setting, index[(r.benchmark, r.metric)])] = (r.value, None)
    return list(rows.values())


def build(
    profile: PaperProfile, run_dirs: list[Path], *, with_paper: bool = False, base: Path | None = None
) -> tuple[list[Row], list[dict]]:
    """The rows to show (paper rows first) and the runs' infos for the footnote. With the paper's rows,
    each of ours notes how its runs depart from the paper's protocol (`Row.differs`)."""
    layout = profile.layout
    ours, infos, labels = our_rows(layout, run_dirs)
    if with_paper:
        keys = {c.key for c in layout.columns if not c.is_average}
        for path, info in zip(run_dirs, infos, strict=True):
            held = [b for b in info["config"]["benchmarks"] if b in keys]
            found = differences(profile, run_group(layout, info), info, held)
            ours[labels[Path(path).resolve()]].differs += found
    if base is not None:
        label = labels.get(Path(base).resolve())
        base_row = ours[label] if label else next(iter(our_rows(layout, [base])[0].values()))
        for row in ours.values():
            if row is not base_row:
                row.delta = {
                    k: v[0] - base_row.cells[k][0] for k, v in row.cells.items() if k in base_row.cells
                }
    rows = (published_rows(profile) if with_paper else []) + list(ours.values())
    if not rows:
        raise HarnessError("nothing to show: pass run directories, or --with-paper")
    return rows, infos


def render(
    name: str, run_dirs: list[Path], fmt: str = "md", *, with_paper: bool = False, base: Path | None = None
) -> str:
    profile = get_profile(name)
    layout = profile.layout
    if fmt not in ("md", "latex", "csv"):
        raise HarnessError(f"unknown table format {fmt!r}; choose md, csv or latex")
    rows, infos = build(profile, run_dirs, with_paper=with_paper, base=base)
    keys = [(g, i) for g in layout.groups for i in range(len(layout.columns))]
    if fmt == "csv":
        return _csv(layout, rows, keys)
    ranked = [r for r in rows if not r.differs]  # beside the paper's rows, only what was made alike
    best = {k: _best(layout.columns[k[1]], [r.cells.get(k) for r in ranked]) for k in keys}
    note = footnote(infos, with_paper, profile, rows)
    if fmt == "latex":
        return _latex(layout, rows, keys, best, note)
    return _markdown(layout, rows, keys, best, note)


def _best(column: Column, cells: list[Cell | None]) -> float | None:
    values = [c[0] for c in cells if c is not None]
    if len(values) < 2:
        return None
    return min(values) if column.metric == "len" else max(values)


def _text(row: Row, key: tuple[str, int], layout: Layout) -> str:
    cell, column = row.cells.get(key), layout.columns[key[1]]
    if cell is None:
        return "–"
    value, half = cell
    digits = 0 if column.metric == "len" else layout.digits
    text = f"{value:.{digits}f}" if half is None else f"{value:.{digits}f} ± {half:.{digits}f}"
    if key in row.delta:
        text += f" ({row.delta[key]:+.{digits}f})"
    return text


def _header(layout: Layout, key: tuple[str, int]) -> str:
    group, index = key
    return f"{group} {layout.columns[index].label}".strip()


def _markdown(layout, rows, keys, best, note) -> str:
    lines = [
        f"| model | {' | '.join(_header(layout, k) for k in keys)} |",
        "|---|" + "---:|" * len(keys),
    ]
    for row in rows:
        texts = []
        for k in keys:
            text = _text(row, k, layout)
            bold = row.cells.get(k) and not row.differs and best[k] is not None and row.cells[k][0] == best[k]
            texts.append(f"**{text}**" if bold else text)
        lines.append(f"| {row.label} | {' | '.join(texts)} |")
    return "\n".join(lines) + "\n\n" + note + "\n"


def _latex_escape(text: str) -> str:
    for char in "\\&%$#_{}":
        text = text.replace(char, "\\" + char)
    return text.replace("±", "$\\pm$").replace("–", "--")


def _latex(layout, rows, keys, best, note) -> str:
    width = len(layout.columns)
    lines = [f"\\begin{{tabular}}{{l{'r' * len(keys)}}}", "\\toprule"]
    if layout.groups != ("",):
        lines.append(
            " & " + " & ".join(f"\\multicolumn{{{width}}}{{c}}{{{g}}}" for g in layout.groups) + " \\\\"
        )
        lines.append(
            " ".join(
                f"\\cmidrule(lr){{{2 + i * width}-{1 + (i + 1) * width}}}" for i in range(len(layout.groups))
            )
        )
    labels = [_latex_escape(layout.columns[i].label) for _, i in keys]
    lines += ["Model & " + " & ".join(labels) + " \\\\", "\\midrule"]
    for row in rows:
        texts = []
        for k in keys:
            text = _latex_escape(_text(row, k, layout))
            bold = row.cells.get(k) and not row.differs and best[k] is not None and row.cells[k][0] == best[k]
            texts.append(f"\\textbf{{{text}}}" if bold else text)
        lines.append(f"{_latex_escape(row.label)} & " + " & ".join(texts) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "", f"% {note}".replace("\n", "\n% ")]
    return "\n".join(lines) + "\n"


def _csv(layout, rows, keys) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["row", "source", "setting", "column", "metric", "value", "ci95_half", "delta"])
    for row in rows:
        for k in keys:
            if k in row.cells:
                column = layout.columns[k[1]]
                value, half = row.cells[k]
                half_text = "" if half is None else f"{half:.4f}"
                delta_text = "" if k not in row.delta else f"{row.delta[k]:.4f}"
                writer.writerow(
                    [
                        row.label,
                        row.source,
                        k[0],
                        column.label,
                        column.metric,
                        f"{value:.4f}",
                        half_text,
                        delta_text,
                    ]
                )
    return buffer.getvalue()


def footnote(infos: list[dict], with_paper: bool, profile: PaperProfile, rows: Sequence[Row] = ()) -> str:
    """How our numbers were made (sampling per benchmark, dataset revisions), what the cells mean, and
    with the paper's rows which of ours were not made under its protocol."""
    settings: dict[str, list[str]] = {}
    revisions = []
    for info in infos:
        for b, s in info["config"]["sampling"].items():
            text = f"n={s['n']}, T={s['temperature']}, top-p={s['top_p']}, max tokens={s['max_tokens']}"
            if s.get("top_k", -1) != -1:
                text += f", top-k={s['top_k']}"
            if b not in settings.setdefault(text, []):
                settings[text].append(b)
        for b, d in info.get("datasets", {}).items():
            revision = (
                f"{b}@{d['revision'][:7]}" if d.get("revision") else f"{b} sha256:{d['content_hash'][:8]}"
            )
            if revision not in revisions:
                revisions.append(revision)
    parts = ["Ours: percent, avg@N ± 95% CI half-width (averages combine their parts' CIs as independent)."]
    parts += [f"{text} ({', '.join(benchmarks)})." for text, benchmarks in settings.items()]
    if revisions:
        parts.append("Data: " + "; ".join(revisions) + ".")
    if any(unsandboxed(info) for info in infos):
        parts.append(UNSANDBOXED_NOTE)
    if with_paper:
        parts.append(
            f"(paper): as published, {profile.paper} {profile.layout.table} "
            f"({profile.published_in}/paper/{profile.paper}.csv)."
        )
        presets = " or ".join(p for group in profile.layout.groups for p in profile.protocol(group))
        departed = [f"{r.label} ({'; '.join(r.differs)})" for r in rows if r.differs]
        if departed:
            parts.append(
                f"Not comparable with the paper's rows (its protocol is `--preset {presets}`), so never "
                f"marked best beside them: {'; '.join(departed)}."
            )
        elif any(r.source == "ours" for r in rows):
            parts.append(f"Ours follow the paper's protocol (`--preset {presets}`): ranked with its rows.")
    return "\n".join(parts)
