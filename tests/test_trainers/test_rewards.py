"""Training rewards are the harness's own scorers: math, code in the sandbox, CEM with the judge."""

from __future__ import annotations

import json
from pathlib import Path

from fake_openai import FakeOpenAI

from harness.scoring.judge import JudgeConfig
from harness.scoring.rules import gold_text
from trainers.rewards import ScorerReward


def test_math_reward_splits_thinking_like_evaluation():
    reward = ScorerReward("math")
    texts = ["<think>2+2</think> \\boxed{4}", "reasoning without an end \\boxed{4}", "\\boxed{5}", "4"]
    assert reward(texts, ["4"] * 4, [True, True, False, False]) == [1.0, 0.0, 0.0, 1.0]
    assert reward.version.startswith("math-")


def test_code_reward_runs_the_tests_in_the_sandbox():
    gold = json.dumps({"kind": "tests", "tests": "assert add(2, 3) == 5", "entry_point": None, "prelude": ""})
    right = "```python\ndef add(a, b):\n    return a + b\n```"
    wrong = "```python\ndef add(a, b):\n    return a - b\n```"
    hostile = "```python\nimport os\nos.system('touch /tmp/owned')\ndef add(a, b):\n    return a + b\n```"
    reward = ScorerReward("code", timeout=10)
    assert reward([right, wrong, hostile], [gold] * 3, [False] * 3)[:2] == [1.0, 0.0]
    assert not Path("/tmp/owned").exists()


def test_judged_reward_asks_the_judge_only_where_the_rule_fails():
    def judge(body, count):
        yes = "Lyon" in body["messages"][0]["content"].split("Predicted Answer:")[1]
        content = "Decision: [[YES]]" if yes else "Decision: [[NO]]"
        return 200, {"choices": [{"message": {"content": content}, "finish_reason": "stop"}], "usage": {}}, {}

    gold = gold_text(["Paris"], "Capital of France?")
    with FakeOpenAI(judge) as fake:
        reward = ScorerReward(
            "cem+judge", judge=JudgeConfig.from_settings({"model": "fake/model", "base_url": fake.base_url})
        )
        texts = ["The answer is Paris.", "The answer is Lyon.", "The answer is Nice."]
        assert reward(texts, [gold] * 3, [False] * 3) == [1.0, 1.0, 0.0]
    assert len(fake.bodies) == 2  # Paris matched the rule without a call
