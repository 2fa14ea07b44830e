"""Each method's riskiest mechanism through real `BackendGRPOTrainer` steps on the tiny model (CPU).

The backends here are test-local sketches that implement one mechanism each (trainers/METHODS.md maps
the full methods onto the interface). They generate with the trainer's real `HFEngine`; rewards are
deterministic rules on the sampled token ids, stand-ins for the harness scorers, so every expected
advantage can be computed by hand from what the backend saw.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
import torch
from datasets import Dataset
from torch import Tensor
from trainer_helpers import arithmetic_dataset_rows, cpu_args

from trainers.advantages import group_center, group_zscore, whiten_by_key, whiten_tokens
from trainers.backend import Backend, Batch
from trainers.engine import Engine, continue_rollouts
from trainers.masks import completion_mask, dmmpt_mask
from trainers.rollout import Rollout
from trainers.trainer import BACKEND_STATE, BackendGRPOTrainer


class RecordingTrainer(BackendGRPOTrainer):
    """The real trainer; it only keeps every batch it hands to TRL's loss."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.batches: list[dict[str, Any]] = []

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        out = super()._generate_and_score_completions(inputs)
        self.batches.append(out)
        return out


def make_trainer(model: Path, out: Path, backend: Backend, rows: list[dict], **args: Any) -> RecordingTrainer:
    return RecordingTrainer(
        model=str(model), args=cpu_args(out, **args), train_dataset=Dataset.from_list(rows), backend=backend
    )


def generation_inputs(trainer: BackendGRPOTrainer, rows: list[dict]) -> list[dict]:
    """What TRL's sampler hands `_generate_and_score_completions`: each row num_generations times."""
    inputs = [row for row in rows for _ in range(trainer.num_generations)]
    assert len(inputs) == trainer.args.per_device_train_batch_size * trainer.args.steps_per_generation
    return inputs


def batch_completions(batch: dict[str, Any]) -> list[list[int]]:
    """The completion tokens each batch row trains on ([] for a padded row)."""
    ids, mask = batch["completion_ids"].tolist(), batch["completion_mask"].tolist()
    return [[t for t, m in zip(row, keep, strict=True) if m] for row, keep in zip(ids, mask, strict=True)]


def parameters(trainer: BackendGRPOTrainer) -> dict[str, Tensor]:
    return {name: p.detach().clone() for name, p in trainer.model.named_parameters()}


def changed(before: dict[str, Tensor], trainer: BackendGRPOTrainer) -> bool:
    after = dict(trainer.model.named_parameters())
    return any(not torch.equal(value, after[name].detach()) for name, value in before.items())


def rule(ids: Sequence[int]) -> float:
    """Stand-in for a harness scorer: a completion is "correct" when its first token id is even."""
    return float(bool(ids) and ids[0] % 2 == 0)


def zscore(values: list[float], eps: float) -> list[float]:
    """Hand-computed (r - mean) / (unbiased std + eps); 0 for a single row or no variance."""
    if len(values) < 2 or len(set(values)) == 1:
        return [0.0] * len(values)
    mean, std = statistics.fmean(values), statistics.stdev(values)
    return [(v - mean) / (std + eps) for v in values]


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


# --- SPELL: three roles, mixed group sizes, per-role advantages, history memory ---------------------------

SPELL_SIGMA = 0.5 / 3


def spell_gaussian(mean: float) -> float:
    """SPELL's questioner reward mapping (spell.md §1.7): 0 unless 0 < mean < 1."""
    return math.exp(-((mean - 0.5) ** 2) / (2 * SPELL_SIGMA**2)) if 0 < mean < 1 else 0.0


