"""`harness train`: configuration, the run folder, evaluations, the trajectory plot, resume, scale-out."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch
from helpers import REPO, run_cli
from safetensors.torch import load_file
from trainer_helpers import invoke, runner

from benchmarks.arithmetic import arithmetic_rows, write_jsonl
from harness import HarnessError
from harness.cli import app
from trainers.config import DRY_RUN_OUT, load_config, parse_set
from trainers.integration import callbacks
from trainers.integration.callbacks import read_jsonl

# --- configuration --------------------------------------------------------------------------------


def test_cli_values_override_the_yaml_file_which_overrides_defaults(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("learning_rate: 1.0e-5\nmax_steps: 7\ntrl:\n  epsilon_high: 0.28\n")
    cfg = load_config(
        config,
        {"method": "grpo", "model": "m", "dataset": "d", "out": "o", "max_steps": 9, "seed": None}
        | parse_set(["trl.warmup_ratio=0.1", "eval_benchmarks=aime24,amc23"]),
    )
    assert (cfg.learning_rate, cfg.max_steps, cfg.seed) == (1e-5, 9, 0)
    assert cfg.trl == {"epsilon_high": 0.28, "warmup_ratio": 0.1}
    assert cfg.eval_benchmarks == ("aime24", "amc23")


def test_a_learning_rate_written_1e_4_is_a_number():
    cfg = load_config(
        None, {"method": "grpo", "model": "m", "dataset": "d", "out": "o"} | parse_set(["learning_rate=1e-4"])
    )
    assert cfg.learning_rate == 1e-4


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"learning_rat": 1.0}, "unknown config keys \\['learning_rat'\\]"),
        ({"trl": {"beta": 0.1}}, "as top-level keys, not under `trl:`"),
        ({"eval_every": 5, "save_steps": 2, "eval_benchmarks": "aime24"}, "multiple of save_steps"),
        ({"eval_every": 4}, "needs --eval-benchmarks"),
    ],
)
def test_bad_configs_are_refused_with_a_clear_message(values, message):
    with pytest.raises(HarnessError, match=message):
        load_config(None, {"method": "grpo", "model": "m", "dataset": "d", "out": "o", **values})


def test_help_lists_every_method_and_an_unknown_one_is_named_with_the_valid_ones():
    from trainers.methods import METHODS
    from trainers.names import method_names

    assert method_names() == tuple(METHODS) == ("arena", "azr", "grpo", "spae", "spell", "ulorl")
    help_text = " ".join(invoke("train", "--help").output.split())
    assert "Method: arena, azr, grpo, spae, spell, ulorl." in help_text
    done = run_cli("train", "foo", check=False)  # no --model, --dataset, --out: the method is named first
    assert done.returncode == 2
    assert done.stderr == "error: unknown method 'foo'; valid methods: arena, azr, grpo, spae, spell, ulorl\n"
    with pytest.raises(HarnessError, match="unknown method 'grpo2'"):  # a config file's method too
        load_config(None, {"method": "grpo2", "model": "m", "dataset": "d", "out": "o"})


@pytest.mark.slow  # seconds each: `tox -e unit` leaves it to the full tier
@pytest.mark.parametrize("method", ["spell", "azr", "arena", "ulorl", "spae"])
def test_dry_run_of_a_paper_config_needs_no_out_and_writes_nothing(method, tmp_path):
    """methods.md's `harness train NAME --dry-run --config configs/train/NAME.yaml`, as written."""
    before = set(tmp_path.iterdir())
    done = run_cli("train", method, "--dry-run", "--config", str(REPO / "configs/train" / f"{method}.yaml"),
                   cwd=tmp_path)  # fmt: skip
    described = json.loads(done.stdout[done.stdout.index("{") :])
    assert described["config"]["method"] == method and described["config"]["out"] == DRY_RUN_OUT
    assert set(tmp_path.iterdir()) == before
    with pytest.raises(HarnessError, match="missing \\['out'\\]"):  # a real run still needs one
        load_config(REPO / "configs/train" / f"{method}.yaml", {})


def test_missing_required_keys_and_bad_set_pairs_are_named():
    with pytest.raises(HarnessError, match="missing \\['model', 'dataset'\\]"):
        load_config(None, {"method": "grpo", "out": "o"})
    with pytest.raises(HarnessError, match="KEY=VALUE"):
        parse_set(["max_steps"])


# --- scale-out: accelerate, DeepSpeed and vLLM configurations, checked without GPUs ---------------------


