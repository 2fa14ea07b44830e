"""`harness train azr` from the command line (docs/methods/azr.md): the CPU
config resolved, bad options refused before anything loads, and a real step on the tiny random model with
the shipped CPU config: its per-slice metrics, samples, checkpoint and method state. A random model never
writes a valid proposal, so every proposer reward is -1, the solvers answer the zero triplet filled up
from the buffers, and the loop must survive that."""

from __future__ import annotations

import json
import math

import pytest
import torch
from helpers import REPO
from safetensors.torch import load_file
from trainer_helpers import invoke

from harness import HarnessError
from harness.sandbox import isolated
from trainers.config import load_config
from trainers.integration.callbacks import read_jsonl
from trainers.integration.checkpoints import read_method_state
from trainers.methods.azr.method import AzrMethod

CONFIG = REPO / "configs/train/azr-cpu.yaml"
TASKS = ("deduction", "abduction", "induction")


def test_dry_run_prints_the_resolved_options(tmp_path):
    result = invoke("train", "azr", "--dry-run", "--config", CONFIG, "--model", "m", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    setup = json.loads(result.stdout[result.stdout.index("{") :])
    options = setup["options"]
    # the config's values, and the paper's defaults for what it leaves out
    assert (options["references"], options["mc_samples"], options["num_inputs"]) == (6, 4, 4)
    assert (options["template"], options["timeout"], options["max_prompt_tokens"]) == ("chat", 5.0, 2048)
    assert (options["propose_max_tokens"], options["solve_max_tokens"]) == (192, 96)
    assert (options["reward_rule"], options["advantages"], options["solver_lag"]) == (
        "paper",
        "sequence",
        0,
    )
    assert options["max_programs"] == 16384 and options["reject_multiple_functions"] is True
    assert options["accept_none"] is False and options["solver_batch"] == "paper"
    # B = 2 prompts per slice: 6 proposals + 6 answers a step, TRL's sampler groups of 2
    assert setup["trl"]["per_device_train_batch_size"] == 12 and setup["trl"]["num_generations"] == 2
    assert (setup["trl"]["loss_type"], setup["trl"]["beta"], setup["trl"]["learning_rate"]) == (
        "grpo",
        0.0,
        1e-6,
    )
    assert setup["config"]["dataset"] == "library"  # the CPU config's seed; the paper's is `identity`
    assert setup["config"]["cold_start"] == {"examples": 12, "epochs": 2, "learning_rate": 1e-4}
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--set", "options.refs=2"], r"unknown Absolute Zero options \['refs'\]"),
        (["--set", "options.template=raw"], "options.template must be one of r1, chat, got 'raw'"),
        (["--set", "options.mc_samples=0"], "options.mc_samples must be at least 1, got 0"),
        (["--prompts-per-step", "1"], "TRR\\+\\+ \\(Eq. 8\\) gives a lone row advantage 0"),
        (["--set", "options.solver_lag=2"], "options.solver_lag must be at least 0 and at most 1, got 2"),
        (
            ["--dataset", "missing-seeds.jsonl"],
            "Absolute Zero seeds from `dataset: identity`, `dataset: library` or a JSONL",
        ),
    ],
)
def test_bad_options_are_refused_before_anything_loads(tmp_path, extra, message):
    out = tmp_path / "o"
    with pytest.raises(HarnessError, match=message):
        invoke("train", "azr", "--config", CONFIG, "--model", tmp_path / "no-model", "--out", out, *extra)
    assert not out.exists()


def test_one_row_per_trr_slice_is_refused_on_one_process_and_allowed_on_two():
    """TRR++ whitens each (task, role) slice over every process's rows: B = 1 on two processes is 2 rows."""
    config = load_config(CONFIG, {"model": "m", "out": "o", "prompts_per_step": 1})
    with pytest.raises(HarnessError, match="lone row advantage 0"):
        AzrMethod.check_batch(config, processes=1)
    AzrMethod.check_batch(config, processes=2)
    AzrMethod.check_batch(load_config(CONFIG, {"model": "m", "out": "o"}), processes=1)  # B = 2