class SpellSketch(Backend):
    """Questioner (n=1 per document set) -> responder (G per question) -> verifier (V per question).

    The responder's rule reward stands in for cover-EM; the verifier says YES when its first token is
    even and is rewarded for agreeing with the rule score of the answer it judged; the questioner gets
    the Gaussian of its responders' mean. History memory: the last `history` solvable questions per
    (task, document set), shown to the next questioner of that key.
    """

    name = "spell-sketch"

    def __init__(self, responders: int = 3, verifiers: int = 2, history: int = 3):
        self.G, self.V, self.L = responders, verifiers, history
        self.memory: dict[str, list[list[int]]] = {}
        self.prompts_seen: list[str] = []

    def rollout(self, rows: Sequence[dict[str, Any]], engine: Engine) -> list[Rollout]:
        keys = [f"{row['task']}:{row['id']}" for row in rows]
        texts = []
        for row, key in zip(rows, keys, strict=True):
            earlier = " | ".join(engine.decode(q) for q in self.memory.get(key, []))
            texts.append(row["prompt"][-1]["content"] + (f"\nHarder than: {earlier}" if earlier else ""))
        self.prompts_seen = texts
        q_prompts = [engine.encode(user(t)) for t in texts]
        questions = engine.generate(q_prompts, max_tokens=6)
        r_prompts = [engine.encode(user("Documents. Question: " + engine.decode(q.ids))) for q in questions]
        answers = engine.generate([p for p in r_prompts for _ in range(self.G)], max_tokens=4)
        judged = [answers[k * self.G] for k in range(len(rows))]  # the verifier checks each first answer
        v_prompts = [
            engine.encode(user(f"Question: {engine.decode(q.ids)} Answer: {engine.decode(a.ids)} Correct?"))
            for q, a in zip(questions, judged, strict=True)
        ]
        verdicts = engine.generate([p for p in v_prompts for _ in range(self.V)], max_tokens=2)

        out = []
        for k, (row, key) in enumerate(zip(rows, keys, strict=True)):
            task, common = row["task"], {"question": k, "key": key}
            gen = questions[k]
            out.append(
                Rollout(q_prompts[k], gen.ids, "questioner", f"que:{k}", task, gen.finish_reason, meta=common)
            )
            for gen in answers[k * self.G : (k + 1) * self.G]:
                out.append(
                    Rollout(r_prompts[k], gen.ids, "responder", f"res:{k}", task, gen.finish_reason, meta=common)
                )
            for gen in verdicts[k * self.V : (k + 1) * self.V]:
                meta = {**common, "judged": judged[k].ids}
                out.append(Rollout(v_prompts[k], gen.ids, "verifier", f"ver:{k}", task, gen.finish_reason, meta=meta))
        return out

    def score(self, rollouts: Sequence[Rollout]) -> Tensor:
        solved: dict[int, list[float]] = {}
        for r in rollouts:
            if r.role == "responder":
                solved.setdefault(r.meta["question"], []).append(rule(r.completion_ids))
        values = []
        for r in rollouts:
            if r.role == "responder":
                values.append(rule(r.completion_ids))
            elif r.role == "verifier":
                values.append(float(rule(r.completion_ids) == rule(r.meta["judged"])))
            else:
                values.append(spell_gaussian(statistics.fmean(solved[r.meta["question"]])))
        return torch.tensor(values)

    def advantages(self, rollouts: Sequence[Rollout], rewards: Tensor) -> Tensor:
        adv = torch.zeros_like(rewards)
        que = [i for i, r in enumerate(rollouts) if r.role == "questioner"]
        rest = [i for i, r in enumerate(rollouts) if r.role != "questioner"]
        # questioner: no group, whitened against the batch's other questioners of its task (the code's Eq. 9)
        adv[que] = whiten_by_key(rewards[que], [rollouts[i].task for i in que]).values
        # responder and verifier: z-score within their question's group, unbiased std + 1e-6 (Eq. 8)
        adv[rest] = group_zscore(rewards[rest], [rollouts[i].group for i in rest], eps=1e-6).values
        for i in que:  # all processes see the same rollouts here, so every copy of the memory agrees
            if rewards[i] > 0:  # solvable: 0 < mean responder reward < 1
                key = rollouts[i].meta["key"]
                self.memory[key] = [*self.memory.get(key, []), rollouts[i].completion_ids][-self.L :]
        return adv

    def state_dict(self) -> dict[str, Any]:
        return {"memory": {k: [list(q) for q in v] for k, v in self.memory.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.memory = {k: [list(q) for q in v] for k, v in state["memory"].items()}


def spell_rows(n: int) -> list[dict]:
    return [{**row, "task": ("doc_qa", "doc_mc")[i % 2]} for i, row in enumerate(arithmetic_dataset_rows(n))]


def test_spell_mixed_roles_and_group_sizes_get_per_role_advantages(plain_model, tmp_path):
    backend = SpellSketch(responders=3, verifiers=2)
    rows = spell_rows(40)
    # 4 document sets per step, each 1 question + 3 answers + 2 verdicts = 24 rollouts for a budget of 32
    trainer = make_trainer(
        plain_model, tmp_path, backend, rows, max_steps=1, per_device_train_batch_size=32, num_generations=8
    )
    trainer.model.train()
    captured: dict[str, Any] = {}
    advantages = backend.advantages

    def spy(rollouts, rewards):
        captured.update(rollouts=list(rollouts), rewards=rewards.clone())
        return advantages(rollouts, rewards)

    backend.advantages = spy
    batch = trainer._generate_and_score_completions(generation_inputs(trainer, rows[:4]))
    rollouts, rewards = captured["rollouts"], captured["rewards"].tolist()
    assert Counter(r.role for r in rollouts) == {"questioner": 4, "responder": 12, "verifier": 8}

    # rewards: questioner = Gaussian of its responders' mean (cross-role coupling inside one step)
    for k in range(4):
        answers = [rule(r.completion_ids) for r in rollouts if r.role == "responder" and r.meta["question"] == k]
        question = next(i for i, r in enumerate(rollouts) if r.role == "questioner" and r.meta["question"] == k)
        assert rewards[question] == pytest.approx(spell_gaussian(statistics.fmean(answers)))

    # advantages, by hand: z-score per responder/verifier group, whitening per task over questioners
    expected = [0.0] * len(rollouts)
    by_key: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(rollouts):
        key = ("que", r.task) if r.role == "questioner" else ("group", r.group)
        by_key.setdefault(key, []).append(i)
    for (kind, _), members in by_key.items():
        values = zscore([rewards[i] for i in members], eps=1e-6)
        for i, v in zip(members, values, strict=True):
            expected[i] = v
    assert {len(m) for (kind, _), m in by_key.items() if kind == "group"} == {3, 2}  # mixed group sizes
    adv = batch["advantages"]
    assert adv.shape == (32,)
    torch.testing.assert_close(adv[:24], torch.tensor(expected), atol=1e-5, rtol=0)
    assert adv[:24].abs().sum() > 0

    # the batch is exactly the row budget: the 24 rollouts in order, then 8 padded rows that train nothing
    assert batch["completion_ids"].shape[0] == batch["prompt_ids"].shape[0] == 32
    assert batch_completions(batch)[:24] == [r.completion_ids for r in rollouts]
    assert batch["completion_mask"][24:].sum() == 0 and adv[24:].abs().sum() == 0
    assert batch["num_items_in_batch"] == sum(len(r.completion_ids) for r in rollouts)

    # per-role reward metrics
    metrics = trainer._metrics["train"]
    for role in ("questioner", "responder", "verifier"):
        values = [v for r, v in zip(rollouts, rewards, strict=True) if r.role == role]
        assert metrics[f"rewards/{role}/mean"] == [pytest.approx(statistics.fmean(values))]
    assert metrics["batch/padded_rows"] == [8.0]

    # history memory: exactly the solvable questions, in backend state, shown to the next questioner
    solvable = {
        r.meta["key"]: [r.completion_ids]
        for r, v in zip(rollouts, rewards, strict=True)
        if r.role == "questioner" and v > 0
    }
    assert solvable  # some question was solved by 1 or 2 of its 3 responders
    assert backend.state_dict()["memory"] == solvable
    restored = SpellSketch()
    restored.load_state_dict(backend.state_dict())
    assert restored.memory == backend.memory

    # and a real optimizer step on such a batch moves the weights
    backend.advantages = advantages
    before = parameters(trainer)
    trainer.train()
    assert changed(before, trainer)
    assert trainer.state.log_history[0]["grad_norm"] > 0
    assert {"rewards/questioner/mean", "rewards/responder/mean"} <= set(trainer.state.log_history[0])
