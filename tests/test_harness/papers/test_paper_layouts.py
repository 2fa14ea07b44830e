"""`harness table --layout`: each paper's table rebuilt from runs and from the published CSVs, checked
against golden files and hand-computed averages."""

import json
import os
from pathlib import Path

import pytest
from helpers import REPO, run_cli

from harness import HarnessError
from harness.papers import PAPERS
from harness.report.paper import paper_rows
from harness.report.paper_table import render

GOLDEN = REPO / "tests/golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"  # regenerate after a deliberate change, then review the diff


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text)
    assert text == path.read_text(), f"{name} differs from the golden file"


def markdown_cells(text: str) -> dict[str, list[str]]:
    rows = [line.strip("|").split(" | ") for line in text.splitlines() if line.startswith("| ")]
    return {row[0].strip(): [c.strip().strip("*") for c in row[1:]] for row in rows[1:]}


@pytest.mark.parametrize("name", list(PAPERS))
def test_the_paper_csv_alone_reproduces_the_papers_table(name):
    layout = PAPERS[name].layout
    cells = markdown_cells(render(name, [], with_paper=True))
    published = [r for r in paper_rows(PAPERS[name].paper) if r.table == layout.table]
    assert len(cells) == len({(r.model, r.method) for r in published})
    headers = [f"{g} {c.label}".strip() for g in layout.groups for c in layout.columns]
    for r in published:
        column = next(
            i for i, c in enumerate(layout.columns) if (c.key, c.paper_metric) == (r.benchmark, r.metric)
        )
        index = headers.index(f"{r.setting} {layout.columns[column].label}".strip())
        text = cells[f"{r.model} {r.method} (paper)"][index]
        digits = 0 if layout.columns[column].metric == "len" else layout.digits
        assert text == f"{r.value:.{digits}f}", (r, text)


def test_paper_tables_golden_files():
    golden("spell_paper.md", render("spell", [], "md", with_paper=True))
    golden("azr_paper.tex", render("azr", [], "latex", with_paper=True))
    golden("arena_paper.csv", render("arena", [], "csv", with_paper=True))


RESULTS = {  # avg@8 and a CI half-width of 2 points per benchmark, in fractions
    "docmath": 0.40,
    "frames": 0.30,
    "hotpotqa": 0.60,
    "2wikimqa": 0.50,
    "musique": 0.40,
    "longbench_v2": 0.20,
}


def write_run(path: Path, model: str, max_input: int, shift: float = 0.0) -> Path:
    path.mkdir(parents=True)
    results = {
        b: {"n_items": 10, "avg@8": v + shift, "ci95": [v + shift - 0.02, v + shift + 0.02], "pass@8": 0.9}
        for b, v in RESULTS.items()
    }
    sampling = {"n": 8, "temperature": 0.7, "top_p": 0.95, "max_tokens": 4096}
    info = {
        "config": {
            "model": model,
            "benchmarks": list(RESULTS),
            "sampling": dict.fromkeys(RESULTS, sampling),
            "max_input_tokens": dict.fromkeys(RESULTS, max_input),
        },
        "datasets": {b: {"revision": "abcdef0123", "content_hash": "f" * 64} for b in RESULTS},
    }
    (path / "run.json").write_text(json.dumps(info))
    (path / "results.json").write_text(json.dumps(results))
    return path


def test_spell_layout_from_runs(tmp_path):
    base = write_run(tmp_path / "base16", "models/base", 16384)
    runs = [
        base,
        write_run(tmp_path / "base100", "models/base", 100000, shift=-0.1),
        write_run(tmp_path / "trained16", "models/trained", 16384, shift=0.05),
    ]
    text = render("spell", runs, "md", base=base)
    cells = markdown_cells(text)
    # LB-MQA = mean(60, 50, 40) = 50 ± sqrt(3 * 2^2) / 3 = 1.15; Avg = mean(40, 30, 50, 20) = 35
    # ± sqrt(3 * 2^2 + 1.15^2) / 4 = 0.91
    assert cells["base"][:5] == ["40.0 ± 2.0", "30.0 ± 2.0", "50.0 ± 1.2", "20.0 ± 2.0", "35.0 ± 0.9"]
    assert cells["base"][5:] == ["30.0 ± 2.0", "20.0 ± 2.0", "40.0 ± 1.2", "10.0 ± 2.0", "25.0 ± 0.9"]
    assert cells["trained"][4] == "40.0 ± 0.9 (+5.0)" and cells["trained"][9] == "–"
    assert "n=8, T=0.7, top-p=0.95, max tokens=4096 (docmath, frames" in text
    assert "docmath@abcdef0" in text
    golden("spell_runs.md", text)
    golden("spell_runs.tex", render("spell", runs, "latex", with_paper=False))


