"""Rule scorers for free-text and multiple-choice answers: choice letters, cover exact match, numeric."""

import pytest

from harness.scoring import get_scorer
from harness.scoring.cem import covers, extract_answer, normalize
from harness.scoring.choice import extract_letter
from harness.scoring.integer import last_number
from harness.scoring.numeric import extract_number, parse_number, within
from harness.scoring.rules import gold_text, parse_gold


@pytest.mark.parametrize(
    ("text", "letter"),
    [
        ("The correct answer is (B).", "B"),
        ("so \\boxed{C}", "C"),
        ("\\boxed{\\text{D}}", "D"),
        ("\\boxed{(A)}", "A"),
        ("Answer: C", "C"),
        ("**Answer:** D", "D"),
        ("the answer is **B**", "B"),
        ("(A) is tempting, but (C) fits", "C"),  # the last one wins
        ("Answer: B ... on reflection \\boxed{D}", "D"),
        ("\\boxed{D} then Answer: A", "A"),
        ("Answer: E", None),  # beyond the four options
        ("I think it is probably B", None),  # a bare letter is not an answer
        ("Answer: Because", None),  # a word starting with a letter
        ("", None),
    ],
)
def test_choice_letter_extraction(text, letter):
    assert extract_letter(text) == letter


def test_choice_scorer_values():
    scorer = get_scorer("choice")
    golds = [gold_text("B", "q"), "C", gold_text("A")]
    answers = ["The correct answer is (B)", "Answer: D", None]
    scores = dict(scorer.score(answers, golds))
    assert [scores[i].value for i in range(3)] == [1.0, 0.0, 0.0]
    assert scores[1].extracted == "D"
    assert scores[2].details["reason"] == "no answer (unclosed think block)"


@pytest.mark.parametrize(
    ("text", "extracted"),
    [
        ("Reasoning...\nThe correct answer is Paris.", "Paris"),
        ("The answer is **Marie Curie**.\nMore text", "Marie Curie"),
        ("the answer is: 1912", "1912"),
        ("The correct answer is (insert answer here).", None),
        ("No marker here", None),
        ("The answer is A. Later, the correct answer is B.", "B"),
        ("The answer is", None),
    ],
)
def test_cem_extraction(text, extracted):
    assert extract_answer(text) == extracted


@pytest.mark.parametrize(
    ("prediction", "gold", "covered"),
    [
        ("Paris", "Paris", True),
        ("Paris, France", "paris", True),  # gold inside the prediction
        ("Paris", "Paris, France", False),  # prediction inside the gold does not count
        ("The Beatles", "Beatles", True),  # articles dropped
        ("the  U.S.A.", "USA", True),  # punctuation and spacing
        ("an apple", "apple", True),
        ("", "apple", False),
        ("apple", "", False),
        ("the", "a", False),  # both normalise to nothing
        ("Theodore Roosevelt", "Roosevelt", True),
        ("1,912", "1912", True),
        ("concatenate", "cat", True),  # a character substring, as SPELL's sub_em_strict
    ],
)
def test_cover_exact_match_table(prediction, gold, covered):
    assert covers(prediction, gold) is covered


def test_normalize():
    assert normalize("The  Quick, Brown FOX!") == "quick brown fox"
    assert normalize("A theater") == "theater"  # "the" only as a whole word


def test_cem_scorer_takes_any_accepted_answer():
    scorer = get_scorer("cem")
    gold = gold_text(["NYC", "New York City"], "Where?")
    scores = dict(
        scorer.score(["The answer is New York City.", "The answer is Boston", "no marker"], [gold] * 3)
    )
    assert [scores[i].value for i in range(3)] == [1.0, 0.0, 0.0]
    assert scores[0].canonical == "new york city"
    assert scores[2].extracted is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Therefore, the answer is 42.", 42.0),
        ("Therefore, the answer is $1,234.5 million.", 1234.5),
        ("the answer is -3.5%", -3.5),
        ("x = 2 + 3 = 5", None),  # no marker
        ("so \\boxed{0.05} and the answer is 7", 0.05),  # boxed first
        ("\\boxed{\\frac{1}{2}}", 0.5),
        ("the answer is \\dfrac{3}{4} of it", 0.75),
        ("Therefore, the answer is 12 / 4 = 3", 3.0),  # after the last '='
        ("the answer is (insert answer here)", None),
    ],
)
def test_numeric_extraction(text, value):
    found = extract_number(text)
    assert (found[1] if found else None) == value


