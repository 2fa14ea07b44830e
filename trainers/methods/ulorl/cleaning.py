"""UloRL's data cleaning (docs/methods/ulorl.md#data-cleaning) by rule: one function per filter, `clean`
in order.

Rows are the harness's dataset rows: `id`, `problem` and `answer` (a string or a number); other fields
are kept. The filters, in the order `clean` applies them (a row leaves at the first that removes it):

1. multi_question: several sub-questions (`multi_question_reason`);
2. proof: "prove ...", "show that" (`proof_reason`): no reference answer a rule can check;
   then a short reference is taken out of "\\boxed{...}" or "The answer is ..." (`short_answer`, a
   conversion, not a filter);
3. multiple_choice: options "(A) ..."/"A. ..." with a gold letter become a short-answer question
   (`convert_multiple_choice`), or the row is removed where no rule can convert it;
4. true_false: a true/false gold becomes a short answer where the statement says "X is N" or "$E = N$"
   and is true (`convert_true_false`); any other true/false or yes/no item is removed;
5. long_answer: a reference over `max_answer_chars` characters, or any matrix (`long_answer_reason`);
6. wrong_reference: several models agree with each other but not with the reference
   (`wrong_reference_reasons`, from their `harness eval` run directories);
7. pass_rate: a model answered all n samples correctly (`too_easy_reason`, counts from `pass_counts`).

Every removed row has its filter and reason in the `Report`; malformed rows are errors naming the line.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.data import require

FILTERS = (
    "multi_question",
    "proof",
    "multiple_choice",
    "true_false",
    "long_answer",
    "wrong_reference",
    "pass_rate",
)
CONVERSIONS = ("multiple_choice", "true_false", "short_answer")
# MATH500 keeps all its non-matrix answers (the longest is 49 characters); OlympiadBench loses 14 of 675
# (lists of tuples, families of functions)
MAX_ANSWER_CHARS = 50
PASS_RATE_N = 8  # Qwen3-30B-A3B answered each question 8 times
PASS_RATE_TEMPERATURE = 0.85  # the rollout's (§4.1), with top-p 1.0 and no top-k
EXAMPLES_PER_KIND = 5  # converted rows the report shows per conversion


# --- rows -----------------------------------------------------------------------------------------


def check_row(row: Any, source: str, line: int) -> dict[str, Any]:
    """The row if it has a non-empty `id` and `problem` (text) and `answer` (text or number); else an
    error naming the source and line."""
    if not isinstance(row, dict):
        raise HarnessError(f"{source}:{line}: not a JSON object")
    for name in ("id", "problem", "answer"):
        require(row, name, Path(source), line)
    if not isinstance(row["id"], str | int) or isinstance(row["id"], bool):
        raise HarnessError(f"{source}:{line}: field 'id' must be a string or an integer, not {row['id']!r}")
    if not isinstance(row["problem"], str):
        raise HarnessError(
            f"{source}:{line}: field 'problem' must be text, not {type(row['problem']).__name__}"
        )
    answer = row["answer"]
    if not isinstance(answer, str | int | float) or isinstance(answer, bool):
        raise HarnessError(
            f"{source}:{line}: field 'answer' must be text or a number, not {type(answer).__name__} "
            "(lists of accepted answers are not cleaned)"
        )
    return row


# --- 1. several sub-questions ---------------------------------------------------------------------

_MATH = re.compile(r"\$\$.*?\$\$|\$.*?\$|\\\(.*?\\\)|\\\[.*?\\\]", re.S)
_QUESTION_END = re.compile(r"\?+(?=[\s\"')\]]|$)")  # a "?" that ends a sentence
_LABEL_AT = r"(?:^|(?<=[\s.:;?!]))"  # where a part's label may start
_LABEL_STYLES = {  # name -> (label pattern, the first two labels in order)
    "(a) (b)": (rf"{_LABEL_AT}\(([a-h])\)(?=\s)", ("a", "b")),
    "(1) (2)": (rf"{_LABEL_AT}\(([1-9])\)(?=\s)", ("1", "2")),
    "(i) (ii)": (rf"{_LABEL_AT}\((i|ii|iii|iv|v|vi)\)(?=\s)", ("i", "ii")),
    "a) b)": (r"(?m)(?:^[ \t]*|(?<=[.;?!] ))([a-h])[.)](?=\s)", ("a", "b")),
    "1. 2.": (r"(?m)(?:^[ \t]*|(?<=[.;?!] ))([1-9])[.)](?=\s)", ("1", "2")),
    "i) ii)": (rf"{_LABEL_AT}(i|ii|iii|iv|v|vi)\)(?=\s)", ("i", "ii")),
}
_PART = re.compile(r"\b(?:Part|PART)\s+\(?([A-Za-z]|[0-9]+|[IVX]+)\)?(?![\w])")
_CUE = re.compile(
    r"\?|\b(?:find|compute|calculate|determine|evaluate|solve|simplify|prove|show|explain|express|"
    r"estimate|derive|sketch|draw|list|give|what|which|how|why)\b",
    re.I,
)


def prose(text: str) -> str:
    """`text` with its math spans ($...$, $$...$$, \\(...\\), \\[...\\]) blanked out."""
    return _MATH.sub(" ", text)


def multi_question_reason(problem: str) -> str | None:
    """Why `problem` asks several sub-questions, or None. Conservative rules, on the text outside math:
    - two or more sentences end in "?" ("What is 3.5?" and "1/2?" are one each);
    - labelled parts (a)/(b), (1)/(2), (i)/(ii), a)/b), 1./2., i)/ii) at the start of a line or after
      a space or sentence end, with at least two of the parts asking something (a "?" or a word such
      as find, compute, what, how): "(1) x = 2 and (2) y = 3, find x + y" is one question;
    - "Part 1" ... "Part 2" (or Part A/B, Part I/II, Part (a)/(b)).
    """
    text = prose(problem)
    asked = len(_QUESTION_END.findall(text))
    if asked >= 2:
        return f"{asked} sentences end in '?'"
    for style, (pattern, (first, second)) in _LABEL_STYLES.items():
        labels = list(re.finditer(pattern, text))
        parts = _parts(text, labels, first, second)
        if sum(bool(_CUE.search(p)) for p in parts) >= 2:
            return f"parts labelled {style} that each ask something"
    names = [m.group(1) for m in _PART.finditer(text)]
    for first, second in (("1", "2"), ("A", "B"), ("a", "b"), ("I", "II")):
        if first in names and second in names[names.index(first) + 1 :]:
            return f"'Part {first}' and 'Part {second}'"
    return None


def _parts(text: str, labels: list[re.Match], first: str, second: str) -> list[str]:
    """The texts of the labelled parts from the first label `first` followed by `second`, else []."""
    names = [m.group(1) for m in labels]
    for i, name in enumerate(names[:-1]):
        if name == first and names[i + 1] == second:
            ends = [m.start() for m in labels[i + 1 :]] + [len(text)]
            return [text[m.end() : end] for m, end in zip(labels[i:], ends, strict=True)]
    return []


# --- 2. proofs ------------------------------------------------------------------------------------

_PROOF = re.compile(r"\b(?:dis)?prove\b|\b(?:show|demonstrate)\s+(?:that|why|how)\b", re.I)
_PROOF_ANSWERS = {"proof", "see proof", "see the proof", "see solution", "see the solution", "qed"}


def proof_reason(problem: str, answer: str) -> str | None:
    """Why the row is a proof question, or None: "prove" (any case, as a word: not "improve",
    "proven" or "proves"), "show that/why/how", "demonstrate that", or a reference answer that is only
    "proof"/"see solution". "The figure shows that..." and "Show your work" are not proofs."""
    found = _PROOF.search(prose(problem))
    if found:
        return f"asks for a proof ({found.group(0)!r})"
    if answer.strip().strip(".").lower() in _PROOF_ANSWERS:
        return f"the reference answer is {answer.strip()!r}"
    return None


# --- 3. multiple choice ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Conversion:
    """A row rewritten by rule: its new problem and answer, and which rule."""

    problem: str
    answer: str
    rule: str


@dataclass(frozen=True)
class Drop:
    """A row no rule can keep, and why."""

    reason: str


_OPTION_STYLES = (
    re.compile(r"(?:^|(?<=[\s$:{]))\(([A-J])\)"),  # (A) ..., \textbf{(A)} ...
    re.compile(r"(?m)^[ \t]*([A-J])[.)][ \t]+"),  # A. ... / A) ... at the start of a line
)
_OPTION_EDGE = r"(?:\\qquad|\\quad|\\textbf\{|\\mathrm\{|\\text\{|\\ |[\s,;$])"
_REFERS_TO_OPTIONS = re.compile(
    r"\bwhich\b|\bthe following\b|\bof these\b|\bamong the\b|\b(?:option|choice)s?\b|\bstatements?\b|"
    r"\bcorrect answer\b",
    re.I,
)
_UNCONVERTIBLE_OPTION = re.compile(
    r"\b(?:none|all|both|neither)\b.*\b(?:above|these|of them|options?)\b|\bcannot be determined\b|"
    r"\bnot enough information\b|\(\s*[A-J]\s*\)|\bnone\b|\bneither\b|^\s*both\b",
    re.I,
)
_GOLD_LETTER = re.compile(r"^\(?([A-J])\)?[.:)]?(?:\s+.*)?$", re.S)


def convert_multiple_choice(problem: str, answer: str) -> Conversion | Drop | None:
    """A short-answer version of a multiple-choice row, a Drop where no rule converts it, or None
    when the problem has no options. Options: consecutive letters from A at least to B, written
    "(A) ..." (also "\\textbf{(A)} ..." as AMC writes them) or "A. "/"A) " at the start of a line;
    each option runs to the next one or the end of its line. The gold is a letter ("B", "(B)", "B.")
    or an option's own text; it becomes that option's text, and the question is the text before the
    options (plus any text after them). Dropped: a question that refers to its options ("which",
    "the following", "of these", "statement"), a gold option such as "none of the above" or "both",
    empty or repeated options, a gold that is not an option, text between options, or instructions
    after them that mention letters, options or choices."""
    found = _options(problem)
    if found is None:
        return None
    stem, options, between, after = found
    gold = _gold_option(answer, options)
    if gold is None:
        if _GOLD_LETTER.match(_plain(answer)) or _norm(answer) in map(_norm, options.values()):
            return Drop(f"gold {answer!r} is none of the options {', '.join(options)}")
        return None  # "(A)" and "(B)" in a problem whose answer is no option: not multiple choice
    if between:
        return Drop("text between the options: they could not be told apart by rule")
    if not stem:
        return Drop("no question before the options")
    if _REFERS_TO_OPTIONS.search(stem):
        return Drop("the question refers to its options; without them it cannot be answered")
    if after and re.search(r"\b(?:letter|options?|choices?)\b", after, re.I):
        return Drop("the text after the options refers to them")
    texts = [_norm(t) for t in options.values()]
    if not all(texts) or len(set(texts)) < len(texts):
        return Drop("empty or repeated options")
    if _UNCONVERTIBLE_OPTION.search(options[gold]):
        return Drop(f"the gold option {options[gold]!r} only makes sense beside the others")
    question = f"{stem}\n{after}" if after else stem
    return Conversion(question, _unwrap_math(options[gold]), "multiple_choice")


def _options(problem: str) -> tuple[str, dict[str, str], bool, str] | None:
    """(question before, {letter: text}, whether text lies between options, text after) or None."""
    for style in _OPTION_STYLES:
        marks = list(style.finditer(problem))
        starts = [i for i, m in enumerate(marks) if m.group(1) == "A"]
        if not starts:
            continue
        run = [marks[starts[0]]]
        for m in marks[starts[0] + 1 :]:
            if m.group(1) != chr(ord(run[-1].group(1)) + 1):
                break
            run.append(m)
        if len(run) < 2:
            continue
        options, between = {}, False
        for i, m in enumerate(run):
            end_of_line = _line_end(problem, m.end())
            nxt = run[i + 1].start() if i + 1 < len(run) else len(problem)
            options[m.group(1)] = _tidy(problem[m.end() : min(nxt, end_of_line)])
            if end_of_line < nxt and i + 1 < len(run):
                between |= bool(_tidy(problem[end_of_line : run[i + 1].start()]))
        stem = _tidy(problem[: run[0].start()])
        after = problem[_line_end(problem, run[-1].end()) :].strip()
        return stem, options, between, after
    return None


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _tidy(text: str) -> str:
    """An option or question without the markup around it: the "}" and "\\ " after "\\textbf{(A)",
    spacing (\\qquad), separators and the opening of the next option's \\textbf{ at its end, and one
    unpaired "$"."""
    text = re.sub(r"^[\s}]*(?:\\ )?", "", text)
    text = re.sub(rf"{_OPTION_EDGE}+$", "", text)
    if text.count("$") % 2:
        text = text[1:] if text.startswith("$") else text.replace("$", "", 1)
    return text.strip()


def _plain(answer: str) -> str:
    """A gold without its math and formatting wrappers ($, \\textbf{...}, \\text{...}, \\boxed{...})."""
    text = re.sub(r"\\(?:textbf|text|mathrm|boxed)\{(.*?)\}", r"\1", answer.strip())
    return text.replace("$", "").strip()


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", _plain(text)).lower()


def _gold_option(answer: str, options: Mapping[str, str]) -> str | None:
    """The option letter the gold names (by letter, or by the option's own text), or None."""
    letter = _GOLD_LETTER.match(_plain(answer))
    if letter and letter.group(1) in options:
        return letter.group(1)
    matching = [k for k, text in options.items() if _norm(text) and _norm(text) == _norm(answer)]
    return matching[0] if len(matching) == 1 else None


def _unwrap_math(text: str) -> str:
    """The text without "$" around it when the whole text is one math span ("$x$" -> "x")."""
    inner = text[1:-1]
    return inner.strip() if len(text) > 1 and text[0] == text[-1] == "$" and "$" not in inner else text


# --- 4. true/false --------------------------------------------------------------------------------

_TRUTH = {"true": True, "yes": True, "false": False, "no": False}
_TRUTH_WITH_CUE = _TRUTH | {"t": True, "f": False, "correct": True, "incorrect": False}
_TF_PREFIX = re.compile(r"^\s*(?:true\s+or\s+false|true\s*/\s*false|t\s*/\s*f)\s*[:?.,-]?\s*", re.I)
_TF_SUFFIX = re.compile(r"[\s:.,-]*\(?(?:true\s+or\s+false|true\s*/\s*false)\)?\s*[?.]?\s*$", re.I)
_IS_IT_TRUE = re.compile(r"^\s*is\s+it\s+true\s+that\s+(.+?)\s*\?\s*$", re.I | re.S)
_TF_CUE = re.compile(r"\btrue\s+or\s+false\b|\btrue\s*/\s*false\b|\bis\s+it\s+true\b", re.I)
_NUMBER = r"-?\d+(?:\.\d+)?(?:/\d+)?|\\[dt]?frac\{\d+\}\{\d+\}"
_IS_VALUE = re.compile(
    rf"^(?P<subject>.+?)\s+(?:is|equals|is\s+equal\s+to)\s+(?P<value>{_NUMBER}|\$(?:{_NUMBER})\$)$", re.S
)
_EQUATION = re.compile(rf"^\$(?P<lhs>[^$=<>]+?)\s*=\s*(?P<value>{_NUMBER})\s*\$$")
_SUBJECT_VERBS = re.compile(r"\s(?:is|are|was|were|equals)\s|=")


def truth_value(answer: str, cue: bool) -> bool | None:
    """The gold as a truth value: true/false/yes/no (also t/f, correct/incorrect when the problem says
    "true or false"), in any case and markup; None for any other gold."""
    key = re.sub(r"[^a-z]", "", _plain(answer).lower())
    return (_TRUTH_WITH_CUE if cue else _TRUTH).get(key)


def statement(problem: str) -> str | None:
    """The statement of "True or false: S", "S. True or false?" or "Is it true that S?", or None."""
    asked = _IS_IT_TRUE.match(problem)
    if asked:
        return asked.group(1).strip()
    if _TF_PREFIX.match(problem):
        return _TF_PREFIX.sub("", problem, count=1).strip()
    if _TF_SUFFIX.search(problem):
        return _TF_SUFFIX.sub("", problem, count=1).strip()
    return None


def convert_true_false(problem: str, answer: str) -> Conversion | Drop | None:
    """A short-answer version of a true/false or yes/no row, a Drop where no rule converts it, or None
    when the gold is no truth value. Only a true statement of the form "SUBJECT is/equals N" becomes
    "What is SUBJECT?" with gold N, and "$EXPR = N$" (EXPR without variables) becomes "Compute $EXPR$."
    (N a number or \\frac{p}{q}); a false one says nothing of the right value."""
    truth = truth_value(answer, bool(_TF_CUE.search(problem)))
    if truth is None:
        return None
    said = statement(problem)
    if said is None:
        return Drop(f"a yes/no question (gold {answer!r}) that no rule rewrites as a short answer")
    if not truth:
        return Drop("a false statement: the right value is not given")
    said = said.rstrip(". ")
    equation = _EQUATION.match(said)
    if equation and not re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", equation.group("lhs"))):
        return Conversion(
            f"Compute ${equation.group('lhs').strip()}$.", equation.group("value"), "true_false"
        )
    claim = _IS_VALUE.match(said)
    if claim and not _SUBJECT_VERBS.search(f" {claim.group('subject')} "):
        subject = re.sub(r"^(The|A|An)\b", lambda m: m.group(1).lower(), claim.group("subject").strip())
        return Conversion(f"What is {subject}?", _unwrap_math(claim.group("value")), "true_false")
    return Drop("a true statement not of the form 'X is N' or '$E = N$'")


# --- 5. reference answers -------------------------------------------------------------------------

_BOXED = "\\boxed{"
_ANSWER_IS = re.compile(r"^(?:the\s+)?(?:final\s+)?answer\s*(?:is|:)\s*(?P<answer>.+?)\.?$", re.I | re.S)
_MATRIX = re.compile(r"\\begin\{(?:[pbBvV]|small)?matrix\}|\\begin\{array\}")


def short_answer(answer: str) -> str | None:
    """The short answer inside a longer reference, or None: the content of its only \\boxed{...}, or
    X of "The answer is X." / "Answer: X"."""
    if answer.count(_BOXED) == 1:
        start = answer.index(_BOXED) + len(_BOXED)
        depth = 1
        for i, char in enumerate(answer[start:], start):
            depth += {"{": 1, "}": -1}.get(char, 0)
            if depth == 0:
                inner = answer[start:i].strip()
                return inner if inner and inner != answer.strip() else None
        return None
    said = _ANSWER_IS.match(answer.strip())
    return said.group("answer").strip() if said else None


def long_answer_reason(answer: str, max_chars: int = MAX_ANSWER_CHARS) -> str | None:
    """Why the reference is too long to check by rule, or None: any matrix (pmatrix, bmatrix, ...,
    array), or more than `max_chars` characters once stripped."""
    if _MATRIX.search(answer):
        return "the reference answer is a matrix"
    length = len(answer.strip())
    return f"the reference answer has {length} characters (> {max_chars})" if length > max_chars else None


# --- 6. wrong references (several models agree, against the reference) ---------------------------


def majority_answers(run_dir: Path) -> dict[str, tuple[str | None, bool]]:
    """Per item of a `harness eval` run: its most frequent answer when more than half the samples give
    it (else None), and whether that answer was scored wrong."""
    by_item: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in _scores(run_dir).values():
        by_item[record["item_id"]].append(record)
    found = {}
    for item, records in by_item.items():
        answers = Counter(_answer_key(r) for r in records if _answer_key(r) is not None)
        top = answers.most_common(1)
        if not top or top[0][1] * 2 <= len(records):
            found[item] = (None, False)
            continue
        value = top[0][0]
        wrong = all(r["value"] < 1.0 for r in records if _answer_key(r) == value)
        found[item] = (value, wrong)
    return found


def _answer_key(record: dict[str, Any]) -> str | None:
    answer = record.get("canonical") or record.get("extracted")
    return None if answer is None else re.sub(r"\s+", "", str(answer))


def wrong_reference_reasons(runs: Sequence[Mapping[str, tuple[str | None, bool]]]) -> dict[str, str]:
    """Item -> why its reference looks wrong: every run (at least two) has the same majority answer,
    and every run's samples with that answer were scored wrong."""
    if len(runs) < 2:
        raise HarnessError(f"the wrong-reference filter needs at least two models' runs, got {len(runs)}")
    reasons = {}
    for item in set(runs[0]).intersection(*runs[1:]):
        answers = {run[item][0] for run in runs}
        if len(answers) == 1 and None not in answers and all(run[item][1] for run in runs):
            reasons[item] = f"{len(runs)} models agree on {answers.pop()!r}, against the reference"
    return reasons


# --- 7. pass rate ---------------------------------------------------------------------------------


def pass_counts(run_dir: Path) -> dict[str, tuple[int, int]]:
    """Per item of a `harness eval` run directory (its scores.jsonl): (correct samples, samples). A
    sample is correct when its score is 1, as harness metrics count pass@k."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for record in _scores(run_dir).values():
        counts[record["item_id"]][0] += record["value"] >= 1.0
        counts[record["item_id"]][1] += 1
    return {item: (correct, total) for item, (correct, total) in counts.items()}


def _scores(run_dir: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    """A one-benchmark run's score records by sample; an error for a missing or mixed run."""
    from harness.core.store import RUN, SCORES, RunDir, record_key

    run = RunDir(run_dir)
    run.read_json(RUN)  # errors unless it is a run directory
    records = {record_key(r): r for r in run.records(SCORES)}
    benchmarks = {key[0] for key in records}
    if len(benchmarks) > 1:
        raise HarnessError(f"{run_dir}: holds several benchmarks ({', '.join(sorted(benchmarks))}), not one")
    return records


def too_easy_reason(correct: int, samples: int, n: int = PASS_RATE_N) -> str | None:
    """Why an item is too easy (all n samples correct), or None; an error unless it has n samples."""
    if samples != n:
        raise HarnessError(f"expected {n} scored samples, found {samples}")
    return f"{correct}/{n} samples correct" if correct == n else None


# --- the pipeline ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Removed:
    """A row a filter removed, and why."""

    line: int
    id: str
    filter: str
    reason: str
    row: dict[str, Any]

    def record(self) -> dict[str, Any]:
        """Its line of removed.jsonl."""
        return asdict(self)


@dataclass
class Report:
    """What cleaning did: rows in, rows kept, removals per filter with each removed row (as read), and
    the conversions per rule of the rows kept, with a few examples."""

    total: int = 0
    removed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FILTERS, 0))
    converted: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CONVERSIONS, 0))
    removed_rows: list[Removed] = field(default_factory=list)
    examples: list[dict[str, Any]] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)  # id -> input line

    @property
    def kept(self) -> int:
        return self.total - len(self.removed_rows)

    def remove(self, row: dict[str, Any], name: str, reason: str) -> None:
        """Note a removal, with the row as it was read; its conversions no longer count."""
        rid = str(row["id"])
        self.removed[name] += 1
        original = row.get("converted_from")
        if original is not None:
            row = {k: v for k, v in row.items() if k != "converted_from"}
            row |= {"problem": original["problem"], "answer": original["answer"]}
            for rule in original["rules"]:
                self.converted[rule] -= 1
            self.examples = [e for e in self.examples if e["id"] != rid]
        self.removed_rows.append(Removed(self.lines.get(rid, 0), rid, name, reason, row))

    def convert(self, rid: str, before: dict[str, Any], after: Conversion) -> None:
        self.converted[after.rule] += 1
        if sum(e["rule"] == after.rule for e in self.examples) < EXAMPLES_PER_KIND:
            self.examples.append(
                {
                    "id": rid,
                    "rule": after.rule,
                    "before": {"problem": before["problem"], "answer": before["answer"]},
                    "after": {"problem": after.problem, "answer": after.answer},
                }
            )

    def as_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "kept": self.kept,
            "removed": self.removed,
            "converted": self.converted,
            "examples": self.examples,
        }


