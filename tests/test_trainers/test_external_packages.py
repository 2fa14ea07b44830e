"""A method and a benchmark from other packages: the docs' two examples, installed as written
(tests/example_packages.py), met by every command through the entry points alone."""

import json
import re
import shutil
import subprocess

import pytest
import torch
from example_packages import example, install_examples
from helpers import run_cli
from safetensors.torch import load_file

from trainers.integration.checkpoints import read_method_state

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, str]:
    """The environment of a process that has both example packages installed (on PYTHONPATH)."""
    return {"PYTHONPATH": str(install_examples(tmp_path_factory.mktemp("external")))}


def harness(*args, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess:
    return run_cli(*map(str, args), check=check, **env)


def test_the_registries_list_the_installed_method_and_benchmark(installed):
    assert re.search(r"^sums +Four sums of two numbers", harness("list", env=installed).stdout, re.MULTILINE)
    help_text = " ".join(harness("train", "--help", env=installed).stdout.split())
    assert "Method: arena, azr, brevity, grpo, spae, spell, ulorl." in help_text
    dry = harness(
        "train", "brevity", "--model", "m", "--dataset", "sums", "--dry-run", "--set", "options.penalty=0.5",
        env=installed,
    )  # fmt: skip
    assert '"penalty": 0.5' in dry.stdout
    refused = harness(
        "train", "brevity", "--model", "m", "--dataset", "sums", "--dry-run", "--set", "options.penalty=-1",
        env=installed, check=False,
    )  # fmt: skip
    assert refused.returncode != 0 and "options.penalty must be at least 0, got -1" in refused.stderr
    # without the packages they are unknown, and the error lists what is installed
    missing = harness("train", "brevity", "--model", "m", "--dataset", "d", "--dry-run", env={}, check=False)
    assert "unknown method 'brevity'; valid methods: arena, azr, grpo, spae, spell, ulorl" in missing.stderr


def test_the_installed_benchmark_is_evaluated_scored_tabled_and_viewed(installed, tiny_model, tmp_path):
    run = tmp_path / "run"
    harness(
        "eval", "--benchmarks", "sums", "--model", tiny_model, "--backend", "hf", "--limit", "2", "--n", "1",
        "--max-tokens", "8", "--out", run, env=installed,
    )  # fmt: skip
    results = json.loads((run / "results.json").read_text())
    assert results["sums"]["n_items"] == 2 and results["sums"]["n_samples"] == 2
    scores = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    assert sorted(s["item_id"] for s in scores) == ["1", "2"]
    harness("score", run, env=installed)
    assert json.loads((run / "results.json").read_text())["sums"] == results["sums"]
    assert "sums" in harness("table", run, env=installed).stdout
    bundle = tmp_path / "bundle"
    harness("view", run, "--bundle", bundle, env=installed)
    assert (bundle / "index.html").is_file()
    assert "sums" in "".join(p.read_text(errors="replace") for p in bundle.rglob("*.js"))


def test_the_installed_method_trains_on_the_installed_benchmark_and_resumes_exactly(
    installed, tiny_model, tmp_path
):
    out = tmp_path / "train"
    command = [
        "train", "brevity", "--model", tiny_model, "--dataset", "sums", "--out", out, "--max-steps", "2",
        "--save-steps", "1", "--num-generations", "2", "--prompts-per-step", "2",
        "--max-completion-length", "8", "--learning-rate", "0.01", "--set", "options.penalty=0.01",
        "--eval-every", "2", "--eval-benchmarks", "sums", "--set", "eval_limit=2",
    ]  # fmt: skip
    harness(*command, env=installed)
    assert read_method_state(out / "checkpoint-2", 0) == {"steps": 2}  # the package's own state
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics if "brevity/tokens" in m] == [1, 2]
    assert json.loads((out / "evals" / "step-2" / "results.json").read_text())["sums"]["n_items"] == 2
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert samples and all("reward" in s for s in samples)

    final = load_file(out / "checkpoint-2" / "model.safetensors")
    shutil.rmtree(out / "checkpoint-2")
    shutil.rmtree(out / "evals" / "step-2")
    harness(*command, env=installed)  # resumes from checkpoint-1, its method state included
    resumed = load_file(out / "checkpoint-2" / "model.safetensors")
    assert all(torch.equal(value, resumed[key]) for key, value in final.items())
    assert read_method_state(out / "checkpoint-2", 0) == {"steps": 2}


def test_an_example_block_is_found_only_right_after_its_marker(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- example: external-method -->\n\ntext\n```bash\necho no\n```\n")
    with pytest.raises(AssertionError, match="no bash block"):
        example("external-method", page)
    page.write_text("<!-- example: external-method -->\n```bash\necho yes\n```\n")
    assert example("external-method", page) == "echo yes"
