"""UloRL's segment rollout through the real trainer over six steps, with scripted policy outputs, checked
against a hand computation (UloRL paper, Algorithm 1 and its reward): the pool, each segment's policy
version, the termination rules, the rewards, and which groups train at each step; then real optimizer
steps on the tiny model and an exact resume.

G = 2 samples per prompt, L = 24 completion tokens in S = 3 segments of 8, 2 groups in flight, 1 group
trained per step, problems admitted in the dataset's order. Each scripted sample is `length` tokens:
a lead token (which sample it is), " so" padding, then its answer (and EOS when it stops).

| step (version) | admitted | decoded this step | ends | trains |
|---|---|---|---|---|
| 0 | P, Q | P0 6 (EOS), P1 8 of 12, Q0 4 (EOS), Q1 6 (EOS) | P0, Q0, Q1 | none: Q all correct, dropped |
| 1 | R | P1 +4 (EOS), R0 8 of 28, R1 8 of 10 | P1 | P (P0 waited 1 version) |
| 2 | T | R0 +8, R1 +2 (EOS), T0 8 (EOS on the 8th), T1 8 of 24 | R1, T0 | none: no group complete |
| 3 | - | R0 +8 = 24: truncated, T1 +8 | R0 (reward 0) | R (R1 waited 1) |
| 4 | U | T1 +8 = 24 (EOS 24th: stop), U0 4 (EOS), U1 4 (EOS) | T1, U0, U1 | T (T0 waited 2); U waits |
| 5 | V | V0 1 (EOS), V1 1 (EOS) | V0, V1 | U (waited 1); V all wrong, dropped |

R0's first 24 tokens end with the right answer, yet it gets 0: truncated samples are not scored.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch
from trainer_helpers import scripted_trainer

from harness.core.types import Item
from harness.scoring.rules import gold_text
from trainers.data import RowOrder, item_rows
from trainers.engine import Generation
from trainers.integration.checkpoints import read_method_state
from trainers.integration.engines import HFEngine
from trainers.methods.ulorl.method import UloRLMethod, UloRLOptions
from trainers.rewards import ScorerReward

G, L, S = 2, 24, 3
PROBLEMS = {"P": 7, "Q": 3, "R": 9, "T": 5, "U": 4, "V": 8}  # name -> the right answer
# name -> per sample: (length in tokens, answer written, ends with EOS)
SCRIPT = {
    "P": [(6, 7, True), (12, 1, True)],
    "Q": [(4, 3, True), (6, 3, True)],
    "R": [(28, 9, False), (10, 9, True)],
    "T": [(8, 5, True), (24, 6, True)],
    "U": [(4, 4, True), (4, 0, True)],
    "V": [(1, 8, True), (1, 8, True)],
}
LEADS = ("A", "B")  # sample j's first token, so a continued prefix names its sample


def rows() -> list[dict[str, Any]]:
    items = [
        Item(f"p{name}", f"Problem {name}: give {answer}.", gold_text(str(answer), name))
        for name, answer in PROBLEMS.items()
    ]
    return item_rows(items, "{problem}")


def scripted_ids(tokenizer, j: int, length: int, answer: int, eos: bool) -> list[int]:
    """Sample j's tokens: its lead, " so" padding, its answer (the answer last in the 24-token window
    when the script runs past L, as R0's does), and EOS when it stops."""
    enc = lambda text: tokenizer.encode(text, add_special_tokens=False)  # noqa: E731
    if length == 1:
        return [tokenizer.eos_token_id]  # V's samples: EOS alone (no answer token fits)
    lead, tail = enc(LEADS[j]), enc(f" {answer}")
    body = length - len(lead) - len(tail) - int(eos)
    if not eos and length > L:  # the answer ends exactly at the cap, then more padding
        before = L - len(lead) - len(tail)
        return lead + enc(" so") * before + tail + enc(" so") * (length - L)
    assert body >= 0, (length, answer)
    return lead + enc(" so") * body + tail + ([tokenizer.eos_token_id] if eos else [])