@pytest.mark.parametrize(
    ("p", "g", "ok"),
    [
        (100.0, 100.1, True),  # 0.1% off
        (100.0, 100.2, False),  # 0.2% off
        (5.0, 0.05, True),  # 5% vs 0.05
        (0.05, 5.0, True),
        (1.2, 1200.0, True),  # 1.2 thousand
        (1200.0, 1.2, True),
        (3.0, 4.0, False),
        (0.1234, 0.1235, True),  # within tolerance
        (0.0015, 0.002, True),  # equal once rounded half up to 3 decimals
        (0.0014, 0.002, False),
        (0.0004, 0.0, True),  # rounds to 0.000 half up
        (0.0005, 0.0, False),  # rounds to 0.001
        (-2.0, 2.0, False),
        (float("inf"), 1.0, False),
    ],
)
def test_numeric_tolerance_table(p, g, ok):
    assert within(p, g) is ok


def test_numeric_tolerance_is_a_parameter():
    assert not within(100.0, 101.0)
    assert within(100.0, 101.0, rtol=0.01)
    assert get_scorer("numeric", rtol=0.01).version.endswith("rtol0.01")


def test_numeric_scorer_values_and_bad_reference():
    scorer = get_scorer("numeric")
    scores = dict(
        scorer.score(
            ["the answer is 12.0", "the answer is 13", "the answer is 1", "no number"],
            [gold_text("12"), gold_text("12"), gold_text("n/a"), gold_text("1")],
        )
    )
    assert [scores[i].value for i in range(4)] == [1.0, 0.0, 0.0, 0.0]
    assert scores[2].details["verdict"] == "error"
    assert parse_number("USD 1,000,000") == 1e6


@pytest.mark.parametrize(
    "text, number",
    [
        ("33", "33"),
        ("21 + 12 = 33.", "33"),
        ("The answer is 4 + 17.", "17"),  # unevaluated: its last number is not the sum
        ("13 + 9 = 22\n\nIn", "22"),
        ("It is \\boxed{1,000} (not 7)", "1,000"),
        ("-3 apples", "-3"),
        ("about 2.5", "2.5"),
        ("no digits", None),
    ],
)
def test_integer_extraction_takes_the_last_number(text, number):
    assert last_number(text) == number


def test_integer_scorer_credits_numbers_not_expressions():
    scorer = get_scorer("integer")
    answers = ["21 + 12 = 33.", "The answer is 21 + 12.", "033", "\\boxed{33.0}", "33.5", "none", None]
    scores = [score for _, score in scorer.score(answers, ["33"] * len(answers))]
    assert [s.value for s in scores] == [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    assert [s.canonical for s in scores[:5]] == ["33", "12", "33", "33", None]
    assert scores[5].details == {"reason": "no number in the answer"}
    (_, bad), *_ = scorer.score(["33"], ["x + 1"])
    assert bad.value == 0.0 and bad.details["verdict"] == "error"
    (_, credited), *_ = get_scorer("math").score(["The answer is 21 + 12."], ["33"])
    assert credited.value == 1.0  # math-verify, by contrast, evaluates the expression


def test_gold_parsing():
    assert parse_gold("plain").answers == ["plain"]
    assert parse_gold('{"x": 1}').answers == ['{"x": 1}']
    gold = parse_gold(gold_text(["a", 2], "q?"))
    assert gold.answers == ["a", "2"] and gold.question == "q?"


def test_judged_scorer_needs_a_judge():
    from harness import HarnessError

    with pytest.raises(HarnessError, match="--judge-model"):
        get_scorer("cem+judge")
    with pytest.raises(HarnessError, match="unknown scorer"):
        get_scorer("fuzzy")


def test_every_scorer_follows_the_scorer_protocol():
    """One `score(answers, golds, previous=None)` for all: callers always pass the earlier details."""
    import inspect

    from harness.backends import EngineConfig
    from harness.scoring import JudgeConfig, Scorer, names
    from harness.scoring.lmeval import LMEvalScorer

    judge = JudgeConfig(EngineConfig("m", backend="openai", base_url="http://127.0.0.1:1/v1"))
    scorers = [get_scorer(name, judge=judge) for name in names()]
    expected = inspect.signature(Scorer.score)
    for scorer in [*scorers, LMEvalScorer("some_task")]:  # (its version would load the task)
        assert inspect.signature(type(scorer).score) == expected, scorer.name
    assert [s.name for s in scorers] == list(names())
    for scorer in scorers:
        scorer.close()
    assert all(isinstance(s.version, str) for s in scorers)
    cascade = scorers[names().index("cem+judge")]
    assert cascade.version == f"max({get_scorer('cem').version},{get_scorer('judge', judge=judge).version})"