@pytest.mark.parametrize(
    ("name", "kind", "stage"),
    [("ddp", "MULTI_GPU", None), ("zero2", "DEEPSPEED", 2), ("zero3", "DEEPSPEED", 3)],
)
def test_accelerate_configs_load_as_accelerate_reads_them(name, kind, stage):
    from accelerate.commands.config.config_args import load_config_from_file

    config = load_config_from_file(str(REPO / "configs" / "accelerate" / f"{name}.yaml"))
    assert config.distributed_type.name == kind
    assert config.mixed_precision == "bf16"
    assert config.deepspeed_config.get("zero_stage") == stage
    if stage == 3:  # checkpoints must be whole model folders for `harness eval`
        assert config.deepspeed_config["zero3_save_16bit_model"] is True


@pytest.mark.parametrize(
    ("name", "mode"), [("grpo-vllm-colocate", "colocate"), ("grpo-vllm-server", "server")]
)
def test_dry_run_resolves_the_vllm_modes_into_trl_arguments(name, mode, tmp_path):
    result = invoke(
        "train",
        "grpo",
        "--model",
        "some/model",
        "--dataset",
        "aime24",
        "--out",
        tmp_path / "run",
        "--config",
        REPO / "configs" / "train" / f"{name}.yaml",
        "--dry-run",
    )
    assert result.exit_code == 0, result.output
    described = json.loads(result.stdout)  # the notes after it go to stderr
    assert described["trl"]["use_vllm"] is True and described["trl"]["vllm_mode"] == mode
    assert described["trl"]["per_device_train_batch_size"] == 32  # 4 prompts x 8 samples
    assert not (tmp_path / "run").exists()  # a dry run writes nothing


# --- a whole run: train, evaluate, plot, resume ---------------------------------------------------------


@pytest.mark.slow
def test_train_evaluates_checkpoints_plots_and_resumes_exactly(plain_model, tmp_path):
    train_file = write_jsonl(tmp_path / "train.jsonl", arithmetic_rows(64, seed=1))
    eval_file = write_jsonl(tmp_path / "sums.jsonl", arithmetic_rows(8, seed=0))
    out = tmp_path / "run"
    command = [
        "train", "grpo", "--model", plain_model, "--dataset", train_file, "--out", out,
        "--max-steps", "4", "--save-steps", "2", "--eval-every", "2",
        "--eval-benchmarks", f"jsonl:{eval_file}", "--num-generations", "4", "--prompts-per-step", "2",
        "--learning-rate", "0.01", "--max-completion-length", "6",
        "--set", "eval_n=2", "--set", "eval_temperature=1.0",
    ]  # fmt: skip
    assert invoke(*command).exit_code == 0

    # checkpoints are model folders with the method's state; metrics one line per step; TensorBoard
    for step in (2, 4):
        assert {"model.safetensors", "config.json", "tokenizer.json", "method_state.json"} <= {
            p.name for p in (out / f"checkpoint-{step}").iterdir()
        }
    metrics = read_jsonl(out / "metrics.jsonl")
    assert [m["step"] for m in metrics if "reward" in m] == [1, 2, 3, 4]
    assert list((out / "tensorboard").glob("events.out.tfevents.*"))
    # evaluations of the initial model and each checkpoint, with harness's own run folders
    evaluated = {m["step"]: m["eval"] for m in metrics if "eval" in m}
    assert sorted(evaluated) == [0, 2, 4]
    for step in (0, 2, 4):
        run = out / "evals" / f"step-{step}"
        results = json.loads((run / "results.json").read_text())
        assert results == evaluated[step] and results["sums"]["n_samples"] == 8 * 2
        model = json.loads((run / "run.json").read_text())["config"]["model"]
        assert model == (str(plain_model) if step == 0 else str(out / f"checkpoint-{step}"))
    # the trajectory plot reads the training folder's evaluations
    plot = invoke("plot", "trajectory", out, "--out", tmp_path / "trajectory")
    assert plot.exit_code == 0, plot.output
    assert (tmp_path / "trajectory.png").stat().st_size > 0

    # resume: lose the last checkpoint, run the same command again, get the same weights and metrics
    final = load_file(out / "checkpoint-4" / "model.safetensors")
    shutil.rmtree(out / "checkpoint-4")
    shutil.rmtree(out / "evals" / "step-4")
    assert invoke(*command).exit_code == 0
    resumed = load_file(out / "checkpoint-4" / "model.safetensors")
    for key, value in final.items():
        assert torch.equal(value, resumed[key]), key
    again = read_jsonl(out / "metrics.jsonl")
    assert [m["step"] for m in again if "reward" in m] == [1, 2, 3, 4]
    assert [m["reward"] for m in again if "reward" in m] == [m["reward"] for m in metrics if "reward" in m]
    assert sorted(m["step"] for m in again if "eval" in m) == [0, 2, 4]

    # a different configuration on the same folder is refused, naming what changed
    refused = runner.invoke(app, [str(a) for a in command[:-1]] + ["eval_temperature=0.5"])
    assert refused.exit_code != 0
    assert "eval_temperature" in str(refused.exception or refused.output)


