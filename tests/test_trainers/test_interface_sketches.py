"""Each method's riskiest mechanism through real `MethodGRPOTrainer` steps on the tiny model (CPU).

The methods here are test-local sketches that implement one mechanism each (trainers/METHODS.md maps
the full methods onto the interface). They generate with the trainer's real `HFEngine`; rewards are
deterministic rules on the sampled token ids, stand-ins for the harness scorers, so every expected
advantage can be computed by hand from what the method saw.
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
from trainers.engine import Engine, continue_rollouts
from trainers.integration.checkpoints import METHOD_STATE, read_method_state, save_method_state
from trainers.integration.trainer import MethodGRPOTrainer
from trainers.masks import completion_mask, dmmpt_mask
from trainers.method import Batch, Method
from trainers.rollout import Rollout


class RecordingTrainer(MethodGRPOTrainer):
    """The real trainer; it only keeps every batch it hands to TRL's loss."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.batches: list[dict[str, Any]] = []

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        out = super()._generate_and_score_completions(inputs)
        self.batches.append(out)
        return out


def make_trainer(model: Path, out: Path, method: Method, rows: list[dict], **args: Any) -> RecordingTrainer:
    return RecordingTrainer(
        model=str(model), args=cpu_args(out, **args), train_dataset=Dataset.from_list(rows), method=method
    )


def generation_inputs(trainer: MethodGRPOTrainer, rows: list[dict]) -> list[dict]:
    """What TRL's sampler hands `_generate_and_score_completions`: each row num_generations times."""
    inputs = [row for row in rows for _ in range(trainer.num_generations)]
    assert len(inputs) == trainer.args.per_device_train_batch_size * trainer.args.steps_per_generation
    return inputs


def batch_completions(batch: dict[str, Any]) -> list[list[int]]:
    """The completion tokens each batch row trains on ([] for a padded row)."""
    ids, mask = batch["completion_ids"].tolist(), batch["completion_mask"].tolist()
    return [[t for t, m in zip(row, keep, strict=True) if m] for row, keep in zip(ids, mask, strict=True)]


def parameters(trainer: MethodGRPOTrainer) -> dict[str, Tensor]:
    return {name: p.detach().clone() for name, p in trainer.model.named_parameters()}


def changed(before: dict[str, Tensor], trainer: MethodGRPOTrainer) -> bool:
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
    """SPELL's questioner reward mapping (SPELL paper, Eq. 7): 0 unless 0 < mean < 1."""
    return math.exp(-((mean - 0.5) ** 2) / (2 * SPELL_SIGMA**2)) if 0 < mean < 1 else 0.0


class SpellSketch(Method):
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
                    Rollout(
                        r_prompts[k], gen.ids, "responder", f"res:{k}", task, gen.finish_reason, meta=common
                    )
                )
            for gen in verdicts[k * self.V : (k + 1) * self.V]:
                meta = {**common, "judged": judged[k].ids}
                out.append(
                    Rollout(v_prompts[k], gen.ids, "verifier", f"ver:{k}", task, gen.finish_reason, meta=meta)
                )
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
        self.seen = (list(rollouts), rewards.tolist())
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


