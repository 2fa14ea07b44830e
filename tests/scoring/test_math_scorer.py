r"""Tests for the math scorer (harness.scoring.math), its LaTeX helpers, process pool and thinking splits.

The scorer spawns worker processes, so scoring cases are batched into as few `score` calls as possible.
"""

from __future__ import annotations

import os
import time

import pytest

from harness.core.thinking import prompt_opens_think, split_thinking
from harness.scoring.latex import boxed_contents, has_corrupted_escape, last_boxed
from harness.scoring.math import MathScorer, as_integer
from harness.scoring.pool import CallCrashed, CallTimeout, map_with_timeout

# ---------------------------------------------------------------------------------------------
# Pool helpers: spawned workers import this module to find them, so they live at top level.
# ---------------------------------------------------------------------------------------------


def pool_task(payload):
    kind, arg = payload
    if kind == "ok":
        return arg * 2
    if kind == "raise":
        raise ValueError(arg)
    if kind == "exit":
        os._exit(arg)
    if kind == "sleep":
        time.sleep(arg)
        return "slept"
    raise AssertionError(kind)


# ---------------------------------------------------------------------------------------------
# Scoring: one batch through a shared scorer
# ---------------------------------------------------------------------------------------------

LONG_COT = (
    "Let me think step by step. We need the number of ordered pairs.\n\n"
    "First, $17 \\cdot 12 = 204$, and checking small cases gives $3, 7, 12$.\n"
    "Trying $x = 205$ fails, since $205 = 5 \\cdot 41$ has the wrong parity.\n"
    "So the total is $\\frac{408}{2} = 204$.\n\n"
    "**Final answer**\n\n$$\\boxed{204}$$"
)
MINERVA = "We compute $8/5$.\nFinal Answer: The final answer is $1.6$. I hope it is correct."
SEVERAL_BOXES = r"At first I got $\boxed{205}$, but on checking the answer is $\boxed{204}$."
HANG = r"\boxed{9^{9^{9^{9^{9}}}}}"

# (id, answer, gold, expected value, expected extracted or ... to skip the check)
CASES = [
    # formatting variants
    ("boxed", r"\boxed{204}", "204", 1.0, "204"),
    ("boxed_in_dollars", r"$\boxed{204}$", "204", 1.0, "204"),
    ("answer_is_inline_math", "The answer is $204$.", "204", 1.0, "204"),
    ("paren_math", r"\(204\)", "204", 1.0, "204"),
    ("markdown_bold", "**204**", "204", 1.0, "204"),
    ("textbf", r"\textbf{204}", "204", 1.0, "204"),
    ("final_answer_is_plain", "The final answer is 204", "204", 1.0, "204"),
    ("leading_zero_pred_0204", r"\boxed{0204}", "204", 1.0, "0204"),
    ("leading_zero_pred_033", r"\boxed{033}", "33", 1.0, "033"),
    ("leading_zero_gold_033", r"\boxed{33}", "033", 1.0, "33"),
    ("leading_zero_gold_text", "33", "033", 1.0, "33"),
    ("trailing_point_zero", r"\boxed{204.0}", "204", 1.0, "204.0"),
    ("thousands_braced_comma", r"\boxed{1{,}000}", "1000", 1.0, "1{,}000"),
    ("thousands_plain_comma", r"\boxed{1,000}", "1000", 1.0, "1,000"),
    ("frac_vs_short_frac", r"\boxed{\frac{3}{4}}", r"\frac34", 1.0, r"\frac{3}{4}"),
    ("decimal_vs_frac", r"\boxed{0.75}", r"\frac{3}{4}", 1.0, "0.75"),
    ("dfrac", r"\boxed{\dfrac{3}{4}}", r"\frac{3}{4}", 1.0, r"\dfrac{3}{4}"),
    ("radical", r"\boxed{2\sqrt{3}}", r"\sqrt{12}", 1.0, r"2\sqrt{3}"),
    ("interval", r"\boxed{[1,2)}", "[1,2)", 1.0, "[1,2)"),
    ("set_order", r"\boxed{\{2,1\}}", r"\{1,2\}", 1.0, r"\{2,1\}"),
    ("tuple_math500", r"\boxed{(3,\frac{\pi}{2})}", r"\left( 3, \frac{\pi}{2} \right)", 1.0, ...),
    ("equation_rhs", r"\boxed{x = 5}", "5", 1.0, "x = 5"),
    ("text_choice", r"\boxed{\text{(C)}}", r"\text{(C)}", 1.0, r"\text{(C)}"),
    ("units", r"\boxed{3\text{ cm}}", "3", 1.0, ...),
    ("degrees", r"\boxed{90^\circ}", "90", 1.0, r"90^\circ"),
    ("long_cot", LONG_COT, "204", 1.0, "204"),
    ("minerva", MINERVA, "1.6", 1.0, "1.6"),
    ("several_boxes_last_counts", SEVERAL_BOXES, "204", 1.0, "204"),
    # wrong answers
    ("wrong_integer", r"\boxed{205}", "204", 0.0, "205"),
    ("several_boxes_first_not_counted", SEVERAL_BOXES, "205", 0.0, "204"),
    ("sign_flip", r"\boxed{1+1/e}", "1-1/e", 0.0, "1+1/e"),
    ("off_by_one", r"\boxed{33}", "34", 0.0, "33"),
    ("wrong_frac", r"\boxed{\frac{3}{5}}", r"\frac{3}{4}", 0.0, r"\frac{3}{5}"),
    ("garbage", "asdf qwer", "204", 0.0, None),
    ("empty", "", "204", 0.0, None),
    ("blank", "   \n ", "204", 0.0, None),
    ("unclosed_think", None, "204", 0.0, None),
]


