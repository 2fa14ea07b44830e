"""`harness train spell` from the command line: the paper's setup resolved, a real run on the tiny model
with the shipped CPU config and corpus, its role metrics, checkpoint and method state."""

from __future__ import annotations

import json

import pytest
from helpers import REPO
from trainer_helpers import invoke

from harness import HarnessError
from trainers.integration.callbacks import read_jsonl
from trainers.integration.checkpoints import read_method_state


def test_dry_run_prints_the_papers_setup(tmp_path):
    result = invoke(
        "train", "spell", "--dry-run", "--config", REPO / "configs/train/spell.yaml", "--out", tmp_path / "o"
    )
    assert result.exit_code == 0, result.output
    setup = json.loads(result.stdout)
    assert setup["options"]["documents_per_question"] == 5 and setup["options"]["memory_size"] == 3
    assert setup["options"]["verifier_samples"] == 8 and setup["options"]["sigma"] == 0.5 / 3
    assert setup["options"]["vote"] == "strict" and setup["options"]["questioner_baseline"] == "batch"
    # 16 questions per process: 16 * 8 answers + 16 + 16 questioner rows + 8 * 2 judgments
    assert setup["trl"]["per_device_train_batch_size"] == 176
    assert (setup["trl"]["loss_type"], setup["trl"]["beta"], setup["trl"]["learning_rate"]) == (
        "dapo",
        0.0,
        2e-6,
    )


def test_unknown_options_are_refused_before_anything_loads(tmp_path):
    config = REPO / "configs/train/spell-cpu.yaml"
    with pytest.raises(HarnessError, match=r"unknown SPELL options \['memory'\]"):
        invoke("train", "spell", "--config", config, "--model", "m", "--out", tmp_path / "o",
               "--set", "options.memory=2")  # fmt: skip
    with pytest.raises(HarnessError, match="method 'grpo' has no options"):
        invoke("train", "grpo", "--model", "m", "--dataset", "aime24", "--out", tmp_path / "g",
               "--set", "options.memory_size=2")  # fmt: skip
    assert not (tmp_path / "o").exists() and not (tmp_path / "g").exists()


def test_train_spell_on_the_tiny_model_with_the_cpu_config(plain_model, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # the config names its corpus relative to the repository, as the README runs it
    out = tmp_path / "run"
    result = invoke(
        "train", "spell", "--model", plain_model, "--config", "configs/train/spell-cpu.yaml", "--out", out,
        "--max-steps", "1", "--save-steps", "1",
        "--set", "options.questioner_max_tokens=24", "--set", "options.questions_per_round=2",
        "--set", "cold_start=null",  # the method alone (test_cold_start.py runs the cold start)
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "cold_start" not in json.loads((out / "train.json").read_text())
    (step,) = [r for r in read_jsonl(out / "metrics.jsonl") if "loss" in r]
    for key in (
        "rewards/questioner/mean",
        "spell/questioner/format_error_rate",
        "spell/questioner/ungrounded_rate",
        "spell/questioner/reward_all",
        "spell/responder/mean_mixed",
        "spell/verifier/rule_disagreement",
        "spell/memory/size",
        "spell/refill_rounds",
        "spell/batch/responder_groups",
        "spell/batch/questioner_negatives",
        "spell/seconds/questioner",
    ):
        assert key in step, key
    assert step["spell/questions"] == 2 and step["spell/refill_rounds"] == 1
    # a random model writes no JSON: both questions are format errors, and nothing survives to train
    assert step["spell/questioner/format_error_rate"] == 1.0 and step["spell/questioner/reward_all"] == -1.0
    # both questions readable in samples.jsonl: the config's prefill opens each proposal
    samples = read_jsonl(out / "samples.jsonl")
    assert [r["step"] for r in samples] == [1, 1]
    assert all(r["proposal"].startswith('```json\n{"question": "') for r in samples)
    assert all(r["parsed"]["rejected"] == "format" and r["reward"] == -1.0 for r in samples)
    state = read_method_state(out / "checkpoint-1", 0)
    assert set(state) == {"memory", "rng"} and state["memory"]["size"] == 3
    assert (out / "checkpoint-1" / "model.safetensors").is_file()