def test_sketch_spell_mixed_roles_and_group_sizes_get_per_role_advantages(plain_model, tmp_path):
    method = SpellSketch(responders=3, verifiers=2)
    rows = spell_rows(40)
    # 4 document sets per step, each 1 question + 3 answers + 2 verdicts = 24 rollouts for a budget of 32
    trainer = make_trainer(
        plain_model, tmp_path, method, rows, max_steps=1, per_device_train_batch_size=32, num_generations=8
    )
    trainer.model.train()
    batch = trainer._generate_and_score_completions(generation_inputs(trainer, rows[:4]))
    rollouts, rewards = method.seen
    assert Counter(r.role for r in rollouts) == {"questioner": 4, "responder": 12, "verifier": 8}

    # rewards: questioner = Gaussian of its responders' mean (cross-role coupling inside one step)
    for k in range(4):
        answers = [
            rule(r.completion_ids) for r in rollouts if r.role == "responder" and r.meta["question"] == k
        ]
        question = next(
            i for i, r in enumerate(rollouts) if r.role == "questioner" and r.meta["question"] == k
        )
        assert rewards[question] == pytest.approx(spell_gaussian(statistics.fmean(answers)))

    # advantages, by hand: z-score per responder/verifier group, whitening per task over questioners
    expected = [0.0] * len(rollouts)
    by_key: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(rollouts):
        key = ("que", r.task) if r.role == "questioner" else ("group", r.group)
        by_key.setdefault(key, []).append(i)
    for members in by_key.values():
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

    # history memory: exactly the solvable questions, in method state, shown to the next questioner
    solvable = {
        r.meta["key"]: [r.completion_ids]
        for r, v in zip(rollouts, rewards, strict=True)
        if r.role == "questioner" and v > 0
    }
    assert solvable  # some question was solved by 1 or 2 of its 3 responders
    assert method.state_dict()["memory"] == solvable
    restored = SpellSketch()
    restored.load_state_dict(method.state_dict())
    assert restored.memory == method.memory
    trainer._generate_and_score_completions(generation_inputs(trainer, rows[:4]))
    shown = ["Harder than:" in text for text in method.prompts_seen]
    assert shown == [f"{row['task']}:{row['id']}" in solvable for row in rows[:4]]

    # and a real optimizer step on such a batch moves the weights
    trainer._metrics["train"].clear()  # the direct call above is not a training step
    before = parameters(trainer)
    trainer.train()
    assert changed(before, trainer)
    assert trainer.state.log_history[0]["grad_norm"] > 0
    assert {"rewards/questioner/mean", "rewards/responder/mean"} <= set(trainer.state.log_history[0])


# --- Absolute Zero: n=1 proposals whose learnability comes from untrainable Monte-Carlo solver probes ------


def learnability(solve_rate: float) -> float:
    """AZR's proposer reward (AZR paper, Eq. 4): 1 - rate, 0 for a task never or always solved."""
    return 1.0 - solve_rate if 0 < solve_rate < 1 else 0.0


