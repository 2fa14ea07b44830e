"""UloRL's data cleaning (docs/methods/ulorl.md#data-cleaning): each rule on hand-made rows, the pipeline's
report, malformed input, `harness corpus ulorl` end to end, and the pass-rate filter through a real
`harness eval`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from harness import HarnessError
from harness.cli import app
from harness.core.store import RUN, SCORES, RunDir
from trainers.methods.ulorl.cleaning import (
    FILTERS,
    MAX_ANSWER_CHARS,
    PASS_RATE_N,
    PASS_RATE_TEMPERATURE,
    Conversion,
    Drop,
    clean,
    convert_multiple_choice,
    convert_true_false,
    drop_too_easy,
    long_answer_reason,
    majority_answers,
    multi_question_reason,
    pass_counts,
    proof_reason,
    short_answer,
    too_easy_reason,
    wrong_reference_reasons,
)
from trainers.methods.ulorl.corpus import CorpusOptions, pass_rate_command


def invoke(*args: object):
    result = CliRunner().invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# --- 1. several sub-questions ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "problem",
    [
        "What is 3.5?",  # the decimal point ends no sentence
        "What is 1/2?",
        "What is $x?y$ when $x = 1$?",  # a "?" inside math
        "What is 3.5? Express your answer as a fraction.",  # one question and an instruction
        "Given (1) x = 2 and (2) y = 3, find x + y.",  # labelled conditions, one question
        "Compute f(1) + f(2) for f(x) = x^2.",  # arguments, not labels
        "Find (i) the sum and (ii) the product of 2 and 3, as a pair.",  # only one part asks
        "The answers are (A) 1 (B) 2. Which is larger?",  # capital letters are options, not parts
        "Split the class into part 1 and part 2 of equal size. How many ways are there?",
    ],
)
def test_one_question_is_kept(problem):
    assert multi_question_reason(problem) is None


@pytest.mark.parametrize(
    ("problem", "why"),
    [
        ("What is $f(2)$? What is $f(3)$?", "2 sentences end in '?'"),
        ("Let f(x) = x^2. (1) Find f(2). (2) Find f(3).", "(1) (2)"),
        ("(a) Compute 2 + 2.\n(b) Compute 3 + 3.", "(a) (b)"),
        ("(i) Find x. (ii) Find y.", "(i) (ii)"),
        ("Let x = 2.\na) Find x + 1.\nb) Find x + 2.", "a) b)"),
        ("1. Find x.\n2. Find y.", "1. 2."),
        ("Part 1: find x. Part 2: find y.", "'Part 1' and 'Part 2'"),
        ("Part A. Find the area.\nPart B. Find the perimeter.", "'Part A' and 'Part B'"),
    ],
)
def test_several_questions_are_found(problem, why):
    assert why in multi_question_reason(problem)


# --- 2. proofs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("problem", "answer"),
    [
        ("Prove that there are infinitely many primes.", "proof"),
        ("Show that $n^2 + n$ is even for every integer $n$.", "even"),
        ("Prove or disprove: every odd number is prime.", "false"),
        ("Let $x = 2$. Demonstrate that $x^2 = 4$.", "4"),
        ("Find the smallest prime.", "See proof."),  # the reference is no answer
    ],
)
def test_proofs_are_removed(problem, answer):
    assert proof_reason(problem, answer) is not None


@pytest.mark.parametrize(
    "problem",
    [
        "The figure shows that AB = 3. Find CD.",  # "shows that" states a fact
        "Show your work: what is 2 + 2?",
        "It can be shown that x = 2 is a root. Find the other root of $x^2 - 4$.",
        "How much does the new method improve the score of 3 by 2?",
        "A proven method gives 12. What is 12 / 4?",
    ],
)
def test_questions_that_mention_showing_are_kept(problem):
    assert proof_reason(problem, "3") is None


# --- 3. multiple choice ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("problem", "gold", "question", "answer"),
    [
        ("What is 2 + 3? (A) 4 (B) 5 (C) 6", "B", "What is 2 + 3?", "5"),
        ("What is 2 + 3?\nA. 4\nB. 5\nC. 6", "(B)", "What is 2 + 3?", "5"),
        ("What is 2 + 3?\nA) 4\nB) 5", "B.", "What is 2 + 3?", "5"),
        (  # AMC's layout
            "What is $2+3$?\n\n$\\textbf{(A) }4\\qquad\\textbf{(B) }5\\qquad\\textbf{(C) }6$",
            "$\\textbf{(C)}$",
            "What is $2+3$?",
            "6",
        ),
        (
            "What is $\\frac{1}{2} + 0$? (A) $\\frac{1}{2}$ (B) $1$",
            "A",
            "What is $\\frac{1}{2} + 0$?",
            "\\frac{1}{2}",
        ),
        ("What is 2 + 3? (A) 4 (B) 5", "5", "What is 2 + 3?", "5"),  # the gold is the option's text
        ("What is 2 + 3?\nA) 4\nB) 5\nShow your steps.", "B", "What is 2 + 3?\nShow your steps.", "5"),
    ],
)
def test_multiple_choice_becomes_a_short_answer(problem, gold, question, answer):
    assert convert_multiple_choice(problem, gold) == Conversion(question, answer, "multiple_choice")


@pytest.mark.parametrize(
    ("problem", "gold", "why"),
    [
        ("Which of the following is prime? (A) 4 (B) 5", "B", "refers to its options"),
        ("Which number is prime? (A) 4 (B) 5", "B", "refers to its options"),
        ("What is 2 + 3? (A) 4 (B) None of the above", "B", "only makes sense beside the others"),
        ("What is 2 + 2? (A) 4 (B) 2 + 2 (C) Both (A) and (B)", "C", "only makes sense beside the others"),
        ("What is 2 + 3? (A) 4 (B) 5", "E", "none of the options"),
        ("What is 2 + 3?\nA. 4\nB. 5\nAnswer with the letter only.", "B", "text after the options"),
        ("(A) 4 (B) 5", "B", "no question before the options"),
        ("What is 2 + 3? (A) 5 (B) 5", "A", "empty or repeated options"),
    ],
)
def test_multiple_choice_no_rule_converts_is_dropped(problem, gold, why):
    outcome = convert_multiple_choice(problem, gold)
    assert isinstance(outcome, Drop) and why in outcome.reason


@pytest.mark.parametrize(
    ("problem", "gold"),
    [
        ("What is 2 + 3?", "5"),
        ("The regions (A) and (B) have equal areas of 6 each. Find their total area.", "12"),
        ("Let A. B. Smith be 40 years old. How old is he?", "40"),  # initials at no line start
    ],
)
def test_problems_without_options_are_not_multiple_choice(problem, gold):
    assert convert_multiple_choice(problem, gold) is None


# --- 4. true/false --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("problem", "gold", "question", "answer"),
    [
        (
            "True or false: the number of primes below 20 is 8.",
            "True",
            "What is the number of primes below 20?",
            "8",
        ),
        ("Is it true that the sum of 3 and 4 is 7?", "yes", "What is the sum of 3 and 4?", "7"),
        ("True or false: $2^{10} = 1024$.", "T", "Compute $2^{10}$.", "1024"),
        (
            "The value of $\\binom{5}{2}$ equals $10$. True or false?",
            "true",
            "What is the value of $\\binom{5}{2}$?",
            "10",
        ),
    ],
)
def test_a_true_statement_with_a_value_becomes_a_short_answer(problem, gold, question, answer):
    assert convert_true_false(problem, gold) == Conversion(question, answer, "true_false")


@pytest.mark.parametrize(
    ("problem", "gold", "why"),
    [
        ("True or false: the number of primes below 20 is 9.", "False", "false statement"),
        ("Is 91 prime?", "No", "yes/no question"),
        ("True or false: every even number above 2 is a sum of two primes.", "True", "not of the form"),
        ("True or false: $x = 3$ solves $x^2 = 9$.", "true", "not of the form"),
        ("True or false: $x = 3$.", "true", "not of the form"),  # a variable, not a computation
        ("True or false: 4 is even and the sum is 7.", "true", "not of the form"),  # two claims
    ],
)
def test_true_false_no_rule_converts_is_dropped(problem, gold, why):
    outcome = convert_true_false(problem, gold)
    assert isinstance(outcome, Drop) and why in outcome.reason


@pytest.mark.parametrize(
    ("problem", "gold"), [("What is 2 + 3?", "5"), ("Which vertex is the centroid?", "F")]
)
def test_other_golds_are_no_truth_values(problem, gold):
    assert convert_true_false(problem, gold) is None  # "F" counts as false only after "true or false"


# --- 5. reference answers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "short"),
    [
        ("\\boxed{5}", "5"),
        ("so $x = \\boxed{\\frac{1}{2}}$.", "\\frac{1}{2}"),
        ("The answer is 3.5.", "3.5"),
        ("Answer: 12", "12"),
        ("12", None),
        ("\\boxed{1} or \\boxed{2}", None),  # two boxes: which one is not said
    ],
)
def test_short_answers_are_taken_out_of_longer_references(answer, short):
    assert short_answer(answer) == short


def test_long_references_and_matrices_are_removed():
    assert long_answer_reason("x" * 50) is None
    assert "51 characters" in long_answer_reason("x" * 51)
    assert long_answer_reason("x" * 51, max_chars=60) is None
    assert "matrix" in long_answer_reason("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", max_chars=1000)
    assert "matrix" in long_answer_reason("\\begin{bmatrix}1\\end{bmatrix}")
    assert long_answer_reason("\\left( 3, \\frac{\\pi}{2} \\right)") is None  # a point is short


# --- 6 and 7. model-based filters on prepared run directories -------------------------------------


def prepared_run(path: Path, samples: dict[str, list[tuple[str | None, float]]]) -> Path:
    """A finished one-benchmark run: item -> [(extracted answer, score value)] per sample."""
    run = RunDir(path)
    run.path.mkdir(parents=True)
    run.write_json(RUN, {"config": {"benchmarks": ["items"]}})
    run.append(
        SCORES,
        [
            {
                "benchmark": "items",
                "item_id": item,
                "sample_idx": i,
                "value": value,
                "extracted": answer,
                "details": {},
            }
            for item, outcomes in samples.items()
            for i, (answer, value) in enumerate(outcomes)
        ],
    )
    return path


def test_pass_counts_come_from_the_runs_scores(tmp_path):
    run = prepared_run(
        tmp_path / "run",
        {"easy": [("1", 1.0)] * 8, "hard": [("1", 1.0)] * 7 + [("2", 0.0)], "none": [(None, 0.0)] * 8},
    )
    assert pass_counts(run) == {"easy": (8, 8), "hard": (7, 8), "none": (0, 8)}
    assert too_easy_reason(8, 8) == "8/8 samples correct"
    assert too_easy_reason(7, 8) is None
    with pytest.raises(HarnessError, match="expected 8 scored samples, found 4"):
        too_easy_reason(4, 4)
    with pytest.raises(HarnessError, match="not found"):
        pass_counts(tmp_path / "nothing")


def test_the_pass_rate_filter_removes_only_n_of_n(tmp_path):
    rows = [{"id": i, "problem": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(3)]
    counts = {"0": (8, 8), "1": (7, 8), "2": (0, 8)}
    kept, report = clean(rows, pass_counts=counts)
    assert [r["id"] for r in kept] == [1, 2]
    assert report.removed["pass_rate"] == 1 and report.removed_rows[0].reason == "8/8 samples correct"
    with pytest.raises(HarnessError, match=r"item '2' \(line 3\) has no pass-rate samples"):
        clean(rows, pass_counts={"0": (1, 8), "1": (1, 8)})
    with pytest.raises(HarnessError, match=r"item '0' \(line 1\): expected 8 scored samples, found 2"):
        clean(rows, pass_counts={"0": (2, 2), "1": (1, 8), "2": (1, 8)})


def test_a_reference_is_wrong_when_the_models_agree_against_it(tmp_path):
    first = prepared_run(
        tmp_path / "a",
        {"bad": [("7", 0.0)] * 3 + [("6", 1.0)], "good": [("6", 1.0)] * 4, "split": [("7", 0.0)] * 4},
    )
    second = prepared_run(
        tmp_path / "b",
        {"bad": [("7", 0.0)] * 4, "good": [("6", 1.0)] * 4, "split": [("8", 0.0)] * 4},
    )
    runs = {"a": majority_answers(first), "b": majority_answers(second)}
    assert runs["a"]["bad"] == ("7", True) and runs["a"]["good"] == ("6", False)
    assert wrong_reference_reasons(list(runs.values())) == {
        "bad": "2 models agree on '7', against the reference"
    }
    rows = [
        {"id": "bad", "problem": "What is 2 + 4?", "answer": "5"},
        {"id": "good", "problem": "What is 3 + 3?", "answer": "6"},
        {"id": "split", "problem": "What is 1 + 1?", "answer": "2"},
    ]
    kept, report = clean(rows, reference_runs=runs)
    assert [r["id"] for r in kept] == ["good", "split"] and report.removed["wrong_reference"] == 1
    with pytest.raises(HarnessError, match="at least two models"):
        wrong_reference_reasons([runs["a"]])
    with pytest.raises(
        HarnessError, match=r"item 'new' \(line 4\) and 0 more are not in the reference run a"
    ):
        clean([*rows, {"id": "new", "problem": "What is 1 + 2?", "answer": "3"}], reference_runs=runs)


# --- the pipeline ---------------------------------------------------------------------------------

ROWS = [
    {"id": "keep", "problem": "What is 3.5 + 1?", "answer": "4.5", "source": "hand"},
    {"id": "multi", "problem": "What is $f(2)$? What is $f(3)$?", "answer": "4, 9"},
    {"id": "proof", "problem": "Prove that $\\sqrt{2}$ is irrational.", "answer": "proof"},
    {"id": "mc", "problem": "What is 2 + 3?\nA. 4\nB. 5", "answer": "B"},
    {"id": "mc-drop", "problem": "Which of these is prime? (A) 4 (B) 5", "answer": "B"},
    {"id": "tf", "problem": "True or false: the sum of 3 and 4 is 7.", "answer": "True"},
    {"id": "tf-drop", "problem": "Is 91 prime?", "answer": "No"},
    {"id": "boxed", "problem": "What is 6 / 4?", "answer": "So it is $\\boxed{\\frac{3}{2}}$."},
    {"id": "matrix", "problem": "Find $I_2$.", "answer": "\\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\end{pmatrix}"},
    {
        "id": "long",
        "problem": "List the solutions.",
        "answer": ", ".join(f"({i},{i + 1})" for i in range(12)),
    },
    {"id": 11, "problem": "What is 1/2?", "answer": 0.5},
]


def test_clean_applies_every_rule_and_reports_what_it_removed():
    kept, report = clean(ROWS)
    assert [r["id"] for r in kept] == ["keep", "mc", "tf", "boxed", 11]
    assert kept[0] == ROWS[0]  # untouched rows keep every field
    assert kept[-1]["answer"] == 0.5  # a numeric gold stays a number
    mc = kept[1]
    assert (mc["problem"], mc["answer"]) == ("What is 2 + 3?", "5")
    assert mc["converted_from"] == {
        "problem": ROWS[3]["problem"],
        "answer": "B",
        "rules": ["multiple_choice"],
    }
    assert (kept[2]["problem"], kept[2]["answer"]) == ("What is the sum of 3 and 4?", "7")
    assert kept[3]["answer"] == "\\frac{3}{2}" and kept[3]["converted_from"]["rules"] == ["short_answer"]
    removed = {r.id: r.filter for r in report.removed_rows}
    assert removed == {
        "multi": "multi_question",
        "proof": "proof",
        "mc-drop": "multiple_choice",
        "tf-drop": "true_false",
        "matrix": "long_answer",
        "long": "long_answer",
    }
    assert report.removed == {f: sum(r.filter == f for r in report.removed_rows) for f in FILTERS}
    assert (report.total, report.kept) == (11, 5)
    assert report.converted == {"multiple_choice": 1, "true_false": 1, "short_answer": 1}
    assert [r.line for r in report.removed_rows] == [2, 3, 5, 7, 9, 10]
    assert {e["rule"] for e in report.examples} == {"multiple_choice", "true_false", "short_answer"}


def test_a_converted_row_that_is_removed_later_is_reported_as_read():
    long_option = "x" * 60
    rows = [
        {"id": "mc", "problem": f"What is it?\nA. {long_option}\nB. y", "answer": "A"},
        {"id": "tf", "problem": "True or false: the sum of 3 and 4 is 7.", "answer": "True"},
    ]
    kept, report = clean(rows, pass_counts={"tf": (8, 8)})
    assert kept == []
    assert [(r.id, r.filter, r.row) for r in report.removed_rows] == [
        ("mc", "long_answer", rows[0]),
        ("tf", "pass_rate", rows[1]),
    ]
    assert report.converted == {"multiple_choice": 0, "true_false": 0, "short_answer": 0}
    assert report.examples == []


def test_max_answer_chars_is_an_option():
    kept, _ = clean([ROWS[9]], max_answer_chars=100)
    assert len(kept) == 1


@pytest.mark.parametrize(
    ("row", "error"),
    [
        ({"id": "a", "problem": "What is 1 + 1?"}, r"data.jsonl:7: missing field 'answer'"),
        ({"id": "a", "problem": "What is 1 + 1?", "answer": None}, r"data.jsonl:7: field 'answer' is null"),
        ({"id": "a", "problem": " ", "answer": "2"}, r"data.jsonl:7: empty field 'problem'"),
        ({"problem": "What is 1 + 1?", "answer": "2"}, r"data.jsonl:7: missing field 'id'"),
        (
            {"id": "a", "problem": "What is 1 + 1?", "answer": ["2"]},
            r"data.jsonl:7: field 'answer' must be text",
        ),
        ({"id": "a", "problem": 3, "answer": "2"}, r"data.jsonl:7: field 'problem' must be text"),
        ({"id": True, "problem": "What is 1 + 1?", "answer": "2"}, r"data.jsonl:7: field 'id' must be"),
        (["not", "an", "object"], r"data.jsonl:7: not a JSON object"),
    ],
)
def test_a_malformed_row_is_an_error_naming_its_line(row, error):
    with pytest.raises(HarnessError, match=error):
        clean([ROWS[0], row], source="data.jsonl", lines=[3, 7])


def test_a_repeated_id_is_an_error_naming_both_lines():
    with pytest.raises(HarnessError, match=r"rows:2: id 'keep' repeats line 1"):
        clean([ROWS[0], ROWS[0]])


def test_drop_too_easy_needs_counts_for_every_row():
    _, report = clean([])
    with pytest.raises(HarnessError, match="has no pass-rate samples"):
        drop_too_easy([ROWS[0]], {}, 8, report)


# --- the command ----------------------------------------------------------------------------------


def test_the_command_writes_clean_removed_and_report(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    out = tmp_path / "out"
    result = invoke("corpus", "ulorl", data, "--out", out)
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in read_jsonl(out / "clean.jsonl")] == ["keep", "mc", "tf", "boxed", 11]
    removed = read_jsonl(out / "removed.jsonl")
    assert [(r["id"], r["line"], r["filter"]) for r in removed][:2] == [
        ("multi", 2, "multi_question"),
        ("proof", 3, "proof"),
    ]
    assert all(r["reason"] and r["row"] == ROWS[r["line"] - 1] for r in removed)
    report = json.loads((out / "report.json").read_text())
    assert report["total"] == 11 and report["kept"] == 5 and report["pass_rate"] is None
    assert report["removed"] == {f: sum(r["filter"] == f for r in removed) for f in FILTERS}
    assert sum(report["removed"].values()) == len(removed) == 6
    assert "removed long_answer: 2" in result.output and "converted multiple_choice: 1" in result.output
    assert not (out / "pass-rate").exists()


def test_the_command_names_a_malformed_line(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(ROWS[0]) + "\n\n{oops\n")
    with pytest.raises(HarnessError, match=r"data.jsonl:3: malformed JSON line"):
        invoke("corpus", "ulorl", data, "--out", tmp_path / "out")
    data.write_text(json.dumps(ROWS[0]) + '\n{"id": "b", "answer": "1"}\n')
    with pytest.raises(HarnessError, match=r"data.jsonl:2: missing field 'problem'"):
        invoke("corpus", "ulorl", data, "--out", tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written before the input is known good


def test_the_command_removes_references_that_reference_runs_contradict(tmp_path):
    rows = [
        {"id": "bad", "problem": "What is 2 + 4?", "answer": "5"},
        {"id": "good", "problem": "What is 3 + 3?", "answer": "6"},
    ]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    runs = [
        prepared_run(tmp_path / name, {"bad": [("6", 0.0)] * 2, "good": [("6", 1.0)] * 2}) for name in "ab"
    ]
    out = tmp_path / "out"
    result = invoke(
        "corpus", "ulorl", data, "--out", out, "--reference-run", runs[0], "--reference-run", runs[1]
    )
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in read_jsonl(out / "clean.jsonl")] == ["good"]
    (removed,) = read_jsonl(out / "removed.jsonl")
    assert removed["filter"] == "wrong_reference" and "2 models agree on '6'" in removed["reason"]
    assert json.loads((out / "report.json").read_text())["reference_runs"] == [str(p) for p in runs]
    with pytest.raises(HarnessError, match="at least two"):
        invoke("corpus", "ulorl", data, "--out", out, "--reference-run", runs[0])


def test_the_commands_defaults_are_the_librarys():
    params = {p.name: p for p in typer.main.get_command(app).commands["corpus"].commands["ulorl"].params}
    assert params["max_answer_chars"].default == MAX_ANSWER_CHARS
    assert params["pass_rate_n"].default == PASS_RATE_N
    assert params["pass_rate_temperature"].default == PASS_RATE_TEMPERATURE
    for name, value in vars(CorpusOptions()).items():
        assert params[name].default == value, name
    result = invoke("corpus", "ulorl", "--help")
    assert f"[default: {MAX_ANSWER_CHARS}]" in result.output and f"[default: {PASS_RATE_N}]" in result.output


def test_the_command_refuses_an_option_out_of_bounds(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    with pytest.raises(HarnessError, match="--pass-rate-n must be at least 1, got 0"):
        invoke("corpus", "ulorl", data, "--out", tmp_path / "out", "--pass-rate-n", "0")
    assert not (tmp_path / "out").exists()


def test_the_pass_rate_command_uses_the_rollout_settings(tmp_path):
    command = pass_rate_command(tmp_path / "i.jsonl", tmp_path / "r", CorpusOptions(pass_rate_model="m"))
    assert command[:3] == ["eval", "--benchmarks", f"jsonl:{tmp_path / 'i.jsonl'}"]
    given = dict(zip(command[1::2], command[2::2], strict=True))
    assert (given["--n"], given["--temperature"], given["--top-p"], given["--top-k"]) == (
        "8",
        "0.85",
        "1.0",
        "-1",
    )
    assert "--max-tokens" not in given


@pytest.mark.slow
def test_the_pass_rate_filter_through_harness_eval(plain_model, tmp_path):
    """Greedy decoding makes both samples of an item the same: a gold no output contains keeps every row;
    then the gold of one item set to what the model answered makes it 2/2 correct, and only it goes."""
    problems = ["What is 2+3?", "Compute 7*6.", "Add 18 and 46.", "Multiply 5 by 9."]
    rows = [{"id": f"q{i}", "problem": p, "answer": "987654321"} for i, p in enumerate(problems)]
    flags = ["--pass-rate-model", plain_model, "--pass-rate-n", "2", "--pass-rate-temperature", "0",
             "--pass-rate-max-tokens", "16", "--pass-rate-scorer", "integer"]  # fmt: skip
    first = tmp_path / "first"
    result = invoke("corpus", "ulorl", write_jsonl(tmp_path / "a.jsonl", rows), "--out", first, *flags)
    assert result.exit_code == 0, result.output
    assert len(read_jsonl(first / "clean.jsonl")) == 4 and read_jsonl(first / "removed.jsonl") == []
    report = json.loads((first / "report.json").read_text())
    assert report["removed"]["pass_rate"] == 0 and report["pass_rate"]["model"] == str(plain_model)
    assert report["pass_rate"]["command"][:2] == ["harness", "eval"]
    scores = read_jsonl(first / "pass-rate" / SCORES)
    assert len(scores) == 8 and {s["item_id"] for s in scores} == {"q0", "q1", "q2", "q3"}
    answered = {s["item_id"]: s["extracted"] for s in scores if s["extracted"] is not None}
    assert answered, "the tiny model wrote no number for any problem"
    item, number = sorted(answered.items())[0]
    rows = [{**r, "answer": number} if r["id"] == item else r for r in rows]
    second = tmp_path / "second"
    result = invoke("corpus", "ulorl", write_jsonl(tmp_path / "b.jsonl", rows), "--out", second, *flags)
    assert result.exit_code == 0, result.output
    (removed,) = read_jsonl(second / "removed.jsonl")
    assert (removed["id"], removed["filter"], removed["reason"]) == (item, "pass_rate", "2/2 samples correct")
    assert [r["id"] for r in read_jsonl(second / "clean.jsonl")] == [r["id"] for r in rows if r["id"] != item]
    assert "removed pass_rate: 1" in result.output
