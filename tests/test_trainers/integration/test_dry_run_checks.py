"""`harness train --dry-run`'s checks: a config meant for a GPU on a machine without one is named as such
(with what TRL would do here instead), vLLM's absence where the config uses it, and the dataset read as
training reads it: missing (with the command that makes DAPO-Math-17K's file) or there, with its rows."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from helpers import REPO, run_cli

from trainers.config import load_config
from trainers.integration.preflight import _gpu, checks, gpu_settings

PAPER = REPO / "configs/train/spae.yaml"
CPU = REPO / "configs/train/spae-cpu.yaml"

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="checks what a machine without a GPU says")


def config(path, **overrides):
    return load_config(path, {"model": "m", **overrides}, dry_run=True)


@pytest.mark.slow  # seconds each: `tox -e unit` leaves it to the full tier
def test_a_gpu_config_here_says_so_and_the_missing_dataset_says_how_to_fetch_it(tmp_path):
    done = run_cli("train", "spae", "--dry-run", "--config", str(PAPER), "--model", "m", cwd=tmp_path)
    found = json.loads(done.stdout)["checks"]
    assert found["gpu"].startswith(
        "problem: this config is meant for a GPU (use_vllm: true (vllm_mode: colocate)"
    )
    assert "trl.vllm_gpu_memory_utilization: 0.5" in found["gpu"]
    assert "here TRL would train on the CPU (use_cpu: true, bf16: false, as printed)" in found["gpu"]
    assert found["dataset"] == (
        "problem: jsonl:data/dapo-math-17k.jsonl: no such file data/dapo-math-17k.jsonl "
        "(`harness fetch-data dapo-math-17k --to data` makes it)"
    )
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: ")]
    problems = [name for name, finding in found.items() if finding.startswith("problem")]
    assert [n.split(":")[1].strip() for n in notes] == problems and {"gpu", "dataset"} <= set(problems)


@pytest.mark.slow  # seconds each: `tox -e unit` leaves it to the full tier
def test_the_fetched_dataset_is_found_with_its_rows(tmp_path):
    raw = tmp_path / "raw" / "dapo-math-17k" / "data" / "dapo-math-17k.parquet"
    raw.parent.mkdir(parents=True)
    wrap = "Solve the following math problem step by step. The last line ...\n\n{}\n\nRemember to put ..."
    rows = [
        {"prompt": [{"content": wrap.format(f"What is {i}+1?"), "role": "user"}],
         "reward_model": {"ground_truth": str(i + 1)}, "extra_info": {"index": f"q{i}"}}
        for i in range(3)
    ]  # fmt: skip
    pq.write_table(pa.Table.from_pylist(rows), raw)
    run_cli("fetch-data", "dapo-math-17k", "--from", str(tmp_path / "raw"), "--to", "data", cwd=tmp_path)
    done = run_cli("train", "spae", "--dry-run", "--config", str(PAPER), "--model", "m", cwd=tmp_path)
    assert json.loads(done.stdout)["checks"]["dataset"] == "ok: jsonl:data/dapo-math-17k.jsonl: 3 rows"


def test_a_cpu_config_is_not_flagged():
    cpu = config(CPU)
    assert gpu_settings(cpu) == [] and checks(cpu)["gpu"].startswith("ok: a CPU config")
    assert "vllm" not in checks(cpu)  # not used: not checked
    assert checks(cpu)["dataset"].startswith("ok: jsonl:configs/train/ulorl-cpu-problems.jsonl: ")


def test_what_counts_as_meant_for_a_gpu():
    assert gpu_settings(config(CPU, trl={"bf16": True})) == ["trl.bf16: True"]
    assert gpu_settings(config(CPU, trl={"bf16": False})) == []
    assert gpu_settings(config(CPU, trl={"deepspeed": "configs/accelerate/zero3.yaml"})) == [
        "trl.deepspeed: configs/accelerate/zero3.yaml"
    ]
    paper = config(PAPER)
    assert _gpu(paper, True, 8) == "ok: 8 CUDA device(s)"  # the same config where the GPUs are