@pytest.fixture(scope="module")
def scorer():
    return MathScorer(timeout=5, workers=2)


@pytest.fixture(scope="module")
def scored(scorer):
    answers = [answer for _, answer, _, _, _ in CASES]
    golds = [gold for _, _, gold, _, _ in CASES]
    results = list(scorer.score(answers, golds))
    indices = [i for i, _ in results]
    assert sorted(indices) == list(range(len(CASES)))  # every case yielded exactly once
    return {CASES[i][0]: score for i, score in results}


@pytest.mark.parametrize(
    ("case_id", "answer", "gold", "value", "extracted"), CASES, ids=[c[0] for c in CASES]
)
def test_score_value_and_extracted(scored, case_id, answer, gold, value, extracted):
    score = scored[case_id]
    assert score.value == value, (answer, gold, score)
    if extracted is not ...:
        assert score.extracted == extracted, score


def test_no_answer_details(scored):
    assert "think" in scored["unclosed_think"].details["reason"]
    assert scored["unclosed_think"].canonical is None
    assert "empty" in scored["empty"].details["reason"]
    assert scored["garbage"].canonical is None
    assert "no answer" in scored["garbage"].details["reason"]


def test_integer_fast_path_canonical(scored):
    # Integer answers get a normalised canonical key, so "033" and "33" vote together in maj@N.
    assert scored["leading_zero_pred_033"].canonical == "33"
    assert scored["leading_zero_gold_033"].canonical == "33"
    assert scored["trailing_point_zero"].canonical == "204"
    assert scored["thousands_braced_comma"].canonical == "1000"
    assert scored["boxed"].details == {"method": "integer", "source": "boxed"}
    assert scored["answer_is_inline_math"].details["source"] == "phrase"
    assert scored["markdown_bold"].details["source"] == "whole"
    assert scored["frac_vs_short_frac"].details["method"] == "math_verify"


def test_version_names_pinned_libraries(scorer):
    assert "math-verify-" in scorer.version
    assert "latex2sympy2_extended-" in scorer.version
    assert scorer.version.startswith("math-")


def test_only_unanswered_needs_no_workers():
    scorer = MathScorer(timeout=1, workers=1)
    start = time.monotonic()
    results = dict(scorer.score([None, "", "  "], ["1", "2", "3"]))
    assert time.monotonic() - start < 1.0
    assert set(results) == {0, 1, 2}
    assert all(s.value == 0.0 and s.extracted is None for s in results.values())


