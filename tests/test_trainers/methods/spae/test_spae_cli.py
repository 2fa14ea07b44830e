"""`harness train spae` from the command line (docs/methods/spae.md): both configs resolved, the baselines as
options, bad settings refused before anything loads, and real steps of the shipped CPU config on the tiny
random model with real probes, logged per step and resumed exactly from a checkpoint."""

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

CPU = REPO / "configs/train/spae-cpu.yaml"
PAPER = REPO / "configs/train/spae.yaml"


def test_dry_run_prints_the_paper_setup(tmp_path):
    setup = dry_run("spae", PAPER, tmp_path)
    options, trl, config = setup["options"], setup["trl"], setup["config"]
    assert (options["advantage"], options["alpha"], options["xi"], options["tau_sat"]) == (
        "spae",
        0.5,
        0.5,
        0.9,
    )
    assert (options["n_probe"], options["probe_max_tokens"], options["delimiter"]) == (5, 10, ".\n\n")
    assert options["probes"] is True and options["dynamic_sampling"] is True
    assert (trl["loss_type"], trl["beta"], trl["steps_per_generation"]) == ("dapo", 0.0, 20)
    # VeRL's 640 prompts in mini-batches of 32 over 8 processes: 4 x 8 rows per step, 20 steps per batch
    assert trl["per_device_train_batch_size"] == 32 and trl["num_generations"] == 8
    assert (config["trl"]["epsilon"], config["trl"]["epsilon_high"]) == (0.2, 0.28)  # clip-higher
    assert (config["temperature"], config["max_completion_length"]) == (1.0, 16384)
    assert "DeepSeek-R1-Distill-Qwen-7B" in PAPER.read_text()  # dry_run gives --model m


def test_the_baselines_and_ablations_are_options(tmp_path):
    rfb = dry_run("spae", PAPER, tmp_path, "--set", "options.advantage=rfb")["options"]
    assert rfb["advantage"] == "rfb" and rfb["probes"] is False
    dapo = dry_run("spae", PAPER, tmp_path, "--set", "options.advantage=dapo", "--set", "options.probes=true")
    assert dapo["options"]["probes"] is True
    cpu = dry_run("spae", CPU, tmp_path, "--set", "options.xi=0", "--set", "options.penalty=slow_fast")
    assert (cpu["options"]["xi"], cpu["options"]["penalty"], cpu["options"]["delimiter"]) == (
        0,
        "slow_fast",
        "\n\n",
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--set", "options.probe_every=2"], r"unknown SPAE options \['probe_every'\]"),
        (["--set", "options.advantage=ktae"], "options.advantage must be one of spae, rfb, dapo"),
        (["--set", "options.penalty=linear"], "options.penalty must be one of exp, slow_fast"),
        (["--set", "options.alpha=1.5"], "options.alpha must be"),
        (["--set", "options.probe_every_m=0"], "options.probe_every_m must be"),
        (["--set", "options.probes=false"], "built from the probes' potentials"),
        (["--set", "options.entropy_mode=topk=20"], "needs use_vllm with vllm_mode colocate"),
        (["--set", "options.entropy_mode=top20"], "unknown --entropy-mode"),
        (["--set", "trl.ds3_gather_for_generation=false"], "ds3_gather_for_generation, not FSDP"),
        (
            [
                "--set",
                "options.advantage=rfb",
                "--set",
                "options.probes=true",
                "--set",
                "trl.fsdp=full_shard",
            ],
            "not FSDP",
        ),
        (["--set", "use_vllm=true", "--set", "options.entropy_mode=topk=30"], "at most 20 log-probs"),
        (["--set", "use_vllm=true", "--set", "options.entropy_mode=topk=20"], r"after \['temperature'\]"),
        (
            [
                "--set",
                "use_vllm=true",
                "--set",
                "temperature=1",
                "--set",
                "options.entropy_mode=topk=20",
                "--set",
                "trl.vllm_enable_sleep_mode=true",
            ],
            r"\['vllm_enable_sleep_mode'\] take away",
        ),
    ],
)
def test_bad_settings_are_refused_before_anything_loads(tmp_path, extra, message):
    out = tmp_path / "o"
    with pytest.raises(HarnessError, match=message):
        invoke("train", "spae", "--config", CPU, "--model", tmp_path / "no-model", "--out", out, *extra)
    assert not out.exists()


def train(plain_model, out, steps: int, *extra: str):
    return invoke(
        "train", "spae", "--model", plain_model, "--config", "configs/train/spae-cpu.yaml", "--out", out,
        "--max-steps", str(steps), "--save-steps", "2", "--set", "max_completion_length=32",
        "--set", "options.delimiter=e",  # the random model's text ends a token with "e" now and then
        *extra,
    )  # fmt: skip


