"""Every method under torchrun (2 processes, gloo, 127.0.0.1) with work that differs between ranks on
purpose, through `trainers.integration.run.train` with the policy's texts scripted per rank (worker.py): the
semantics table of trainers/METHODS.md ("Several processes"), collectives reached as often by every
rank, equivalence with one process where the table promises it, and exact resume.

Each launch has a hard limit (launch.LIMIT_S, 420 s): a hang fails the test, and the launcher's whole
process group is killed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch
from fake_openai import FakeOpenAI
from launch import free_port, records, run_worker
from safetensors.torch import load_file

pytestmark = pytest.mark.multiproc

REPO = Path(__file__).resolve().parents[2]
PROBLEMS = str(REPO / "configs" / "train" / "ulorl-cpu-problems.jsonl")
CONFIGS = REPO / "configs" / "train"
COMMON = {"report_to": ["none"], "save_steps": 1, "seed": 3}


def arithmetic(model: Path, out: Path, **overrides: Any) -> dict[str, Any]:
    return {
        "method": "grpo",
        "model": str(model),
        "out": str(out),
        "dataset": f"jsonl:{PROBLEMS}",
        "scorer": "integer",
        "prompt_template": "{problem}",
        "num_generations": 2,
        "max_completion_length": 16,
        "max_steps": 2,
        "learning_rate": 1e-3,
        **COMMON,
        **overrides,
    }


def launch(nproc: int, folder: Path, script: str, overrides: dict, config: Path | None = None) -> list:
    spec = {"script": script, "overrides": overrides, "config": str(config) if config else None}
    done = run_worker(nproc, spec, folder)
    assert done.returncode == 0, done.output[-6000:]
    found = records(folder, nproc)
    assert [r["world_size"] for r in found] == [nproc] * nproc
    return found


def assert_lockstep(ranks: list[dict[str, Any]]) -> None:
    """What every multi-process run must show: each rank entered the same collectives (torch.distributed
    and engine calls) in the same order, `advantages` saw the same rollouts and rewards and returned the
    same values on every rank (it runs on all processes' rollouts), and the weights agree."""
    first = ranks[0]
    for other in ranks[1:]:
        assert other["events"] == first["events"]
        assert other["steps"] == first["steps"]
        assert other["weights"] == first["weights"]
    assert first["global_step"] >= 1


def weights(checkpoint: Path) -> dict[str, torch.Tensor]:
    return load_file(str(checkpoint / "model.safetensors"))


def exact_files(checkpoint: Path) -> dict[str, bytes]:
    """What a resumed run must rewrite bit for bit: weights, optimizer, scheduler, RNG and method states."""
    names = ["model.safetensors", "optimizer.pt", "scheduler.pt"]
    names += [p.name for p in checkpoint.glob("rng_state*.pth")]
    names += [p.name for p in checkpoint.glob("method_state*")]
    return {name: (checkpoint / name).read_bytes() for name in sorted(names)}


def resume_reproduces_last_checkpoint(folder: Path, spec: dict, config: Path | None, script: str) -> None:
    """Delete the last checkpoint, rerun the same command: it resumes from the one before and writes
    the deleted one again, bit for bit (every rank's method state included)."""
    out = Path(spec["out"])
    last = max(out.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    before = exact_files(last)
    assert any(name.startswith("method_state-rank1") for name in before)
    shutil.rmtree(last)
    launch(2, folder / "resumed", script, spec, config)
    after = exact_files(last)
    assert sorted(after) == sorted(before)
    assert [n for n in before if before[n] != after[n]] == []


# --- GRPO -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("loss_type", ["dapo", "grpo"])
def test_grpo_two_processes_of_half_the_prompts_equal_one_process(plain_model, tmp_path, loss_type):
    """2 processes x 2 prompts per step against 1 process x 4 on the same rows with fixed completions:
    the same rollouts, rewards and advantages, and the same weights after two steps to float tolerance.
    Plain SGD, whose update is the gradient times the learning rate: Adam's first steps divide each
    gradient by its own magnitude, so a rounding difference in a gradient element near 0 (the order in
    which DDP sums) becomes an update difference of up to the learning rate."""
    settings = dict(loss_type=loss_type, learning_rate=0.5, trl={"optim": "sgd"})
    one = launch(
        1,
        tmp_path / "one",
        "arithmetic",
        arithmetic(plain_model, tmp_path / "one/out", prompts_per_step=4, **settings),
    )
    two = launch(
        2,
        tmp_path / "two",
        "arithmetic",
        arithmetic(plain_model, tmp_path / "two/out", prompts_per_step=2, **settings),
    )
    assert_lockstep(two)
    # the same rows: one process's step equals the two processes' steps side by side
    assert [r["rows"] for r in one[0]["rollouts"]] == [
        a["rows"] + b["rows"] for a, b in zip(two[0]["rollouts"], two[1]["rollouts"], strict=True)
    ]
    for mine, theirs in zip(one[0]["steps"], two[0]["steps"], strict=True):
        assert mine["rewards"] == theirs["rewards"]
        assert torch.allclose(torch.tensor(mine["advantages"]), torch.tensor(theirs["advantages"]))
    assert any(len(set(s["rewards"])) > 1 for s in one[0]["steps"])  # something to learn
    start = load_file(str(plain_model / "model.safetensors"))
    a, b = weights(tmp_path / "one/out/checkpoint-2"), weights(tmp_path / "two/out/checkpoint-2")
    moved = max((a[k] - start[k]).abs().max().item() for k in a)
    assert moved > 1e-3
    for key in a:
        # a thousandth of the largest update; weights near 1 (norms) differ by their float32 spacing
        assert (a[key] - b[key]).abs().max().item() < moved * 1e-3, key


def test_grpo_resumes_bit_for_bit_under_two_processes(plain_model, tmp_path):
    spec = arithmetic(plain_model, tmp_path / "out", prompts_per_step=2, max_steps=3)
    launch(2, tmp_path / "first", "arithmetic", spec)
    resume_reproduces_last_checkpoint(tmp_path, spec, None, "arithmetic")


# --- SPAE -------------------------------------------------------------------------------------------------


def spae(model: Path, out: Path) -> dict[str, Any]:
    return {
        "model": str(model),
        "out": str(out),
        "dataset": f"jsonl:{PROBLEMS}",
        "max_steps": 2,
        "max_completion_length": 32,
        "options": {"n_probe": 2, "probe_max_tokens": 4},
        **COMMON,
    }


def test_spae_refill_on_one_rank_and_different_step_counts(plain_model, tmp_path):
    """Rank 1's first groups are uniform and refilled, rank 0's are not: both run the refill round
    (refill rounds are global); rank 0's samples have more step boundaries to probe than rank 1's, and
    both enter the prober once. Advantages (batch min-max and whitening) are over both ranks' samples."""
    spec = spae(plain_model, tmp_path / "out")
    ranks = launch(2, tmp_path / "run", "spae", spec, CONFIGS / "spae-cpu.yaml")
    assert_lockstep(ranks)
    first = [r["rollouts"][0] for r in ranks]
    # rank 1 dropped its uniform groups (returned untrainable), rank 0 kept all and returned its surplus
    assert first[1]["returned"] > first[1]["trainable"]
    metrics = [json.loads(line) for line in (tmp_path / "out/metrics.jsonl").read_text().splitlines()]
    assert metrics[0]["spae/refill_rounds"] == 1.0  # rank 0's own count: it joined rank 1's round
    engine_calls = [e for e in ranks[0]["events"] if e.startswith("engine.")]
    # per step: the first round, the refill round, the prober
    assert engine_calls[:3] == ["engine.generate", "engine.generate", "engine.inference_model"]
    resume_reproduces_last_checkpoint(tmp_path, spec, CONFIGS / "spae-cpu.yaml", "spae")


# --- UloRL ------------------------------------------------------------------------------------------------


def test_ulorl_groups_finish_on_one_rank_only(plain_model, tmp_path):
    """Rank 0's samples end in their first segment and its groups train; rank 1's run to the cap and
    stay in its pool (an idle step: one masked row), yet both decode a segment every step."""
    spec = {
        "model": str(plain_model),
        "out": str(tmp_path / "out"),
        "dataset": f"jsonl:{PROBLEMS}",
        "max_steps": 3,
        "max_completion_length": 24,
        "num_generations": 2,
        "prompts_per_step": 1,
        "options": {"segments": 3, "groups_in_flight": 2},
        **COMMON,
    }
    ranks = launch(2, tmp_path / "run", "ulorl", spec, CONFIGS / "ulorl-cpu.yaml")
    assert_lockstep(ranks)
    zero, one = ([r["idle"] for r in rank["rollouts"]] for rank in ranks)
    assert zero == [False, False, False]
    assert one == [True, True, False]  # its samples reach the 24-token cap in the third segment
    assert all(r["trainable"] > 0 for r in ranks[0]["rollouts"])
    resume_reproduces_last_checkpoint(tmp_path, spec, CONFIGS / "ulorl-cpu.yaml", "ulorl")


# --- SPELL ------------------------------------------------------------------------------------------------

CLUSTERS = [
    {
        "id": f"gen-{i}",
        "task": "doc_general_qa",
        "source": "test",
        "documents": [f"Alpha {i} is in Paris."] * 2,
    }
    for i in range(3)
]


def test_spell_refill_rounds_on_one_rank(plain_model, tmp_path):
    """Rank 1's first round keeps no question (a malformed proposal), rank 0's keeps one: both play a
    second round (rounds are global), with as many engine calls per stage. The history memory is per
    process: each rank's holds the questions it asked."""
    corpus = tmp_path / "clusters.jsonl"
    corpus.write_text("".join(json.dumps(c) + "\n" for c in CLUSTERS))
    spec = {
        "method": "spell",
        "model": str(plain_model),
        "out": str(tmp_path / "out"),
        "dataset": str(corpus),
        "prompts_per_step": 1,
        "num_generations": 2,
        "max_completion_length": 128,
        "max_steps": 2,
        "learning_rate": 1e-4,
        "loss_type": "dapo",
        "options": {
            "documents_per_question": 1,
            "verifier_samples": 2,
            "questions_per_round": 1,
            "max_rounds": 3,
            "short_batch": "train",
            "max_input_tokens": 2048,
        },
        **COMMON,
    }
    ranks = launch(2, tmp_path / "run", "spell", spec)
    assert_lockstep(ranks)
    metrics = [json.loads(line) for line in (tmp_path / "out/metrics.jsonl").read_text().splitlines()]
    assert [m["spell/refill_rounds"] for m in metrics if "spell/refill_rounds" in m] == [2.0, 2.0]
    zero, one = (Path(spec["out"]) / "checkpoint-2" / name for name in ("method_state", "method_state-rank1"))
    memory = [json.loads(next(p.parent.glob(p.name + ".*")).read_text())["memory"] for p in (zero, one)]
    asked = [{(task, cluster) for task, cluster, _ in m["entries"]} for m in memory]
    assert asked[0] and asked[1] and memory[0] != memory[1]
    resume_reproduces_last_checkpoint(tmp_path, spec, None, "spell")


# --- AZR --------------------------------------------------------------------------------------------------


def test_azr_proposals_valid_on_one_rank_only(plain_model, tmp_path):
    """Rank 0's proposals are valid (validated in the sandbox, then probed by Monte-Carlo solves);
    rank 1's are not parseable: it still joins the probes' engine call. Buffers are per process: rank
    0's grow, rank 1's keep the seed triplet only."""
    spec = {
        "method": "azr",
        "model": str(plain_model),
        "out": str(tmp_path / "out"),
        "dataset": "identity",
        "prompts_per_step": 1,
        "max_completion_length": 96,
        "max_steps": 2,
        "learning_rate": 1e-4,
        "loss_type": "grpo",
        "options": {"mc_samples": 2, "num_inputs": 4, "template": "r1", "timeout": 5.0},
        **COMMON,
    }
    ranks = launch(2, tmp_path / "run", "azr", spec)
    assert_lockstep(ranks)
    engine_calls = [e for e in ranks[0]["events"] if e.startswith("engine.")]
    assert engine_calls == ["engine.generate"] * 6  # per step: proposals, probes, answers
    states = [
        json.loads((Path(spec["out"]) / "checkpoint-2" / f"{name}.json").read_text())
        for name in ("method_state", "method_state-rank1")
    ]
    sizes = [{task: len(items) for task, items in s["buffers"]["buffers"].items()} for s in states]
    assert all(sizes[0][task] > sizes[1][task] for task in sizes[0]), sizes
    resume_reproduces_last_checkpoint(tmp_path, spec, None, "azr")


# --- Arena ------------------------------------------------------------------------------------------------


def arena(model: Path, out: Path, judge: dict[str, Any]) -> dict[str, Any]:
    return {
        "method": "arena",
        "model": str(model),
        "out": str(out),
        "dataset": f"jsonl:{CONFIGS / 'arena-cpu-problems.jsonl'}",
        "scorer": "integer",
        "prompt_template": "{problem}",
        "prompts_per_step": 2,
        "num_generations": 4,
        "max_completion_length": 32,
        "max_steps": 2,
        "learning_rate": 1e-4,
        "loss_type": "cispo",
        "trl": {"epsilon_high": 3.0},
        "judge": judge,
        "options": {"tournament": "live", "judge_max_tokens": 16},
        **COMMON,
    }


def first_is_better(body: dict, count: int):
    text = "Compared the two.\n\\boxed{A}"
    return 200, {"choices": [{"message": {"content": text}, "finish_reason": "stop"}], "usage": {}}, {}


def test_arena_served_judge_asked_by_the_main_process_for_every_rank(plain_model, tmp_path):
    """Only rank 1's groups have no verifier variance and are routed; the main process (rank 0) asks the
    served judge (a fake OpenAI server on 127.0.0.1) once per call, and both ranks get the same rewards."""
    with FakeOpenAI(first_is_better) as fake:
        spec = arena(plain_model, tmp_path / "out", {"model": "fake/model", "base_url": fake.base_url})
        ranks = launch(2, tmp_path / "run", "arena", spec)
        requests = len(fake.bodies)
    assert_lockstep(ranks)
    metrics = [json.loads(line) for line in (tmp_path / "out/metrics.jsonl").read_text().splitlines()]
    asked = sum(m["arena/judge/requests"] for m in metrics if "arena/judge/requests" in m)
    assert requests == asked > 0  # once per call, not once per rank
    for step in ranks[0]["steps"]:
        judged = {g for g, a in zip(step["groups"], step["advantages"], strict=True) if a != 0}
        assert {g.split("/")[0] for g in judged} == {"0", "1"}  # rank 1's groups learn from the judge
        rewards: dict[str, set[float]] = {}
        for group, reward in zip(step["groups"], step["rewards"], strict=True):
            rewards.setdefault(group, set()).add(reward)
        assert all(len(rewards[g]) == 1 for g in rewards if g.startswith("1/"))  # rank 1's: uniform
        assert any(len(rewards[g]) > 1 for g in rewards if g.startswith("0/"))  # rank 0's: diverse


def test_arena_judge_failure_reaches_every_rank(plain_model, tmp_path):
    """A served judge that is not there: the main process's error is broadcast, every rank raises it,
    and the run ends (exit status 1) within the launch's limit."""
    port = free_port()  # nothing listens there
    judge = {"model": "fake/model", "base_url": f"http://127.0.0.1:{port}/v1", "server_wait": 0}
    done = run_worker(
        2, {"script": "arena", "overrides": arena(plain_model, tmp_path / "out", judge)}, tmp_path
    )
    assert done.returncode != 0
    for rank in (0, 1):  # the main process's error (the backend's ServerError), raised on each rank
        said = [line for line in done.output.splitlines() if line.startswith(f"[rank{rank}]: harness.")]
        assert said and f"GET http://127.0.0.1:{port}/v1/models: no answer" in said[-1]
    assert not (tmp_path / "out" / "checkpoint-1").exists()