class ScriptedEngine(HFEngine):
    """Continues each prompt + prefix along its sample's script; fresh samples are numbered in call order."""

    calls: list[tuple[int, int]] = []  # (rows, max_tokens) of every generate call

    def generate(self, prompts, max_tokens=None):
        ScriptedEngine.calls.append((len(prompts), max_tokens))
        out = []
        for k, ids in enumerate(prompts):
            ids = list(ids)
            name, prompt_len = self._problem(ids)
            prefix = ids[prompt_len:]
            if prefix:
                j = LEADS.index(self.tokenizer.decode(prefix[:1]))
            else:
                j = sum(1 for p in prompts[:k] if list(p) == ids)
            full = scripted_ids(self.tokenizer, j, *SCRIPT[name][j])
            assert full[: len(prefix)] == prefix, "the prefix is what this sample decoded so far"
            new = full[len(prefix) : len(prefix) + max_tokens]
            stop = bool(new) and new[-1] == self.tokenizer.eos_token_id
            out.append(Generation(new, [-0.5] * len(new), "stop" if stop else "length"))
        return out

    def _problem(self, ids: list[int]) -> tuple[str, int]:
        for row in rows():
            prompt = self.encode(row["prompt"])
            if ids[: len(prompt)] == prompt:
                return row["id"][1:], len(prompt)
        raise AssertionError("an unknown prompt")


def in_order(data: list[dict[str, Any]]) -> RowOrder:
    """The rows admitted in the dataset's order."""
    return RowOrder(data, seed=0, shuffle=False)


def ulorl(**options: Any) -> UloRLMethod:
    settings = dict(segments=S, groups_in_flight=2, logged_groups=2) | options
    return UloRLMethod(ScorerReward("integer"), UloRLOptions(**settings), in_order(rows()), G, L)


def trainer_for(method: UloRLMethod, model: Path, out: Path, **args: Any):
    settings = dict(
        per_device_train_batch_size=G,  # one group per step
        num_generations=G,
        max_completion_length=L,
        max_steps=6,
        learning_rate=1e-3,
        loss_type="dapo",
        beta=0.0,
        shuffle_dataset=False,
        lr_scheduler_type="constant",  # a run stopped at step 3 has the uninterrupted run's schedule
    )
    return scripted_trainer(method, model, out, rows(), ScriptedEngine, **(settings | args))


class Recorder:
    """What each step's rollout returned and the batch TRL got."""

    def __init__(self, trainer):
        self.steps: list[dict[str, Any]] = []
        original = trainer._generate_and_score_completions

        def record(inputs):
            batch = original(inputs)
            method = trainer.method
            self.steps.append(
                {
                    "batch": batch,
                    "metrics": dict(method._metrics),
                    "pool": {
                        key: [None if s is None else (s.segments, s.finish_reason) for s in g.samples]
                        for key, g in method.pool.groups.items()
                    },
                    "samples": method._samples,
                }
            )
            return batch

        trainer._generate_and_score_completions = record


def released(step: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for g in step["samples"] for s in g["samples"]]


