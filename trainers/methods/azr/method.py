"""Absolute Zero (AZR paper, §3): one policy proposes and solves deduction, abduction and induction
tasks over Python programs. One step (Algorithm 1, with n = 1 rollout per prompt):

1. propose: B prompts per task type. Deduction and abduction show K references from their buffer (drawn
   again while the prompt is over `max_prompt_tokens`); induction shows one program from D_abd ∪ D_ded
   and asks for N inputs and a message;
2. validate each parsed proposal in the sandbox (executor.py): safety, integrity, determinism over two
   processes. Every valid proposal joins its buffer, whatever its reward;
3. learnability: n Monte-Carlo solver rollouts of each valid proposal, scored but never trained on,
   give r_propose = 1 - mean (0 at mean 0 or 1); a proposal that is malformed or fails validation gets
   -1 (`reward_rule: code`, the released code, gives -0.5 to a valid one at mean 0 or 1 instead);
4. solve: B tasks per type, this step's valid ones (or the previous step's, `solver_lag: 1`) filled up
   from the buffer; one answer each, checked in the sandbox by value;
5. TRR++: advantages whitened within each of the six (task, role) slices.

The batch is the 3B proposals and 3B answers. Buffers, the generator and the answer-diversity history
are the method's state, saved in every checkpoint.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torch import Tensor

from harness import HarnessError
from harness.core.thinking import prompt_opens_think
from harness.sandbox import Limits
from trainers.engine import Engine
from trainers.method import Method, StageClock
from trainers.methods.azr import analysis, prompts
from trainers.methods.azr.buffers import MAX_PROGRAMS, Task, TaskBuffers, read_seed_file
from trainers.methods.azr.executor import FORBIDDEN, LIMITS, OUTSIDE, Check, Executor, Run
from trainers.methods.azr.options import AzrOptions
from trainers.methods.azr.parsing import Invalid, Proposal, extract_solution, format_ok, parse_proposal
from trainers.methods.azr.rewards import proposer_reward, solver_reward, trr_advantages
from trainers.rollout import Rollout

if TYPE_CHECKING:
    from trainers.config import TrainConfig

TASKS = prompts.TASKS
IDENTITY = "identity"  # `dataset:` for the paper's zero triplet; else a seed file (JSONL of tasks)
LIBRARY = "library"  # `dataset:` for the cold-start library's tasks (library.py), a richer seed
RESAMPLES = 8  # reference draws tried before a proposer prompt is cut to fit `max_prompt_tokens`


@dataclass
class _Proposal:
    """One proposer prompt's journey: what it showed, what came back, the task it made."""

    task: str
    shown: list[Task]
    prompt_ids: list[int]
    completion: Any = None
    text: str = ""
    parsed: Proposal | Invalid | None = None
    made: Task | None = None  # the validated task
    reason: str = ""  # why not
    successes: int | None = None  # of the Monte-Carlo solves
    reward: float = 0.0

    def record(self) -> dict[str, Any]:
        return {
            "role": "propose",
            "task": self.task,
            "completion": self.text,
            "valid": self.made is not None,
            "reason": self.reason,
            "task_made": self.made.to_dict() if self.made else None,
            "successes": self.successes,
            "reward": self.reward,
        }


@dataclass
class _Solve:
    """One solver prompt: the task, its gold (from the sandbox), the answer and its verdict."""

    task: str
    source: Task
    check: Check | None  # the gold, with the answer left blank
    prompt_ids: list[int] = field(default_factory=list)
    completion: Any = None
    text: str = ""
    answer: str | None = None
    verdict: str = ""
    reward: float = 0.0

    def record(self) -> dict[str, Any]:
        return {
            "role": "solve",
            "task": self.task,
            "source": self.source.to_dict(),
            "completion": self.text,
            "answer": self.answer,
            "verdict": self.verdict,
            "reward": self.reward,
        }


