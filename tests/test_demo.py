"""The demo's task and gates: disjoint generated sums, its config, and what makes `tox -e demo` fail."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from benchmarks.arithmetic import check_disjoint, operand_pairs, sum_row, sum_split
from trainers.config import load_config

REPO = Path(__file__).resolve().parents[1]


def load_demo():
    spec = importlib.util.spec_from_file_location("demo", REPO / "scripts" / "demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_split_is_disjoint_complete_and_seeded():
    train, test = sum_split(30, 100, seed=0)
    assert len(test) == 100 and len(train) == 31 * 32 // 2 - 100
    assert not operand_pairs(train) & operand_pairs(test)
    assert len(operand_pairs(train) | operand_pairs(test)) == len(train) + len(test)
    assert (train, test) == sum_split(30, 100, seed=0) != sum_split(30, 100, seed=1)
    for row in train + test:
        a, b = (int(x) for x in row["id"].split("-")[1:])
        assert row["answer"] == str(a + b) and f"Add {a} and {b}." in row["problem"]
    assert len({row["answer"] for row in test}) > 30  # a constant answer scores low


def test_check_disjoint_catches_a_sum_in_either_order():
    check_disjoint([sum_row(1, 2)], [sum_row(2, 2)])
    with pytest.raises(ValueError, match="1 sums are in both"):
        check_disjoint([sum_row(1, 2)], [sum_row(2, 1)])


def test_split_refuses_impossible_sizes():
    with pytest.raises(ValueError, match="test size"):
        sum_split(2, 6)


def test_demo_config_is_a_valid_train_config():
    config = load_config(
        REPO / "configs" / "train" / "demo.yaml",
        {"method": "grpo", "model": "m", "dataset": "d.jsonl", "out": "o"},
    )
    assert config.prompt_template == "{problem}" and config.save_steps == config.max_steps
    assert config.scorer == "integer"  # the reward is the metric the demo reports


def comparison(**changes):
    spread = {"distinct_answers": 40, "mode_answer": "31", "mode_answer_share": 0.05}
    base = {"items": 100, "base": 0.1, "candidate": 0.3, "delta": 0.2, "ci95": [0.1, 0.3], "p_holm": 1e-4}
    return {
        **base,
        "test": "paired sign-flip",
        "verdict": "improvement",
        "collapse": False,
        "constant_baseline": 0.04,
        "base_answers": spread,
        "candidate_answers": spread,
        **changes,
    }


@pytest.mark.parametrize(
    ("changes", "code", "reason"),
    [
        ({}, 0, None),
        ({"verdict": "no significant change"}, 0, "significant gain"),
        ({"verdict": "collapse", "collapse": True}, 4, "collapsed"),
        ({"candidate": 0.04}, 0, "constant answer"),
    ],
)
def test_demo_fails_without_a_real_gain(changes, code, reason):
    found = load_demo().failures(comparison(**changes), code)
    assert (reason is None and not found) or any(reason in line for line in found)


def test_report_reads_the_runs(tmp_path):
    demo = load_demo()
    run = tmp_path / "eval-trained"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"answers": {"sums-test": {"sum-3-4": "7"}}}))
    generation = {"item_id": "sum-3-4", "sample_idx": 0, "text": "3 + 4 = 7"}
    (run / "generations.jsonl").write_text(json.dumps(generation) + "\n")
    score = {"item_id": "sum-3-4", "sample_idx": 0, "value": 1.0}
    (run / "scores.jsonl").write_text(json.dumps(score) + "\n")
    lines = demo.report(comparison(), run)
    assert any("best constant answer" in line and "4.0%" in line for line in lines)
    assert any("distinct answers" in line and "40" in line for line in lines)
    assert any("3 + 4 =   7  answered '3 + 4 = 7' (right)" in line for line in lines)