def test_train_spae_on_the_tiny_model_probes_logs_and_resumes_exactly(plain_model, tmp_path, monkeypatch):
    """Nothing the random model writes is right, so every group is uniform: dynamic sampling is off here and
    the advantage is the shaping term alone (xi g), from real probes of the policy being trained."""
    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    plain = ("--set", "options.dynamic_sampling=false")
    result = train(plain_model, out, 3, *plain)
    assert result.exit_code == 0, result.output
    metrics = [r for r in read_jsonl(out / "metrics.jsonl") if "loss" in r]
    assert [m["step"] for m in metrics] == [1, 2, 3] and all(math.isfinite(m["loss"]) for m in metrics)
    for m in metrics:
        assert m["spae/probes"] == m["spae/boundaries/found"] > 0  # every boundary, probed
        assert -1 <= m["spae/phi/mean"] <= 1 and m["spae/saturated_steps"] == 0  # random: never sure
        assert m["spae/f/mean"] == 1 and m["spae/r2w_rate"] == 0
        assert m["spae/seconds/probe"] > 0 and 0 < m["spae/share_of_step/probe"] < 1
    # the shaping term moves even all-wrong groups, once a sample has two steps whose Phi differ
    assert any(m["advantages/abs_mean"] > 0 for m in metrics)
    samples = [s for record in read_jsonl(out / "samples.jsonl") for s in record["samples"]]
    assert samples and all(len(s["phi"]) == s["n_steps"] for s in samples)

    first = out.with_name("first-checkpoint-3")
    shutil.copytree(out / "checkpoint-3", first)
    shutil.rmtree(out / "checkpoint-3")
    result = train(plain_model, out, 3, *plain)
    assert result.exit_code == 0, result.output
    again, before = (
        load_file(out / "checkpoint-3" / "model.safetensors"),
        load_file(first / "model.safetensors"),
    )
    assert again.keys() == before.keys() and all(torch.equal(again[k], before[k]) for k in again)
    resumed = [r for r in read_jsonl(out / "metrics.jsonl") if "loss" in r]
    for key in ("loss", "spae/phi/mean", "spae/probes", "advantages/abs_mean"):
        assert [m[key] for m in resumed] == [m[key] for m in metrics]


def test_with_nothing_to_learn_refills_run_and_the_step_trains_nothing(plain_model, tmp_path, monkeypatch):
    """Dynamic sampling on the random model: every group is uniform (all wrong), so each refill round
    samples again, the walk advances and is saved; nothing is probed or trained, rewards are logged."""
    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    result = train(plain_model, out, 2, "--set", "options.max_refill_rounds=2")
    assert result.exit_code == 0, result.output
    metrics = [r for r in read_jsonl(out / "metrics.jsonl") if "loss" in r]
    for m in metrics:
        assert (m["spae/refill_rounds"], m["spae/trained_groups"], m["spae/dropped_groups"]) == (2, 0, 6)
        assert m["reward"] == 0 and m["rollouts/untrainable"] == 24 and m["batch/padded_rows"] > 0
        assert "spae/phi/mean" not in m
    state = read_method_state(out / "checkpoint-2", 0)
    assert state == {"drawn": 2 * (2 + 2)}  # two rounds of two prompts per step, two steps


def test_probes_run_on_the_colocated_vllm_engine_only_where_it_can():
    """vLLM probes need TRL's engine colocated, one GPU, awake, and the top-K entropy (it returns at most
    20 log-probs a position); otherwise the transformers prober runs on the trainer's model."""
    from types import SimpleNamespace

    from trainers.integration.engines import HFEngine, VLLMEngine

    def engine(mode="colocate", tp=1, sleep=False):
        vllm = SimpleNamespace(mode=mode, tensor_parallel_size=tp, enable_sleep_mode=sleep)
        vllm.llm = SimpleNamespace(llm_engine=SimpleNamespace(model_config=SimpleNamespace(max_model_len=99)))
        made = VLLMEngine.__new__(VLLMEngine)
        made.trainer = SimpleNamespace(use_vllm=True, vllm_generation=vllm)
        return made

    assert engine().probes_on_vllm("topk=20") and engine().context_length == 99
    assert not engine().probes_on_vllm("full")
    for other in (engine(mode="server"), engine(tp=2), engine(sleep=True)):
        assert not other.probes_on_vllm("topk=20")
    assert engine(mode="server").context_length is None
    assert HFEngine.__new__(HFEngine).context_length is None  # transformers: the full entropy, no limit