class AzrMethod(Method):
    name = "azr"
    options_class = AzrOptions

    def __init__(
        self, buffers: TaskBuffers, options: AzrOptions, batch_size: int, seed: int = 0, executor=None
    ):
        self.options, self.batch_size, self.buffers = options, batch_size, buffers
        self.executor = executor or _executor(options)
        self.rng = random.Random(seed)
        self.answers_seen: Counter[str] = Counter()  # solver answers so far, for answer diversity
        self._metrics: dict[str, float] = {}
        self._samples: list[dict[str, Any]] = []
        self._clock = StageClock()  # this step's seconds per stage

    @classmethod
    def check_batch(cls, config: TrainConfig, processes: int) -> None:
        """TRR++ whitens each (task, role) slice over every process's rows: it needs two."""
        if config.prompts_per_step * processes < 2:
            raise HarnessError(
                "azr: prompts_per_step 1 on one process puts one row in each (task, role) slice, and TRR++ "
                "(Eq. 8) gives a lone row advantage 0: no reward would reach the gradient, only the entropy "
                "bonus. Set prompts_per_step to 2 or more (the paper's B is 64)"
            )

    @classmethod
    def from_config(cls, config: TrainConfig, reward: Any = None) -> AzrMethod:
        options = cls.options_of(config)
        executor = _executor(options)
        buffers = seed_buffers(config.dataset, options.max_programs, executor)
        return cls(buffers, options, config.prompts_per_step, config.seed, executor)

    @classmethod
    def demonstrations(cls, config: TrainConfig, tokenizer: Any, examples: int) -> list:
        from trainers.methods.azr.coldstart import AzrDemonstrations, library_tasks

        options = cls.options_of(config)
        tasks = library_tasks(_executor(options))
        return AzrDemonstrations(tasks, options, config.seed).build(examples)

    @classmethod
    def dataset_rows(cls, config: TrainConfig) -> list[dict[str, Any]]:
        """Rows only count TRL's epochs: the method writes its own prompts from its buffers."""
        cls.options_of(config)
        seed_buffers(config.dataset, MAX_PROGRAMS)  # a missing seed file stops the run before loading
        return [
            {"prompt": [{"role": "user", "content": "azr"}], "id": f"azr-{i}"}
            for i in range(cls.rows_per_step(config))
        ]

    @classmethod
    def rows_per_step(cls, config: TrainConfig) -> int:
        """3B proposals and 3B answers (n = 1 rollout per prompt)."""
        return 2 * len(TASKS) * config.prompts_per_step

    @classmethod
    def sampler_group(cls, config: TrainConfig) -> int:
        return 2  # rows only count the batch; 6B is even

    # --- one step ----------------------------------------------------------------------------------

    def rollout(self, rows: Sequence[dict[str, Any]], engine: Engine) -> list[Rollout]:
        self._clock.seconds.clear()
        calls = self.executor.stats()
        proposals = self._propose(engine)
        # the code builds its solver batch before the step's proposals exist; the paper after
        lagged = self._solver_tasks() if self.options.solver_lag else None
        self._validate(proposals)
        self._learnability(engine, [p for p in proposals if p.made is not None])
        for p in proposals:
            p.reward = proposer_reward(
                p.successes,
                self.options.mc_samples,
                format_ok=format_ok(p.text, self._opens(engine, p.prompt_ids)),
                parsed=isinstance(p.parsed, Proposal),
                rule=self.options.reward_rule,
            )
        solves = self._solve(engine, self._solver_tasks() if lagged is None else lagged)
        self.buffers.end_step()
        self._metrics = self._step_metrics(proposals, solves, calls)
        self._samples = self._step_samples(proposals, solves)
        self.answers_seen.update(s.answer for s in solves if s.answer is not None)
        out = [self._rollout(p.prompt_ids, p.completion, "propose", p.task, p.reward) for p in proposals]
        out += [self._rollout(s.prompt_ids, s.completion, "solve", s.task, s.reward) for s in solves]
        return out

    def _propose(self, engine: Engine) -> list[_Proposal]:
        B, out = self.batch_size, []
        for task in (prompts.ABDUCTION, prompts.DEDUCTION):
            out += [self._proposer(engine, task) for _ in range(B)]
        for program in self.buffers.induction_programs(B, self.rng):
            text = prompts.propose_prompt(prompts.INDUCTION, [program], num_inputs=self.options.num_inputs)
            out.append(_Proposal(prompts.INDUCTION, [program], self._encode(engine, text)))
        with self._clock("generate"):
            gens = _generate(engine, [p.prompt_ids for p in out], self.options.propose_max_tokens)
        for p, gen in zip(out, gens, strict=True):
            p.completion, p.text = gen, engine.decode(gen.ids)
            p.parsed = parse_proposal(
                p.text, p.task, self.options.num_inputs, self.options.reject_multiple_functions
            )
        return out

    def _proposer(self, engine: Engine, task: str) -> _Proposal:
        """A deduction or abduction proposer's prompt with K references, drawn again while too long."""
        k, budget = self.options.references, self.options.max_prompt_tokens
        for attempt in range(RESAMPLES + k):
            shown = self.buffers.references(task, self.rng, max(0, k - max(0, attempt - RESAMPLES + 1)))
            ids = self._encode(engine, prompts.propose_prompt(task, shown, FORBIDDEN))
            if len(ids) <= budget:
                break
        return _Proposal(task, shown, ids)

    def _validate(self, proposals: list[_Proposal]) -> None:
        """Each parsed proposal run in the sandbox; the valid ones join their buffers."""
        with self._clock("validate"):
            pairs = [p for p in proposals if isinstance(p.parsed, Proposal) and p.task != prompts.INDUCTION]
            runs = self.executor.validate_many([(p.parsed.program, p.parsed.inputs[0]) for p in pairs])
            for p, run in zip(pairs, runs, strict=True):
                if run.valid:
                    p.made = Task(p.parsed.program, run.input, run.output)
                p.reason = run.reason
            for p in proposals:
                if p.task == prompts.INDUCTION and isinstance(p.parsed, Proposal):
                    program = p.shown[0].program
                    found = self.executor.validate_inputs(program, p.parsed.inputs)
                    if found.valid:
                        outputs = tuple(r.output for r in found.runs)
                        p.made = Task(
                            program, inputs=p.parsed.inputs, outputs=outputs, message=p.parsed.message
                        )
                    p.reason = found.reason
                elif isinstance(p.parsed, Invalid):
                    p.reason = p.parsed.reason
        for task in TASKS:
            self.buffers.add(task, [p.made for p in proposals if p.task == task and p.made is not None])

    def _learnability(self, engine: Engine, valid: list[_Proposal]) -> None:
        """n Monte-Carlo solves of each valid proposal: only their success count is kept."""
        n = self.options.mc_samples
        items = self._solver_items(engine, [(p.task, p.made) for p in valid])
        checked = [(p, item) for p, item in zip(valid, items, strict=True) if item.check is not None]
        probes = [replace(item) for _, item in checked for _ in range(n)]
        self._answer(engine, probes)
        for k, (p, _) in enumerate(checked):
            p.successes = sum(s.verdict == "pass" for s in probes[k * n : (k + 1) * n])

    def _solver_tasks(self) -> list[tuple[str, Task]]:
        """B tasks per type: this step's valid proposals (or, lagged, the previous step's), filled up
        from the buffers as they stand."""
        B, lag, chosen = self.batch_size, self.options.solver_lag, []
        for task in TASKS:
            fresh = self.buffers.validated(task, lag)
            chosen += [
                (task, t)
                for t in self.buffers.solver_tasks(task, fresh, B, self.rng, self.options.solver_batch)
            ]
        return chosen

    def _solve(self, engine: Engine, chosen: list[tuple[str, Task]]) -> list[_Solve]:
        solves = [s for s in self._solver_items(engine, chosen) if s.check is not None]
        self._answer(engine, solves)
        return solves

    def _solver_items(self, engine: Engine, chosen: list[tuple[str, Task]]) -> list[_Solve]:
        """Solver prompts of buffered tasks, their golds recomputed in the sandbox (cached): buffers keep
        the text the prompts show, the checks need values."""
        with self._clock("validate"):
            triplets = [(k, t) for k, (task, t) in enumerate(chosen) if task != prompts.INDUCTION]
            runs = self.executor.validate_many([(t.program, t.input) for _, t in triplets])
            golds: dict[int, Run | tuple[Run, ...] | None] = {
                k: run if run.valid else None for (k, _), run in zip(triplets, runs, strict=True)
            }
            for k, (task, t) in enumerate(chosen):
                if task == prompts.INDUCTION:
                    found = self.executor.validate_inputs(t.program, t.inputs)
                    golds[k] = found.runs if found.valid else None
        out = []
        for k, (task, t) in enumerate(chosen):
            gold = golds[k]
            if task == prompts.INDUCTION:
                text = prompts.solve_prompt(
                    task, pairs=list(zip(t.inputs, t.outputs, strict=True)), message=t.message
                )
                item = Check(task, "", cases=gold) if gold else None
            else:
                text = prompts.solve_prompt(task, t.program, input=t.input, output=t.output)
                item = Check(task, "", code=t.program, gold=gold.value) if gold else None
            out.append(_Solve(task, t, item, self._encode(engine, text)))
        return out

    def _answer(self, engine: Engine, solves: list[_Solve]) -> None:
        """One answer per solver prompt, read and checked in the sandbox; rewards by Eq. 5-6."""
        with self._clock("generate"):
            gens = _generate(engine, [s.prompt_ids for s in solves], self.options.solve_max_tokens)
        for s, gen in zip(solves, gens, strict=True):
            s.completion, s.text = gen, engine.decode(gen.ids)
            s.answer = extract_solution(s.text, s.task)
        readable = [s for s in solves if s.answer is not None and s.check is not None]
        with self._clock("validate"):
            verdicts = self.executor.check_many([_with_answer(s.check, s.answer) for s in readable])
        for s, verdict in zip(readable, verdicts, strict=True):
            s.verdict = verdict.status
        for s in solves:
            s.reward = solver_reward(
                s.verdict == "pass",
                format_ok=format_ok(s.text, self._opens(engine, s.prompt_ids)),
                valid=s.answer is not None,
            )

    def _encode(self, engine: Engine, text: str) -> list[int]:
        if self.options.template == "chat":
            return engine.encode(prompts.chat_messages(text))
        return list(engine.tokenizer.encode(prompts.r1_prompt(text), add_special_tokens=False))

    def _opens(self, engine: Engine, prompt_ids: list[int]) -> bool:
        """Whether the completion starts inside `<think>`: the R1 string prefills it; a chat template may."""
        return self.options.template == "r1" or prompt_opens_think(engine.tokenizer.decode(prompt_ids))

    def _rollout(self, prompt_ids, gen, role, task, reward) -> Rollout:
        return Rollout(
            prompt_ids=list(prompt_ids),
            completion_ids=list(gen.ids),
            role=role,
            group=f"{task}/{role}",
            task=task,
            finish_reason=gen.finish_reason,
            sampling_logprobs=list(gen.logprobs),
            reward=float(reward),
        )

    # --- rewards and advantages -----------------------------------------------------------------------

    def advantages(self, rollouts: Sequence[Rollout], rewards: Tensor) -> Tensor:
        return trr_advantages(
            rewards,
            [r.task for r in rollouts],
            [r.role for r in rollouts],
            [len(r.completion_ids) for r in rollouts],
            token_weighted=self.options.advantages == "token",
        ).values

    # --- what a step logs -------------------------------------------------------------------------------

    def _step_metrics(
        self, proposals: list[_Proposal], solves: list[_Solve], before: dict[str, int]
    ) -> dict[str, float]:
        out: dict[str, float] = {}
        for task in TASKS:
            mine = [p for p in proposals if p.task == task]
            answered = [s for s in solves if s.task == task]
            for role, rows in (("propose", mine), ("solve", answered)):
                if rows:
                    out[f"azr/{task}/{role}/reward"] = _mean([r.reward for r in rows])
                    out[f"azr/{task}/{role}/length"] = _mean([len(r.completion.ids) for r in rows])
            if mine:
                out[f"azr/{task}/propose/valid_rate"] = _mean([p.made is not None for p in mine])
                out[f"azr/{task}/propose/outside_subset_rate"] = _mean([OUTSIDE in p.reason for p in mine])
                stats = analysis.proposal_stats([p.successes for p in mine], self.options.mc_samples)
                out[f"azr/{task}/propose/trivial_rate"] = stats["trivial_rate"]  # learnability 0
                out[f"azr/{task}/propose/solved_rate"] = stats["solved_rate"]
            if answered:
                out[f"azr/{task}/solve/accuracy"] = _mean([s.verdict == "pass" for s in answered])
                given = [s.answer for s in answered if s.answer is not None]
                if given:
                    out[f"azr/{task}/solve/answer_diversity"] = analysis.answer_diversity(
                        given, self.answers_seen
                    )
        overall = analysis.proposal_stats([p.successes for p in proposals], self.options.mc_samples)
        out["azr/propose/valid_rate"] = overall["valid_rate"]
        if any(p.successes is not None for p in proposals):  # of the valid ones: 0 < solve rate < 1
            out["azr/propose/learnable_rate"] = overall["learnable_rate"]
        for task, size in self.buffers.sizes().items():
            out[f"azr/buffer/{task}"] = float(size)
        made = [p for p in proposals if p.made is not None]
        complexity = [
            c for c in (analysis.cognitive_complexity(p.made.program) for p in made) if c is not None
        ]
        if complexity:
            out["azr/propose/complexity"] = _mean(complexity)
        distances = [
            d
            for p in made
            if p.task != prompts.INDUCTION and p.shown
            for d in [
                analysis.mean_ast_edit_distance(
                    p.made.program, [t.program for t in p.shown], method=self.options.distance
                )
            ]
            if d is not None
        ]
        if distances:
            out["azr/propose/ast_distance"] = _mean(distances)
        texts = [p.text for p in proposals] + [s.text for s in solves]
        out["azr/safety/flagged"] = float(sum(analysis.safety_flag(t).flagged for t in texts))
        for key, value in self.executor.stats().items():  # this step's sandbox runs and cache hits
            out[f"azr/executor/{key}"] = float(value - before[key])
        for stage, seconds in self._clock.seconds.items():
            out[f"azr/seconds/{stage}"] = seconds
        return out

    def _step_samples(self, proposals: list[_Proposal], solves: list[_Solve]) -> list[dict[str, Any]]:
        """The first `logged_rollouts` proposals and answers, and every one the safety flag marks."""
        out = []
        for rows in (proposals, solves):
            for k, row in enumerate(rows):
                flag = analysis.safety_flag(row.text)
                if k < self.options.logged_rollouts or flag.flagged:
                    out.append({**row.record(), "safety_flags": list(flag.keywords)})
        return out

    # --- state ----------------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        return {
            "buffers": self.buffers.state_dict(),
            "rng": self.rng.getstate(),
            "answers": dict(self.answers_seen),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.buffers.load_state_dict(state["buffers"])
        self.rng.setstate(state["rng"])
        self.answers_seen = Counter(state["answers"])


