"""The Absolute Zero study's toy programs: each output is what the code returns, the sets are disjoint and
drawn evenly over the levels, every row reads as an `azr_deduction` item, and the warm start's traced
demonstrations are right step by step and pass the benchmark's scorer."""

import ast
from pathlib import Path

import pytest

from harness import HarnessError
from trainers.methods.azr.heldout import check, to_item
from trainers.methods.azr.options import AzrOptions
from trainers.studies.programs import demonstrations, split, trace
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


@pytest.mark.parametrize("seed", range(5))
def test_each_trace_step_is_right_and_ends_at_the_output(seed):
    (rows,) = split(parse_levels("2x9,3x20,4x50"), (60,), seed)
    for row in rows:
        start, *steps = trace(row).split(". ")
        assert start == f"x = {row['input']}" and len(steps) == row["code"].count("\n    x = ")
        for step in steps:
            worked, value = step.removesuffix(".").rsplit(" = ", 1)
            assert eval(worked) == int(value), (row, step)  # noqa: S307 (the study's own arithmetic)
        assert value == row["output"]


@pytest.mark.parametrize("template", ["chat", "r1"])
def test_demonstrations_ask_as_the_benchmark_and_answer_what_its_scorer_passes(template):
    (rows,) = split(parse_levels("2x5,3x9"), (8,), 0)
    demos = demonstrations(rows, AzrOptions(template=template))
    for number, (row, demo) in enumerate(zip(rows, demos, strict=True), 1):
        item = to_item(row, Path("cruxeval.jsonl"), number)
        asked = demo.prompt[-1]["content"] if template == "chat" else demo.prompt
        assert item.problem in asked and trace(row) in demo.completion
        assert (demo.role, demo.task, demo.sources) == ("solve", "deduction", (row["code"], row["input"]))
        reply = demo.completion if template == "chat" else "<think>" + demo.completion
        assert check(reply, row["output"]).value == 1
        assert check(reply, repr(ast.literal_eval(row["output"]) + 1)).value == 0
