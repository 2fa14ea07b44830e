"""The studies' sums: levels, disjoint splits, and the warm-start styles the mechanisms need."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import HarnessError
from harness.probing.probe import PROBE_TEXT
from trainers.studies.task import Level, completion, disjoint, item, operands_of, parse_levels, split
from trainers.studies.warmstart import demonstrations


def test_levels_parse_and_refuse():
    assert parse_levels("2x20, 3x99") == (Level(2, 20), Level(3, 99))
    for bad in ("", "1x9", "2x0", "10x9", "2-9", "2x9x9"):
        with pytest.raises(HarnessError):
            parse_levels(bad)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), sizes=st.tuples(*[st.integers(1, 40)] * 3))
def test_splits_are_disjoint_in_any_operand_order_and_even_over_levels(seed, sizes):
    levels = parse_levels("2x20,3x9")
    sets = split(levels, sizes, seed)
    assert [len(s) for s in sets] == list(sizes)
    keys = [{(len(operands_of(r)), *sorted(operands_of(r))) for r in rows} for rows in sets]
    assert not (keys[0] & keys[1] or keys[0] & keys[2] or keys[1] & keys[2])
    for rows in sets:
        counts = [sum(r["level"] == lv.name for r in rows) for lv in levels]
        assert max(counts) - min(counts) <= 1
        assert all(str(sum(operands_of(r))) == r["answer"] for r in rows)
    assert split(levels, sizes, seed) == sets  # the same seed, the same sums


def test_disjoint_catches_a_reordered_sum_and_too_few_sums_is_an_error():
    with pytest.raises(HarnessError, match="share the sum"):
        disjoint([item(Level(2, 9), (3, 4))], [item(Level(2, 9), (4, 3))])
    with pytest.raises(HarnessError, match="too few distinct sums"):
        split(parse_levels("2x3"), (5, 5, 5), 0)


def test_styles_end_with_the_sum_and_check_commits_first():
    row = item(Level(3, 99), (12, 30, 7))
    assert completion(row, "direct") == "12 + 30 + 7 = 49"
    check = completion(row, "check")
    paragraphs = check.split("\n\n")
    assert paragraphs[0] == "12 + 30 + 7 = 49." and paragraphs[-1] == PROBE_TEXT + "49}"
    assert paragraphs[1:-1] == ["Check: 12 + 30 = 42.", "Check: 42 + 7 = 49."]
    assert completion(row, "steps") == "12 + 30 = 42. 42 + 7 = 49. The answer is 49."
    with pytest.raises(HarnessError):
        completion(row, "verbose")


def test_demonstrations_are_checked_by_their_problem_only():
    rows = split(parse_levels("2x20"), (4,), 0)[0]
    demos = demonstrations(rows, "direct")
    assert [d.sources for d in demos] == [(r["problem"],) for r in rows]
    assert demos[0].prompt == ({"role": "user", "content": rows[0]["problem"]},)
