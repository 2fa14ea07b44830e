"""results/paper/*.csv against the spec tables they were transcribed from, and the loader for them.

The spec tables are parsed here from the shared specs/*.md (beside shared/data), independently of the
CSV files: every CSV value must equal the cell it came from, and every number of each main table must be
in the CSV.
"""

from __future__ import annotations

import csv
import dataclasses
import re
from statistics import mean

import pytest
from helpers import GIVEN_DATA, REPO, SPECS, own_names

from benchmarks import BENCHMARKS, get_benchmark
from harness import HarnessError
from harness.papers import PAPERS
from harness.report import paper
from harness.report.paper import PaperRow, paper_rows, papers

COLUMNS = ["paper", "table", "model", "method", "benchmark", "metric", "setting", "value"]
# columns of the papers' own (no harness benchmark of that name); see results/paper/README.md
PAPER_ONLY = {"avg", "code_avg", "math_avg", "lb_mqa", "aime26", "beyondaime"}
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")

# ---------------------------------------------------------------- markdown


def spec_tables(name: str, start: str, stop: str) -> list[tuple[str, list[list[str]]]]:
    """Pipe tables between the line starting with `start` and the next starting with `stop`, each with
    the last line of text above it; the |---| separator rows are dropped."""
    path = SPECS / f"{name}.md"
    if not path.is_file():
        if not GIVEN_DATA:  # a clone without the project's shared folder: the transcription is not checked
            pytest.skip(f"spec {path} not found (the project's shared folder; HARNESS_TEST_DATA's parent)")
        pytest.fail(f"spec {path} not found; HARNESS_TEST_DATA's parent must hold specs/")
    lines = path.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    last = next(i for i in range(first + 1, len(lines)) if lines[i].startswith(stop))
    tables, above, rows = [], "", None
    for line in lines[first:last]:
        if not line.startswith("|"):
            rows = None
            above = line.strip() or above
            continue
        if rows is None:
            rows = []
            tables.append((above, rows))
        cells = [cell.strip() for cell in line.strip()[1:-1].split("|")]
        if not all(re.fullmatch(r":?-{3,}:?", cell) for cell in cells):
            rows.append(cells)
    assert tables, f"no table in {name}.md after {start!r}"
    return tables


def cell_value(cell: str) -> str | None:
    """The published number of a cell as text: "**40.8** (+14.1)" -> "40.8", "13,229" -> "13229",
    "63.3*" -> "63.3"; None for an empty or "-" cell."""
    match = re.fullmatch(r"(?:\*\*)?(\d[\d,]*(?:\.\d+)?)(?:\*\*)?\*?(?: \(.*\))?", cell)
    if match is None:
        assert cell in ("", "-", "–", "—"), f"not a number: {cell!r}"
        return None
    return match.group(1).replace(",", "")


def label(cell: str) -> str:
    """A row label as the CSV writes it: no bold, no trailing " (note)" or "*" marker;
    "Qwen3-4B-Thinking(-2507)" -> "Qwen3-4B-Thinking-2507"."""
    text = re.sub(r"\((-\w+)\)", r"\1", cell.replace("**", ""))
    return re.sub(r"( \([^)]*\))+$", "", text).rstrip("*").strip()


def numbers_in(rows: list[list[str]], skip_columns: tuple[str, ...] = ()) -> int:
    """How many numbers the data cells hold, outside parentheses ("52.71 / 13,229" holds two)."""
    keep = [i for i, head in enumerate(rows[0]) if i > 0 and head not in skip_columns]
    return sum(len(NUMBER.findall(re.sub(r"\(.*?\)", "", row[i]))) for row in rows[1:] for i in keep)


# ---------------------------------------------------------------- the spec tables, cell by cell

Key = tuple[str, str, str, str, str, str]  # table, model, method, benchmark, metric, setting


def spell_cells() -> tuple[dict[Key, str], int]:
    (_, rows), *_ = spec_tables("spell", "### 5.1 Table 1", "### 5.2")
    column = {"DocMath": "docmath", "Frames": "frames", "LB-MQA": "lb_mqa", "LB-V2": "longbench_v2"}
    cells, model = {}, None
    for row in rows[1:]:
        if not any(row[1:]):  # "**Base models**" and the other group labels
            continue
        if row[0].startswith("+ "):
            method = label(row[0][2:])
        else:
            model, method = label(row[0]), "Base"
        for head, cell in zip(rows[0][1:], row[1:], strict=True):
            setting, name = head.split(" ", 1)
            if (value := cell_value(cell)) is not None:
                cells["Table 1", model, method, column.get(name, "avg"), "avg@8", setting] = value
    return cells, numbers_in(rows)


