"""`scripts/gpu_check.py`, the check run on a GPU machine, kept working by running it here on the CPU
(`--device cpu`): the tiny model, `harness eval` in bf16 on hf, and 2 bf16 steps of each method. No test
needs a GPU."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "gpu_check.py"
METHODS = ("grpo", "spell", "azr", "arena", "ulorl", "spae")


def gpu_check(tmp_path: Path, *args: str, timeout: float = 900) -> tuple[subprocess.CompletedProcess, list]:
    argv = [sys.executable, str(SCRIPT), "--out", str(tmp_path / "out"), "--work", str(tmp_path / "work")]
    result = subprocess.run([*argv, *args], capture_output=True, text=True, timeout=timeout)
    lines = [line.split(" ", 3) for line in result.stdout.splitlines() if line.startswith(("PASS ", "FAIL "))]
    return result, lines


@pytest.mark.slow
def test_every_check_passes_on_the_cpu(tmp_path):
    result, lines = gpu_check(tmp_path, "--device", "cpu")
    failed = [" ".join(line) for line in lines if line[0] == "FAIL"]
    logs = "".join(
        (tmp_path / "out" / f"{line[1]}.log").read_text()[-3000:] for line in lines if line[0] == "FAIL"
    )
    assert not failed and result.returncode == 0, "\n".join(failed) + "\n" + logs + result.stderr[-2000:]
    assert [line[1] for line in lines] == ["env", "tiny-model", "eval", *(f"train-{m}" for m in METHODS)]
    assert all(float(line[2]) >= 0 for line in lines)
    summary = (tmp_path / "out" / "summary.txt").read_text().splitlines()
    assert summary[-1] == f"gpu_check: {len(lines)} passed, 0 failed"
    assert "bf16 on cpu" in lines[2][3] and all("bf16 on cpu" in line[3] for line in lines[3:])
    # the runs are real: the eval scored every sample, each method trained and saved step 2
    work = tmp_path / "work"
    assert len((work / "eval" / "scores.jsonl").read_text().splitlines()) == 8
    for method in METHODS:
        assert (work / f"train-{method}" / "checkpoint-2" / "model.safetensors").is_file()


def test_a_missing_gpu_fails_the_env_check_with_one_clear_line(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here")
    result, lines = gpu_check(tmp_path, "--device", "cuda", timeout=300)
    assert result.returncode == 1
    ((verdict, name, _, detail),) = lines  # nothing runs after it
    assert (verdict, name) == ("FAIL", "env") and "no usable CUDA GPU here (run with --device cpu" in detail


def test_an_empty_wheel_folder_fails_the_install_check(tmp_path):
    (tmp_path / "whl").mkdir()
    result, lines = gpu_check(tmp_path, "--device", "cpu", "--wheels", str(tmp_path / "whl"), timeout=60)
    message = f"no wheels in {tmp_path / 'whl'}: scripts/gpu_wheels.sh makes them"
    assert result.returncode == 1 and lines == [["FAIL", "install", "0.0", message]]
