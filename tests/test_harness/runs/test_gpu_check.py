"""`harness gpu-check`, the check run on a GPU machine, kept working by running it here on the CPU
(`--device cpu`): the tiny model, `harness eval` in bf16 on hf, and 2 bf16 steps of each method; and
scripts/gpu_check.py, which starts it where only the standard library can be imported. No test needs a
GPU."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, own_names

BOOTSTRAP = REPO / "scripts" / "gpu_check.py"
METHODS = sorted(own_names("harness.methods"))  # each of the project's methods has its check
# what the GPU machine lacks before the wheels are installed, and what the CLI would import
ABSENT = ("pydantic", "typer", "click", "rich", "yaml", "torch", "transformers", "trl", "numpy")
# the bootstrap run as a script in a Python where those cannot be imported
BLOCKED = (
    f"import runpy, sys\nfor name in {ABSENT!r}:\n    sys.modules[name] = None\n"
    f"sys.argv = sys.argv[1:]\nrunpy.run_path({str(BOOTSTRAP)!r}, run_name='__main__')"
)


def gpu_check(
    tmp_path: Path, *args: str, timeout: float = 900, script: bool = False
) -> tuple[subprocess.CompletedProcess, list]:
    start = [sys.executable, "-c", BLOCKED, str(BOOTSTRAP)] if script else [sys.executable, "-m", "harness"]
    argv = [*start, *([] if script else ["gpu-check"])]
    argv += ["--out", str(tmp_path / "out"), "--work", str(tmp_path / "work"), *args]
    # from the checkout's root, as on the GPU machine: under tox, harness is a wheel outside it
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=REPO)
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
    assert [line[1] for line in lines][:3] == ["env", "tiny-model", "eval"]
    assert sorted(line[1] for line in lines[3:]) == [f"train-{m}" for m in METHODS]
    assert all(float(line[2]) >= 0 for line in lines)
    summary = (tmp_path / "out" / "summary.txt").read_text().splitlines()
    assert summary[-1] == f"gpu-check: {len(lines)} passed, 0 failed"
    assert "bf16 on cpu" in lines[2][3] and all("bf16 on cpu" in line[3] for line in lines[3:])
    assert f"harness from {REPO / 'harness'}" in lines[0][3]  # the checkout's code, not another install
    # the runs are real: the eval scored every sample, each method trained and saved step 2
    work = tmp_path / "work"
    assert len((work / "eval" / "scores.jsonl").read_text().splitlines()) == 8
    for method in METHODS:
        assert (work / f"train-{method}" / "checkpoint-2" / "model.safetensors").is_file()


@pytest.mark.slow  # seconds each: `tox -e unit` leaves it to the full tier
def test_a_missing_gpu_fails_the_env_check_with_one_clear_line(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here")
    result, lines = gpu_check(tmp_path, "--device", "cuda", timeout=300)
    assert result.returncode == 1
    ((verdict, name, _, detail),) = lines  # nothing runs after it
    assert (verdict, name) == ("FAIL", "env") and "no usable CUDA GPU here (run with --device cpu" in detail


@pytest.mark.parametrize("script", [False, True], ids=["command", "bootstrap"])
def test_an_empty_wheel_folder_fails_the_install_check(tmp_path, script):
    """The bootstrap gets as far as the install step with none of the CLI's packages importable."""
    (tmp_path / "whl").mkdir()
    wheels = ("--device", "cpu", "--wheels", str(tmp_path / "whl"))
    result, lines = gpu_check(tmp_path, *wheels, timeout=60, script=script)
    message = f"no wheels in {tmp_path / 'whl'}: scripts/gpu_wheels.sh makes them"
    assert (result.returncode, lines) == (1, [["FAIL", "install", "0.0", message]]), result.stderr
    assert (tmp_path / "out" / "summary.txt").read_text().splitlines()[-1] == "gpu-check: 0 passed, 1 failed"


@pytest.mark.parametrize("script", [False, True], ids=["command", "bootstrap"])
def test_a_used_work_folder_is_refused_with_one_line(tmp_path, script):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "eval").mkdir()
    result, lines = gpu_check(tmp_path, "--device", "cpu", timeout=60, script=script)
    assert (result.returncode, lines) == (2, [])
    refused = f"--work {tmp_path / 'work'} is not empty: its runs would resume instead of training"
    assert refused in result.stderr
    assert not (tmp_path / "out").exists()


def test_each_method_the_checkout_registers_is_trained_new_ones_on_grpos_problems(tmp_path):
    from harness.runs.gpu_check import trainings

    configs = tmp_path / "configs" / "train"
    configs.mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[project.entry-points."harness.methods"]\n'
        'grpo = "a:B"\nspae = "a:C"\nbrand_new = "a:D"\n'
    )
    found = dict(trainings(configs))
    assert list(found) == ["grpo", "spae", "brand_new"]
    assert found["brand_new"] == found["grpo"] and "--scorer" in found["grpo"]
    assert found["spae"][:2] == ["--config", str(configs / "spae-cpu.yaml")]
    assert [m for m, _ in trainings(REPO / "configs" / "train")] == own_names("harness.methods")
