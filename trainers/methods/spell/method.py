"""SPELL (its paper's §4): one policy as questioner, responder and verifier over document clusters.

Each step plays rounds of `questions_per_round` questions until `n` responder groups have
0 < mean < 1 (at most `max_rounds` rounds, then an error, or with `short_batch="train"` the step
trains on what it has). One round, batched per stage (Algorithm 1):

1. questioner: a (task, cluster) drawn uniformly (task first), m new documents plus the history
   memory's, the task's prompt (with the memory's questions as examples to surpass); one sample;
2. its JSON parsed: a malformed proposal is a format error, an unusable one is dropped;
3. grounding check: one responder sample with no documents; the rule crediting it means ungrounded;
4. responder: G samples with all the cluster's documents, cut in the middle to `max_input_tokens`;
5. verifier: V judgments of each answer the rule's extractor can read (question, that answer, the
   reference; no documents); their strict majority;
6. rewards: responder max(rule, majority); verifier agreement with its majority; questioner the
   mapping of the responders' mean, -0.5 ungrounded, the format penalty malformed;
7. the memory takes each solvable question.

Then role-specific dynamic sampling picks the rows (sampling.py), and `advantages` z-scores
responder and verifier groups and whitens the questioner rows over the batch (or per task).
Rule scores come from the harness's scorers: cem (general QA), numeric ±0.15% (financial math),
choice (multiple choice).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from harness import HarnessError
from harness.backends.chat import middle_truncate
from harness.core.thinking import prompt_opens_think
from trainers.advantages import group_zscore, whiten_by_key
from trainers.engine import Engine, any_process
from trainers.method import Method, StageClock
from trainers.methods.spell import prompts
from trainers.methods.spell.memory import Entry, HistoryMemory, questioner_documents
from trainers.methods.spell.options import SpellOptions
from trainers.methods.spell.parsing import FORMAT_ERROR, Proposal, Rejected, parse_judgment, parse_proposal
from trainers.methods.spell.rewards import (
    UNGROUNDED,
    majority,
    questioner_reward,
    responder_reward,
    verifier_rewards,
)
from trainers.methods.spell.sampling import Judged, Question, kept, select
from trainers.rewards import ScorerReward
from trainers.rollout import Rollout

if TYPE_CHECKING:
    from trainers.config import TrainConfig
    from trainers.methods.spell.corpus.dataset import Cluster

RULES = {prompts.GENERAL: "cem", prompts.MATH: "numeric", prompts.CHOICE: "choice"}


@dataclass
class _Question:
    """One question's journey through a round."""

    cluster: Cluster
    task: str
    documents: list[int]
    prompt_ids: list[int]
    completion: Any = None  # the questioner's Generation
    parsed: Proposal | Rejected | None = None
    ungrounded: bool = False
    answers: list[Any] = field(default_factory=list)  # responder Generations
    responder_prompt: list[int] = field(default_factory=list)
    rules: list[float] = field(default_factory=list)
    predictions: list[str | None] = field(default_factory=list)
    # answer index -> (the verifier prompt, its generations, their parsed decisions)
    judgments: dict[int, tuple[list[int], list[Any], list[int]]] = field(default_factory=dict)
    votes: dict[int, int] = field(default_factory=dict)
    responder_rewards: list[float] = field(default_factory=list)
    reward: float | None = None

    @property
    def mean(self) -> float | None:
        return sum(self.responder_rewards) / len(self.responder_rewards) if self.responder_rewards else None


