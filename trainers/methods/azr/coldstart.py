"""Absolute Zero's cold-start demonstrations and its optional library seed, from `library.py`'s programs.

Every output is computed by the sandboxed executor (validated as a proposal is: determinism over two
processes, plain values), so every demonstration is right by construction. Per program, in the method's
prompts and format (`<think>` ... `</think>` then `<answer>` with the fences the parsers read; with the
raw R1 template the prefilled `<think>` is the prompt's):

- proposers: deduction and abduction write the program and one of its inputs, shown K other library
  triplets as references; induction writes N inputs of the shown program and its description;
- solvers: deduction gives the output, abduction the input, induction the program from half the pairs.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from harness import HarnessError
from trainers.coldstart.demos import Demonstration
from trainers.methods.azr import prompts
from trainers.methods.azr.buffers import Task
from trainers.methods.azr.executor import FORBIDDEN
from trainers.methods.azr.library import PROGRAMS, Program


def library_tasks(executor) -> list[tuple[Program, list[Task]]]:
    """Each library program with its validated triplets (the executor computes every output); a program
    with an input the sandbox rejects is an error in the library, not a silent gap."""
    out = []
    for program in PROGRAMS:
        runs = executor.validate_many([(program.code, text) for text in program.inputs])
        bad = [
            f"{text}: {run.reason}" for text, run in zip(program.inputs, runs, strict=True) if not run.valid
        ]
        if bad:
            raise HarnessError(f"library program {program.code.splitlines()[0]!r} is invalid: {bad[0]}")
        out.append((program, [Task(program.code, run.input, run.output) for run in runs]))
    return out


def library_seed(executor) -> list[Task]:
    """`dataset: library`: the triplets and induction tasks of every library program (an ablation the
    paper allows: seeding from more than the identity triplet, AZR paper, §3.3.1)."""
    seed = []
    for program, triplets in library_tasks(executor):
        seed += triplets
        seed.append(
            Task(
                program.code,
                inputs=tuple(t.input for t in triplets),
                outputs=tuple(t.output for t in triplets),
                message=program.message,
            )
        )
    return seed


def _reply(thought: str, answer: str) -> str:
    return f"<think>\n{thought}\n</think>\n<answer>\n{answer}\n</answer>"


def _fence(label: str, text: str) -> str:
    return f"```{label}\n{text}\n```"


class AzrDemonstrations:
    """Builds one run's demonstrations (`build`), seeded by the run's seed."""

    def __init__(self, tasks: list[tuple[Program, list[Task]]], options, seed: int):
        self.tasks, self.options = tasks, options
        self.rng = random.Random(f"azr-cold-start-{seed}")

    def build(self, examples: int) -> list[Demonstration]:
        out, n = [], self.options.num_inputs
        for k in range(examples):
            program, triplets = self.tasks[k % len(self.tasks)]
            triplet = triplets[(k // len(self.tasks)) % len(triplets)]
            others = [t for p, ts in self.tasks if p is not program for t in ts]
            for task in (prompts.DEDUCTION, prompts.ABDUCTION):
                shown = self.rng.sample(others, min(self.options.references, len(others)))
                text = prompts.propose_prompt(task, shown, FORBIDDEN)
                thought = f"A new function. {program.message} I test it on {triplet.input}."
                reply = _reply(
                    thought, _fence("python", program.code) + "\n" + _fence("input", triplet.input)
                )
                out.append(self._demo("propose", task, text, reply, (program.code, triplet.input)))
            if len(triplets) >= n:
                text = prompts.propose_prompt(prompts.INDUCTION, [triplet], num_inputs=n)
                inputs = "\n".join(_fence("input", t.input) for t in triplets[:n])
                reply = _reply(
                    f"Inputs of different kinds show what f does: {program.message}",
                    inputs + "\n" + _fence("message", program.message),
                )
                out.append(
                    self._demo("propose", prompts.INDUCTION, text, reply, (program.code, program.message))
                )
                pairs = [(t.input, t.output) for t in triplets[:n]]
                text = prompts.solve_prompt(prompts.INDUCTION, pairs=pairs, message=program.message)
                reply = _reply(
                    f"The pairs fit the message: {program.message}", _fence("python", program.code)
                )
                out.append(self._demo("solve", prompts.INDUCTION, text, reply, (program.code,)))
            thought = f"Running f on {triplet.input} step by step gives {triplet.output}."
            out.append(deduction_demonstration(self.options, triplet, thought))
            text = prompts.solve_prompt(prompts.ABDUCTION, program.code, output=triplet.output)
            reply = _reply(f"f({triplet.input}) returns {triplet.output}.", _fence("input", triplet.input))
            out.append(self._demo("solve", prompts.ABDUCTION, text, reply, (program.code, triplet.output)))
        return out

    def _demo(self, role: str, task: str, text: str, reply: str, sources: Sequence[str]) -> Demonstration:
        return _demonstration(self.options, role, task, text, reply, sources)


def deduction_demonstration(options, task: Task, thought: str) -> Demonstration:
    """The deduction solver's demonstration of `task` (its output given its code and input), reasoned
    as `thought`."""
    text = prompts.solve_prompt(prompts.DEDUCTION, task.program, input=task.input)
    reply = _reply(thought, _fence("output", task.output))
    return _demonstration(options, "solve", prompts.DEDUCTION, text, reply, (task.program, task.input))


def _demonstration(
    options, role: str, task: str, text: str, reply: str, sources: Sequence[str]
) -> Demonstration:
    if options.template == "chat":
        return Demonstration(role, task, tuple(prompts.chat_messages(text)), reply, sources=tuple(sources))
    prompt = prompts.r1_prompt(text)  # ends with the prefilled <think>
    return Demonstration(role, task, prompt, reply.removeprefix("<think>"), sources=tuple(sources))
