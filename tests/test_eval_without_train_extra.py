"""`pip install .` evaluates: `harness eval` runs on the shipped AIME files where the `train` extra's
packages (TRL, TensorBoard, complexipy, apted, SciPy) and the `ray` extra's cannot be imported, as where
they are not installed."""

import json
import os
import subprocess
import sys

import pytest
from helpers import run_cli

TRAIN_EXTRA = ("trl", "tensorboard", "complexipy", "apted", "scipy")  # pyproject.toml's `train` extra
RAY_EXTRA = ("ray",)

# sys.modules[name] = None: `import name` raises ModuleNotFoundError and importlib.util.find_spec(name)
# is None, as for a package that is not installed; at exit, whichever got in anyway is written down
SHIM = f"""
import atexit, sys
BLOCKED = {TRAIN_EXTRA + RAY_EXTRA!r}
for name in BLOCKED:
    sys.modules[name] = None

def _report():
    loaded = sorted(n for n, m in sys.modules.items() if n.split(".")[0] in BLOCKED and m is not None)
    with open({{log!r}}, "w") as f:
        f.write(" ".join(loaded) + "\\n")

atexit.register(_report)
"""


def test_harness_eval_runs_without_the_train_extra(tiny_model, tmp_path, no_data_dir):
    shim, log, out = tmp_path / "shim", tmp_path / "loaded.txt", tmp_path / "run"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(SHIM.format(log=str(log)))
    run_cli(
        "eval", "--benchmarks", "aime24", "--model", str(tiny_model), "--backend", "hf", "--limit", "2",
        "--n", "1", "--max-tokens", "8", "--out", str(out), PYTHONPATH=str(shim),
    )  # fmt: skip
    results = json.loads((out / "results.json").read_text())
    assert results["aime24"]["n_items"] == 2 and results["aime24"]["n_samples"] == 2
    run = json.loads((out / "run.json").read_text())
    assert "packaged" in json.dumps(run)  # the AIME copy shipped in the package, offline
    assert log.read_text() == "\n"  # the shim ran, and none of the extra's packages was imported


@pytest.mark.slow  # seconds each: `tox -e unit` leaves it to the full tier
def test_harness_train_without_the_train_extra_says_how_to_install_it(tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(SHIM.format(log=str(tmp_path / "loaded.txt")))
    done = run_cli(
        "train", "grpo", "--model", "m", "--dataset", "aime24", "--dry-run", check=False, PYTHONPATH=str(shim)
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr == (
        "error: harness train needs the train extra (trl, tensorboard, complexipy, apted, scipy not "
        "installed): pip install 'harness[train]'\n"
    )


def test_the_shim_blocks_what_it_names(tmp_path):
    shim, log = tmp_path / "shim", tmp_path / "loaded.txt"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(SHIM.format(log=str(log)))
    code = "import importlib.util as u; assert u.find_spec('trl') is None; import trl"
    env = {**os.environ, "PYTHONPATH": str(shim)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 1 and "ModuleNotFoundError" in done.stderr
    assert log.read_text() == "\n"


@pytest.mark.slow  # seconds: `tox -e unit` leaves it to the full tier
def test_eval_on_ray_without_the_ray_extra_says_how_to_install_it(tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(SHIM.format(log=str(tmp_path / "loaded.txt")))
    args = ["--benchmarks", "aime24", "--model", "m", "--ray", "local", "--shards", "2", "--out", "o"]
    done = run_cli("eval", *args, check=False, PYTHONPATH=str(shim), cwd=tmp_path)
    assert done.returncode == 2 and done.stderr == "error: --ray needs Ray: pip install 'harness[ray]'\n"
    assert not (tmp_path / "o").exists()
