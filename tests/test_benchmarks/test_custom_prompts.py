"""A custom `jsonl:` benchmark's default prompt asks for the answer in the form its scorer reads."""

from __future__ import annotations

import json

import pytest

from harness.backends import EngineConfig
from harness.config import EvalConfig, ScoringConfig
from harness.scoring import get_scorer
from harness.scoring.rules import gold_text
from harness.stages.plan import plan

BOXED = "\\boxed{}"


def user_prompt(tmp_path, scorer: str, template: str | None = None) -> str:
    """The user message `harness eval --benchmarks jsonl:FILE --scorer SCORER` sends for one item."""
    data = tmp_path / "custom.jsonl"
    data.write_text(
        json.dumps({"id": "a", "problem": "What is the capital of France?", "answer": "B"}) + "\n"
    )
    cfg = EvalConfig(
        benchmarks=(f"jsonl:{data}",),
        engine=EngineConfig("m"),
        scoring=ScoringConfig(scorer=scorer),
        prompt_template=template,
    )
    (request, *_) = plan(cfg).requests
    return request.messages[-1]["content"]


@pytest.mark.parametrize("scorer", ["cem", "integer", "choice"])
def test_text_scorers_do_not_get_the_math_prompt(tmp_path, scorer):
    prompt = user_prompt(tmp_path, scorer)
    assert prompt.startswith("What is the capital of France?\n\n")
    assert "put your final answer within" not in prompt


@pytest.mark.parametrize(
    ("scorer", "instruction", "following_it", "gold"),
    [
        ("math", f"put your final answer within {BOXED}", "so \\boxed{9}", "9"),
        ("cem", '"The correct answer is (insert answer here)."', "The correct answer is Paris.", "Paris"),
        ("integer", "end your answer with the final number", "First 4, then 4 + 5 = 9", "9"),
        ("choice", f"put the letter of your final answer within {BOXED}", "\\boxed{B}", "B"),
        ("numeric", f"put your final answer within {BOXED}", "\\boxed{2.5}", "2.5"),
    ],
)
def test_each_default_prompt_asks_for_what_its_scorer_reads(
    tmp_path, scorer, instruction, following_it, gold
):
    assert instruction in user_prompt(tmp_path, scorer)
    scorer_ = get_scorer(scorer)
    try:
        ((_, score),) = scorer_.score([following_it], [gold_text(gold, "q")])
    finally:
        scorer_.close()
    assert score.value == 1.0, score


def test_judged_scorers_get_the_prompt_of_their_rule(tmp_path):
    from benchmarks import get_benchmark

    data = tmp_path / "j.jsonl"
    data.write_text(json.dumps({"id": "a", "problem": "p", "answer": "x"}) + "\n")
    prompts = {
        s: get_benchmark(f"jsonl:{data}", s).prompt for s in ("cem", "cem+judge", "judge", "choice+judge")
    }
    assert prompts["cem+judge"] == prompts["judge"] == prompts["cem"]
    assert "letter" in prompts["choice+judge"] and "The correct answer is" in prompts["cem"]


def test_a_prompt_template_still_wins(tmp_path):
    assert user_prompt(tmp_path, "cem", "Q: {problem}") == "Q: What is the capital of France?"