def test_six_scripted_steps_match_the_hand_computation(plain_model, tmp_path):
    ScriptedEngine.calls = []
    method = ulorl()
    trainer = trainer_for(method, plain_model, tmp_path)
    recorder = Recorder(trainer)
    trainer.train()
    steps = recorder.steps
    assert len(steps) == 6

    # which groups train at each step, and what the pool holds after it
    trained = [[g["group"] for g in s["samples"]] for s in steps]
    assert trained == [[], ["0:pP"], [], ["2:pR"], ["3:pT"], ["4:pU"]]
    assert [sorted(s["pool"]) for s in steps] == [
        ["0:pP"],  # Q dropped
        ["2:pR"],
        ["2:pR", "3:pT"],
        ["3:pT"],
        ["4:pU"],  # U complete and ready, held back by the one-group budget
        [],  # V dropped, U trained
    ]
    assert steps[0]["pool"]["0:pP"] == [([6], "stop"), ([8], "unfinished")]
    assert steps[2]["pool"]["2:pR"] == [([8, 8], "unfinished"), ([8, 2], "stop")]
    assert steps[2]["pool"]["3:pT"] == [([8], "stop"), ([8], "unfinished")]
    assert steps[4]["pool"]["4:pU"] == [([4], "stop"), ([4], "stop")]

    # each trained sample's segments, their policy versions, how it ended, its reward and its wait
    expect = {
        1: [([6], [0], "stop", 1.0, 1), ([8, 4], [0, 1], "stop", 0.0, 0)],
        3: [([8, 8, 8], [1, 2, 3], "length", 0.0, 0), ([8, 2], [1, 2], "stop", 1.0, 1)],
        4: [([8], [2], "stop", 1.0, 2), ([8, 8, 8], [2, 3, 4], "stop", 0.0, 0)],
        5: [([4], [4], "stop", 1.0, 1), ([4], [4], "stop", 0.0, 1)],
    }
    for step, samples in expect.items():
        got = [
            (s["segments"], s["policy_versions"], s["finish_reason"], s["reward"], s["waited"])
            for s in released(steps[step])
        ]
        assert got == samples, step
    truncated = released(steps[3])[0]
    assert truncated["text"].rstrip().endswith("9") and truncated["reward"] == 0.0  # right, but cut: 0

    # what reached TRL: the released group's two rows with the z-scored advantages, or an all-masked row
    z = 0.5 / (math.sqrt(0.5) + 1e-4)  # GRPO's (r - mean) / (std + 1e-4), Bessel std of {0, 1}
    for step, signs in {1: [1, -1], 3: [-1, 1], 4: [1, -1], 5: [1, -1]}.items():
        batch = steps[step]["batch"]
        assert batch["completion_mask"].sum(1).tolist() == [sum(s["segments"]) for s in released(steps[step])]
        advantages = batch["advantages"]  # (B, T): DMMPT's weights make them per token
        first = advantages[:, 0].tolist()
        assert first == pytest.approx([sign * z for sign in signs], rel=1e-6)
        assert batch["num_items_in_batch"] == batch["completion_mask"].sum()  # DMMPT keeps the normaliser
    for step in (0, 2):  # idle steps: one masked row, nothing trained
        assert steps[step]["batch"]["completion_mask"].sum() == 0

    # the per-step numbers
    m = [s["metrics"] for s in steps]
    assert [x["ulorl/admitted_groups"] for x in m] == [2, 1, 1, 0, 1, 1]
    assert [x["ulorl/decoded_samples"] for x in m] == [4, 3, 4, 2, 3, 2]
    assert [x["ulorl/continued_samples"] for x in m] == [0, 1, 2, 2, 1, 0]
    assert [x["ulorl/ended_samples"] for x in m] == [3, 1, 2, 1, 3, 2]
    assert [x["ulorl/carried_samples"] for x in m] == [1, 2, 2, 1, 0, 0]
    assert [x["ulorl/waiting_samples"] for x in m] == [1, 0, 2, 1, 0, 0]
    assert [x["ulorl/released_groups"] for x in m] == [0, 1, 0, 1, 1, 1]
    assert [x["ulorl/dropped_groups"] for x in m] == [1, 0, 0, 0, 0, 1]
    assert [x["ulorl/ready_groups"] for x in m] == [0, 1, 0, 1, 2, 1]
    assert [x["ulorl/truncation_rate"] for x in m] == [0, 0, 0, 1, 0, 0]
    assert [x.get("ulorl/staleness/max") for x in m] == [None, 1, None, 1, 2, 1]
    assert [x.get("ulorl/segments_per_sample") for x in m] == [None, 1.5, None, 2.5, 2.0, 1.0]
    assert [x.get("ulorl/oldest_token_age/max") for x in m] == [None, 1, None, 2, 2, 1]  # waited + lag
    assert [x["ulorl/trained_tokens"] for x in m] == [0, 18, 0, 34, 32, 8]
    # every call asked for at most one segment, and no more than the cap left
    assert all(n > 0 and budget <= L // S for n, budget in ScriptedEngine.calls)
    assert trainer.state.global_step == 6


def test_resume_mid_run_continues_every_sample_exactly(plain_model, tmp_path):
    """Stopped after three optimizer steps (the table's steps 0-2) with R's truncated sample and T's long one
    in flight, resumed: the same pool, the same batches and the same weights as the uninterrupted run."""
    whole = trainer_for(ulorl(), plain_model, tmp_path / "whole", save_strategy="steps", save_steps=3)
    whole_steps = Recorder(whole)
    whole.train()

    first = trainer_for(
        ulorl(), plain_model, tmp_path / "resumed", save_strategy="steps", save_steps=3, max_steps=3
    )
    first.train()
    state = read_method_state(tmp_path / "resumed" / "checkpoint-3", 0)
    assert state["admitted"] == 4 and [g["key"] for g in state["pool"]["groups"]] == ["2:pR", "3:pT"]
    r0, r1 = state["pool"]["groups"][0]["samples"]
    assert (r0["segment_lengths"], r0["policy_versions"], r0["finish_reason"]) == (
        [8, 8],
        [1, 2],
        "unfinished",
    )
    assert (r1["segment_lengths"], r1["finish_reason"]) == ([8, 2], "stop")

    resumed = trainer_for(ulorl(), plain_model, tmp_path / "resumed", save_strategy="steps", save_steps=3)
    resumed_steps = Recorder(resumed)
    resumed.train(resume_from_checkpoint=str(tmp_path / "resumed" / "checkpoint-3"))
    assert len(resumed_steps.steps) == 3
    for a, b in zip(whole_steps.steps[3:], resumed_steps.steps, strict=True):
        assert a["samples"] == b["samples"] and a["pool"] == b["pool"]
        for key in ("completion_ids", "completion_mask", "advantages"):
            assert torch.equal(a["batch"][key], b["batch"][key])
    for p, q in zip(whole.model.parameters(), resumed.model.parameters(), strict=True):
        assert torch.equal(p, q)
    assert whole.method.state_dict() == resumed.method.state_dict()


def test_without_dynamic_sampling_uniform_groups_train_with_zero_advantage(plain_model, tmp_path):
    method = ulorl(dynamic_sampling=False)
    trainer = trainer_for(method, plain_model, tmp_path, max_steps=1)
    recorder = Recorder(trainer)
    trainer.train()
    step = recorder.steps[0]
    assert [g["group"] for g in step["samples"]] == ["1:pQ"]  # all correct, trained (advantage 0)
    assert step["batch"]["advantages"].abs().sum() == 0
    assert step["metrics"]["ulorl/dropped_groups"] == 0


REPLIES = {  # problem -> (gold, the two samples' texts); "long" runs past the cap
    "half": ("1/2", ["The answer is 0.5", "The answer is 1/3"]),
    "length": ("0.27m", ["It is 27cm", "It is 5m"]),
    "cut": ("9", ["long", "The answer is 9"]),
}


class TextEngine(HFEngine):
    """Each problem's two texts, EOS-terminated; "long" is 40 tokens of text ending in the right answer."""

    def generate(self, prompts, max_tokens=None):
        out = []
        for k, ids in enumerate(prompts):
            text = self.tokenizer.decode(list(ids))
            name = next(n for n in REPLIES if f"Problem {n}" in text)
            j = sum(1 for p in prompts[:k] if list(p) == list(ids))
            reply = REPLIES[name][1][j]
            if reply == "long":
                new = self.tokenizer.encode(" so" * 40 + " 9", add_special_tokens=False)[:max_tokens]
                out.append(Generation(new, [-0.5] * len(new), "length"))
            else:
                new = [*self.tokenizer.encode(reply, add_special_tokens=False), self.tokenizer.eos_token_id]
                out.append(Generation(new, [-0.5] * len(new), "stop"))
        return out


def test_rewards_are_binary_rule_first_then_the_judge_and_truncation_scores_zero(plain_model, tmp_path):
    """{0, 1} rewards: the math rule takes 0.5 for 1/2 without asking the judge; the LLM equivalence
    judge (a real HTTP server on 127.0.0.1 with scripted verdicts, standing in for the paper's unreleased
    verifier) takes 27cm for 0.27m; a truncated sample gets 0 unscored even though it ends in the answer."""
    from fake_openai import FakeOpenAI

    from harness.scoring.judge import JudgeConfig

    def judge(body, count):
        yes = "27cm" in body["messages"][0]["content"].split("Predicted Answer:")[1]
        content = "Decision: [[YES]]" if yes else "Decision: [[NO]]"
        return 200, {"choices": [{"message": {"content": content}, "finish_reason": "stop"}], "usage": {}}, {}

    items = [Item(f"p{n}", f"Problem {n}: solve it.", gold_text(gold, n)) for n, (gold, _) in REPLIES.items()]
    data = item_rows(items, "{problem}")
    with FakeOpenAI(judge) as fake:
        reward = ScorerReward(
            "math+judge", judge=JudgeConfig.from_settings({"model": "fake/model", "base_url": fake.base_url})
        )
        options = UloRLOptions(
            segments=1, importance_sampling="tois", dynamic_sampling=False, logged_groups=3
        )
        method = UloRLMethod(reward, options, in_order(data), 2, 16)
        trainer = scripted_trainer(
            method, plain_model, tmp_path, data, TextEngine, per_device_train_batch_size=6,
            num_generations=2, max_completion_length=16, max_steps=1, loss_type="dapo",
        )  # fmt: skip
        recorder = Recorder(trainer)
        trainer.train()
    got = {
        g["group"]: [(s["reward"], s["finish_reason"]) for s in g["samples"]]
        for g in recorder.steps[0]["samples"]
    }
    assert got == {
        "0:phalf": [(1.0, "stop"), (0.0, "stop")],
        "1:plength": [(1.0, "stop"), (0.0, "stop")],
        "2:pcut": [(0.0, "length"), (1.0, "stop")],
    }
    asked = [b["messages"][0]["content"].split("Predicted Answer:")[1] for b in fake.bodies]
    assert len(asked) == 3 and not any("0.5" in a or " 9" in a for a in asked)  # only the rule's rejects
