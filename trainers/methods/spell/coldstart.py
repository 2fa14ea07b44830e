"""SPELL's cold-start demonstrations, built from the run's own document clusters (no evaluation data).

Facts are read off the documents mechanically, so every demonstration's answer is right by
construction:

- document QA and multiple choice (web clusters): a sentence of the shown documents that holds a number;
  the question asks which number fills its blank, the answer is that number (multiple choice: with three
  other numbers of the cluster as distractors, the right one under the letter the prompt demands);
- financial math (report clusters): a markdown table of the shown documents; the question asks for the
  change of a row between its two years, or the sum of two rows in one year.

Per question, three roles: the questioner's reply (the JSON the parser reads, after the configured
prefill; half of them with earlier questions of the same cluster in the prompt, as the history memory
shows them), the responder's answer given all of the cluster's documents ("The correct answer is ..." /
a short derivation ending "Therefore, the answer is ..."), and the verifier's judgment of an answer
against the reference, [[YES]] for the same value and [[NO]] for a distractor, in equal numbers. The
questions are templates, not multi-hop: they teach the formats, not the paper's difficulty.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from harness import HarnessError
from trainers.coldstart.demos import Demonstration
from trainers.methods.spell import prompts
from trainers.methods.spell.parsing import _number_text

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_NUMBER = re.compile(r"(?<![\w.,-])-?\d(?:[\d,]*\d)?(?:\.\d+)?(?!\w)")
_TABLE_ROW = re.compile(r"^\|(.+)\|$")
BLANK = "___"


@dataclass(frozen=True)
class Fact:
    """A question with its right answer and a wrong one, grounded in `documents` (indices shown)."""

    task: str
    documents: tuple[int, ...]
    question: str
    answer: str  # the reference as the questioner writes it
    wrong: str  # a plausible wrong value (the verifier's NO; a distractor)
    derivation: str = ""  # the responder's working (financial math)
    options: dict[str, str] | None = None


def number_facts(documents: Sequence[str], shown: Sequence[int]) -> list[tuple[int, str, str]]:
    """(document, sentence with the blank, the number) for every number in the prose (not the tables) of
    the shown documents."""
    out = []
    for d in shown:
        prose = " ".join(line for line in documents[d].splitlines() if not line.lstrip().startswith("|"))
        for sentence in _SENTENCE.split(prose):
            for match in _NUMBER.finditer(sentence):
                cloze = sentence[: match.start()] + BLANK + sentence[match.end() :]
                out.append((d, cloze.strip(), match.group(0)))
    return out


def cloze_question(cloze: str) -> str:
    return f'According to the text, what number fills the blank in this statement: "{cloze}"?'


def tables(
    documents: Sequence[str], shown: Sequence[int]
) -> list[tuple[int, list[str], dict[str, list[int]]]]:
    """(document, column headers, {row label: values}) of the markdown tables of two numeric columns."""
    out = []
    for d in shown:
        rows = [m.group(1) for line in documents[d].splitlines() if (m := _TABLE_ROW.match(line.strip()))]
        if len(rows) < 3:
            continue
        header = [c.strip() for c in rows[0].split("|")]
        body = {}
        for row in rows[2:]:
            cells = [c.strip() for c in row.split("|")]
            values = [_integer(c) for c in cells[1:]]
            if len(cells) == 3 and all(v is not None for v in values):
                body[cells[0]] = values
        if len(header) == 3 and body:
            out.append((d, header, body))
    return out


def _integer(text: str) -> int | None:
    text = text.replace(",", "")
    return int(text) if text.isdigit() else None


def _company(documents: Sequence[str]) -> str:
    for pattern in (r"^(.+?) is an? ", r"Founded in \d+, (.+?) operates"):
        found = re.search(pattern, documents[0])
        if found:
            return found.group(1)
    return "the company"


def _label(kind: str, row: str) -> str:
    if kind.lower() == "segment" and not row.lower().startswith("total"):
        return f"{row} revenue"
    return row[0].lower() + row[1:]


class SpellDemonstrations:
    """Builds the demonstrations of one SPELL run (`build`), seeded by the run's seed."""

    def __init__(self, clusters: Sequence, options, seed: int):
        self.by_task = {t: [c for c in clusters if c.task == t] for t in prompts.TASKS}
        self.options = options
        self.rng = random.Random(f"spell-cold-start-{seed}")
        prefill = options.questioner_prefill
        if prefill and not _reply("x", 1).startswith(prefill):
            raise HarnessError(
                f"cold start: the questioner replies start with {_reply('x', 1)[:14]!r}, which "
                f"options.questioner_prefill {prefill!r} does not begin"
            )

    def build(self, examples: int) -> list[Demonstration]:
        out = []
        for task in prompts.TASKS:
            clusters = self.by_task[task]
            if not clusters:
                continue
            for k in range(examples):
                cluster = clusters[k % len(clusters)]
                fact = self.fact(task, cluster.documents)
                if fact is None:
                    continue
                history = self._history(task, cluster.documents) if k // 2 % 2 else []
                out += [
                    self.questioner(task, cluster, fact, history),
                    self.responder(task, cluster, fact),
                    self.verifier(task, cluster, fact, agree=k % 2 == 0),
                ]
        return out

    def fact(self, task: str, documents: Sequence[str]) -> Fact | None:
        m = self.options.documents_per_question
        if task == prompts.MATH:
            return self._math_fact(documents, m)
        shown = tuple(sorted(self.rng.sample(range(len(documents)), min(m, len(documents)))))
        facts = number_facts(documents, shown)
        if not facts:
            return None
        _, cloze, number = self.rng.choice(facts)
        others = sorted({n for _, _, n in number_facts(documents, range(len(documents)))} - {number})
        wrong = self.rng.choice(others) if others else str(int(float(number.replace(",", ""))) + 1)
        question = cloze_question(cloze)
        if task == prompts.GENERAL:
            return Fact(task, shown, question, number, wrong)
        distractors = self.rng.sample(others, 3) if len(others) >= 3 else [*others, "0", "1", "2"][:3]
        letter = self.rng.choice(prompts.LETTERS)
        values = iter(distractors)
        options = {k: number if k == letter else next(values) for k in prompts.LETTERS}
        wrong_letter = self.rng.choice([k for k in prompts.LETTERS if k != letter])
        return Fact(task, shown, question, letter, wrong_letter, options=options)

    def _math_fact(self, documents: Sequence[str], m: int) -> Fact | None:
        found = tables(documents, range(len(documents)))
        if not found:
            return None
        d, header, body = self.rng.choice(found)
        rest = [i for i in range(len(documents)) if i != d]
        shown = tuple(sorted([d, *self.rng.sample(rest, min(m - 1, len(rest)))]))
        company, (kind, new, old) = _company(documents), header
        rows = list(body)
        if len(rows) >= 2 and self.rng.random() < 0.5:
            a, b = self.rng.sample(rows, 2)
            x, y = body[a][0], body[b][0]
            question = (
                f"What was the combined {_label(kind, a)} and {_label(kind, b)} of {company} in fiscal "
                f"{new}, in thousands of US dollars?"
            )
            derivation = (
                f"From the table, {_label(kind, a)} was {x:,} and {_label(kind, b)} was {y:,} in fiscal "
                f"{new}. {x} + {y} = {x + y}."
            )
            return Fact(prompts.MATH, shown, question, str(x + y), str(abs(x - y)), derivation)
        row = self.rng.choice(rows)
        x, y = body[row]
        if x == y:
            return None
        question = (
            f"By how much did the {_label(kind, row)} of {company} change from fiscal {old} to fiscal {new}, "
            "in thousands of US dollars?"
        )
        derivation = (
            f"From the table, {_label(kind, row)} was {x:,} in fiscal {new} and {y:,} in fiscal {old}. "
            f"{x} - {y} = {x - y}."
        )
        return Fact(prompts.MATH, shown, question, str(x - y), str(x + y), derivation)

    def _history(self, task: str, documents: Sequence[str]) -> list[tuple[str, str]]:
        earlier = [
            self.fact(task, documents) for _ in range(self.rng.randint(1, self.options.memory_size or 1))
        ]
        return [(f.question, f.answer) for f in earlier if f is not None][: self.options.memory_size]

    def questioner(self, task: str, cluster, fact: Fact, history: list[tuple[str, str]]) -> Demonstration:
        context = "\n".join(cluster.documents[i] for i in fact.documents)
        letter = fact.answer if task == prompts.CHOICE else ""
        text = prompts.questioner_prompt(task, context, history, letter)
        answer: str | int = int(fact.answer) if task == prompts.MATH else fact.answer
        reply = _reply(fact.question, answer, fact.options)
        prefill = self.options.questioner_prefill
        return Demonstration(
            "questioner",
            task,
            ({"role": "user", "content": text},),
            reply[len(prefill) :],
            prefill,
            self.options.max_input_tokens,
            (context, fact.question, fact.answer),
        )

    def responder(self, task: str, cluster, fact: Fact) -> Demonstration:
        documents = "\n".join(cluster.documents)
        text = prompts.responder_prompt(task, documents, fact.question, fact.options)
        if task == prompts.MATH:
            completion = f"{fact.derivation} Therefore, the answer is {fact.answer}."
        elif task == prompts.CHOICE:
            completion = f"The correct answer is ({fact.answer})."
        else:
            completion = f"The correct answer is {fact.answer}."
        return Demonstration(
            "responder",
            task,
            ({"role": "user", "content": text},),
            completion,
            "",
            self.options.max_input_tokens,
            (documents, fact.question, fact.answer),
        )

    def verifier(self, task: str, cluster, fact: Fact, agree: bool) -> Demonstration:
        problem = prompts.choice_problem(fact.question, fact.options) if fact.options else fact.question
        reference = _number_text(float(fact.answer)) if task == prompts.MATH else fact.answer
        given = reference if agree else fact.wrong
        text = prompts.verifier_prompt(problem, given, reference)
        verdict = "the same" if agree else "different"
        completion = (
            f"Explanation: Answer 1 is {given} and Answer 2 is {reference}; they are {verdict}.\n"
            f"Decision: [[{'YES' if agree else 'NO'}]]"
        )
        return Demonstration(
            "verifier",
            task,
            ({"role": "user", "content": text},),
            completion,
            "",
            self.options.max_input_tokens,
            (fact.question, fact.answer, given),
        )


def _reply(question: str, answer: str | int, options: dict[str, str] | None = None) -> str:
    """The questioner's reply: one fenced JSON object with the keys in the prompt's order."""
    body = {"question": question, **({"options": options} if options else {}), "answer": answer}
    return "```json\n" + json.dumps(body, ensure_ascii=False) + "\n```"
