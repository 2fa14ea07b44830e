"""The Absolute Zero study's toy programs: each output is what the code returns, the sets are disjoint and
drawn evenly over the levels, and every row reads as an `azr_deduction` item."""

import ast
from pathlib import Path

import pytest

from harness import HarnessError
from trainers.methods.azr.heldout import to_item
from trainers.studies.programs import split
from trainers.studies.task import parse_levels


def run(code: str, given: str):
    """The program's own output (programs written by the study, run here, not model text)."""
    scope: dict = {}
    exec(compile(code, "<program>", "exec"), scope)  # noqa: S102
    return scope["f"](ast.literal_eval(given))


@pytest.mark.parametrize("seed", range(5))
def test_every_output_is_what_the_program_returns(seed):
    train, heldout = split(parse_levels("2x9,3x20,4x50"), (60, 30), seed)
    for row in train + heldout:
        assert ast.literal_eval(row["output"]) == run(row["code"], row["input"]), row


def test_sets_are_disjoint_even_over_levels_and_reproducible():
    levels = parse_levels("2x9,3x20,4x50")
    train, heldout = split(levels, (90, 30), 0)
    assert len(train) == 90 and len(heldout) == 30
    assert not {r["id"] for r in train} & {r["id"] for r in heldout}
    assert len({r["id"] for r in train}) == 90
    assert [sum(r["id"].startswith(f"{lv.name}-") for r in heldout) for lv in levels] == [10, 10, 10]
    assert [r["code"].count("\n    x = ") for r in heldout[:3]] == [2, 3, 4]
    assert split(levels, (90, 30), 0) == [train, heldout] and split(levels, (90, 30), 1) != [train, heldout]


def test_rows_read_as_azr_deduction_items():
    (rows,) = split(parse_levels("3x20"), (4,), 0)
    for number, row in enumerate(rows, 1):
        item = to_item(row, Path("cruxeval.jsonl"), number)
        assert row["code"] in item.problem and item.answer == row["output"]


def test_a_level_with_too_few_programs_is_refused():
    with pytest.raises(HarnessError, match="too few programs"):
        split(parse_levels("2x1"), (4609,), 0)  # 48 * 48 programs, 2 inputs