def test_hanging_answer_times_out_and_pool_recovers():
    scorer = MathScorer(timeout=2, workers=1)
    answers = [HANG, HANG, r"\boxed{\frac{1}{2}}", r"\boxed{204}"]
    golds = [r"\frac{1}{2}", "5", "0.5", "204"]
    start = time.monotonic()
    results = dict(scorer.score(answers, golds))
    elapsed = time.monotonic() - start
    assert elapsed < 20, elapsed
    assert set(results) == {0, 1, 2, 3}
    for i in (0, 1):
        assert results[i].value == 0.0
        assert "timeout" in results[i].details["error"].lower(), results[i].details
        assert results[i].extracted == "9^{9^{9^{9^{9}}}}"
    # scored after the hangs, on replacement workers
    assert results[2].value == 1.0
    assert results[3].value == 1.0
    assert results[3].extracted == "204"


def test_persistent_workers_serve_every_call_until_closed():
    scorer = MathScorer(workers=1, persistent=True)
    workers = [w.process for w in scorer.pool.pool]
    assert dict(scorer.score([r"\boxed{4}"], ["4"]))[0].value == 1.0
    assert dict(scorer.score([r"\boxed{5}"], ["4"]))[0].value == 0.0
    assert [w.process for w in scorer.pool.pool] == workers and workers[0].is_alive()
    scorer.close()
    assert scorer.pool is None and not workers[0].is_alive()
    assert dict(scorer.score([r"\boxed{4}"], ["4"]))[0].value == 1.0  # a pool for the call, as without


# ---------------------------------------------------------------------------------------------
# as_integer
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("033", 33),
        ("204.0", 204),
        ("1,000", 1000),
        ("1{,}000", 1000),
        ("1,000,000", 1000000),
        ("$-7$", -7),
        ("3.00", 3),
        (r"90^\circ", 90),
        (r"\text{12}", 12),
        ("1,2", None),
        ("1,0000", None),
        (r"\frac{1}{2}", None),
        ("3.5", None),
        ("x", None),
        ("", None),
    ],
)
def test_as_integer(text, expected):
    assert as_integer(text) == expected


# ---------------------------------------------------------------------------------------------
# latex helpers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "boxes"),
    [
        (r"so $\boxed{\frac{1}{2}}$.", [r"\frac{1}{2}"]),
        (r"\fbox{3}", ["3"]),
        (r"the answer is \boxed 7", ["7"]),
        (r"$\boxed 7$", ["7"]),
        (r"\boxed {5}", ["5"]),
        (r"\boxed{\{1\}}", [r"\{1\}"]),
        (r"\boxed{\{1,2\}} and \boxed{\{3\}}", [r"\{1,2\}", r"\{3\}"]),
        (r"\boxed{1} then \boxed{2", ["1"]),  # unbalanced trailing box ignored
        (r"\boxed{a} \fbox{b} \boxed{c}", ["a", "b", "c"]),
        (r"\boxed{x^{2^{3}}}", ["x^{2^{3}}"]),
        ("no box here", []),
    ],
)
def test_boxed_contents(text, boxes):
    assert boxed_contents(text) == boxes
    assert last_boxed(text) == (boxes[-1] if boxes else None)


def test_boxed_contents_line_break_before_closing_brace():
    assert boxed_contents(r"\boxed{1 \\} \boxed{5}") == ["1 \\\\", "5"]


def test_last_boxed_takes_last():
    assert last_boxed(r"\boxed{205} and then \boxed{204}") == "204"
    assert last_boxed(r"\boxed{\frac{1}{2}}") == r"\frac{1}{2}"
    assert last_boxed(r"\boxed{1} \boxed{") == "1"
    assert last_boxed("") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("In \triangle ABC", True),  # \t + "riangle"
        ("\x0crac{1}{2}", True),  # \f + "rac"
        ("\x08egin{align}", True),  # \b + "egin"
        ("a \times b", True),  # \t + "imes"
        ("have\tequal sides", False),  # a real tab between words
        (r"In \triangle ABC, $\frac{1}{2}$", False),  # intact backslashes
        ("line one\r\nline two", False),
    ],
)
def test_has_corrupted_escape(text, expected):
    assert has_corrupted_escape(text) is expected


