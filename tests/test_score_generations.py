"""`harness score --generations`: generations made by another tool, scored into a run directory."""

import json
from pathlib import Path

import pytest
from helpers import run_cli

R1_STYLE = (
    "<think>\nLet me compute. Maybe \\boxed{205}? No, recheck: 9/s + t = 4 ...\n</think>\n\n"
    "The walk takes **204** minutes.\n\n\\[\\boxed{204}\\]"
)
BASE_STYLE = "We solve for s = 2.5, so the total is 3 hours and 24 minutes. The answer is 204."
WRONG = "The answer is \\boxed{205}."
UNCLOSED = "<think>\nLet me think about this for a long time and never stop"


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def scored(tmp_path_factory, shared_data):
    tmp = tmp_path_factory.mktemp("external")
    problem_61 = next(
        json.loads(line)["problem"]
        for line in (shared_data / "aime24" / "test.jsonl").read_text().splitlines()
        if json.loads(line)["id"] == 61
    )
    rows = [
        {"item_id": 60, "sample_idx": 0, "text": R1_STYLE, "finish_reason": "stop", "completion_tokens": 50},
        {
            "item_id": "60",
            "sample_idx": 1,
            "text": BASE_STYLE,
            "finish_reason": "stop",
            "completion_tokens": 30,
        },
        {"item_id": "60", "sample_idx": 2, "text": WRONG, "finish_reason": "stop", "completion_tokens": 10},
        {
            "item_id": "60",
            "sample_idx": 3,
            "text": UNCLOSED,
            "finish_reason": "length",
            "completion_tokens": 90,
        },
        # matched by problem text (whitespace differences tolerated), numbered in file order
        {"problem": "  " + problem_61.replace(" ", "  ") + "\n", "text": "so $\\boxed{113}$"},
        {"problem": problem_61, "text": "\\boxed{114}"},
    ]
    generations = write(tmp / "gens.jsonl", rows)
    out = tmp / "run"
    run_cli(
        "score", "--generations", str(generations), "--benchmark", "aime24", "--out", str(out),
        "--data-dir", str(shared_data),
    )  # fmt: skip
    return out


def test_scores_match_hand_judgement(scored):
    scores = [json.loads(line) for line in (scored / "scores.jsonl").read_text().splitlines()]
    assert [(s["item_id"], s["sample_idx"], s["value"]) for s in scores] == [
        ("60", 0, 1.0),
        ("60", 1, 1.0),
        ("60", 2, 0.0),
        ("60", 3, 0.0),
        ("61", 0, 1.0),
        ("61", 1, 0.0),
    ]
    assert [s["extracted"] for s in scores] == ["204", "204", "205", None, "113", "114"]


def test_results_handle_unequal_sample_counts(scored):
    results = json.loads((scored / "results.json").read_text())["aime24"]
    assert results["n_items"] == 2 and results["n_samples"] == 6
    assert results["samples_per_item"] == {"min": 2, "max": 4}
    assert results["avg@4"] == pytest.approx((2 / 4 + 1 / 2) / 2)
    assert results["pass@1"] == pytest.approx(0.5)
    assert results["pass@2"] == pytest.approx(((1 - 1 / 6) + 1) / 2)  # item 60: 1 - C(2,2)/C(4,2)
    assert "pass@4" not in results
    assert results["maj@4"] == pytest.approx(1.0)  # 204 wins on item 60; 113 (first) wins the tie on 61
    assert results["unextracted_rate"] == pytest.approx(1 / 6)
    assert results["truncated_rate"] == pytest.approx(1 / 4)  # only rows that report a finish reason
    generations = [json.loads(line) for line in (scored / "generations.jsonl").read_text().splitlines()]
    assert generations[0]["answer"].endswith("\\[\\boxed{204}\\]") and "205" in generations[0]["reasoning"]
    assert generations[3]["unclosed_think"] is True and generations[3]["answer"] is None


def test_rescoring_the_run_gives_the_same_results(scored):
    before = (scored / "results.json").read_bytes()
    run_cli("score", str(scored))
    assert (scored / "results.json").read_bytes() == before


def test_unknown_item_is_reported_with_its_line(tmp_path, shared_data):
    generations = write(
        tmp_path / "g.jsonl", [{"item_id": "60", "text": "1"}, {"item_id": "999", "text": "2"}]
    )
    done = run_cli(
        "score", "--generations", str(generations), "--benchmark", "aime24", "--out", str(tmp_path / "o"),
        "--data-dir", str(shared_data), check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "g.jsonl:2: item_id '999' is not in aime24" in done.stderr.replace("\n", "")
