r"""Math scores under older rules are recomputed, and the score stage passes the scorer each
benchmark's questions and measured setting."""

from __future__ import annotations

import json

import pytest
from helpers import run_cli

from harness.stages.score import benchmark_options, scoring_golds


def test_an_older_math_score_is_recomputed(tmp_path, shared_data):
    generations = tmp_path / "gens.jsonl"
    generations.write_text(json.dumps({"item_id": 60, "sample_idx": 0, "text": r"so $\boxed{204}$."}) + "\n")
    run = tmp_path / "run"
    args = ["--benchmark", "aime24", "--data-dir", str(shared_data)]
    run_cli("score", "--generations", str(generations), "--out", str(run), *args)
    scores = run / "scores.jsonl"
    record = json.loads(scores.read_text())
    assert record["value"] == 1.0 and record["scorer"].startswith("math-4+")
    old = record["scorer"].replace("math-4+", "math-3+")
    scores.write_text(json.dumps({**record, "scorer": old, "value": 0.0}) + "\n")
    run_cli("score", str(run))
    again = [json.loads(line) for line in scores.read_text().splitlines()]
    assert [(r["scorer"], r["value"]) for r in again] == [(record["scorer"], 1.0)]
    assert json.loads((run / "results.json").read_text())["aime24"]["avg@1"] == 1.0


def test_a_rules_3_score_is_recomputed_by_a_resumed_eval(tmp_path, tiny_model, shared_data):
    run = tmp_path / "run"
    args = ["eval", "--benchmarks", "aime24", "--model", str(tiny_model), "--backend", "hf"]
    args += ["--n", "1", "--limit", "2", "--max-tokens", "8", "--data-dir", str(shared_data)]
    args += ["--out", str(run), "--seed", "3"]
    run_cli(*args)
    scores = run / "scores.jsonl"
    records = [json.loads(line) for line in scores.read_text().splitlines()]
    assert len(records) == 2 and all(r["scorer"].startswith("math-4+") for r in records)
    stale = [
        {**r, "scorer": r["scorer"].replace("math-4+", "math-3+"), "value": 1 - r["value"]} for r in records
    ]
    scores.write_text("".join(json.dumps(r) + "\n" for r in stale))
    run_cli(*args)  # the run is complete: the resumed eval only rescores
    again = [json.loads(line) for line in scores.read_text().splitlines()]
    assert [(r["scorer"], r["value"]) for r in again] == [(r["scorer"], r["value"]) for r in records]


def test_the_score_stage_passes_questions_and_measured():
    info = {"answers": {"aime24": {"60": "204"}}, "questions": {"aime24": {"60": "Find n."}}}
    assert json.loads(scoring_golds(info, "aime24")["60"]) == {"answers": ["204"], "question": "Find n."}
    assert scoring_golds({"answers": {"aime24": {"60": "204"}}}, "aime24") == {"60": "204"}
    assert benchmark_options("minerva") == {"measured": True}
    assert benchmark_options("aime24") == {"measured": False}
    assert benchmark_options("jsonl:mine") == {"measured": False}


@pytest.mark.parametrize(
    ("benchmark", "item", "answer", "value"),
    [("aime24", "60", "203.97", 0.0), ("minerva", "2", "41.83", 1.0)],
)
def test_score_generations_rounds_only_measured_golds(tmp_path, shared_data, benchmark, item, answer, value):
    generations = tmp_path / "gens.jsonl"
    text = f"The result is $\\boxed{{{answer}}}$."
    generations.write_text(json.dumps({"item_id": item, "sample_idx": 0, "text": text}) + "\n")
    run = tmp_path / "run"
    run_cli(
        "score",
        "--generations",
        str(generations),
        "--out",
        str(run),
        "--benchmark",
        benchmark,
        "--data-dir",
        str(shared_data),
    )
    assert json.loads((run / "scores.jsonl").read_text())["value"] == value
    info = json.loads((run / "run.json").read_text())
    assert set(info["questions"][benchmark]) == {item}