def test_train_prints_step_lines_and_a_card_naming_the_local_model(plain_model, tmp_path, capfd):
    train_file = write_jsonl(tmp_path / "train.jsonl", arithmetic_rows(16, seed=1))
    out = tmp_path / "run"
    result = invoke(
        "train", "grpo", "--model", plain_model, "--dataset", train_file, "--out", out,
        "--max-steps", "2", "--save-steps", "2", "--num-generations", "2", "--prompts-per-step", "2",
        "--max-completion-length", "4",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    printed = result.output + "".join(capfd.readouterr())
    assert "step 2/2: reward" in printed and "{'loss'" not in printed and "FutureWarning" not in printed
    card = (out / "README.md").read_text()
    assert f"Fine-tuned from the local model `{plain_model}`" in card and "[None]" not in card


@pytest.mark.parametrize(
    ("logs", "line"),
    [
        (
            {"reward": 0.5, "frac_reward_zero_std": 0.25, "completions/mean_length": 12.0},
            "step 2/4: reward 0.500, groups without spread 25%, completion tokens 12.0, 3.0 s/step, ETA 6s",
        ),
        (
            {"reward": -0.25, "completions/mean_length": 66.3},
            "step 2/4: reward -0.250, completion tokens 66.3, 3.0 s/step, ETA 6s",
        ),
    ],
)
def test_the_step_line_names_only_what_the_method_logged(logs, line, monkeypatch, capsys):
    """AZR logs no groups' spread: its line leaves it out rather than print `nan%`."""
    monkeypatch.setattr(callbacks.time, "monotonic", lambda: 106.0)
    step_line = callbacks.StepLineCallback(every=1)
    step_line.started, step_line.first_step, step_line.said_at = 100.0, 0, 100.0
    state = SimpleNamespace(global_step=2, max_steps=4, is_world_process_zero=True)
    step_line.on_log(None, state, None, logs=logs)
    assert capsys.readouterr().out == line + "\n"


@pytest.mark.slow
def test_two_processes_train_and_one_reports(plain_model, tmp_path):
    """Under torchrun (or accelerate launch) every process trains; "trained: OUT" is printed once."""
    train_file = write_jsonl(tmp_path / "train.jsonl", arithmetic_rows(16, seed=1))
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "-m", "harness", "train",
         "grpo", "--model", str(plain_model), "--dataset", str(train_file), "--out", str(out), "--max-steps",
         "1", "--save-steps", "1", "--num-generations", "2", "--prompts-per-step", "2",
         "--max-completion-length", "4"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout + done.stderr  # the console writes to stderr
    assert printed.count("trained: ") == 1 and f"trained: {out}\n" in printed
    assert (out / "checkpoint-1" / "method_state-rank1.json").is_file()  # the second process trained too


@pytest.mark.parametrize("method", ["grpo", "ulorl", "azr"])
def test_the_trl_fields_the_trainer_owns_are_the_ones_trl_may_not_set(method):
    """`trl:` refuses exactly the GRPOConfig fields the trainer sets from the config, for every method."""
    from trainers.config import OWNED_TRL_FIELDS
    from trainers.integration.run import owned_trl_settings

    config = load_config(None, {"method": method, "model": "m", "dataset": "aime24", "out": "o"})
    assert set(owned_trl_settings(config)) == OWNED_TRL_FIELDS
    # and each is a field of the installed TRL's GRPOConfig, which builds them (a renamed one would fail)
    import dataclasses

    from trl import GRPOConfig

    assert OWNED_TRL_FIELDS <= {f.name for f in dataclasses.fields(GRPOConfig)}


def test_a_reward_that_runs_programs_records_its_sandbox():
    """Any `sandboxed` scorer as the reward (code, Absolute Zero's deduction check) is refused where the
    sandbox is not and recorded where it is, before anything loads; other rewards record nothing."""
    from harness.sandbox import facts
    from trainers.integration.run import code_sandbox

    assert code_sandbox("code") == code_sandbox("azr_deduction") == {"sandbox": facts()}
    assert code_sandbox("math") == code_sandbox("cem+judge") == code_sandbox(None) == {}