def test_layout_errors_and_cli(tmp_path):
    with pytest.raises(HarnessError, match="unknown layout"):
        render("nope", [])
    with pytest.raises(HarnessError, match="nothing to show"):
        render("spell", [])
    one = write_run(tmp_path / "a", "m", 16384)
    two = write_run(tmp_path / "b", "m", 16384, shift=0.1)
    assert list(markdown_cells(render("spell", [one, two]))) == ["a", "b"]  # checkpoints of one name
    three = write_run(tmp_path / "other" / "a", "n", 16384)
    with pytest.raises(HarnessError, match="two runs named a fill the 16K columns"):
        render("spell", [one, two, three])
    done = run_cli("table", "--layout", "ulorl", "--with-paper", "--format", "csv")
    assert done.stdout.splitlines()[0] == "row,source,setting,column,metric,value,ci95_half,delta"
    assert "DeepSeek-R1-0528 Base (paper),paper,,AIME-2025,score,87.5000,," in done.stdout


def write_spae_run(path: Path, model: str, sampling: dict, limit: int | None, tokens: float) -> Path:
    """A run on the spae layout's AIME24 column: 50% accuracy, `tokens` mean completion tokens."""
    path.mkdir(parents=True)
    results = {"aime24": {"n_items": limit or 30, "avg@16": 0.5, "ci95": [0.4, 0.6],
                          "mean_completion_tokens": tokens}}  # fmt: skip
    info = {
        "config": {
            "model": model,
            "benchmarks": ["aime24"],
            "limit": limit,
            "sampling": {"aime24": sampling},
        },
        "datasets": {"aime24": {"revision": "abcdef0123", "content_hash": "f" * 64, "n_items": 30}},
    }
    (path / "run.json").write_text(json.dumps(info))
    (path / "results.json").write_text(json.dumps(results))
    return path


def test_with_paper_ranks_only_runs_made_under_the_papers_protocol(tmp_path):
    toy = {"n": 4, "temperature": 0.6, "top_p": 0.95, "max_tokens": 32}
    paper = {"n": 16, "temperature": 0.6, "top_p": 1.0, "top_k": 50, "max_tokens": 32768}
    runs = [write_spae_run(tmp_path / "toy", "tiny", toy, 10, 31.0)]
    text = render("spae", runs, "md", with_paper=True)
    row = next(line for line in text.splitlines() if line.startswith("| tiny |"))
    assert "31" in row and "**" not in row  # the shortest length, yet not "best" beside 7B models
    assert (
        "Not comparable with the paper's rows (its protocol is `--preset spae`), so never marked best beside "
        "them: tiny (aime24: n=4 (paper 16), top-p=0.95 (paper 1.0), top-k=-1 (paper 50), max tokens=32 "
        "(paper 32768), 10 of 30 items)." in text
    )
    assert any("**" in line for line in text.splitlines() if "(paper)" in line)  # the paper's best stay
    runs.append(write_spae_run(tmp_path / "full", "made-alike", paper, None, 1000.0))
    text = render("spae", runs, "md", with_paper=True)
    alike = next(line for line in text.splitlines() if line.startswith("| made-alike |"))
    assert "**1000**" in alike  # ranked with the paper's rows: shorter than every published length
    assert "Not comparable" in text and "made-alike (" not in text
    alone = render("spae", runs[1:], "md", with_paper=True)
    assert "Ours follow the paper's protocol (`--preset spae`): ranked with its rows." in alone
    assert "**31**" in render("spae", runs, "md")  # without the paper's rows, ours are ranked as before