class SpellMethod(Method):
    name = "spell"
    options_class = SpellOptions

    def __init__(
        self,
        clusters: Sequence[Cluster],
        options: SpellOptions,
        group_size: int,
        questions: int,
        seed: int = 0,
    ):
        if not clusters:
            raise HarnessError("the SPELL corpus has no clusters")
        self.options, self.group_size, self.questions = options, group_size, questions
        self.by_task: dict[str, list[Cluster]] = {}
        for cluster in clusters:
            self.by_task.setdefault(cluster.task, []).append(cluster)
        self.tasks = [t for t in prompts.TASKS if t in self.by_task]
        self.rules = {task: ScorerReward(RULES[task]) for task in self.tasks}
        self.memory = HistoryMemory(options.memory_size, options.memory_push)
        self.rng = random.Random(seed)
        self._invalid_reward = (
            -1.0 if options.vote == "mode" else 0.0
        )  # the code's penalty goes with its vote
        self._metrics: dict[str, float] = {}
        self._clock = StageClock()  # this step's seconds per stage
        self._samples: list[dict[str, Any]] = []

    @classmethod
    def from_config(cls, config: TrainConfig, reward: ScorerReward | None = None) -> SpellMethod:
        from trainers.methods.spell.corpus.dataset import load_clusters

        options = cls.options_of(config)
        return cls(
            load_clusters(config.dataset),
            options,
            config.num_generations,
            config.prompts_per_step,
            config.seed,
        )

    @classmethod
    def demonstrations(cls, config: TrainConfig, tokenizer: Any, examples: int) -> list:
        from trainers.methods.spell.coldstart import SpellDemonstrations
        from trainers.methods.spell.corpus.dataset import load_clusters

        options = cls.options_of(config)
        return SpellDemonstrations(load_clusters(config.dataset), options, config.seed).build(examples)

    @classmethod
    def rows_per_step(cls, config: TrainConfig) -> int:
        """N(G + 2) + V * ceil(N / V): responders, questioner positives and negatives, verifiers."""
        options = cls.options_of(config)
        n, v = config.prompts_per_step, options.verifier_samples
        return n * (config.num_generations + 2) + v * math.ceil(n / v)

    @classmethod
    def sampler_group(cls, config: TrainConfig) -> int:
        """The smallest divisor of the row count from 2 (TRL's minimum): rows only count the batch."""
        rows = cls.rows_per_step(config)
        return next(d for d in range(2, rows + 1) if rows % d == 0)

    @classmethod
    def dataset_rows(cls, config: TrainConfig) -> list[dict[str, Any]]:
        """One row per cluster (repeated to fill a step at least): TRL iterates them to count its epochs;
        the method draws its own questions (seeded, in its state)."""
        from trainers.methods.spell.corpus.dataset import load_clusters

        clusters = load_clusters(config.dataset)
        rows = [{"prompt": [{"role": "user", "content": c.id}], "id": c.id, "task": c.task} for c in clusters]
        return rows * math.ceil(cls.rows_per_step(config) / len(rows))

    # --- one step ----------------------------------------------------------------------------------

    def rollout(self, rows: Sequence[dict[str, Any]], engine: Engine) -> list[Rollout]:
        o, played, rounds = self.options, [], 0
        self._clock.seconds.clear()
        # rounds are global: a process that has its N questions still plays while another has not
        while rounds < o.max_rounds and any_process(
            sum(kept(self._summary(q)) for q in played) < self.questions
        ):
            rounds += 1
            played += self._play_round(engine)
        survived = sum(kept(self._summary(q)) for q in played)
        if survived < self.questions and o.short_batch == "error":
            raise HarnessError(
                f"SPELL: only {survived} of {self.questions} questions had responder groups with "
                f"0 < mean < 1 after {rounds} rounds of {o.questions_per_round} questions; raise "
                "options.max_rounds or options.questions_per_round, or set options.short_batch: train"
            )
        self._samples = [self._sample(engine, q) for q in played[: o.logged_questions]]
        return self._batch(played, rounds)

    def _play_round(self, engine: Engine) -> list[_Question]:
        o, clock = self.options, self._clock
        round_ = [self._draw(engine) for _ in range(o.questions_per_round)]
        with clock("questioner"):
            proposals = _generate(engine, [q.prompt_ids for q in round_], o.questioner_max_tokens)
        for q, gen in zip(round_, proposals, strict=True):
            q.completion = gen
            q.parsed = parse_proposal(
                o.questioner_prefill + engine.decode(gen.ids),
                q.task,
                lambda s: len(engine.tokenizer.encode(s)),
                _opens(engine, q.prompt_ids),
            )
        proposed = [q for q in round_ if isinstance(q.parsed, Proposal)]
        if o.grounding_filter:  # with no proposal too: every process makes the call
            blind = [self._responder_ids(engine, q, prompts.NO_DOCUMENTS) for q in proposed]
            with clock("grounding"):
                answers = _generate(engine, blind, o.responder_max_tokens)
            scores = self._rule(engine, answers, proposed, blind)
            for q, score in zip(proposed, scores, strict=True):
                q.ungrounded = score.value >= 1.0
        grounded = [q for q in proposed if not q.ungrounded]
        G = self.group_size
        for q in grounded:
            q.responder_prompt = self._responder_ids(engine, q, "\n".join(q.cluster.documents))
        with clock("responder"):
            answers = _generate(
                engine, [q.responder_prompt for q in grounded for _ in range(G)], o.responder_max_tokens
            )
        for k, q in enumerate(grounded):
            q.answers = answers[k * G : (k + 1) * G]
            scores = self._rule(engine, q.answers, [q] * G, [q.responder_prompt] * G)
            q.rules = [s.value for s in scores]
            q.predictions = [s.extracted for s in scores]
        if o.verifier:
            with clock("verifier"):
                self._verify(grounded, engine)
        for q in round_:
            self._reward(q)
        return round_

    def _draw(self, engine: Engine) -> _Question:
        task = self.rng.choice(self.tasks)
        cluster = self.rng.choice(self.by_task[task])
        memory = self.memory.entries(task, cluster.id)
        documents = questioner_documents(
            len(cluster.documents), memory, self.options.documents_per_question, self.rng
        )
        letter = self.rng.choice(prompts.LETTERS) if task == prompts.CHOICE else ""
        text = prompts.questioner_prompt(
            task,
            "\n".join(cluster.documents[i] for i in documents),
            [(e.question, e.answer) for e in memory],
            letter,
        )
        prefill = engine.tokenizer.encode(self.options.questioner_prefill, add_special_tokens=False)
        return _Question(cluster, task, documents, self._encode(engine, text) + prefill)

    def _encode(self, engine: Engine, text: str) -> list[int]:
        return middle_truncate(
            engine.encode([{"role": "user", "content": text}]), self.options.max_input_tokens
        )

    def _responder_ids(self, engine: Engine, q: _Question, documents: str) -> list[int]:
        p = q.parsed
        return self._encode(engine, prompts.responder_prompt(q.task, documents, p.question, p.options))

    def _rule(
        self,
        engine: Engine,
        answers: Sequence[Any],
        questions: Sequence[_Question],
        prompt_ids: Sequence[list[int]],
    ) -> list[Any]:
        """Rule scores of responder answers, each against its question's reference, by its task's scorer."""
        texts = [engine.decode(a.ids) for a in answers]
        out: list[Any] = [None] * len(texts)
        for task in self.tasks:
            idx = [i for i, q in enumerate(questions) if q.task == task]
            if idx:
                scores = self.rules[task].scores(
                    [texts[i] for i in idx],
                    [questions[i].parsed.answer for i in idx],
                    [_opens(engine, prompt_ids[i]) for i in idx],
                )
                for i, s in zip(idx, scores, strict=True):
                    out[i] = s
        return out

    def _verify(self, grounded: list[_Question], engine: Engine) -> None:
        V, jobs = self.options.verifier_samples, []
        for q in grounded:
            if q.task == prompts.CHOICE and not self.options.verify_choice:
                continue
            problem = (
                prompts.choice_problem(q.parsed.question, q.parsed.options)
                if q.parsed.options
                else q.parsed.question
            )
            for i, prediction in enumerate(q.predictions):
                if prediction is not None:
                    ids = self._encode(engine, prompts.verifier_prompt(problem, prediction, q.parsed.answer))
                    jobs.append((q, i, ids))
        gens = _generate(
            engine, [ids for _, _, ids in jobs for _ in range(V)], self.options.verifier_max_tokens
        )
        for k, (q, i, ids) in enumerate(jobs):
            mine = gens[k * V : (k + 1) * V]
            decisions = [parse_judgment(engine.decode(g.ids), _opens(engine, ids)) for g in mine]
            q.judgments[i] = (ids, mine, decisions)
            q.votes[i] = majority(decisions, self.options.vote)

    def _reward(self, q: _Question) -> None:
        o = self.options
        if isinstance(q.parsed, Rejected):
            q.reward = o.format_penalty if q.parsed.kind == FORMAT_ERROR else None
            return
        if q.ungrounded:
            q.reward = UNGROUNDED
            return
        q.responder_rewards = [
            responder_reward(rule, q.votes[i]) if i in q.votes else rule for i, rule in enumerate(q.rules)
        ]
        q.reward = questioner_reward(q.mean, o.questioner_reward, o.sigma)
        if self.memory.solvable(q.mean):
            shown = (
                prompts.choice_problem(q.parsed.question, q.parsed.options)
                if q.parsed.options
                else q.parsed.question
            )
            self.memory.push(q.task, q.cluster.id, Entry(tuple(q.documents), shown, q.parsed.answer))

    def _sample(self, engine: Engine, q: _Question) -> dict[str, Any]:
        """One question's journey as text: the proposal, how it was read, the answers and verdicts."""
        parsed = (
            {"rejected": q.parsed.kind, "reason": q.parsed.reason}
            if isinstance(q.parsed, Rejected)
            else asdict(q.parsed)
        )
        return {
            "task": q.task,
            "cluster": q.cluster.id,
            "documents": q.documents,
            "proposal": self.options.questioner_prefill + engine.decode(q.completion.ids),
            "parsed": parsed,
            "ungrounded": q.ungrounded,
            "answers": [engine.decode(a.ids) for a in q.answers],
            "predictions": q.predictions,
            "rules": q.rules,
            "judgments": {str(i): decisions for i, (_, _, decisions) in sorted(q.judgments.items())},
            "votes": {str(i): vote for i, vote in sorted(q.votes.items())},
            "responder_rewards": q.responder_rewards,
            "reward": q.reward,
        }

    def _summary(self, q: _Question) -> Question:
        return Question(q.task, q.reward, tuple(q.responder_rewards))

    # --- the batch ------------------------------------------------------------------------------------

    def _batch(self, played: list[_Question], rounds: int) -> list[Rollout]:
        o = self.options
        judged = [
            (k, i, Judged(k, tuple(q.judgments[i][2]), q.votes[i], q.rules[i]))
            for k, q in enumerate(played)
            for i in sorted(q.judgments)
        ]
        chosen = select(
            [self._summary(q) for q in played],
            [j for _, _, j in judged],
            self.questions,
            o.verifier_samples,
            self.rng,
            consistency=o.update_consistency,
            negatives_per_task=o.negatives_per_task,
        )
        out: list[Rollout] = []
        if o.train_questioner:
            for k in chosen.positives + chosen.negatives:
                q = played[k]
                out.append(
                    self._rollout(q.prompt_ids, q.completion, "questioner", f"que-{k}", q.task, q.reward)
                )
        for k in chosen.responders:
            q = played[k]
            for i, (a, r) in enumerate(zip(q.answers, q.responder_rewards, strict=True)):
                out.append(self._rollout(q.responder_prompt, a, "responder", f"res-{k}", q.task, r, answer=i))
        if o.train_verifier:
            for g in chosen.verifiers:
                k, i, group = judged[g]
                ids, gens, _ = played[k].judgments[i]
                for gen, r in zip(
                    gens, verifier_rewards(group.judgments, group.vote, self._invalid_reward), strict=True
                ):
                    out.append(self._rollout(ids, gen, "verifier", f"ver-{k}-{i}", played[k].task, r))
        self._metrics = self._step_metrics(played, judged, chosen, rounds)
        if not out:  # nothing survived: the step trains an all-padded batch
            q = played[0]
            reward = 0.0 if q.reward is None else q.reward
            out.append(
                self._rollout(
                    q.prompt_ids, q.completion, "questioner", "que-0", q.task, reward, trainable=False
                )
            )
        return out

    def _rollout(self, prompt_ids, gen, role, group, task, reward, trainable=True, **meta) -> Rollout:
        return Rollout(
            prompt_ids=list(prompt_ids),
            completion_ids=list(gen.ids),
            role=role,
            group=group,
            task=task,
            finish_reason=gen.finish_reason,
            sampling_logprobs=list(gen.logprobs),
            trainable=trainable,
            meta=meta,
            reward=float(reward),
        )

    def advantages(self, rollouts: Sequence[Rollout], rewards: Tensor) -> Tensor:
        out = torch.zeros_like(rewards)
        grouped = [i for i, r in enumerate(rollouts) if r.role != "questioner"]
        if grouped:
            out[grouped] = group_zscore(
                rewards[grouped], [rollouts[i].group for i in grouped], eps=1e-6
            ).values
        asked = [i for i, r in enumerate(rollouts) if r.role == "questioner" and r.trainable]
        if asked:
            keys = [rollouts[i].task for i in asked] if self.options.questioner_baseline == "task" else None
            out[asked] = whiten_by_key(rewards[asked], keys, eps=1e-6).values
        return out

    def _step_metrics(self, played, judged, chosen, rounds) -> dict[str, float]:
        n = len(played)
        parsed = [q.parsed for q in played]
        answered = [q for q in played if q.responder_rewards]
        means = [q.mean for q in answered]
        solvable = Counter(q.task for q in answered if 0 < q.mean < 1)
        voted = [j for _, _, j in judged if j.vote >= 0]
        rewarded = [q.reward for q in played if q.reward is not None]
        out = {
            "spell/questions": float(n),
            "spell/questioner/reward_all": sum(rewarded) / max(1, len(rewarded)),
            "spell/refill_rounds": float(rounds),
            "spell/questioner/format_error_rate": sum(
                isinstance(p, Rejected) and p.kind == FORMAT_ERROR for p in parsed
            )
            / n,
            "spell/questioner/dropped_rate": sum(
                isinstance(p, Rejected) and p.kind != FORMAT_ERROR for p in parsed
            )
            / n,
            "spell/questioner/ungrounded_rate": sum(q.ungrounded for q in played) / n,
            "spell/responder/mean_all_wrong": sum(m == 0 for m in means) / max(1, len(means)),
            "spell/responder/mean_mixed": sum(0 < m < 1 for m in means) / max(1, len(means)),
            "spell/responder/mean_all_right": sum(m == 1 for m in means) / max(1, len(means)),
            "spell/verifier/rule_disagreement": sum(float(j.vote) != j.rule for j in voted)
            / max(1, len(voted)),
            # how far the responders' solve rates are from the Gaussian reward's centre (Eq. 7)
            "spell/responder/band_distance": sum(abs(m - 0.5) for m in means) / max(1, len(means)),
            "spell/memory/size": float(len(self.memory)),
            "spell/batch/responder_groups": float(len(chosen.responders)),
            "spell/batch/questioner_positives": float(len(chosen.positives)),
            "spell/batch/questioner_negatives": float(len(chosen.negatives)),
            "spell/batch/verifier_groups": float(len(chosen.verifiers)),
        }
        answers = [r for q in answered for r in q.responder_rewards]
        if answers:  # every answer of every answered question, trained or not
            out["spell/responder/reward_all"] = sum(answers) / len(answers)
        for stage, seconds in self._clock.seconds.items():
            out[f"spell/seconds/{stage}"] = seconds
        for task in self.tasks:
            out[f"spell/solvable/{task}"] = solvable[task] / max(1, sum(solvable.values()))
        agreement = kappa([j.vote for j in voted], [int(j.rule >= 0.5) for j in voted])
        if agreement is not None:
            out["spell/verifier/kappa"] = agreement
        return out

    # --- state ----------------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        return {"memory": self.memory.state_dict(), "rng": self.rng.getstate()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.memory.load_state_dict(state["memory"])
        self.rng.setstate(state["rng"])


def _opens(engine: Engine, prompt_ids: list[int]) -> bool:
    """Whether the prompt leaves a think block open, so the completion's answer follows its `</think>`."""
    return prompt_opens_think(engine.tokenizer.decode(prompt_ids))


def _generate(engine: Engine, prompt_ids: list[list[int]], max_tokens: int | None) -> list[Any]:
    """The engine's generations; called when a stage has nothing to generate too, since generation can
    be a collective (`Engine`): every process makes each stage's call of every round."""
    return engine.generate(prompt_ids, max_tokens)


def kappa(a: Sequence[int], b: Sequence[int]) -> float | None:
    """Cohen's kappa of two 0/1 raters (the verifiers' majority and the rule); None where chance agreement
    is certain (both raters constant and equal) or nothing was rated."""
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    return None if chance >= 1.0 else (observed - chance) / (1.0 - chance)