# ---------------------------------------------------------------------------------------------
# pool
# ---------------------------------------------------------------------------------------------


def test_pool_exception_crash_and_timeout_are_results():
    payloads = [
        ("ok", 1),
        ("raise", "boom"),
        ("ok", 2),
        ("exit", 3),
        ("ok", 3),
        ("sleep", 30),
        ("ok", 4),
        ("sleep", 0.05),
    ]
    start = time.monotonic()
    results = list(map_with_timeout(pool_task, payloads, timeout=1.5, workers=2))
    elapsed = time.monotonic() - start
    assert elapsed < 20, elapsed
    assert sorted(i for i, _ in results) == list(range(len(payloads)))
    by_index = dict(results)
    assert by_index[0] == 2
    assert by_index[2] == 4
    assert by_index[4] == 6
    assert by_index[6] == 8
    assert by_index[7] == "slept"
    assert isinstance(by_index[1], RuntimeError)
    assert "ValueError" in str(by_index[1]) and "boom" in str(by_index[1])
    assert isinstance(by_index[3], CallCrashed)
    assert "code 3" in str(by_index[3])
    assert isinstance(by_index[5], CallTimeout)


def test_pool_single_worker_recovers_after_crash_and_timeout():
    payloads = [("exit", 7), ("sleep", 30), ("ok", 21)]
    start = time.monotonic()
    results = list(map_with_timeout(pool_task, payloads, timeout=1.0, workers=1))
    assert time.monotonic() - start < 20
    # one worker: strictly in order
    assert [i for i, _ in results] == [0, 1, 2]
    assert isinstance(results[0][1], CallCrashed)
    assert isinstance(results[1][1], CallTimeout)
    assert results[2][1] == 42


def test_pool_empty_payloads():
    assert list(map_with_timeout(pool_task, [], timeout=1.0, workers=2)) == []


# ---------------------------------------------------------------------------------------------
# thinking
# ---------------------------------------------------------------------------------------------


def test_split_closed_think():
    split = split_thinking("<think>a</think> b")
    assert split.answer == "b"
    assert split.reasoning == "a"
    assert split.unclosed_think is False


def test_split_answer_after_last_close():
    split = split_thinking("<think>first</think>middle</think>  final answer ")
    assert split.answer == "final answer"
    assert split.unclosed_think is False
    assert "middle" in split.reasoning and "final" not in split.reasoning


def test_split_unclosed_think():
    split = split_thinking("<think>abc")
    assert split.answer is None
    assert split.unclosed_think is True
    assert split.reasoning == "abc"


def test_split_think_opened_by_prompt_without_tags():
    split = split_thinking("still reasoning...", think_opened=True)
    assert split.answer is None
    assert split.unclosed_think is True
    # the prompt opened the block and the model closed it: normal split
    split = split_thinking("reasoning</think>\n\n42", think_opened=True)
    assert split.answer == "42"
    assert split.reasoning == "reasoning"
    assert split.unclosed_think is False


def test_split_no_tags_whole_text_is_answer():
    split = split_thinking("  The answer is 5.  ")
    assert split.answer == "The answer is 5."
    assert split.reasoning == ""
    assert split.unclosed_think is False


def test_split_empty_answer_after_close():
    split = split_thinking("<think>x</think>")
    assert split.answer == ""
    assert split.unclosed_think is False


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("<|im_start|>assistant\n<think>\n", True),
        ("<|im_start|>assistant\n<think>\n\n</think>\n\n", False),
        ("<think>old</think> user turn <think>", True),
        ("<|im_start|>assistant\n", False),
    ],
)
def test_prompt_opens_think(prompt, expected):
    assert prompt_opens_think(prompt) is expected
