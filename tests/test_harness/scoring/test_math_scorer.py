r"""The math scorer (`harness.scoring.math`) as a whole: answer formats, integer canonical keys, its workers.

The scorer spawns worker processes, so scoring cases are batched into as few `score` calls as possible.
"""

from __future__ import annotations

import time

import pytest

from harness.scoring.math import MathScorer

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