def clean(
    rows: Iterable[Any],
    *,
    max_answer_chars: int = MAX_ANSWER_CHARS,
    reference_runs: Mapping[str, Mapping[str, tuple[str | None, bool]]] | None = None,
    pass_counts: Mapping[str, tuple[int, int]] | None = None,
    n: int = PASS_RATE_N,
    source: str = "rows",
    lines: Sequence[int] | None = None,
) -> tuple[list[dict[str, Any]], Report]:
    """Apply the filters in order (module docstring); returns the kept rows (in input order, converted
    ones rewritten, with `converted_from` holding their original problem, answer and rule) and the
    report. `reference_runs` (run name -> `majority_answers`) and `pass_counts` (item -> (correct,
    samples), from `pass_counts`) add filters 6 and 7. Errors name `source` and the line (`lines[i]`,
    else i + 1)."""
    report = Report()
    checked = []
    for i, row in enumerate(rows):
        line = lines[i] if lines is not None else i + 1
        checked.append(check_row(row, source, line))
        rid = str(row["id"])
        if rid in report.lines:
            raise HarnessError(f"{source}:{line}: id {rid!r} repeats line {report.lines[rid]}")
        report.lines[rid] = line
    report.total = len(checked)
    kept = [r for r in (_clean_row(row, max_answer_chars, report) for row in checked) if r is not None]
    if reference_runs is not None:
        kept = drop_wrong_references(kept, reference_runs, report)
    if pass_counts is not None:
        kept = drop_too_easy(kept, pass_counts, n, report)
    return kept, report


