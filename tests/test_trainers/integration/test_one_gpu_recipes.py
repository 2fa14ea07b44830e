"""Every method page's one-GPU recipe: a config that resolves (vLLM colocated, the model the page names), the
commands that make its data and train it, and a memory estimate stated as expected whose arithmetic holds
for the config's own sizes (rows a step, completion tokens, vLLM's share)."""

import re

import pytest
from helpers import REPO, own_names

from trainers.config import load_config
from trainers.integration.preflight import gpu_settings
from trainers.integration.run import describe

METHODS = own_names("harness.methods")  # each of the project's methods has its recipe and its page
GPU_MEMORY_GB = 80
VOCABULARY = 151_936  # Qwen2.5's and Qwen3's
DATA = {  # the command on the page that makes the config's dataset
    "jsonl:data/dapo-math-17k.jsonl": "harness fetch-data dapo-math-17k --to data",
    "jsonl:data/ulorl-clean/clean.jsonl": (
        "harness corpus ulorl data/dapo-math-17k.jsonl --out data/ulorl-clean"
    ),
    "corpora/spell": "harness corpus spell --config configs/corpus/spell.yaml --out corpora/spell",
    "identity": "# no data to fetch",
}
ESTIMATE = (  # the estimate's sentence, each number a group
    r"\(`vllm_gpu_memory_utilization: ([\d.]+)`[^)]*\), (\d+) GB; the logits of a step's (\d+) rows, "
    r"\d+ x ([\d,]+) completion tokens x 151,936 vocabulary x 2 bytes, ([\d.]+) GB; activations kept by "
    r"gradient checkpointing, \d+ x ([\d,]+) tokens x ([\d,]+) x 28 layers x 2 bytes, ([\d.]+) GB; in "
    r"all \*\*about (\d+) GB\*\*"
)


def section(method: str) -> str:
    page = (REPO / "docs" / "methods" / f"{method}.md").read_text()
    assert "\n## On one GPU\n" in page, f"docs/methods/{method}.md has no one-GPU section"
    return page.split("\n## On one GPU\n")[1].split("\n## ")[0]


def number(text: str) -> float:
    return float(text.replace(",", ""))


@pytest.mark.parametrize("method", METHODS)
def test_each_method_page_has_a_one_gpu_recipe_whose_numbers_hold(method):
    path = f"configs/train/{method}-1gpu.yaml"
    config = load_config(REPO / path, {}, dry_run=True)
    assert config.use_vllm and config.vllm_mode == "colocate" and gpu_settings(config)
    text = section(method)
    flat = " ".join(text.split())
    assert config.model.split("/")[1] in flat  # the page names the config's model
    assert f"harness train {method} --config {path} --out runs/{method}-1gpu" in text
    assert f"harness train {method} --config {path} --dry-run" in text
    assert DATA[config.dataset] in text
    assert "Memory: expected, not measured" in flat
    rows = describe(config)["trl"]["per_device_train_batch_size"]
    utilization = config.trl["vllm_gpu_memory_utilization"]
    found = re.search(ESTIMATE, flat)
    assert found, f"docs/methods/{method}.md: the memory estimate's sentence changed shape"
    util, vllm, page_rows, completion, logits, tokens, hidden, activations, total = found.groups()
    assert float(util) == utilization and number(vllm) == pytest.approx(utilization * GPU_MEMORY_GB)
    assert int(page_rows) == rows and number(completion) == config.max_completion_length
    logits_gb = rows * config.max_completion_length * VOCABULARY * 2 / 1e9
    assert number(logits) == pytest.approx(logits_gb, abs=0.05)
    assert number(tokens) >= config.max_completion_length  # prompt and completion
    activations_gb = rows * number(tokens) * number(hidden) * 28 * 2 / 1e9
    assert number(activations) == pytest.approx(activations_gb, abs=0.05)
    state = float(re.search(r"([\d.]+) GB; vLLM's share", flat).group(1))
    assert number(total) == pytest.approx(state + number(vllm) + number(logits) + number(activations), abs=1)
    assert number(total) < GPU_MEMORY_GB
