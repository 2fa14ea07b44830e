"""One full SPELL step through the real trainer, with scripted policy outputs (SPELL paper,
Algorithm 1): the roles, groups, rewards, advantages and batch
composition are checked against a hand computation, then a real optimizer step is taken.

The script (N = 2 kept questions, G = 4 answers, V = 4 judgments, 5 questions per round):

| draw | questioner | grounding | answers (rule) | questioner reward |
|---|---|---|---|---|
| general, gen-1 | Paris | London (0) | Paris 1, Paris France 1, French capital 0 (YES), London 0 | 0.3247 |
| general, gen-2 | no JSON | | | format: -1 |
| math, math-1 | 12.5 | 12.5 (1) | | ungrounded: -0.5 |
| choice, mc-1 | B | (A) (0) | (B) x4, all 1 | mean 1: 0 |
| math, math-2 | 40 | 7 (0) | 40 1, 35 0, 35 0, no answer 0 | mean 1/4: 0.3247 |
"""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import torch
from trainer_helpers import scripted_trainer

from harness import HarnessError
from trainers.engine import Generation
from trainers.integration.checkpoints import read_method_state
from trainers.integration.engines import HFEngine
from trainers.integration.trainer import MethodGRPOTrainer
from trainers.methods.spell.corpus.dataset import Cluster
from trainers.methods.spell.method import SpellMethod, kappa
from trainers.methods.spell.options import SpellOptions

GAUSS_3_4 = math.exp(-18 * 0.25**2)  # the questioner's reward at mean 3/4 or 1/4, sigma 0.5/3

CLUSTERS = [
    Cluster("gen-1", "doc_general_qa", ("Alpha doc one.", "Alpha doc two.", "Alpha doc three."), "test"),
    Cluster("gen-2", "doc_general_qa", ("Beta doc one.", "Beta doc two."), "test"),
    Cluster("math-1", "docmath_qa", ("Gamma report one.", "Gamma report two."), "test"),
    Cluster("math-2", "docmath_qa", ("Delta report one.", "Delta report two."), "test"),
    Cluster("mc-1", "doc_mc", ("Epsilon page one.", "Epsilon page two."), "test"),
]
OPTIONS = {"A": "Alpha", "B": "Epsilon", "C": "Gamma", "D": "Delta"}
PROPOSALS = {  # keyed by a word of the cluster's documents
    "Alpha": '```json\n{"question": "Which city hosts Alpha?", "answer": "Paris"}\n```',
    "Beta": "I cannot write JSON.",
    "Gamma": '{"question": "What is Gamma\'s margin?", "answer": "12.5"}',
    "Epsilon": '```json\n{"question": "Which is Epsilon?", "options": '
    + '{"A": "Alpha", "B": "Epsilon", "C": "Gamma", "D": "Delta"}, "answer": "B"}\n```',
    "Delta": 'Growth is 40.\n```json\n{"question": "What is Delta\'s growth?", "answer": 40}\n```',
}
BLIND = {  # the grounding check's one answer, without documents
    "Which city hosts Alpha?": "The correct answer is London.",
    "What is Gamma's margin?": "Therefore, the answer is 12.5.",
    "Which is Epsilon?": "The correct answer is (A).",
    "What is Delta's growth?": "Therefore, the answer is 7.",
}
ANSWERS = {
    "Which city hosts Alpha?": [
        "The correct answer is Paris.",
        "The correct answer is Paris, France.",
        "The correct answer is the French capital.",
        "The correct answer is London.",
    ],
    "Which is Epsilon?": ["The correct answer is (B)."] * 4,
    "What is Delta's growth?": [
        "Therefore, the answer is 40.",
        "Therefore, the answer is 35.",
        "Therefore, the answer is 35.",
        "I do not know.",
    ],
}
JUDGMENTS = {  # keyed by the extracted answer the verifier is shown
    "Paris": ["[[YES]]", "[[YES]]", "[[YES]]", "[[NO]]"],
    "Paris, France": ["[[YES]]"] * 4,
    "the French capital": ["[[YES]]", "[[YES]]", "[[YES]]", "[[NO]]"],
    "London": ["[[NO]]", "[[NO]]", "[[YES]]", "[[NO]]"],
    "B": ["[[YES]]"] * 4,
    "40.": ["Decision: [[YES]]", "[[YES]]", "[[NO]]", "[[YES]]"],
    "35.": ["[[NO]]"] * 4,
}
DRAWS = [  # (task, cluster) per question of round 1, then the first question of the next step
    ("doc_general_qa", "gen-1"),
    ("doc_general_qa", "gen-2"),
    ("docmath_qa", "math-1"),
    ("doc_mc", "mc-1"),
    ("docmath_qa", "math-2"),
    ("doc_general_qa", "gen-1"),
]


