"""`harness train arena` from the command line (docs/methods/arena.md): both configs resolved, bad
options refused before anything loads, and a real step of the shipped CPU config on the tiny random model,
the policy judging itself. The random model hardly ever answers a sum, so most groups are all incorrect and
go to the live tournament: 18 calls each at N = 8."""

from __future__ import annotations

import math

import pytest
from helpers import REPO
from trainer_helpers import dry_run, invoke

from harness import HarnessError
from trainers.integration.callbacks import read_jsonl
from trainers.integration.checkpoints import read_method_state

CPU = REPO / "configs/train/arena-cpu.yaml"
PAPER = REPO / "configs/train/arena.yaml"


def test_dry_run_prints_the_paper_setup(tmp_path):
    setup = dry_run("arena", PAPER, tmp_path)
    options, trl = setup["options"], setup["trl"]
    assert (options["route"], options["tournament"], options["rating"]) == ("zero_variance", "live", "auto")
    assert (options["gamma"], options["anchors"], options["l2"], options["eps"]) == (1.0, 3, 0.5, 1e-6)
    assert (options["arrival"], options["ties"], options["normalise"]) == ("length", "wins", "group")
    assert options["judge_context"] == 32768 and options["judge"] == "served: deepseek-ai/DeepSeek-Math-V2"
    # 15 prompts x N = 8 per process; CISPO with the IS weight capped at 3
    assert (trl["per_device_train_batch_size"], trl["num_generations"]) == (120, 8)
    assert (trl["loss_type"], trl["beta"], trl["learning_rate"]) == ("cispo", 0.0, 4e-7)
    assert setup["config"]["trl"]["epsilon_high"] == 3.0


def test_dry_run_of_the_cpu_config_and_a_baseline(tmp_path):
    options = dry_run("arena", CPU, tmp_path)["options"]
    assert options["judge"] == "the policy" and options["judge_prefill"].endswith("\\boxed{")
    rlvr = dry_run("arena", CPU, tmp_path, "--set", "options.route=none", "--set", "options.refill=true")[
        "options"
    ]
    assert (rlvr["route"], rlvr["refill"]) == ("none", True)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--set", "options.anchor=2"], r"unknown Reasoning Arena options \['anchor'\]"),
        (
            ["--set", "options.tournament=swiss"],
            "options.tournament must be one of live, round_robin, pointwise",
        ),
        (["--set", "options.anchors=4"], "options.anchors must be at least 1 and at most 3, got 4"),
        (["--set", "options.gamma=0.5"], "options.gamma must be"),
        (["--set", "options.refill=true"], "options.refill drops the groups routing would judge"),
        (["--set", "options.tournament=pointwise", "--set", "options.rating=bt"], "options.rating applies"),
        (["--set", "loss_type=grpo"], "options.normalise: group is for cispo or dapo"),
        (["--set", "options.retry_temperature=0.5"], r"options \['retry_temperature'\] need a served judge"),
        (
            ["--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1", "--judge-repeats", "3"],
            r"judge: \[.repeats.\] are the YES/NO judge's settings",
        ),
    ],
)
def test_bad_options_are_refused_before_anything_loads(tmp_path, extra, message):
    out = tmp_path / "o"
    with pytest.raises(HarnessError, match=message):
        invoke("train", "arena", "--config", CPU, "--model", tmp_path / "no-model", "--out", out, *extra)
    assert not out.exists()


def test_train_arena_on_the_tiny_model_with_the_cpu_config(plain_model, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    result = invoke(
        "train", "arena", "--model", plain_model, "--config", "configs/train/arena-cpu.yaml", "--out", out,
        "--max-steps", "1", "--save-steps", "1", "--set", "max_completion_length=8",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (step,) = [r for r in read_jsonl(out / "metrics.jsonl") if "loss" in r]
    assert step["step"] == 1 and math.isfinite(step["loss"]) and math.isfinite(step["grad_norm"])
    assert step["arena/generations"] == 32
    samples = read_jsonl(out / "samples.jsonl")
    routed = [s for s in samples if "group" in s]  # every routed group (at most 4 are logged)
    assert routed and all(g["calls"] == 18 and len(g["responses"]) == 8 for g in routed)
    assert all(g["route"] == "all_incorrect" and g["verifier"] == [0.0] * 8 for g in routed)  # no sum right
    assert step["arena/routed_fraction"] == step["arena/routed/all_incorrect"] == len(routed) / 4
    assert step["arena/judge/calls"] == 18 * len(routed) and step["arena/judge/calls_per_routed_group"] == 18
    assert step["arena/judge/requests"] == step["arena/judge/calls"] + step["arena/judge/retries"]
    assert 0 <= step["arena/nonzero_advantage"] <= 1 and "arena/seconds/judge" in step
    replies = [r for s in samples for r in s.get("judge_replies", [])]
    assert replies and all(r["raw"].startswith("The better response is \\boxed{") for r in replies)
    state = read_method_state(out / "checkpoint-1", 0)
    assert set(state) == {"rng", "judge"} and set(state["judge"]) == {"rng", "cache"}
