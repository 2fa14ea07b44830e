"""`harness table --metric` on the answer spread: counts as they are, shares in percent, and runs scored
before the spread was recorded marked."""

import json

from helpers import answered_run

from harness.core.store import RESULTS
from harness.report.table import render

GOLDS = ["5", "5", "3", "4", "6", "7", "8", "9"]


def test_the_answer_spread_in_a_table_and_a_run_scored_before_it_was_recorded(tmp_path):
    diverse = answered_run(tmp_path / "diverse", ["1", "2", "3", "4", "6", "1", "2", None], GOLDS)
    fives = answered_run(tmp_path / "fives", ["5"] * 8, GOLDS)
    table = render([diverse, fives], metric="mode_answer_share")
    assert table.splitlines()[2:4] == ["| diverse | 25.0 |", "| fives | 100.0 |"]  # no bold: not an accuracy
    assert "Cells: mode_answer_share (%)." in table
    assert render([diverse, fives], metric="distinct_answers").splitlines()[2:4] == [
        "| diverse | 5.0 |",
        "| fives | 1.0 |",
    ]
    assert render([diverse, fives], metric="constant_baseline").splitlines()[2:4] == [
        "| diverse | 25.0 |",
        "| fives | 25.0 |",
    ]

    old = json.loads((diverse / RESULTS).read_text())
    for key in ("distinct_answers", "mode_answer", "mode_answer_share", "constant_baseline"):
        del old["sums"][key]
    (diverse / RESULTS).write_text(json.dumps(old))
    table = render([diverse, fives], metric="mode_answer_share")
    assert table.splitlines()[2:4] == ["| diverse | – |", "| fives | 100.0 |"]
    assert (
        "Cells: mode_answer_share (%); – for diverse: scored before answer spreads were recorded "
        "(`harness score RUN`)."
    ) in table