class ScriptedDraws(random.Random):
    """The method's generator, with its task and cluster choices taken from a script."""

    def __init__(self, draws: list[tuple[str, str]]):
        super().__init__(0)
        self.script = [x for task, cluster in draws for x in (task, cluster)]

    def choice(self, seq):
        if self.script:
            wanted = self.script[0]
            for x in seq:
                if x == wanted or getattr(x, "id", None) == wanted:
                    self.script.pop(0)
                    return x
        return super().choice(seq)


class ScriptedEngine(HFEngine):
    """The trainer's engine with the policy's texts scripted by what each prompt asks."""

    def __init__(self, trainer: MethodGRPOTrainer, prefill: str = ""):
        super().__init__(trainer)
        self.prefill = prefill  # the questioner's prefill, which its scripted replies then leave out
        self.prompts: list[str] = []
        self.served: Counter[str] = Counter()

    def generate(self, prompts, max_tokens=None):
        self.served.clear()  # the i-th copy of a prompt in a call gets the i-th scripted reply
        return [self._generation(self._reply(self.tokenizer.decode(list(p)))) for p in prompts]

    def _reply(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if "## Document Context" in prompt:
            text = next(text for word, text in PROPOSALS.items() if f"{word} " in prompt.split("<text>\n")[1])
            assert prompt.endswith(self.prefill) and text.startswith(self.prefill)
            return text[len(self.prefill) :]
        if "Answer 1:" in prompt:
            answer = prompt.split("- Answer 1: ")[1].split("\n")[0]
            return self._next(f"judge:{answer}", JUDGMENTS[answer])
        question = next(q for q in BLIND if q in prompt)
        if "<text>\nEmpty\n</text>" in prompt:
            return BLIND[question]
        return self._next(question, ANSWERS[question])

    def _next(self, key: str, replies: list[str]) -> str:
        self.served[key] += 1
        return replies[(self.served[key] - 1) % len(replies)]

    def _generation(self, text: str) -> Generation:
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return Generation(ids, [-1.0] * len(ids), "stop")


def spell(scripted_draws: bool = True, **options: Any) -> SpellMethod:
    settings = dict(
        documents_per_question=2,
        verifier_samples=4,
        questions_per_round=5,
        max_rounds=2,
        max_input_tokens=32768,
    )
    method = SpellMethod(CLUSTERS, SpellOptions(**(settings | options)), group_size=4, questions=2, seed=0)
    if scripted_draws:
        method.rng = ScriptedDraws(DRAWS)
    return method


def trainer_for(method: SpellMethod, model: Path, out: Path, **args: Any) -> MethodGRPOTrainer:
    rows = [{"prompt": [{"role": "user", "content": c.id}], "id": c.id, "task": c.task} for c in CLUSTERS]
    settings = dict(
        per_device_train_batch_size=16,  # N(G + 2) + V ceil(N / V) = 2 * 6 + 4
        num_generations=2,
        max_completion_length=64,
        loss_type="dapo",
        learning_rate=1e-3,
    )
    return scripted_trainer(method, model, out, rows * 4, ScriptedEngine, **(settings | args))


def zscore(values: list[float]) -> list[float]:
    mean, std = statistics.fmean(values), statistics.stdev(values)
    return [(v - mean) / (std + 1e-6) for v in values]


def test_one_spell_step_matches_the_hand_computation(plain_model, tmp_path):
    method = spell()
    trainer = trainer_for(method, plain_model, tmp_path)
    trainer.model.train()
    inputs = [{"prompt": [{"role": "user", "content": "x"}]}] * 16
    batch = trainer._generate_and_score_completions(inputs)
    engine: ScriptedEngine = trainer.engine  # type: ignore[assignment]
    decode = engine.tokenizer.decode

    # the batch: 2 questioner positives + 2 negatives, 2 responder groups of 4, 1 verifier group of 4
    texts = [decode(ids, skip_special_tokens=True) for ids in batch["completion_ids"].tolist()]
    roles = [
        "questioner" if "question" in t or "JSON" in t else "verifier" if "[[" in t else "responder"
        for t in texts
    ]
    assert Counter(roles) == {"questioner": 4, "responder": 8, "verifier": 4}
    assert batch["completion_mask"].sum(1).min() > 0  # no padded row: the budget is exactly N(G+2)+V
    assert texts[:4] == [PROPOSALS["Alpha"], PROPOSALS["Delta"], PROPOSALS["Beta"], PROPOSALS["Gamma"]]
    assert texts[4:12] == ANSWERS["Which city hosts Alpha?"] + ANSWERS["What is Delta's growth?"]
    eligible = {  # the verifier groups whose majority agrees with the rule and is not unanimous
        "Paris": [1.0, 1.0, 1.0, 0.0],
        "London": [1.0, 1.0, 0.0, 1.0],
        "40.": [1.0, 1.0, 0.0, 1.0],
    }
    judged = next(a for a in eligible if f"- Answer 1: {a}\n" in decode(batch["prompt_ids"][12].tolist()))
    assert texts[12:] == JUDGMENTS[judged]

    # rewards and advantages by hand (Eqs. 4-9)
    questioner = zscore([GAUSS_3_4, GAUSS_3_4, -1.0, -0.5])  # batch whitening over the 4 questioner rows
    responders = zscore([1.0, 1.0, 1.0, 0.0]) + zscore([1.0, 0.0, 0.0, 0.0])  # max(rule, vote) per answer
    verifiers = zscore(eligible[judged])
    expected = torch.tensor(questioner + responders + verifiers)
    torch.testing.assert_close(batch["advantages"], expected, atol=1e-5, rtol=0)
    assert batch["num_items_in_batch"] == batch["completion_mask"].sum()

    metrics = {k: v[-1] for k, v in trainer._metrics["train"].items()}
    assert metrics["rewards/questioner/mean"] == pytest.approx((2 * GAUSS_3_4 - 1.5) / 4)
    assert metrics["rewards/responder/mean"] == pytest.approx(4 / 8)
    assert metrics["rewards/verifier/mean"] == pytest.approx(3 / 4)
    assert metrics["spell/questions"] == 5 and metrics["spell/refill_rounds"] == 1
    assert metrics["spell/questioner/format_error_rate"] == pytest.approx(1 / 5)
    assert metrics["spell/questioner/ungrounded_rate"] == pytest.approx(1 / 5)
    assert metrics["spell/questioner/dropped_rate"] == 0
    assert metrics["spell/responder/mean_mixed"] == pytest.approx(2 / 3)
    assert metrics["spell/responder/mean_all_right"] == pytest.approx(1 / 3)
    assert metrics["spell/responder/mean_all_wrong"] == 0
    assert metrics["spell/responder/reward_all"] == pytest.approx(8 / 12)  # gen-1 3/4, mc-1 4/4, math-2 1/4
    # 7 answers judged ("I do not know." has no answer to show; mc-1's letters are the rule's alone, the
    # paper's D.5), one majority against the rule: "the French capital"
    assert metrics["spell/verifier/rule_disagreement"] == pytest.approx(1 / 7)
    assert metrics["spell/responder/band_distance"] == pytest.approx((0.25 + 0.5 + 0.25) / 3)
    assert -1 <= metrics["spell/verifier/kappa"] < 1  # one disagreement in 7: not perfect agreement
    assert not any("- Answer 1: B\n" in p for p in engine.prompts)
    assert metrics["spell/solvable/doc_general_qa"] == metrics["spell/solvable/docmath_qa"] == 0.5
    assert metrics["spell/memory/size"] == 2
    assert (metrics["spell/batch/responder_groups"], metrics["spell/batch/verifier_groups"]) == (2, 1)
    assert (metrics["spell/batch/questioner_positives"], metrics["spell/batch/questioner_negatives"]) == (
        2,
        2,
    )

    # the memory holds the two solvable questions and shows gen-1's to its next questioner
    memory = method.memory.entries("doc_general_qa", "gen-1")
    assert [(e.question, e.answer) for e in memory] == [("Which city hosts Alpha?", "Paris")]
    assert method.memory.entries("docmath_qa", "math-2")[0].answer == "40"
    assert method.memory.entries("doc_mc", "mc-1") == []  # every responder right: not solvable


def test_verify_choice_judges_the_letters_too_as_the_released_code_does(plain_model, tmp_path):
    """`verify_choice: true`: the verifier also judges doc_mc answers (max(rule, vote) as elsewhere)."""
    trainer = trainer_for(spell(verify_choice=True), plain_model, tmp_path)
    trainer.model.train()
    trainer._generate_and_score_completions([{"prompt": [{"role": "user", "content": "x"}]}] * 16)
    metrics = {k: v[-1] for k, v in trainer._metrics["train"].items()}
    assert metrics["spell/verifier/rule_disagreement"] == pytest.approx(1 / 11)
    assert sum("- Answer 1: B\n" in p for p in trainer.engine.prompts) == 4 * 4  # 4 answers, V = 4


def test_the_next_questioner_sees_the_memory_and_its_documents(plain_model, tmp_path):
    method = spell()
    trainer = trainer_for(method, plain_model, tmp_path)
    trainer.model.train()
    trainer._generate_and_score_completions([{"prompt": [{"role": "user", "content": "x"}]}] * 16)
    first = method.memory.entries("doc_general_qa", "gen-1")[0]
    question = method._draw(trainer.engine)
    assert question.cluster.id == "gen-1"
    text = trainer.engine.tokenizer.decode(question.prompt_ids)
    assert "## Previous Examples\n### Example 1:\nQuestion: Which city hosts Alpha?\nAnswer: Paris" in text
    assert "fundamentally different and more complex" in text
    # the memory's two documents plus one new one: all three of gen-1, in the cluster's order
    assert set(first.documents) < {0, 1, 2} and question.documents == [0, 1, 2]
    assert "Alpha doc one.\nAlpha doc two.\nAlpha doc three." in text


def test_a_real_optimizer_step_on_the_mixed_batch(plain_model, tmp_path):
    method = spell()
    trainer = trainer_for(method, plain_model, tmp_path)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    after = dict(trainer.model.named_parameters())
    assert any(not torch.equal(v, after[n].detach()) for n, v in before.items())
    logged = trainer.state.log_history[0]
    assert logged["grad_norm"] > 0
    assert {"rewards/questioner/mean", "rewards/responder/mean", "rewards/verifier/mean"} <= set(logged)
    assert logged["batch/padded_rows"] == 0


def test_refill_plays_more_rounds_then_stops_with_a_clear_error(plain_model, tmp_path):
    method = spell(questions_per_round=2)  # round 1: gen-1 (kept) and gen-2; round 2: math-1, mc-1
    trainer = trainer_for(method, plain_model, tmp_path)
    trainer.model.train()
    with pytest.raises(HarnessError, match=r"only 1 of 2 questions .* after 2 rounds of 2 questions"):
        trainer._generate_and_score_completions([{"prompt": [{"role": "user", "content": "x"}]}] * 16)

    method = spell(questions_per_round=2, short_batch="train")
    trainer = trainer_for(method, plain_model, tmp_path / "short")
    trainer.model.train()
    batch = trainer._generate_and_score_completions([{"prompt": [{"role": "user", "content": "x"}]}] * 16)
    metrics = {k: v[-1] for k, v in trainer._metrics["train"].items()}
    assert metrics["spell/refill_rounds"] == 2 and metrics["spell/questions"] == 4
    assert metrics["spell/batch/responder_groups"] == 1
    # one positive, one negative (gen-2's format error: the general task's own), 4 answers, 4 judgments
    assert metrics["spell/batch/questioner_negatives"] == 1
    assert metrics["batch/padded_rows"] == 6 and batch["completion_mask"][10:].sum() == 0


def test_a_step_with_nothing_to_train_feeds_one_masked_row(plain_model, tmp_path):
    method = spell(questions_per_round=1, max_rounds=1, short_batch="train")
    method.rng = ScriptedDraws([("doc_general_qa", "gen-2")])  # a format error, and nothing else
    trainer = trainer_for(method, plain_model, tmp_path)
    trainer.model.train()
    batch = trainer._generate_and_score_completions([{"prompt": [{"role": "user", "content": "x"}]}] * 16)
    metrics = {k: v[-1] for k, v in trainer._metrics["train"].items()}
    assert metrics["spell/questioner/format_error_rate"] == 1.0
    # one row per micro-batch (steps_per_generation = 1), masked: not 16 rows of zero gradient
    assert batch["completion_ids"].shape[0] == 1 == metrics["batch/padded_rows"]
    assert batch["completion_mask"].sum() == 0 and batch["advantages"].abs().sum() == 0


def test_the_questioner_prefill_opens_its_reply_and_is_read_with_it(plain_model, tmp_path):
    prefill = '```json\n{"question": "'
    method = spell(questions_per_round=1, max_rounds=1, short_batch="train", questioner_prefill=prefill)
    method.rng = ScriptedDraws([("doc_general_qa", "gen-1")])
    trainer = trainer_for(method, plain_model, tmp_path)
    trainer.engine = ScriptedEngine(trainer, prefill)
    trainer.model.train()
    batch = trainer._generate_and_score_completions([{"prompt": [{"role": "user", "content": "x"}]}] * 16)
    metrics = {k: v[-1] for k, v in trainer._metrics["train"].items()}
    # the reply 'Which city hosts Alpha?", "answer": "Paris"}...' parses only with the prefill before it
    assert metrics["spell/questioner/format_error_rate"] == 0
    assert metrics["spell/batch/responder_groups"] == 1
    tokenizer = trainer.processing_class
    asked = trainer.engine.prompts[0]
    assert asked.endswith("<|im_start|>assistant\n" + prefill)  # after the generation header
    # the questioner row trains on the reply alone: the prefill is part of its prompt
    first = batch["prompt_ids"][0][batch["prompt_mask"][0].bool()].tolist()
    assert tokenizer.decode(first).endswith(prefill)
    assert tokenizer.decode(batch["completion_ids"][0], skip_special_tokens=True).startswith("Which city")
    # the step's readable record (OUT/samples.jsonl), taken once
    (sample,) = method.take_samples()
    assert sample["proposal"] == PROPOSALS["Alpha"] and sample["parsed"]["answer"] == "Paris"
    assert sample["answers"] == ANSWERS["Which city hosts Alpha?"] and sample["rules"] == [1, 1, 0, 0]
    assert sample["votes"] == {"0": 1, "1": 1, "2": 1, "3": 0}
    assert sample["responder_rewards"] == [1, 1, 1, 0] and sample["reward"] == pytest.approx(GAUSS_3_4)
    assert method.take_samples() == []


def test_ablation_switches_change_what_is_trained(plain_model, tmp_path):
    method = spell(train_questioner=False, train_verifier=False, verifier=False)
    trainer = trainer_for(method, plain_model, tmp_path)
    trainer.model.train()
    trainer._generate_and_score_completions([{"prompt": [{"role": "user", "content": "x"}]}] * 16)
    metrics = {k: v[-1] for k, v in trainer._metrics["train"].items()}
    # without a verifier "the French capital" is wrong: gen-1's mean is 1/2, so its reward is 1 and
    # only the responders train
    assert "rewards/questioner/mean" not in metrics and "rewards/verifier/mean" not in metrics
    assert metrics["rewards/responder/mean"] == pytest.approx(3 / 8)
    assert not any(p.startswith("## TASK") for p in trainer.engine.prompts)


def test_resume_gives_identical_weights_and_method_state(plain_model, tmp_path):
    """Two steps straight through, against one step, a checkpoint, and a fresh trainer resuming."""
    saving = dict(max_steps=2, save_strategy="steps", save_steps=1)
    straight = spell(scripted_draws=False, short_batch="train")
    first = trainer_for(straight, plain_model, tmp_path / "a", **saving)
    first.train()
    assert len(straight.memory) > 0  # the state being checked is not empty

    resumed = spell(scripted_draws=False, short_batch="train")
    second = trainer_for(resumed, plain_model, tmp_path / "a", **saving)
    second.train(resume_from_checkpoint=str(tmp_path / "a" / "checkpoint-1"))
    assert resumed.state_dict() == straight.state_dict()
    final = dict(second.model.named_parameters())
    for name, value in first.model.named_parameters():
        torch.testing.assert_close(final[name], value, atol=0, rtol=0)
    saved = read_method_state(tmp_path / "a" / "checkpoint-2", 0)
    assert saved == straight.state_dict()


def test_kappa_of_the_verifiers_majority_against_the_rule():
    assert kappa([1, 1, 0, 0], [1, 1, 0, 0]) == 1.0
    assert kappa([1, 0, 1, 0], [0, 1, 0, 1]) == -1.0
    # observed 3/4; chance 0.75 * 0.5 + 0.25 * 0.5 = 0.5; (0.75 - 0.5) / 0.5
    assert kappa([1, 1, 1, 0], [1, 1, 0, 0]) == pytest.approx(0.5)
    assert kappa([1, 1], [1, 1]) is None and kappa([], []) is None  # chance agreement certain, or nothing
