"""Absolute Zero's Table 1 as shipped (results/paper/absolute_zero.csv) against its own arithmetic
(AZR paper, §5.1)."""

from __future__ import annotations

import csv
from collections import defaultdict

import pytest
from helpers import REPO

CSV = REPO / "results/paper/absolute_zero.csv"
CODE = ("humaneval_plus", "mbpp_plus", "livecodebench:release_v5")
MATH = ("aime24", "aime25", "amc23", "math500", "minerva", "olympiadbench")
DENOMINATORS = dict(zip(CODE + MATH, (164, 378, 880, 30, 30, 40, 500, 272, 675), strict=True))


def rows() -> dict[tuple[str, str], dict[str, float]]:
    table: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    with CSV.open() as f:
        for row in csv.DictReader(f):
            if row["table"] == "Table 1":
                table[row["model"], row["method"]][row["benchmark"]] = float(row["value"])
    return dict(table)


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


def test_every_row_has_nine_benchmarks_and_three_averages():
    table = rows()
    assert len(table) == 16
    assert all(set(r) == {*CODE, *MATH, "code_avg", "math_avg", "avg"} for r in table.values())


@pytest.mark.parametrize("key", sorted(rows()))
def test_averages_are_the_unweighted_means_of_their_columns(key):
    r = rows()[key]
    assert r["code_avg"] == pytest.approx(mean(r[b] for b in CODE), abs=0.051)
    assert r["math_avg"] == pytest.approx(mean(r[b] for b in MATH), abs=0.051)
    assert r["avg"] == pytest.approx((r["code_avg"] + r["math_avg"]) / 2, abs=0.051)  # "average of averages"


def test_every_score_is_a_count_over_the_full_test_set():
    """All 144 scores are k/n of the full sets to rounding, but AZR-Base's MBPP+ 69.1 = 261/378 = 69.05,
    which looks rounded twice."""
    for key, r in rows().items():
        for bench, n in DENOMINATORS.items():
            count = round(r[bench] * n / 100)
            slack = 0.11 if (key, bench) == (("Qwen2.5-7B", "AZR"), "mbpp_plus") else 0.051
            assert r[bench] == pytest.approx(100 * count / n, abs=slack), (key, bench)


def test_the_printed_math500_delta_of_azr_coder_is_a_typo():
    table = rows()
    delta = table["Qwen2.5-7B-Coder", "AZR"]["math500"] - table["Qwen2.5-7B-Coder", "Base"]["math500"]
    assert delta == pytest.approx(18.6)  # the paper prints +22.6
    assert table["Qwen2.5-7B-Coder", "AZR"]["avg"] == 50.4 and table["Qwen2.5-7B", "AZR"]["avg"] == 46.8