def seed_buffers(dataset: str, max_programs: int, executor: Executor | None = None) -> TaskBuffers:
    """The paper's zero triplet (`dataset: identity`), the cold-start library's tasks with outputs the
    `executor` computes (`dataset: library`, a richer seed), or the tasks of a seed file."""
    if dataset == IDENTITY:
        return TaskBuffers(max_programs=max_programs)
    if dataset == LIBRARY:
        if executor is None:
            return TaskBuffers(max_programs=max_programs)  # only checking the setting
        from trainers.methods.azr.coldstart import library_seed

        return TaskBuffers(library_seed(executor), max_programs)
    if not Path(dataset).is_file():
        raise HarnessError(
            f"Absolute Zero seeds from `dataset: {IDENTITY}`, `dataset: {LIBRARY}` or a JSONL seed file; "
            f"{dataset} is none of them"
        )
    return TaskBuffers(read_seed_file(dataset), max_programs)


def _executor(options: AzrOptions) -> Executor:
    return Executor(
        Limits(wall=options.timeout, cpu=options.timeout, memory_mb=LIMITS.memory_mb),
        cache=options.answer_cache,
        accept_none=options.accept_none,
    )


def _with_answer(item: Check, answer: str) -> Check:
    return Check(item.kind, answer, item.code, item.gold, item.cases)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _generate(engine: Engine, prompt_ids: list[list[int]], max_tokens: int | None) -> list[Any]:
    """Called with no prompts too: generation can be a collective (`Engine`), and a process whose
    proposals were all invalid still joins the Monte-Carlo solves of the others."""
    return engine.generate(prompt_ids, max_tokens)
