"""`cpu_memory: bounded` (trainers/integration/memory.py) changes how much memory a step takes, not what
it computes."""

from __future__ import annotations

import pytest
import torch
import trl.kernels.chunked_logprob as kernel
import trl.trainer.utils as head
from inprocess import TWO_ITEMS, harness
from safetensors.torch import load_file

from trainers.config import TrainConfig
from trainers.integration import memory

pytestmark = pytest.mark.usefixtures("no_data_dir")


@pytest.fixture(autouse=True)
def trls_tiles_after():
    yield
    memory.bound_memory("stock", "cpu")


def logprobs_and_grads(tiles: str) -> list[torch.Tensor]:
    """Log-probs, entropies and both gradients of TRL's fused head on 1,500 tokens x 20,000 entries."""
    memory.bound_memory(tiles, "cpu")
    torch.manual_seed(0)
    hidden = torch.randn(1500, 32, requires_grad=True)
    weight = (torch.randn(20_000, 32) * 0.3).requires_grad_()
    targets = torch.randint(0, 20_000, (1500,))
    logps, entropy, *_ = kernel.ChunkedLogProbFunction.apply(
        hidden,
        weight,
        None,
        targets,
        0.7,
        head._CHUNKED_LOGPROB_CHUNK_SIZE,
        None,
        1.0,
        ("log_probs", "entropy"),
    )
    (logps.sum() - 0.01 * entropy.sum()).backward()
    return [logps.detach(), entropy.detach(), hidden.grad, weight.grad]


def test_bounded_tiles_compute_trls_values():
    stock = logprobs_and_grads("stock")
    assert (kernel.TOKEN_CHUNK_SIZE, head._CHUNKED_LOGPROB_CHUNK_SIZE) == (4096, 32768)  # one tile here
    bounded = logprobs_and_grads("bounded")
    assert (kernel.TOKEN_CHUNK_SIZE, head._CHUNKED_LOGPROB_CHUNK_SIZE) == memory.TILES  # 3 x 3 tiles
    for ours, trls in zip(bounded, stock, strict=True):
        torch.testing.assert_close(ours, trls, rtol=1e-5, atol=1e-6)


def test_a_training_step_is_the_same_in_both_modes(tiny_model, tmp_path, monkeypatch):
    """Two GRPO steps on the tiny model; bounded with tiles small enough to split its 512-entry head. Its
    rewards are all 0, so the entropy bonus is what trains (through the head's entropy gradient)."""
    monkeypatch.setattr(memory, "TILES", (8, 128))
    data = tmp_path / "items.jsonl"
    data.write_text(TWO_ITEMS)
    weights = {}
    for mode in ("stock", "bounded"):
        out = tmp_path / mode
        done = harness("train", "grpo", "--model", str(tiny_model), "--dataset", str(data),
                       "--scorer", "math", "--out", str(out), "--num-generations", "4",
                       "--prompts-per-step", "2", "--max-steps", "2", "--max-completion-length", "16",
                       "--save-steps", "2", "--learning-rate", "1e-3",
                       "--set", "trl.entropy_coef=0.1", "--set", f"cpu_memory={mode}")  # fmt: skip
        assert done.code == 0, done.stderr
        weights[mode] = load_file(out / "checkpoint-2" / "model.safetensors")
    start = load_file(tiny_model / "model.safetensors")
    assert any(not torch.equal(weights["bounded"][k], start[k]) for k in start)  # the steps trained
    for key, value in weights["stock"].items():
        torch.testing.assert_close(weights["bounded"][key], value, rtol=0, atol=5e-5)  # 5% of an Adam step


def test_the_mode_is_not_part_of_a_runs_identity():
    base = dict(method="grpo", model="m", dataset="d", out="o")
    assert TrainConfig(**base, cpu_memory="stock").hash == TrainConfig(**base).hash


def test_an_unknown_mode_is_one_line(tiny_model, tmp_path):
    done = harness("train", "grpo", "--model", str(tiny_model), "--dataset", "x.jsonl", "--out",
                   str(tmp_path / "o"), "--set", "cpu_memory=small")  # fmt: skip
    assert (
        done.code == 2
        and done.stderr.strip() == "error: cpu_memory must be one of bounded, stock, got 'small'"
    )
