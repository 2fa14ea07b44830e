"""The terminal summary after `harness eval` and `harness score`: one table, and a one-line legend that
defines every column and its unit."""

import contextlib
import io
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.report.summary import COLUMNS, LEGEND, print_summary

RESULTS = {
    "aime24": {
        "n_items": 10, "n_samples": 40, "avg@4": 0.25, "ci95": [0.1, 0.4], "pass@4": 0.5, "maj@4": 0.3,
        "truncated_rate": 0.125, "unextracted_rate": 0.05, "mode_answer_share": 0.6,
        "mean_completion_tokens": 31.6,
    },
}  # fmt: skip


def test_one_table_with_a_legend_defining_each_column(capsys):
    print_summary(RESULTS, "m → runs/x")
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "benchmark" in line)
    assert [h for h, _ in COLUMNS] == [h for h in re.split(r"\s*[│┃|]\s*", header.strip(" │┃|")) if h]
    row = next(line for line in out.splitlines() if "aime24" in line)
    cells = [c for c in re.split(r"\s*[│┃|]\s*", row.strip(" │┃|")) if c]
    assert cells == ["aime24", "10", "4", "25.0 [10.0, 40.0]", "50.0", "30.0", "12.5", "5.0", "60.0", "32"]
    legend = [line for line in out.splitlines() if line.startswith("items: ")]
    assert legend == [LEGEND]  # one line, after the table
    for header, meaning in COLUMNS[1:]:
        assert f"{header}: {meaning}" in LEGEND
    assert out.count("benchmark") == 1  # printed once


def test_the_legend_gives_each_percentage_its_unit():
    percent = {"avg@n [95% CI]", "pass@n", "maj@n", "truncated", "no answer", "top answer"}
    for header, meaning in COLUMNS:
        assert ("%" in meaning) == (header in percent), header


@settings(max_examples=200, deadline=None)
@given(
    name=st.text(alphabet="[]/abx =#\\", min_size=1, max_size=16),
    title=st.text(alphabet="[]/ab\\", max_size=12),
)
def test_outside_names_are_printed_as_text_never_as_markup(name, title):
    """A benchmark name or a title from a run folder is text: `[/red]` neither styles nor breaks the table."""
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        print_summary({name: RESULTS["aime24"]}, title)
    out = printed.getvalue()
    rows = [line for line in out.splitlines() if "25.0 [10.0, 40.0]" in line]
    assert len(rows) == 1 and name.strip() in rows[0]
    assert title.strip() in out