def _clean_row(row: dict[str, Any], max_answer_chars: int, report: Report) -> dict[str, Any] | None:
    """Filters 1-5 on one row: the row (maybe rewritten), or None once removed (noted in the report)."""
    problem, answer = row["problem"], str(row["answer"])
    for name, reason in (
        ("multi_question", multi_question_reason(problem)),
        ("proof", proof_reason(problem, answer)),
    ):
        if reason:
            report.remove(row, name, reason)
            return None
    extracted = short_answer(answer)
    if extracted is not None:
        row = _converted(row, Conversion(problem, extracted, "short_answer"), report)
        answer = extracted
    for name, convert in (("multiple_choice", convert_multiple_choice), ("true_false", convert_true_false)):
        outcome = convert(problem, answer)
        if isinstance(outcome, Drop):
            report.remove(row, name, outcome.reason)
            return None
        if isinstance(outcome, Conversion):
            row = _converted(row, outcome, report)
            problem, answer = outcome.problem, outcome.answer
    reason = long_answer_reason(answer, max_answer_chars)
    if reason:
        report.remove(row, "long_answer", reason)
        return None
    return row


def _converted(row: dict[str, Any], conversion: Conversion, report: Report) -> dict[str, Any]:
    report.convert(str(row["id"]), row, conversion)
    return _rewritten(row, conversion)