def absolute_zero_cells() -> tuple[dict[Key, str], int]:
    (_, rows), *_ = spec_tables("absolute_zero", "### 5.1 Table 1", "Notes on Table 1")
    column = {"HEval+": "humaneval_plus", "MBPP+": "mbpp_plus", "LCBv1-5": "livecodebench:release_v5"}
    column |= {"Olympiad": "olympiadbench", "CAvg": "code_avg", "MAvg": "math_avg", "AVG": "avg"}
    assert rows[0][:3] == ["Model", "Base", "#data"]
    # the Base column names the base model's row by a short name
    models = {
        "Base": "Qwen2.5-7B",
        "Ins": "Qwen2.5-7B-Ins",
        "Coder": "Qwen2.5-7B-Coder",
        "Math": "Qwen2.5-7B-Math",
    }
    assert sorted(row[0] for row in rows if row[1] == "–") == sorted(models.values())
    cells = {}
    for row in rows[1:]:
        model, method = (row[0], "Base") if row[1] == "–" else (models[row[1]], label(row[0]))
        for head, cell in zip(rows[0][3:], row[3:], strict=True):
            if (value := cell_value(cell)) is not None:
                cells["Table 1", model, method, column.get(head, head.lower()), "pass@1", ""] = value
    return cells, numbers_in(rows, skip_columns=("Base", "#data"))


def reasoning_arena_cells() -> tuple[dict[Key, str], int]:
    (_, rows), *_ = spec_tables("reasoning_arena", "**Table 1 — main results**", "**Table 2")
    # the printed "Δ Live vs RLVR" row is a difference of two other rows, not a result
    rows = [row for row in rows if not row[0].startswith("Δ")]
    column = {"GPQA-D": "gpqa_diamond", "LCB v6": "livecodebench:release_v6", "Avg": "avg"}
    metric = {"LCB v6": "pass@5", "Avg": "mean"}
    cells = {}
    for row in rows[1:]:
        for head, cell in zip(rows[0][1:], row[1:], strict=True):
            if (value := cell_value(cell)) is not None:
                key = column.get(head, head.lower()), metric.get(head, "avg@16"), ""
                cells["Table 1", "Ministral-3-8B-Instruct-2512", label(row[0]), *key] = value
    return cells, numbers_in(rows)


def ulorl_cells() -> tuple[dict[Key, str], int]:
    (_, rows), *_ = spec_tables("ulorl", "**Table 2 — overall results**", "**Table 3")
    column = {"AIME-2025": "aime25", "BeyondAIME": "beyondaime", "AVG": "avg"}
    cells = {}
    for row in rows[1:]:
        name = label(row[0])
        model, method = ("Qwen3-30B-A3B", name) if name.startswith("UloRL") else (name, "Base")
        for head, cell in zip(rows[0][1:], row[1:], strict=True):
            if (value := cell_value(cell)) is not None:
                cells["Table 2", model, method, column[head], "avg@32", ""] = value
    return cells, numbers_in(rows)


def spae_cells() -> tuple[dict[Key, str], int]:
    tables = spec_tables("spae", "**Table 1 — Acc@16", "**Table 2")
    assert [above for above, _ in tables] == [
        "DeepSeek-R1-Distill-Qwen-7B:",
        "DeepSeek-R1-Distill-Llama-8B:",
        "Qwen3-4B-Thinking:",
    ]
    column = {"Olympiad": "olympiadbench", "GPQA": "gpqa_main", "Avg Acc": "avg", "Avg Len": "avg"}
    cells, count = {}, 0
    for above, rows in tables:
        for row in rows[1:]:
            for head, cell in zip(rows[0][1:], row[1:], strict=True):
                if head in ("Avg Acc", "Avg Len"):
                    parts = [("avg@16" if head == "Avg Acc" else "len@16", cell)]
                else:  # "Acc@16 / Len@16"
                    parts = list(zip(("avg@16", "len@16"), cell.split(" / "), strict=True))
                for metric, part in parts:
                    if (value := cell_value(part)) is not None:
                        key = column.get(head, head.lower()), metric, ""
                        cells["Table 1", above.rstrip(":"), label(row[0]), *key] = value
        count += numbers_in(rows)
    return cells, count


SPEC_CELLS = {
    "spell": spell_cells,
    "absolute_zero": absolute_zero_cells,
    "reasoning_arena": reasoning_arena_cells,
    "ulorl": ulorl_cells,
    "spae": spae_cells,
}