class AbsoluteZeroSketch(Method):
    """Rows are (role, task) slots. A "propose" slot samples one task (n=1); `probes` Monte-Carlo solves of
    it (`trainable=False`) give its learnability reward. A "solve" slot answers the newest task of its
    type's buffer (or the row's own problem while the buffer is empty). Each token-rule check stands in
    for the harness sandbox executor; TRR++ whitens per (task, role) over the trainable rollouts only.
    """

    name = "azr-sketch"

    def __init__(self, probes: int = 4):
        self.probes = probes
        self.buffers: dict[str, list[list[int]]] = {}

    def rollout(self, rows: Sequence[dict[str, Any]], engine: Engine) -> list[Rollout]:
        prompts = []
        for row in rows:
            task = row["task"]
            if row["role"] == "solve" and self.buffers.get(task):
                prompts.append(engine.encode(user(f"Solve: {engine.decode(self.buffers[task][-1])}")))
            else:
                prompts.append(engine.encode(row["prompt"]))
        first = engine.generate(prompts, max_tokens=6)  # n=1 per slot, proposals and solves alike
        out, probe_prompts = [], []
        for k, (row, prompt, gen) in enumerate(zip(rows, prompts, first, strict=True)):
            meta = {"slot": k}
            out.append(
                Rollout(prompt, gen.ids, row["role"], f"slot:{k}", row["task"], gen.finish_reason, meta=meta)
            )
            if row["role"] == "propose":
                probe_prompts.append(
                    (k, row["task"], engine.encode(user(f"Solve: {engine.decode(gen.ids)}")))
                )
        if probe_prompts:
            many = [p for _, _, p in probe_prompts for _ in range(self.probes)]
            gens = engine.generate(many, max_tokens=3)
            for j, gen in enumerate(gens):
                k, task, prompt = probe_prompts[j // self.probes]
                out.append(
                    Rollout(
                        prompt, gen.ids, "solve", f"mc:{k}", task, gen.finish_reason,
                        trainable=False, meta={"probe_of": k},
                    )
                )  # fmt: skip
        return out

    def score(self, rollouts: Sequence[Rollout]) -> Tensor:
        rates: dict[int, list[float]] = {}
        for r in rollouts:
            if "probe_of" in r.meta:
                rates.setdefault(r.meta["probe_of"], []).append(rule(r.completion_ids))
        return torch.tensor(
            [
                learnability(statistics.fmean(rates[r.meta["slot"]]))
                if r.role == "propose"
                else rule(r.completion_ids)
                for r in rollouts
            ]
        )

    def advantages(self, rollouts: Sequence[Rollout], rewards: Tensor) -> Tensor:
        self.seen = (list(rollouts), rewards.tolist())
        adv = torch.zeros_like(rewards)
        train = [i for i, r in enumerate(rollouts) if r.trainable]
        keys = [(rollouts[i].task, rollouts[i].role) for i in train]
        adv[train] = whiten_by_key(rewards[train], keys).values  # TRR++: six baselines, no per-prompt group
        for r in rollouts:  # every proposal joins its task's buffer (the executor would validate it first)
            if r.role == "propose":
                self.buffers.setdefault(r.task, []).append(r.completion_ids)
        return adv

    def state_dict(self) -> dict[str, Any]:
        return {"buffers": {k: [list(t) for t in v] for k, v in self.buffers.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.buffers = {k: [list(t) for t in v] for k, v in state["buffers"].items()}


def azr_rows(n: int) -> list[dict]:
    slots = [(role, task) for role in ("propose", "solve") for task in ("deduction", "abduction")]
    return [
        {**row, "role": slots[i % 4][0], "task": slots[i % 4][1]}
        for i, row in enumerate(arithmetic_dataset_rows(n))
    ]


def test_sketch_absolute_zero_probes_feed_learnability_but_never_reach_the_loss(plain_model, tmp_path):
    method = AbsoluteZeroSketch(probes=4)
    rows = azr_rows(40)
    # num_generations=2 is TRL's minimum; AZR samples once per slot and the trainer pads the rest
    trainer = make_trainer(
        plain_model, tmp_path, method, rows, max_steps=1, per_device_train_batch_size=16, num_generations=2
    )
    trainer.model.train()
    slots = rows[:8]  # two slots of each (role, task)
    batch = trainer._generate_and_score_completions(generation_inputs(trainer, slots))
    rollouts, rewards = method.seen
    trained = [i for i, r in enumerate(rollouts) if r.trainable]
    probes = [r for r in rollouts if not r.trainable]
    assert [(rollouts[i].role, rollouts[i].task) for i in trained] == [(s["role"], s["task"]) for s in slots]
    assert len(probes) == 4 * 4 and all(r.role == "solve" for r in probes)

    # each proposer's reward is the learnability of its own Monte-Carlo solves
    for i in trained:
        if rollouts[i].role == "propose":
            mine = [p for p in probes if p.meta["probe_of"] == rollouts[i].meta["slot"]]
            assert len(mine) == 4
            assert rewards[i] == pytest.approx(
                learnability(statistics.fmean(rule(p.completion_ids) for p in mine))
            )

    # the batch holds the 8 slot rollouts, then 8 padded rows; no probe completion is trained on
    completions = batch_completions(batch)
    assert len(completions) == 16
    assert completions[:8] == [rollouts[i].completion_ids for i in trained] and completions[8:] == [[]] * 8
    probe_ids = [p.completion_ids for p in probes]
    assert not any(ids in probe_ids for ids in completions)
    assert batch["num_items_in_batch"] == sum(len(rollouts[i].completion_ids) for i in trained)
    assert trainer._metrics["train"]["rollouts/untrainable"] == [16.0]

    # TRR++ by hand: whitening within each (task, role) over trainable rows, the probes excluded
    expected = {}
    for key in {(rollouts[i].task, rollouts[i].role) for i in trained}:
        members = [i for i in trained if (rollouts[i].task, rollouts[i].role) == key]
        expected.update(zip(members, zscore([rewards[i] for i in members], eps=1e-6), strict=True))
    adv = batch["advantages"]
    torch.testing.assert_close(adv[:8], torch.tensor([expected[i] for i in trained]), atol=1e-5, rtol=0)
    assert adv[8:].abs().sum() == 0
    assert method.state_dict()["buffers"] == {
        task: [
            rollouts[i].completion_ids
            for i in trained
            if (rollouts[i].role, rollouts[i].task) == ("propose", task)
        ]
        for task in ("deduction", "abduction")
    }

    # a real step over shuffled slots: probes scored, dropped, and the weights move iff a row has advantage
    trainer._metrics["train"].clear()  # the direct call above is not a training step
    before = parameters(trainer)
    trainer.train()
    step = trainer.batches[-1]
    rollouts, _ = method.seen
    probe_ids = [r.completion_ids for r in rollouts if not r.trainable]
    assert trainer.state.log_history[0]["rollouts/untrainable"] == len(probe_ids)
    assert not any(ids in probe_ids for ids in batch_completions(step) if ids)
    assert changed(before, trainer) == bool(step["advantages"].abs().sum() > 0)


# --- Reasoning Arena: zero-variance groups re-scored against an anchor pool kept across steps -----------


def judge_prefers(a: Sequence[int], b: Sequence[int]) -> float:
    """Stand-in for the pairwise judge: a's soft outcome against b (1 win, 0.5 tie, 0 loss).

    Deterministic: the trace with the smaller token-id sum wins. The real judge is a harness judge
    scorer asked "which response is better" with the gold answer (Reasoning Arena paper, §4).
    """
    return 0.5 if sum(a) == sum(b) else float(sum(a) < sum(b))


class ArenaSketch(Method):
    """G samples per problem with a verifiable reward; groups with no reward variance are re-scored.

    A routed trace's judge reward is its mean outcome against the anchor pool (the group's other traces
    while the pool is empty), then the group is z-scored on it. Each routed group's best and worst
    traces join the pool (at most `pool_size`, newest kept): state that must survive a resume.
    Rows with `hard=True` stand for problems the verifier rejects every sample of (all-incorrect).
    """

    name = "arena-sketch"

    def __init__(self, samples: int = 4, pool_size: int = 6):
        self.G, self.pool_size = samples, pool_size
        self.pool: list[list[int]] = []
        self.pool_at_rollout: list[list[list[int]]] = []
        self.judged: list[dict[str, Any]] = []
        self.loaded: dict[str, Any] | None = None

    def rollout(self, rows: Sequence[dict[str, Any]], engine: Engine) -> list[Rollout]:
        self.pool_at_rollout.append([list(a) for a in self.pool])
        prompts = [engine.encode(row["prompt"]) for row in rows]
        gens = engine.generate([p for p in prompts for _ in range(self.G)], max_tokens=6)
        return [
            Rollout(
                prompts[k], gen.ids, "solver", f"{k}:{row['id']}", "math", gen.finish_reason, meta=dict(row)
            )
            for k, row in enumerate(rows)
            for gen in gens[k * self.G : (k + 1) * self.G]
        ]

    def score(self, rollouts: Sequence[Rollout]) -> Tensor:
        return torch.tensor([0.0 if r.meta["hard"] else rule(r.completion_ids) for r in rollouts])

    def advantages(self, rollouts: Sequence[Rollout], rewards: Tensor) -> Tensor:
        self.seen = (list(rollouts), rewards.tolist())
        groups = [r.group for r in rollouts]
        verifiable = group_zscore(rewards, groups, unbiased=False, eps=1e-6)  # Arena's Eq. 2
        adv = verifiable.values.clone()
        routed = [g for g in dict.fromkeys(groups) if verifiable.zero_std[groups.index(g)]]
        for group in routed:
            members = [i for i, g in enumerate(groups) if g == group]
            traces = [rollouts[i].completion_ids for i in members]
            judged = []
            for i, trace in enumerate(traces):
                anchors = self.pool or [t for j, t in enumerate(traces) if j != i]
                judged.append(statistics.fmean(judge_prefers(trace, a) for a in anchors))
            self.judged.append({"group": group, "anchors": [list(a) for a in self.pool], "rewards": judged})
            adv[members] = group_zscore(
                torch.tensor(judged), [group] * len(members), unbiased=False, eps=1e-6
            ).values
            best, worst = traces[judged.index(max(judged))], traces[judged.index(min(judged))]
            self.pool = [*self.pool, best, worst][-self.pool_size :]
        return adv

    def metrics(self, rollouts: Sequence[Rollout], rewards: Tensor) -> dict[str, float]:
        return {"arena/anchor_pool": len(self.pool)}

    def state_dict(self) -> dict[str, Any]:
        return {"pool": [list(a) for a in self.pool]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.loaded = state
        self.pool = [list(a) for a in state["pool"]]


def arena_rows(n: int) -> list[dict]:
    return [{**row, "hard": i % 3 != 1} for i, row in enumerate(arithmetic_dataset_rows(n))]


def test_sketch_reasoning_arena_routes_zero_variance_groups_and_resumes_its_anchor_pool(
    plain_model, tmp_path
):
    rows = arena_rows(60)
    method = ArenaSketch(samples=4)
    settings = dict(per_device_train_batch_size=12, num_generations=4, save_strategy="steps", save_steps=1)
    trainer = make_trainer(plain_model, tmp_path, method, rows, max_steps=2, **settings)
    trainer.model.train()

    # one step by hand: a hard (all-incorrect) group and two verifiable ones; the pool starts empty
    picked = [rows[0], rows[1], rows[4]]
    assert [r["hard"] for r in picked] == [True, False, False]
    batch = trainer._generate_and_score_completions(generation_inputs(trainer, picked))
    rollouts, rewards = method.seen
    adv = batch["advantages"]
    groups = [r.group for r in rollouts]
    routed = {j["group"] for j in method.judged}
    hard = groups[0]
    assert hard in routed and rewards[:4] == [0.0] * 4
    for group in dict.fromkeys(groups):
        members = [i for i, g in enumerate(groups) if g == group]
        values = [rewards[i] for i in members]
        if group in routed:  # re-scored by the judge, round robin within the group while the pool is empty
            traces = [rollouts[i].completion_ids for i in members]
            judged = [
                statistics.fmean(judge_prefers(t, o) for j, o in enumerate(traces) if j != i)
                for i, t in enumerate(traces)
            ]
            assert len(set(values)) == 1
            expected = [(v - statistics.fmean(judged)) / (statistics.pstdev(judged) + 1e-6) for v in judged]
        else:  # untouched: the verifiable reward's own z-score
            expected = [(v - statistics.fmean(values)) / (statistics.pstdev(values) + 1e-6) for v in values]
        torch.testing.assert_close(adv[members], torch.tensor(expected), atol=1e-5, rtol=0)
    assert adv[:4].abs().sum() > 0  # the all-incorrect group now has a learning signal
    assert any(g not in routed for g in groups)  # and some verifiable group kept its own advantages
    assert method.pool and len(method.pool) == 2 * len(routed)
    assert trainer._metrics["train"]["arena/anchor_pool"] == [float(len(method.pool))]

    # real steps with a checkpoint per step: the pool is in every checkpoint...
    trainer._metrics["train"].clear()
    trainer.train()
    for step in (1, 2):
        assert (tmp_path / f"checkpoint-{step}" / METHOD_STATE).is_file()
    saved = read_method_state(tmp_path / "checkpoint-2", 0)
    assert saved == method.state_dict() and saved["pool"]

    # ...and a new trainer resuming from it judges its next step against exactly that pool
    resumed_method = ArenaSketch(samples=4)
    resumed = make_trainer(plain_model, tmp_path, resumed_method, rows, max_steps=3, **settings)
    resumed.train(resume_from_checkpoint=str(tmp_path / "checkpoint-2"))
    assert resumed.state.global_step == 3
    assert resumed_method.loaded == saved
    assert resumed_method.pool_at_rollout[0] == saved["pool"]
    assert resumed_method.judged, "two thirds of the rows are hard: a step without a routed group is rare"
    assert resumed_method.judged[0]["anchors"] == saved["pool"]
    assert (tmp_path / "checkpoint-3" / METHOD_STATE).is_file()


# --- UloRL: segment rollout, unfinished samples carried across steps in method state --------------------


class UloRLSketch(Method):
    """Each step decodes one segment (`segment` tokens) of every carried-over sample and of G samples per new
    row; a sample reaching EOS or `max_tokens` is finished, the rest wait in the unfinished pool. A group is
    released to training once all its samples finished (our choice, docs/methods/ulorl.md); truncated
    samples get reward 0. The loss mask is DMMPT's (UloRL paper, Eq. 10), from the current policy's
    probabilities and entropies.
    """

    name = "ulorl-sketch"

    def __init__(self, samples: int = 2, segment: int = 3, max_tokens: int = 8):
        self.G, self.segment, self.max_tokens = samples, segment, max_tokens
        self.unfinished: list[Rollout] = []
        self.waiting: list[Rollout] = []  # finished, but a sibling is still decoding
        self.steps: list[dict[str, Any]] = []  # per rollout call: what was released and left behind

    def rollout(self, rows: Sequence[dict[str, Any]], engine: Engine) -> list[Rollout]:
        carried = (
            continue_rollouts(engine, self.unfinished, self.segment, self.max_tokens)
            if self.unfinished
            else []
        )
        version = engine.policy_version
        prompts = [engine.encode(row["prompt"]) for row in rows]
        gens = engine.generate([p for p in prompts for _ in range(self.G)], max_tokens=self.segment)
        new = []
        for j, gen in enumerate(gens):
            k = j // self.G
            reason = "stop" if gen.finish_reason == "stop" else "unfinished"
            group = f"v{version}:{k}:{rows[k]['id']}"
            meta = {"key": f"{group}:{j % self.G}"}
            new.append(
                Rollout(
                    prompt_ids=prompts[k],
                    completion_ids=gen.ids,
                    role="solver",
                    group=group,
                    task="math",
                    finish_reason=reason,
                    sampling_logprobs=gen.logprobs,
                    policy_versions=[version],
                    meta=meta,
                )
            )
        everything = carried + new
        self.unfinished = [r for r in everything if not r.finished]
        done = self.waiting + [r for r in everything if r.finished]
        pending = Counter(r.group for r in self.unfinished)
        released = [r for r in done if pending[r.group] == 0]
        self.waiting = [r for r in done if pending[r.group] > 0]
        self.steps.append({"version": version, "released": released, "unfinished": list(self.unfinished)})
        return released

    def score(self, rollouts: Sequence[Rollout]) -> Tensor:
        assert all(r.finished for r in rollouts)
        return torch.tensor([0.0 if r.truncated else rule(r.completion_ids) for r in rollouts])

    def advantages(self, rollouts: Sequence[Rollout], rewards: Tensor) -> Tensor:
        self.steps[-1]["rewards"] = rewards.tolist()  # one process: these are this step's released samples
        return group_zscore(rewards, [r.group for r in rollouts]).values

    def advantage_weights(self, batch: Batch) -> Tensor:
        """DMMPT multiplies the advantages: masked tokens stay in the normaliser (UloRL paper, Eq. 10)."""
        logps, entropies = batch.policy_logps_and_entropies()
        self.mask = dmmpt_mask(logps.exp(), entropies, batch.completion_mask, batch.rewards)
        return self.mask

    def state_dict(self) -> dict[str, Any]:
        return {
            "unfinished": [asdict(r) for r in self.unfinished],
            "waiting": [asdict(r) for r in self.waiting],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.unfinished = [Rollout(**r) for r in state["unfinished"]]
        self.waiting = [Rollout(**r) for r in state["waiting"]]


def test_sketch_ulorl_continues_unfinished_rollouts_across_steps(plain_model, tmp_path):
    from transformers import AutoTokenizer

    eos = AutoTokenizer.from_pretrained(plain_model).eos_token_id
    method = UloRLSketch(samples=2, segment=3, max_tokens=8)
    trainer = make_trainer(
        plain_model,
        tmp_path,
        method,
        arithmetic_dataset_rows(40),
        max_steps=3,
        per_device_train_batch_size=48,
        num_generations=3,
        max_completion_length=8,
        # the random tiny model almost never ends a sample; a bias on EOS makes short answers common, as a
        # real model's are, so the first step already has finished groups to train on
        generation_kwargs={"sequence_bias": {(eos,): 3.5}},
    )
    assert not trainer.mask_truncated_completions  # UloRL trains truncated samples, with reward 0
    trainer.train()
    assert trainer.state.global_step == 3 and len(method.steps) == len(trainer.batches) == 3

    multi = []
    for done, (step, batch) in enumerate(zip(method.steps, trainer.batches, strict=True)):
        assert step["version"] == done  # the optimizer steps taken before this rollout
        released = step["released"]
        assert released and all(r.finished for r in released)  # only finished samples are trained
        completions = batch_completions(batch)
        unfinished = {tuple(r.completion_ids) for r in step["unfinished"]}
        assert not unfinished & {tuple(c) for c in completions if c}
        for r, reward in zip(released, step["rewards"], strict=True):
            assert len(r.completion_ids) <= 8
            assert r.truncated == (r.completion_ids[-1] != eos) and (reward == 0 or not r.truncated)
            if len(r.segments) >= 2 and r.completion_ids in completions:
                multi.append(r)
        # DMMPT on the random model: entropy is far above sigma=0.2, so nothing is masked; it weighs the
        # advantages (now per token), and every real token stays in the normaliser
        assert "tool_mask" not in batch and batch["advantages"].dim() == 2
        assert batch["num_items_in_batch"] == batch["completion_mask"].sum()
    assert multi, "some trained sample was decoded over two or more steps"

    for r in multi:
        assert len(set(r.policy_versions)) == len(r.segments) >= 2  # one policy version per segment
        assert r.policy_versions == list(range(r.policy_versions[0], r.policy_versions[0] + len(r.segments)))
        assert sum(r.segments) == len(r.completion_ids)
        # the completion is its segments joined: each earlier step's pool held exactly the prefix so far
        for s in range(len(r.segments) - 1):
            pool = method.steps[r.policy_versions[s]]["unfinished"]
            earlier = next(p for p in pool if p.meta["key"] == r.meta["key"])
            assert earlier.completion_ids == r.completion_ids[: sum(r.segments[: s + 1])]
            assert (
                earlier.segments == r.segments[: s + 1]
                and earlier.policy_versions == r.policy_versions[: s + 1]
            )

    # the pool is method state: what a checkpoint's method_state.json holds, restorable as is
    assert method.unfinished and all(not r.finished for r in method.unfinished)
    save_method_state(tmp_path, 0, method.state_dict())
    restored = UloRLSketch()
    restored.load_state_dict(read_method_state(tmp_path, 0))
    assert restored.unfinished == method.unfinished and restored.waiting == method.waiting


# --- SPAE: per-token advantages (N, T) from step probes, and a policy-dependent loss mask -----------------

PROBE_TRIGGER = "**Final Answer**\n\\boxed{"


class SpaeSketch(Method):
    """G samples per problem (even rows up to 8 tokens, odd rows up to 5: completions of unequal length).

    Every `step_tokens` tokens is a step boundary; a probe samples one token after prompt + prefix +
    trigger, and its probability stands in for the step potential Phi_k (the real probe's Acc and Conf
    come from teacher-forced passes over the gold answer, SPAE paper, Eq. 7). Token j of step k gets
    (r - group mean) + xi * (Phi_k - Phi_{k-1}), whitened over every real token of the batch (Eq. 17).
    The loss mask keeps the tokens whose current-policy probability is below the batch median.
    """

    name = "spae-sketch"

    def __init__(self, samples: int = 4, step_tokens: int = 3, xi: float = 0.5):
        self.G, self.step, self.xi = samples, step_tokens, xi

    def rollout(self, rows: Sequence[dict[str, Any]], engine: Engine) -> list[Rollout]:
        prompts = [engine.encode(row["prompt"]) for row in rows]
        gens: dict[int, list] = {}
        for parity, budget in ((0, 8), (1, 5)):
            ks = [k for k in range(len(rows)) if k % 2 == parity]
            out = engine.generate([prompts[k] for k in ks for _ in range(self.G)], max_tokens=budget)
            for n, k in enumerate(ks):
                gens[k] = out[n * self.G : (n + 1) * self.G]
        rollouts = [
            Rollout(prompts[k], g.ids, "solver", f"{k}:{row['id']}", "math", g.finish_reason, g.logprobs)
            for k, row in enumerate(rows)
            for g in gens[k]
        ]
        trigger = engine.tokenizer.encode(PROBE_TRIGGER, add_special_tokens=False)
        probes = [
            (i, [*r.prompt_ids, *r.completion_ids[:end], *trigger])
            for i, r in enumerate(rollouts)
            for end in range(self.step, len(r.completion_ids) + self.step, self.step)
        ]
        phi: dict[int, list[float]] = {i: [] for i in range(len(rollouts))}
        for (i, _), gen in zip(probes, engine.generate([p for _, p in probes], max_tokens=1), strict=True):
            phi[i].append(math.exp(gen.logprobs[0]))
        return [Rollout(**{**asdict(r), "meta": {"phi": phi[i]}}) for i, r in enumerate(rollouts)]

    def score(self, rollouts: Sequence[Rollout]) -> Tensor:
        return torch.tensor([rule(r.completion_ids) for r in rollouts])

    def advantages(self, rollouts: Sequence[Rollout], rewards: Tensor) -> Tensor:
        self.last_rollouts = list(rollouts)
        lengths = [len(r.completion_ids) for r in rollouts]
        mask = completion_mask(lengths, max(lengths))
        outcome = group_center(rewards, [r.group for r in rollouts]).values  # Dr. GRPO, Eq. 16
        values = torch.zeros(mask.shape)
        for i, r in enumerate(rollouts):
            phi = r.meta["phi"]
            shaped = [0.0] + [b - a for a, b in zip(phi[:-1], phi[1:], strict=True)]  # Delta Phi; 0 first
            for j in range(lengths[i]):
                values[i, j] = outcome[i] + self.xi * shaped[j // self.step]
        self.values = whiten_tokens(values, mask)
        return self.values

    def loss_mask(self, batch: Batch) -> Tensor:
        logps, entropies = batch.policy_logps_and_entropies()
        self.policy = (logps, entropies)
        real = batch.completion_mask.bool()
        p = logps.exp()
        self.mask = (real & (p < p[real].median())).int()
        return self.mask


def test_sketch_spae_per_token_advantages_and_policy_loss_mask_reach_the_loss(plain_model, tmp_path):
    method = SpaeSketch(samples=4)
    rows = arithmetic_dataset_rows(40)
    trainer = make_trainer(
        plain_model, tmp_path, method, rows, max_steps=1, per_device_train_batch_size=16, num_generations=4
    )
    trainer.model.train()
    batch = trainer._generate_and_score_completions(generation_inputs(trainer, rows[:4]))
    real = batch["completion_mask"].bool()
    lengths = batch["completion_mask"].sum(1).tolist()
    assert max(lengths[4:8]) <= 5 and max(lengths[:4]) > 5  # unequal lengths, right-padded

    # the method's (N, T) values reach the loss as they are on real tokens, 0 on padding
    adv = batch["advantages"]
    assert adv.dim() == 2 and adv.shape == batch["completion_ids"].shape
    values = method.values[:, : adv.size(1)]
    assert values.shape == adv.shape  # the 16 rollouts are the whole row budget
    torch.testing.assert_close(adv[real], values[real])
    assert adv[~real].abs().sum() == 0
    assert len({round(v, 5) for v in adv[0][real[0]].tolist()}) > 1  # advantages vary along a completion
    assert adv[real].mean().abs() < 1e-5 and adv[real].std().item() == pytest.approx(1.0, abs=1e-4)

    # the mask: computed on the current policy, handed to TRL as tool_mask, counted in the normaliser
    logps, entropies = method.policy
    assert logps.shape == entropies.shape == real.shape and (entropies[real] > 0).all()
    for row, r in enumerate(method.last_rollouts):  # same weights: the policy's log-probs are the sampler's
        lp = torch.tensor(r.sampling_logprobs)
        torch.testing.assert_close(logps[row, : len(lp)], lp, atol=1e-4, rtol=0)
    torch.testing.assert_close(batch["tool_mask"], method.mask, check_dtype=False)
    kept = int(method.mask.sum())
    assert 0 < kept < int(real.sum())
    assert batch["num_items_in_batch"] == (batch["completion_mask"] * batch["tool_mask"]).sum() == kept

    trainer._metrics["train"].clear()  # the direct call above is not a training step
    before = parameters(trainer)
    trainer.train()
    assert changed(before, trainer)
    step = trainer.batches[-1]
    assert step["advantages"].dim() == 2 and "tool_mask" in step
