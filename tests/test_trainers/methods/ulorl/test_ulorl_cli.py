"""`harness train ulorl` from the command line (docs/methods/ulorl.md): both configs resolved, bad settings
refused before anything loads, and real steps of the shipped CPU config on the tiny random model, whose
samples span two steps, resumed exactly from a checkpoint taken while samples were still decoding."""

from __future__ import annotations

import math
import shutil

import pytest
import torch
from helpers import REPO
from safetensors.torch import load_file
from trainer_helpers import dry_run, invoke

from harness import HarnessError
from trainers.integration.callbacks import read_jsonl
from trainers.integration.checkpoints import read_method_state

CPU = REPO / "configs/train/ulorl-cpu.yaml"
PAPER = REPO / "configs/train/ulorl.yaml"


def test_dry_run_prints_the_paper_setup(tmp_path):
    setup = dry_run("ulorl", PAPER, tmp_path)
    options, trl = setup["options"], setup["trl"]
    assert (options["segments"], options["segment_tokens"]) == (8, 16384)  # 128K in 8 segments of 16K
    assert (options["importance_sampling"], options["mpt_masking"]) == ("pois", "dynamic")
    assert (options["tau"], options["sigma"], options["entropy_scope"]) == (0.99, 0.2, "sample")
    assert options["dynamic_sampling"] is True
    assert (trl["per_device_train_batch_size"], trl["num_generations"]) == (128, 8)  # 16 prompts x 8
    assert (trl["loss_type"], trl["beta"], trl["learning_rate"]) == ("dapo", 0.0, 1e-6)
    config = setup["config"]
    assert config["trl"]["vllm_importance_sampling_correction"] is False
    assert config["scorer"] == "math+judge" and config["temperature"] == 0.85


def test_dry_run_of_the_cpu_config_and_the_ablations(tmp_path):
    options = dry_run("ulorl", CPU, tmp_path)["options"]
    assert (options["segments"], options["segment_tokens"], options["groups_in_flight"]) == (4, 24, 8)
    tois = dry_run("ulorl",
        CPU, tmp_path, "--set", "options.segments=1", "--set", "options.importance_sampling=tois",
        "--set", "options.groups_in_flight=4",
    )  # fmt: skip
    assert tois["options"]["segment_tokens"] == 96
    plain = dry_run("ulorl", CPU, tmp_path, "--set", "options.mpt_masking=none")["options"]
    assert plain["mpt_masking"] == "none"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--set", "options.segment=2"], r"unknown UloRL options \['segment'\]"),
        (["--set", "options.importance_sampling=tis"], "options.importance_sampling must be one of pois"),
        (["--set", "options.importance_sampling=tois"], "tois is one segment; set options.segments: 1"),
        (["--set", "options.tau=1.5"], "options.tau must be"),
        (["--set", "options.segments=5"], "96 is not a multiple of options.segments 5"),
        (["--set", "trl.num_iterations=2"], "one optimizer step per rollout step"),
        (["--set", "use_vllm=true"], "vllm_importance_sampling_correction: false"),
        (
            ["--set", "options.segments=1", "--set", "options.importance_sampling=tois"],
            "options.groups_in_flight must be at most the 4 groups a step trains",
        ),
        (["--set", "options.importance_sampling=sais", "--set", "top_p=0.95"], r"\['top_p'\] reshape"),
        (["--set", "options.importance_sampling=sais", "--set", "trl.top_k=20"], r"\['top_k'\] reshape"),
        (["--set", "trl.mask_truncated_completions=true"], "drop mask_truncated_completions"),
        (["--set", "scale_rewards=none"], "leave scale_rewards at group"),
    ],
)
def test_bad_settings_are_refused_before_anything_loads(tmp_path, extra, message):
    out = tmp_path / "o"
    with pytest.raises(HarnessError, match=message):
        invoke("train", "ulorl", "--config", CPU, "--model", tmp_path / "no-model", "--out", out, *extra)
    assert not out.exists()


def train(plain_model, out, steps: int):
    return invoke(
        "train", "ulorl", "--model", plain_model, "--config", "configs/train/ulorl-cpu.yaml", "--out", out,
        "--max-steps", str(steps), "--save-steps", "2",
        "--set", "max_completion_length=8", "--set", "options.segments=2",
        "--set", "options.dynamic_sampling=false",  # nothing is right: train the uniform groups
    )  # fmt: skip


def test_train_ulorl_on_the_tiny_model_spans_steps_and_resumes_exactly(plain_model, tmp_path, monkeypatch):
    """8 groups x 8 samples in flight, 4 trained per step, 4 tokens per segment, 8 at most. The random
    model almost never ends a sample, so step 1 trains nothing, step 2 the first 4 groups of two segments
    (versions 0 and 1) and step 3 the other 4, which waited one version."""
    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    result = train(plain_model, out, 3)
    assert result.exit_code == 0, result.output
    metrics = [r for r in read_jsonl(out / "metrics.jsonl") if "loss" in r]
    assert [m["step"] for m in metrics] == [1, 2, 3] and all(math.isfinite(m["loss"]) for m in metrics)
    assert [m["ulorl/admitted_groups"] for m in metrics] == [8, 0, 4]
    assert metrics[0]["ulorl/released_groups"] == 0 and metrics[0]["ulorl/carried_samples"] > 56
    assert "reward" not in metrics[0] and "completions/mean_length" not in metrics[0]  # idle: nothing to log
    assert "reward" in metrics[1]
    assert "ulorl/dmmpt/masked_fraction" in metrics[1] and metrics[1]["ulorl/entropy"] > 1  # random: high
    samples = [s for record in read_jsonl(out / "samples.jsonl") for s in record.get("samples", [])]
    spanning = [s for s in samples if len(s["segments"]) == 2]
    assert spanning, "trained samples were decoded over two steps"
    for s in samples:
        assert sum(s["segments"]) <= 8 and s["policy_versions"] == list(
            range(s["policy_versions"][0], s["policy_versions"][0] + len(s["segments"]))
        )
        assert s["finish_reason"] == "stop" or (s["reward"] == 0.0 and sum(s["segments"]) == 8)

    # resume from checkpoint-2, taken with half the groups complete and waiting
    state = read_method_state(out / "checkpoint-2", 0)
    assert state["admitted"] == 8 and len(state["pool"]["groups"]) == 4
    first = out.with_name("first-checkpoint-3")
    shutil.copytree(out / "checkpoint-3", first)
    shutil.rmtree(out / "checkpoint-3")
    result = train(plain_model, out, 3)
    assert result.exit_code == 0, result.output
    again, before = (
        load_file(out / "checkpoint-3" / "model.safetensors"),
        load_file(first / "model.safetensors"),
    )
    assert again.keys() == before.keys() and all(torch.equal(again[k], before[k]) for k in again)
    assert read_method_state(out / "checkpoint-3", 0) == read_method_state(first, 0)
    assert [m["loss"] for m in read_jsonl(out / "metrics.jsonl") if "loss" in m] == [
        m["loss"] for m in metrics
    ]