def csv_cells(name: str) -> dict[Key, str]:
    with (REPO / "results" / "paper" / f"{name}.csv").open(newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        assert reader.fieldnames == COLUMNS
        records = list(reader)
    assert {r["paper"] for r in records} == {name}
    cells = {tuple(r[c] for c in COLUMNS[1:-1]): r["value"] for r in records}
    assert len(cells) == len(records), (
        f"{name}.csv repeats a (table, model, method, benchmark, metric, setting)"
    )
    return cells


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize("name", [PAPERS[method].paper for method in own_names("harness.papers")])
def test_csv_equals_spec_table(name):
    expected, numbers = SPEC_CELLS[name]()
    assert len(expected) == numbers, "a number of the spec table was not read"
    got = csv_cells(name)
    assert sorted(set(expected) - set(got)) == [], "spec cells missing from the CSV"
    assert sorted(set(got) - set(expected)) == [], "CSV rows with no spec cell"
    wrong = {key: (got[key], expected[key]) for key in expected if got[key] != expected[key]}
    assert wrong == {}, "CSV value != spec cell"


def test_row_counts():
    counts = {PAPERS[m].paper: len(paper_rows(PAPERS[m].paper)) for m in own_names("harness.papers")}
    assert counts == {"spell": 360, "absolute_zero": 192, "reasoning_arena": 42, "ulorl": 21, "spae": 224}


def test_benchmark_names_are_the_harness_names():
    for row in paper_rows():
        if row.benchmark not in PAPER_ONLY and row.benchmark not in BENCHMARKS:
            assert get_benchmark(row.benchmark).name == row.benchmark


MATH = ["aime24", "aime25", "amc23", "math500", "minerva", "olympiadbench"]
SPAE = ["aime24", "aime25", "amc23", "minerva", "olympiadbench", "gpqa_main"]


@pytest.mark.parametrize(
    "name, average, parts, tolerance",
    [
        (
            "spell",
            ("avg", "avg@8"),
            [(b, "avg@8") for b in ("docmath", "frames", "lb_mqa", "longbench_v2")],
            0.05,
        ),
        (
            "absolute_zero",
            ("code_avg", "pass@1"),
            [(b, "pass@1") for b in ("humaneval_plus", "mbpp_plus")]
            + [("livecodebench:release_v5", "pass@1")],
            0.05,
        ),
        ("absolute_zero", ("math_avg", "pass@1"), [(b, "pass@1") for b in MATH], 0.05),
        ("absolute_zero", ("avg", "pass@1"), [("code_avg", "pass@1"), ("math_avg", "pass@1")], 0.1),
        (
            "reasoning_arena",
            ("avg", "mean"),
            [(b, "avg@16") for b in ("aime24", "aime25", "aime26", "beyondaime")]
            + [("gpqa_diamond", "avg@16"), ("livecodebench:release_v6", "pass@5")],
            0.05,
        ),
        ("ulorl", ("avg", "avg@32"), [("aime25", "avg@32"), ("beyondaime", "avg@32")], 0.05),
        ("spae", ("avg", "avg@16"), [(b, "avg@16") for b in SPAE], 0.01),
        ("spae", ("avg", "len@16"), [(b, "len@16") for b in SPAE], 1),
    ],
)
def test_paper_averages_are_means_of_their_columns(name, average, parts, tolerance):
    """The average columns follow the papers' recipes (specs): a check on the transcription itself."""
    table: dict[tuple, dict[tuple[str, str], float]] = {}
    for r in paper_rows(name):
        table.setdefault((r.model, r.method, r.setting), {})[r.benchmark, r.metric] = r.value
    for key, row in table.items():
        assert abs(mean(row[part] for part in parts) - row[average]) <= tolerance + 1e-9, (key, average)
    assert table


def test_loader():
    rows = paper_rows()
    assert len(rows) == sum(len(paper_rows(name)) for name in papers())
    ulorl = paper_rows("ulorl")
    assert {r.paper for r in ulorl} == {"ulorl"} and all(isinstance(r.value, float) for r in ulorl)
    assert all(isinstance(getattr(r, f), str) for r in ulorl for f in COLUMNS[:-1])
    assert PaperRow("ulorl", "Table 2", "Qwen3-30B-A3B", "Base", "aime25", "avg@32", "", 70.9) in ulorl
    assert [f.name for f in dataclasses.fields(PaperRow)] == COLUMNS
    with pytest.raises(dataclasses.FrozenInstanceError):
        ulorl[0].value = 0.0  # type: ignore[misc]
    spell = [r for r in paper_rows("spell") if r.setting == "100K" and r.benchmark == "avg"]
    assert len(spell) == 36
    with pytest.raises(HarnessError, match="unknown paper"):
        paper_rows("nope")


GOOD = "ulorl,Table 2,Qwen3-30B-A3B,Base,aime25,avg@32,,70.9\n"


@pytest.mark.parametrize(
    "text, message",
    [
        (None, "not found"),
        ("paper,table,model\n" + GOOD, "header"),
        (",".join(COLUMNS) + "\n" + GOOD.replace("70.9", "n/a"), "line 2"),
        (",".join(COLUMNS) + "\n" + GOOD + "ulorl,Table 2,Qwen3-30B-A3B\n", "line 3"),
        (",".join(COLUMNS) + "\n" + GOOD.replace("70.9", "70.9,extra"), "malformed"),
        (",".join(COLUMNS) + "\n" + GOOD.replace("ulorl,", "spae,", 1), "malformed"),
    ],
)
def test_missing_or_malformed_csv_raises(tmp_path, monkeypatch, text, message):
    monkeypatch.setattr(paper, "paper_dir", lambda package: tmp_path)
    if text is not None:
        (tmp_path / "ulorl.csv").write_text(text, encoding="utf-8")
    with pytest.raises(HarnessError, match=message):
        paper_rows("ulorl")
    (tmp_path / "ulorl.csv").write_text(",".join(COLUMNS) + "\n" + GOOD, encoding="utf-8")
    assert paper_rows("ulorl") == [
        PaperRow("ulorl", "Table 2", "Qwen3-30B-A3B", "Base", "aime25", "avg@32", "", 70.9)
    ]