@pytest.mark.skipif(not isolated(), reason="bubblewrap isolation unavailable: AZR runs proposals in it")
def test_train_azr_on_the_tiny_model_with_the_cpu_config(plain_model, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    result = invoke(
        "train", "azr", "--model", plain_model, "--config", "configs/train/azr-cpu.yaml", "--out", out,
        "--max-steps", "1", "--save-steps", "1",
        "--set", "options.propose_max_tokens=16", "--set", "options.solve_max_tokens=8",
        "--set", "options.mc_samples=2",
        "--dataset", "identity", "--set", "cold_start=null",  # the paper's seed, no cold start
    )  # fmt: skip
    assert result.exit_code == 0, result.output  # the loop survives a step of invalid proposals
    (step,) = [r for r in read_jsonl(out / "metrics.jsonl") if "loss" in r]
    assert step["step"] == 1 and math.isfinite(step["loss"]) and math.isfinite(step["grad_norm"])
    assert math.isfinite(step["advantages/abs_mean"])
    assert step["rewards/propose/mean"] == -1.0  # no valid proposal: every proposer gets -1
    assert "rewards/solve/mean" in step
    for task in TASKS:
        for key in ("reward", "length", "valid_rate", "trivial_rate", "solved_rate"):
            assert f"azr/{task}/propose/{key}" in step, (task, key)
        assert step[f"azr/{task}/propose/valid_rate"] == 0.0
    # the solvers answer the zero triplet, filled up from D_ded and D_abd; D_ind is still empty, so the
    # induction solve slice has no row this step (and no metric)
    for task in ("deduction", "abduction"):
        for key in ("reward", "length", "accuracy"):
            assert f"azr/{task}/solve/{key}" in step, (task, key)
    assert not any(k.startswith("azr/induction/solve/") for k in step)
    # the buffers keep their seed: D_ded = D_abd = {identity}, D_ind empty
    assert [step[f"azr/buffer/{task}"] for task in TASKS] == [1.0, 1.0, 0.0]
    for key in ("azr/safety/flagged", "azr/executor/calls", "azr/seconds/generate", "azr/seconds/validate"):
        assert key in step, key
    # 6 proposals + 4 answers for the 12 rows of a step (B = 2): two padded rows
    assert step["batch/padded_rows"] == 2.0

    samples = read_jsonl(out / "samples.jsonl")
    assert [r["step"] for r in samples] == [1] * 10
    proposals = [r for r in samples if r["role"] == "propose"]
    assert [r["task"] for r in proposals] == ["abduction"] * 2 + ["deduction"] * 2 + ["induction"] * 2
    assert all(not r["valid"] and r["reason"] and r["reward"] == -1.0 for r in proposals)
    assert all(r["task_made"] is None and r["successes"] is None for r in proposals)
    answers = [r for r in samples if r["role"] == "solve"]
    assert (
        sorted((r["task"], r["source"]["program"]) for r in answers)
        == [
            ("abduction", "def f(a):\n    return a"),
        ]
        * 2
        + [("deduction", "def f(a):\n    return a")] * 2
    )

    checkpoint = out / "checkpoint-1"
    assert (checkpoint / "model.safetensors").is_file()
    # one optimizer step happened: every advantage is 0, but the entropy bonus (0.001) moves the weights
    before, after = load_file(plain_model / "model.safetensors"), load_file(checkpoint / "model.safetensors")
    assert set(before) == set(after) and any(not torch.equal(before[k], after[k]) for k in before)
    state = read_method_state(checkpoint, 0)
    assert set(state) == {"buffers", "rng", "answers"}
    sizes = {task: len(rows) for task, rows in state["buffers"]["buffers"].items()}
    assert sizes == {"deduction": 1, "abduction": 1, "induction": 0}