def _rewritten(row: dict[str, Any], conversion: Conversion) -> dict[str, Any]:
    """The row with the conversion's problem and answer; `converted_from` keeps the first original."""
    original = row.get("converted_from") or {"problem": row["problem"], "answer": row["answer"], "rules": []}
    history = {**original, "rules": [*original["rules"], conversion.rule]}
    return {**row, "problem": conversion.problem, "answer": conversion.answer, "converted_from": history}


def drop_wrong_references(
    rows: list[dict[str, Any]], runs: Mapping[str, Mapping[str, tuple[str | None, bool]]], report: Report
) -> list[dict[str, Any]]:
    """Filter 6: the rows whose reference the runs (name -> `majority_answers`) do not contradict; the
    others go to the report. An error for a row missing from a run."""
    for name, run in runs.items():
        missing = [str(r["id"]) for r in rows if str(r["id"]) not in run]
        if missing:
            rid = missing[0]
            raise HarnessError(
                f"item {rid!r} (line {report.lines.get(rid, '?')}) and {len(missing) - 1} more are not in "
                f"the reference run {name}: evaluate the same (cleaned) rows with each model"
            )
    reasons = wrong_reference_reasons(list(runs.values()))
    kept = []
    for row in rows:
        reason = reasons.get(str(row["id"]))
        if reason:
            report.remove(row, "wrong_reference", reason)
        else:
            kept.append(row)
    return kept


def drop_too_easy(
    rows: list[dict[str, Any]], counts: Mapping[str, tuple[int, int]], n: int, report: Report
) -> list[dict[str, Any]]:
    """Filter 7: the rows some sample got wrong; an error for a row the counts do not cover."""
    kept = []
    for row in rows:
        rid = str(row["id"])
        if rid not in counts:
            raise HarnessError(f"item {rid!r} (line {report.lines.get(rid, '?')}) has no pass-rate samples")
        try:
            reason = too_easy_reason(*counts[rid], n=n)
        except HarnessError as e:
            raise HarnessError(f"item {rid!r} (line {report.lines.get(rid, '?')}): {e}") from None
        if reason:
            report.remove(row, "pass_rate", reason)
        else:
            kept.append(row)
    return kept
