"""SPELL's pure parts (docs/methods/spell.md): rewards, votes, parsing, history memory, prompts, dynamic
sampling, and the harness pieces SPELL uses as its rules (CEM, numeric match, letter extraction,
middle truncation, pass@k, Table 1's averages). Hand-made inputs, exact expected values."""

from __future__ import annotations

import csv
import json
import math
import random
import re
from collections import Counter, defaultdict
from fractions import Fraction

import pytest
from helpers import REPO

from harness.backends.chat import middle_truncate
from harness.core.metrics import pass_at_k
from harness.papers import PAPERS
from harness.scoring.cem import CEMScorer, covers, extract_answer, normalize
from harness.scoring.choice import ChoiceScorer, extract_letter
from harness.scoring.numeric import NumericScorer, parse_number, within
from harness.scoring.rules import Gold
from trainers.methods.spell.memory import Entry, HistoryMemory, questioner_documents
from trainers.methods.spell.parsing import (
    DROPPED,
    FORMAT_ERROR,
    INVALID,
    MAX_ANSWER_TOKENS,
    NO,
    YES,
    Proposal,
    parse_judgment,
    parse_proposal,
)
from trainers.methods.spell.prompts import (
    CHOICE,
    GENERAL,
    LETTERS,
    MATH,
    NO_DOCUMENTS,
    TASKS,
    choice_problem,
    questioner_prompt,
    responder_prompt,
    verifier_prompt,
)
from trainers.methods.spell.rewards import (
    FORMAT_ERROR as FORMAT_PENALTY,
)
from trainers.methods.spell.rewards import (
    SIGMA,
    UNGROUNDED,
    majority,
    questioner_reward,
    responder_reward,
    verifier_rewards,
)
from trainers.methods.spell.sampling import Judged, Question, eligible, kept, select

G = 8
EIGHTHS = [k / 8 for k in range(9)]


def words(text: str) -> int:
    return len(text.split())


# ------------------------------------------------------------------ questioner reward (Eq. 7)


def table(mapping: str = "gaussian", sigma: float = SIGMA) -> list[float]:
    return [round(questioner_reward(m, mapping, sigma), 4) for m in EIGHTHS]


def test_gaussian_peaks_at_one_half_and_is_zero_at_the_ends():
    assert SIGMA == pytest.approx(0.5 / 3)
    assert questioner_reward(0.5) == 1.0
    assert questioner_reward(0.0) == 0.0 and questioner_reward(1.0) == 0.0
    grid = [i / 1000 for i in range(1, 1000)]
    assert max(grid, key=questioner_reward) == 0.5
    assert all(0.0 < questioner_reward(m) <= 1.0 for m in grid)


@pytest.mark.parametrize("d", [0.01, 0.1, 0.125, 0.25, 0.375, 0.49])
def test_gaussian_is_symmetric(d):
    assert questioner_reward(0.5 - d) == pytest.approx(questioner_reward(0.5 + d), abs=1e-15)


def test_gaussian_values_at_eighths():
    assert table() == [0, 0.0796, 0.3247, 0.7548, 1.0, 0.7548, 0.3247, 0.0796, 0]
    # 2 sigma^2 = 1/18, so r = exp(-18 (mean - 0.5)^2)
    assert questioner_reward(3 / 8) == pytest.approx(math.exp(-18 * (1 / 8) ** 2))


def test_gaussian_sigma_sensitivity_table_3():
    assert table(sigma=0.5 / 6) == [0, 0.0, 0.0111, 0.3247, 1.0, 0.3247, 0.0111, 0.0, 0]
    assert 0 < questioner_reward(1 / 8, sigma=0.5 / 6) < 1e-4  # ≈0.0000 but still positive
    assert table(sigma=0.5 / 2) == [0, 0.3247, 0.6065, 0.8825, 1.0, 0.8825, 0.6065, 0.3247, 0]
    for m in (1 / 8, 2 / 8, 3 / 8):  # narrower sigma gives less away from the peak, wider more
        assert (
            questioner_reward(m, sigma=0.5 / 6) < questioner_reward(m) < questioner_reward(m, sigma=0.5 / 2)
        )


def test_azr_and_rzero_mappings_figure_5():
    assert table("azr") == [0, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25, 0.125, 0]
    assert table("rzero") == [0, 0.25, 0.5, 0.75, 1.0, 0.75, 0.5, 0.25, 0]
    with pytest.raises(ValueError):
        questioner_reward(0.5, "linear")


def test_penalty_constants():
    assert UNGROUNDED == -0.5
    assert FORMAT_PENALTY == -1.0
    assert FORMAT_PENALTY < UNGROUNDED < min(questioner_reward(m) for m in EIGHTHS)


# ------------------------------------------------------------------ majority vote and role rewards


@pytest.mark.parametrize(
    "judgments, expected",
    [
        ([YES] * 5 + [NO] * 3, 1),
        ([YES] * 4 + [NO] * 4, 0),  # a tie is NO
        ([YES] * 8, 1),
        ([NO] * 8, 0),
        ([YES] * 4 + [INVALID] * 4, 0),  # invalid counts as NO
        ([YES] * 5 + [INVALID] * 3, 1),
        ([YES] * 4 + [NO] * 2 + [INVALID] * 2, 0),
        ([INVALID] * 8, 0),
    ],
)
def test_strict_majority(judgments, expected):
    assert majority(judgments) == expected
    assert majority(judgments, "strict") == expected


@pytest.mark.parametrize(
    "judgments, expected",
    [
        ([NO, YES, YES, NO], NO),  # 2-2: the label seen first
        ([YES, NO, NO, YES], YES),
        ([YES, YES, YES, NO, NO, NO, NO, INVALID], NO),
        ([INVALID, INVALID, INVALID, YES, YES, NO, NO, NO], INVALID),  # 3-3-2: INVALID came first
        ([NO, NO, NO, INVALID, INVALID, INVALID, YES, YES], NO),
        ([YES, INVALID, INVALID, INVALID, YES, YES, YES, NO], YES),
    ],
)
def test_mode_vote(judgments, expected):
    assert majority(judgments, "mode") == expected


def test_unknown_vote_is_refused():
    with pytest.raises(ValueError):
        majority([YES], "plurality")


def test_verifier_rewards_agree_with_the_majority():
    judgments = [YES, YES, YES, YES, YES, NO, NO, INVALID]
    assert verifier_rewards(judgments, 1) == [1.0] * 5 + [0.0, 0.0, 0.0]
    assert verifier_rewards(judgments, 0) == [0.0] * 5 + [1.0, 1.0, 0.0]  # invalid agrees with nothing
    assert verifier_rewards(judgments, 1, invalid_reward=-1.0) == [1.0] * 5 + [0.0, 0.0, -1.0]
    assert verifier_rewards(judgments, 0, invalid_reward=-1.0) == [0.0] * 5 + [1.0, 1.0, -1.0]
    assert verifier_rewards([YES] * 8, majority([YES] * 8)) == [1.0] * 8


def test_responder_reward_is_max_of_rule_and_vote():
    assert responder_reward(0.0, 1) == 1.0  # a paraphrase the rule misses, the verifiers accept
    assert responder_reward(1.0, 0) == 1.0  # the rule wins over a NO majority
    assert responder_reward(0.0, 0) == 0.0
    assert responder_reward(1.0, 1) == 1.0
    assert responder_reward(0.0, INVALID) == 0.0  # the mode vote's INVALID leaves the rule
    assert responder_reward(1.0, INVALID) == 1.0
    # end to end: CEM misses the paraphrase, five of eight verifiers accept it
    rule = CEMScorer().check("The correct answer is NYC.", Gold(["New York City"])).value
    assert rule == 0.0
    assert responder_reward(rule, majority([YES] * 5 + [NO] * 3)) == 1.0
    assert responder_reward(rule, majority([YES] * 4 + [NO] * 4)) == 0.0


# ------------------------------------------------------------------ CEM (the general-QA rule)


def test_cem_normalisation():
    assert normalize("The  Eiffel Tower!") == "eiffel tower"
    assert normalize("An apple, a PEAR and the plum.") == "apple pear and plum"
    assert normalize("  Théâtre\t\nde   la Ville ") == "théâtre de la ville"
    assert normalize("the") == ""


def test_cem_is_strict_reference_in_prediction():
    assert covers("Paris, France", "paris")
    assert not covers("Paris", "Paris, France")  # prediction inside the reference does not count
    assert covers("the Eiffel tower", "Eiffel Tower.")
    assert not covers("", "paris") and not covers("paris", "")
    assert not covers("The", "a")  # both normalise to empty


def test_cem_scores_the_extracted_answer_and_not_the_hack():
    scorer, gold = CEMScorer(), Gold(["Paris"])
    assert scorer.check("Reasoning... The correct answer is Paris, France.", gold).value == 1.0
    assert extract_answer("The answer is") is None
    assert scorer.check("The answer is", gold).value == 0.0  # the D.6 hack
    assert scorer.check("The answer is.", gold).value == 0.0
    assert scorer.check("The answer is the", gold).value == 0.0
    assert scorer.check('The correct answer is "(insert answer here)".', gold).value == 0.0
    # the gold appears in the response but not in the extracted answer
    assert scorer.check("Paris is the capital. The correct answer is London.", gold).value == 0.0
    assert scorer.check("It is Paris.", gold).value == 0.0  # no marker, no prediction
    # the last marker wins, first line only, * and one trailing period removed
    assert extract_answer("the answer is Rome. Wait, the answer is **Paris**.\nmore") == "Paris"


# ------------------------------------------------------------------ DocMath numeric match


def test_numeric_relative_tolerance_is_0_15_percent():
    assert within(1001.4, 1000.0) and within(998.6, 1000.0)
    assert not within(1001.6, 1000.0) and not within(998.4, 1000.0)
    assert within(-100.1, -100.0) and not within(-100.2, -100.0)


def test_numeric_scale_equivalence():
    assert within(0.05, 5.0) and within(5.0, 0.05)
    assert within(1.2, 1200.0)  # 1.2 thousand
    assert within(3.5, 3_500_000.0) and within(2.0, 2e9)
    assert not within(0.05, 0.5) and not within(2.0, 20.0)  # x10 is not a scale
    scorer = NumericScorer()
    assert scorer.check("Therefore, the answer is 0.05", Gold(["5%"])).value == 1.0
    assert scorer.check("Therefore, the answer is 1.2 thousand", Gold(["1,200"])).value == 1.0
    assert scorer.check("Therefore, the answer is $1,200.00 million", Gold(["1200"])).value == 1.0


def test_numeric_rounding_half_up_to_3_decimals():
    assert within(0.0125, 0.013)  # 0.0125 rounds up to 0.013; 4% apart, so only rounding matches
    assert not within(0.0125, 0.012)  # half up, not half to even
    assert within(0.0004, 0.0) and not within(0.3, 0.0)


def test_numeric_extraction_and_bad_references():
    scorer = NumericScorer()
    assert scorer.check("so \\boxed{42.0} and later the answer is 41", Gold(["42"])).value == 1.0
    assert scorer.check("x = 3 + 4 = 7. Therefore, the answer is 7", Gold(["7"])).value == 1.0
    assert scorer.check("Therefore, the answer is unknown", Gold(["7"])).value == 0.0
    bad = scorer.check("Therefore, the answer is 5", Gold(["five"]))
    assert bad.value == 0.0 and bad.details["verdict"] == "error"
    assert parse_number("1,200") == 1200.0 and parse_number("$12.50") == 12.5 and parse_number("N/A") is None


# ------------------------------------------------------------------ multiple-choice extraction


def test_choice_extraction():
    assert extract_letter("The correct answer is (B)") == "B"
    assert extract_letter("Thus \\boxed{C}") == "C"
    assert extract_letter("The correct answer is (A). On reflection, the correct answer is (D).") == "D"
    assert extract_letter("\\boxed{B} ... The correct answer is (C)") == "C"
    assert extract_letter("The correct answer is (E)") is None  # beyond four options
    assert extract_letter("no letter here") is None
    scorer = ChoiceScorer()
    assert scorer.check("The correct answer is (B)", Gold(["B"])).value == 1.0
    assert scorer.check("(B) first, but the answer is (A)", Gold(["B"])).value == 0.0


# ------------------------------------------------------------------ middle truncation


def test_middle_truncation():
    ids = list(range(10))
    assert middle_truncate(ids, 6) == [0, 1, 2, 7, 8, 9]
    assert middle_truncate(ids, 7) == [0, 1, 2, 7, 8, 9]  # floor(7/2) from each end
    assert middle_truncate(ids, 10) == ids and middle_truncate(ids, 20) == ids
    assert middle_truncate(ids, None) == ids
    long = list(range(100_000))
    cut = middle_truncate(long, 16384)
    assert len(cut) == 16384 and cut[:8192] == long[:8192] and cut[8192:] == long[-8192:]


# ------------------------------------------------------------------ pass@k (Eq. 11)


def test_pass_at_k_known_values():
    assert pass_at_k(8, 2, 4) == pytest.approx(1 - 15 / 70)
    assert round(pass_at_k(8, 2, 4), 4) == 0.7857
    assert pass_at_k(8, 1, 8) == 1.0
    expected = {  # SPELL paper, Eq. 11
        1: [0.125, 0.25, 0.5, 1.0],
        2: [0.25, 0.4643, 0.7857, 1.0],
        4: [0.5, 0.7857, 0.9857, 1.0],
        6: [0.75, 0.9643, 1.0, 1.0],
    }
    for c, values in expected.items():
        assert [round(pass_at_k(8, c, k), 4) for k in (1, 2, 4, 8)] == values


def test_pass_at_k_properties():
    for c in range(9):
        assert pass_at_k(8, c, 1) == pytest.approx(c / 8)
        values = [pass_at_k(8, c, k) for k in range(1, 9)]
        assert all(a <= b + 1e-12 for a, b in zip(values, values[1:], strict=False))
        for k in range(1, 9):
            if 8 - c < k:
                assert pass_at_k(8, c, k) == 1.0
    assert pass_at_k(8, 0, 8) == 0.0


def test_pass_at_k_is_not_the_bootstrap():
    bootstrap = 1 - (7 / 8) ** 8  # the released code's resampling estimate, in expectation
    assert round(bootstrap, 3) == 0.656
    assert pass_at_k(8, 1, 8) - bootstrap > 0.34


# ------------------------------------------------------------------ Table 1's averages


def test_table_1_averages_are_means_of_their_columns():
    layout = {c.key: c.parts for c in PAPERS["spell"].layout.columns}
    assert layout["lb_mqa"] == ("hotpotqa", "2wikimqa", "musique")  # LB-MQA is the mean of 3
    assert layout["avg"] == ("docmath", "frames", "lb_mqa", "longbench_v2")  # Avg the mean of 4
    rows: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    with open(REPO / "results/paper/spell.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row["paper"] == "spell" and row["table"] == "Table 1":
                rows[row["model"], row["method"], row["setting"]][row["benchmark"]] = float(row["value"])
    assert len(rows) == 72  # 12 models x (Base, RLVR, SPELL) x (16K, 100K)
    for key, values in rows.items():
        assert set(values) == {"avg", *layout["avg"]}, key
        mean = sum(values[b] for b in layout["avg"]) / 4
        assert abs(values["avg"] - mean) <= 0.05 + 1e-9, (key, values["avg"], mean)


# ------------------------------------------------------------------ questioner output parsing


def fenced(obj) -> str:
    return "```json\n" + json.dumps(obj) + "\n```"


QA = {"question": "What links A and B?", "answer": "The river"}


def test_the_last_valid_fenced_block_wins():
    first, second = {"question": "Q1", "answer": "A1"}, {"question": "Q2", "answer": "A2"}
    text = f"Draft:\n{fenced(first)}\nFinal:\n{fenced(second)}"
    assert parse_proposal(text, GENERAL, words) == Proposal("Q2", "A2")
    broken = f'{fenced(first)}\n```json\n{{"question": "Q2", \n```'  # the last block does not parse
    assert parse_proposal(broken, GENERAL, words) == Proposal("Q1", "A1")
    not_a_dict = f"{fenced(first)}\n```json\n[1, 2]\n```"
    assert parse_proposal(not_a_dict, GENERAL, words) == Proposal("Q1", "A1")


def test_unfenced_json_is_read_too():
    assert parse_proposal(json.dumps(QA), GENERAL, words) == Proposal(QA["question"], QA["answer"])
    text = "My reasoning {step 1}.\nResult: " + json.dumps(QA) + "\nDone."
    assert parse_proposal(text, GENERAL, words) == Proposal(QA["question"], QA["answer"])


def test_only_the_text_after_think_counts():
    inside = {"question": "Inside?", "answer": "no"}
    text = f"<think>{fenced(inside)}</think>\nFinal: {fenced(QA)}"
    assert parse_proposal(text, GENERAL, words) == Proposal(QA["question"], QA["answer"])
    only_inside = f"<think>{fenced(inside)}</think>\nI could not decide."
    assert parse_proposal(only_inside, GENERAL, words).kind == FORMAT_ERROR


def test_an_unclosed_think_is_dropped():
    assert parse_proposal(f"<think>still thinking {fenced(QA)}", GENERAL, words).kind == DROPPED
    assert parse_proposal(fenced(QA), GENERAL, words, think_opened=True).kind == DROPPED
    closed = f"reasoning</think>{fenced(QA)}"  # the template opened the think block
    assert parse_proposal(closed, GENERAL, words, think_opened=True) == Proposal(QA["question"], QA["answer"])


def test_control_characters_are_removed():
    text = '```json\n{"question": "Wh\x07at?", "answer": "x\x00y"}\n```'
    assert parse_proposal(text, GENERAL, words) == Proposal("What?", "xy")


@pytest.mark.parametrize(
    "text",
    [
        "no JSON at all",
        fenced({"question": "Q"}),
        fenced({"answer": "A"}),
        fenced({"question": 3, "answer": "A"}),
        fenced({"question": "  ", "answer": "A"}),
        fenced({"question": "Q", "answer": 7}),
        fenced({"question": "Q", "answer": ""}),
        fenced(["question", "answer"]),
        fenced("just a string"),
    ],
)
def test_general_format_errors(text):
    assert parse_proposal(text, GENERAL, words).kind == FORMAT_ERROR


def test_general_answer_length():
    limit = " ".join(["w"] * MAX_ANSWER_TOKENS)
    assert MAX_ANSWER_TOKENS == 40
    assert parse_proposal(fenced({"question": "Q", "answer": limit}), GENERAL, words) == Proposal("Q", limit)
    over = parse_proposal(fenced({"question": "Q", "answer": limit + " w"}), GENERAL, words)
    assert over.kind == DROPPED
    counted: list[str] = []
    parse_proposal(fenced({"question": " Q ", "answer": " A "}), GENERAL, lambda s: counted.append(s) or 1)
    assert counted == [" A "]


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("1,200", "1200"),
        (12.50, "12.5"),
        ("12.50", "12.5"),
        (3, "3"),
        (3.0, "3"),
        ("$1,200.00", "1200"),
        ("15%", "15"),
        ("-2.5", "-2.5"),
        ("0.05", "0.05"),
        ("1.2 million USD", "1.2"),
    ],
)
def test_math_answers_are_normalised(answer, expected):
    assert parse_proposal(fenced({"question": "Q", "answer": answer}), MATH, words) == Proposal("Q", expected)


@pytest.mark.parametrize(
    "answer, kind",
    [
        ("0", DROPPED),
        (0, DROPPED),
        (0.0, DROPPED),
        ("$0.00", DROPPED),
        ("N/A", DROPPED),
        ("twelve", DROPPED),
        # sentences the CPU run's SmolLM2 wrote as answers: not one number with its units
        ("2023 Revenue: 86,800", DROPPED),
        ("What is the value of the number 242 million shares outstanding?", DROPPED),
        ("It grew 12 percent over the year", DROPPED),
        (True, FORMAT_ERROR),
        (None, FORMAT_ERROR),
        ([12], FORMAT_ERROR),
        ({"value": 12}, FORMAT_ERROR),
    ],
)
def test_math_answers_that_are_not_usable(answer, kind):
    assert parse_proposal(fenced({"question": "Q", "answer": answer}), MATH, words).kind == kind


OPTIONS = {"A": "one", "B": "two", "C": "three", "D": "four"}


@pytest.mark.parametrize("answer", ["B", "(B)", "b", " (b) ", "B.", "( B )", "B:"])
def test_choice_answer_letters(answer):
    found = parse_proposal(fenced({"question": "Q", "options": OPTIONS, "answer": answer}), CHOICE, words)
    assert found == Proposal("Q", "B", OPTIONS)
    assert found.options == OPTIONS


@pytest.mark.parametrize(
    "options, answer",
    [
        ({"A": "one", "B": "two", "C": "three"}, "B"),
        ({**OPTIONS, "E": "five"}, "B"),
        ({k.lower(): v for k, v in OPTIONS.items()}, "B"),
        (["one", "two", "three", "four"], "B"),
        (None, "B"),
        ({**OPTIONS, "C": ""}, "B"),
        ({**OPTIONS, "C": 3}, "B"),
        (OPTIONS, "E"),
        (OPTIONS, "two"),
        (OPTIONS, "(B) two"),
        (OPTIONS, 2),
        (OPTIONS, None),
    ],
)
def test_choice_format_errors(options, answer):
    text = fenced({"question": "Q", "options": options, "answer": answer})
    assert parse_proposal(text, CHOICE, words).kind == FORMAT_ERROR


def test_choice_options_are_stripped_and_ordered():
    options = {"D": " four ", "C": "three", "B": "two", "A": "one"}
    found = parse_proposal(fenced({"question": "Q", "options": options, "answer": "d"}), CHOICE, words)
    assert found == Proposal("Q", "D", OPTIONS)
    assert list(found.options) == list(LETTERS)


def test_unknown_task_is_refused():
    with pytest.raises(ValueError):
        parse_proposal(fenced(QA), "summarise", words)


# ------------------------------------------------------------------ verifier decisions


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Explanation: same city.\nDecision: [[YES]]", YES),
        ("Explanation: different.\nDecision: [[NO]]", NO),
        ("Both [[YES]] and [[NO]] appear", INVALID),  # the bare words also see both
        ("Decision: YES", YES),  # no brackets: the bare word
        ("Decision: NO", NO),
        ("Decision: YES or NO", INVALID),
        ("I cannot tell.", INVALID),
        ("NOTE: the answers match. [[YES]]", YES),
        ("Decision: [[YES]] (NOT the same units, but equal)", YES),
        ("<think>Maybe [[NO]]...</think>\nDecision: [[YES]]", YES),
        ("<think>[[YES]] at first</think>Decision: [[NO]]", NO),
        ("<think>a long thought that ends with [[YES]]", INVALID),  # unclosed
        ("", INVALID),
    ],
)
def test_parse_judgment(text, expected):
    assert parse_judgment(text) == expected


def test_parse_judgment_with_an_opened_think():
    assert parse_judgment("[[YES]]", think_opened=True) == INVALID
    assert parse_judgment("hmm [[NO]] </think> [[YES]]", think_opened=True) == YES


# ------------------------------------------------------------------ history memory


def entry(i: int, documents: tuple[int, ...] = (0,)) -> Entry:
    return Entry(documents, f"question {i}", f"answer {i}")


def test_memory_keeps_the_last_l_entries_per_task_and_cluster():
    memory = HistoryMemory(3)
    for i in range(5):
        memory.push(GENERAL, "c1", entry(i))
    memory.push(MATH, "c1", entry(9))
    memory.push(GENERAL, "c2", entry(8))
    assert memory.entries(GENERAL, "c1") == [entry(2), entry(3), entry(4)]  # oldest evicted first
    assert memory.entries(MATH, "c1") == [entry(9)]
    assert memory.entries(GENERAL, "c2") == [entry(8)]
    assert memory.entries(CHOICE, "c1") == []
    assert len(memory) == 5
    off = HistoryMemory(0)
    off.push(GENERAL, "c1", entry(0))
    assert len(off) == 0 and off.entries(GENERAL, "c1") == []


def test_memory_push_rules():
    paper, code = HistoryMemory(3), HistoryMemory(3, "code")
    assert [paper.solvable(m) for m in (0.0, 1 / 8, 0.5, 7 / 8, 1.0)] == [False, True, True, True, False]
    assert [code.solvable(m) for m in (0.0, 0.005, 0.01, 1 / 8, 1.0)] == [False, False, True, True, True]
    with pytest.raises(ValueError):
        HistoryMemory(3, "sometimes")


def test_questioner_documents_are_memory_plus_m_new_sorted():
    memory = [entry(0, (1, 3)), entry(1, (3, 7)), entry(2, (12,))]
    for seed in range(20):
        docs = questioner_documents(20, memory, 5, random.Random(seed))
        assert docs == sorted(docs) and len(set(docs)) == len(docs)
        assert {1, 3, 7, 12} <= set(docs)
        new = set(docs) - {1, 3, 7, 12}
        assert len(new) == 5 and new <= set(range(20))
    assert len(questioner_documents(20, [], 5, random.Random(0))) == 5


def test_questioner_documents_when_the_cluster_is_short():
    memory = [entry(0, (0, 1, 2))]
    assert questioner_documents(5, memory, 5, random.Random(0)) == [0, 1, 2, 3, 4]
    assert questioner_documents(3, memory, 5, random.Random(0)) == [0, 1, 2]
    assert questioner_documents(3, [], 5, random.Random(0)) == [0, 1, 2]


def test_questioner_documents_are_deterministic():
    memory = [entry(0, (4,))]
    draws = [questioner_documents(50, memory, 5, random.Random(7)) for _ in range(2)]
    assert draws[0] == draws[1]


def test_memory_state_round_trip():
    memory = HistoryMemory(3)
    for i in range(4):
        memory.push(GENERAL, "c1", entry(i, (i, i + 2)))
    memory.push(CHOICE, "c9", entry(7, (5,)))
    state = json.loads(json.dumps(memory.state_dict()))  # as a checkpoint would hold it
    restored = HistoryMemory(3)
    restored.load_state_dict(state)
    assert restored.entries(GENERAL, "c1") == memory.entries(GENERAL, "c1")
    assert restored.entries(CHOICE, "c9") == [entry(7, (5,))]
    assert restored.state_dict() == memory.state_dict()
    restored.push(GENERAL, "c1", entry(10))  # the cap survives the restore
    assert [e.question for e in restored.entries(GENERAL, "c1")] == [
        "question 2",
        "question 3",
        "question 10",
    ]
    with pytest.raises(ValueError):
        HistoryMemory(2).load_state_dict(state)
    with pytest.raises(ValueError):
        HistoryMemory(3, "code").load_state_dict(state)


# ------------------------------------------------------------------ prompts

PLACEHOLDER = re.compile(r"\{\w+\}")
EXAMPLES = [("Who founded X?", "Ann"), ("When did Y open?", "1999"), ("How far is Z?", "12 km")]


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("examples", [[], EXAMPLES[:1], EXAMPLES])
def test_questioner_prompts_are_complete(task, examples):
    context = "Document one.\nDocument two."
    prompt = questioner_prompt(task, context, examples, correct_answer="C")
    assert not PLACEHOLDER.search(prompt), PLACEHOLDER.findall(prompt)
    assert "<correct_answer>" not in prompt
    assert prompt.count(f"<text>\n{context}\n</text>") == 1
    assert prompt.rstrip().endswith("</text>") == (not examples)
    assert ("## Previous Examples" in prompt) == bool(examples)
    assert ("Escalate Question Difficulty" in prompt) == bool(examples)
    assert re.findall(r"### Example (\d+):", prompt) == [str(k) for k in range(1, len(examples) + 1)]
    for k, (q, a) in enumerate(examples, 1):
        assert f"### Example {k}:\nQuestion: {q}\nAnswer: {a}" in prompt
    assert "## Output Format" in prompt and "## Document Context" in prompt
    numbers = re.findall(r"^(\d+)\. ", prompt, re.MULTILINE)  # the principles are numbered 1..P
    assert numbers == [str(i) for i in range(1, len(numbers) + 1)] and len(numbers) >= 5
    if task == CHOICE:
        assert "The correct answer must be C." in prompt
        assert '"answer": "C"' in prompt
        assert '"options"' in prompt


def test_the_six_questioner_prompts_differ():
    prompts = {questioner_prompt(t, "ctx", ex, "A") for t in TASKS for ex in ([], EXAMPLES)}
    assert len(prompts) == 6


def test_braces_in_documents_and_examples_are_kept():
    context = "Doc with {context}, {correct_answer} and {question} in it"
    examples = [("What is {context}?", "{answer}")]
    for task in TASKS:
        prompt = questioner_prompt(task, context, examples, correct_answer="B")
        assert prompt.count(context) == 1
        assert "Question: What is {context}?\nAnswer: {answer}" in prompt
    responder = responder_prompt(GENERAL, "text {question} {content}", "Why {content}?")
    assert "<text>\ntext {question} {content}\n</text>\nQuestion: Why {content}?\n" in responder
    verifier = verifier_prompt("P {answer_2}", "A {answer_1}", "R")
    assert "- Problem: P {answer_2}\n- Answer 1: A {answer_1}\n- Answer 2: R\n" in verifier


@pytest.mark.parametrize("task", TASKS)
def test_responder_prompts(task):
    options = OPTIONS if task == CHOICE else None
    prompt = responder_prompt(task, "DOCS", "What is it?", options)
    assert not PLACEHOLDER.search(prompt)
    assert "<text>\nDOCS\n</text>" in prompt and "What is it?" in prompt
    grounding = responder_prompt(task, NO_DOCUMENTS, "What is it?", options)
    assert NO_DOCUMENTS == "Empty" and "<text>\nEmpty\n</text>" in grounding
    ending = (
        "Therefore, the answer is (insert answer here)."
        if task == MATH
        else ("The correct answer is (insert answer here).")
    )
    assert prompt.rstrip().endswith(ending + '"')


def test_responder_choices_are_rendered():
    prompt = responder_prompt(CHOICE, "DOCS", "Which?", OPTIONS)
    assert "What is the correct answer to this question: Which?\nChoices:\n" in prompt
    assert "(A) one\n(B) two\n(C) three\n(D) four\n" in prompt
    with pytest.raises(ValueError):
        responder_prompt(CHOICE, "DOCS", "Which?")


def test_verifier_prompt_and_choice_problem():
    problem = choice_problem("Which?", OPTIONS)
    assert problem == (
        "What is the correct answer to this question: Which?\nChoices:\n(A) one\n(B) two\n(C) three\n(D) four"
    )
    prompt = verifier_prompt(problem, "B", "C")
    assert not PLACEHOLDER.search(prompt)
    assert f"- Problem: {problem}\n- Answer 1: B\n- Answer 2: C\n" in prompt
    assert "[[YES]]" in prompt and "[[NO]]" in prompt and "0.15%" in prompt
    assert "<text>" not in prompt  # the verifier sees no documents


# ------------------------------------------------------------------ role-specific dynamic sampling


def answered(task: str, right: int) -> Question:
    """A question answered with the documents, `right` of G responders right."""
    rewards = (1.0,) * right + (0.0,) * (G - right)
    return Question(task, questioner_reward(right / G), rewards)


def penalised(task: str, reward: float) -> Question:
    return Question(task, reward)


def test_kept_groups_have_non_zero_variance():
    assert [kept(answered(GENERAL, k)) for k in range(9)] == [False] + [True] * 7 + [False]
    assert not kept(penalised(GENERAL, UNGROUNDED)) and not kept(Question(GENERAL, None))


def test_responders_are_the_first_n_kept_groups():
    questions = [
        answered(GENERAL, 0),  # 0
        answered(GENERAL, 3),  # 1
        penalised(MATH, FORMAT_PENALTY),  # 2
        answered(MATH, 8),  # 3
        answered(MATH, 1),  # 4
        Question(CHOICE, None),  # 5: dropped without penalty
        answered(CHOICE, 7),  # 6
        answered(CHOICE, 4),  # 7
    ]
    chosen = select(questions, [], 3, G, random.Random(0))
    assert chosen.responders == [1, 4, 6]
    assert chosen.positives == chosen.responders
    assert all(questions[i].reward > 0 for i in chosen.positives)
    # one negative per task: GENERAL's 0, one of MATH's 2 and 3; CHOICE has none, so the last task's
    # shortfall is made up from what is left (the other of 2 and 3)
    assert chosen.negatives == [0, 2, 3]
    assert all(questions[i].reward <= 0 for i in chosen.negatives)


def tasks_of(questions, indices) -> Counter:
    return Counter(questions[i].task for i in indices)


def test_negatives_match_the_positives_per_task():
    questions = [answered(GENERAL, 2), answered(MATH, 5), answered(GENERAL, 6)]
    questions += [penalised(GENERAL, 0.0)] * 3 + [penalised(GENERAL, UNGROUNDED)] * 3
    questions += [penalised(MATH, FORMAT_PENALTY), answered(MATH, 0), penalised(MATH, UNGROUNDED)]
    questions += [penalised(CHOICE, 0.0)] * 4 + [Question(GENERAL, None)] * 3
    for seed in range(10):
        chosen = select(questions, [], 3, G, random.Random(seed))
        assert chosen.responders == [0, 1, 2]
        assert len(chosen.negatives) == 3 and len(set(chosen.negatives)) == 3
        assert tasks_of(questions, chosen.negatives) == tasks_of(questions, chosen.positives)
        assert tasks_of(questions, chosen.negatives) == Counter({GENERAL: 2, MATH: 1})
        assert all(questions[i].reward is not None and questions[i].reward <= 0 for i in chosen.negatives)
        assert chosen.negatives == sorted(chosen.negatives)


def test_a_task_short_of_negatives_passes_its_shortfall_on():
    questions = [answered(GENERAL, 4)] * 3 + [answered(MATH, 4)]
    questions += [penalised(GENERAL, UNGROUNDED)] + [penalised(MATH, 0.0)] * 5
    chosen = select(questions, [], 4, G, random.Random(0))
    assert chosen.responders == [0, 1, 2, 3]
    assert tasks_of(questions, chosen.negatives) == Counter({GENERAL: 1, MATH: 3})
    # too few negatives overall: all of them, fewer than N
    few = [answered(GENERAL, 4)] * 4 + [penalised(GENERAL, 0.0), penalised(MATH, FORMAT_PENALTY)]
    assert select(few, [], 4, G, random.Random(0)).negatives == [4, 5]


def test_unstratified_negatives():
    questions = [answered(GENERAL, 4)] * 3 + [penalised(MATH, 0.0)] * 6
    chosen = select(questions, [], 3, G, random.Random(0), negatives_per_task=False)
    assert len(chosen.negatives) == 3 and set(chosen.negatives) <= set(range(3, 9))
    stratified = select(questions, [], 3, G, random.Random(0))
    # GENERAL has no negatives and passes its 3 on to MATH, which has none of its own to match
    assert len(stratified.negatives) == 3 and set(stratified.negatives) <= set(range(3, 9))


def group(judgments, rule: float, vote: str = "strict") -> Judged:
    return Judged(0, tuple(judgments), majority(judgments, vote), rule)


@pytest.mark.parametrize(
    "judgments, rule, consistent, any_conflict",
    [
        ([1] * 5 + [0] * 3, 1.0, True, True),  # 5/8 agree, majority = rule
        ([1] * 7 + [0], 1.0, True, True),  # 7/8
        ([0] * 6 + [1] * 2, 0.0, True, True),  # 6/8, majority NO = rule
        ([1] * 8, 1.0, False, False),  # unanimous
        ([0] * 8, 0.0, False, False),
        ([1] * 4 + [0] * 4, 0.0, False, False),  # a tie: 4/8 agree with NO
        ([1] * 7 + [0], 0.0, False, True),  # majority YES, rule 0: a paraphrase
        ([0] * 5 + [1] * 3, 1.0, False, True),
        ([1] * 5 + [-1] * 2 + [0], 1.0, True, True),  # 5 of the 6 valid agree
        ([1] * 5 + [-1] * 3, 1.0, False, False),  # every valid one agrees
        ([-1] * 8, 0.0, False, False),
    ],
)
def test_verifier_eligibility(judgments, rule, consistent, any_conflict):
    assert eligible(group(judgments, rule)) == consistent
    assert eligible(group(judgments, rule), consistency=False) == any_conflict


def test_a_mode_vote_of_invalid_is_never_eligible():
    judged = group([-1] * 3 + [1] * 3 + [0] * 2, 0.0, "mode")
    assert judged.vote == INVALID
    assert not eligible(judged) and not eligible(judged, consistency=False)


def step(n: int, rng: random.Random) -> tuple[list[Question], list[Judged]]:
    """A synthetic generation round: kept, unkept and penalised questions over the three tasks, and
    verifier groups for every answered one (a third eligible, the rest not)."""
    questions: list[Question] = []
    for i in range(3 * n):
        task = TASKS[i % 3]
        questions.append(answered(task, rng.choice([0, 1, 4, 7, 8, 8])))
        questions.append(penalised(task, rng.choice([UNGROUNDED, FORMAT_PENALTY])))
    judged = []
    shapes = [([1] * 6 + [0] * 2, 1.0), ([1] * 8, 1.0), ([1] * 6 + [0] * 2, 0.0)]
    for i, q in enumerate(questions):
        if q.responder_rewards:
            for a in range(G):
                judgments, rule = shapes[(i + a) % 3]
                judged.append(Judged(i, tuple(judgments), majority(judgments), rule))
    return questions, judged


def test_batch_accounting_for_n_128():
    n, v = 128, 8
    questions, judged = step(n, random.Random(1))
    chosen = select(questions, judged, n, v, random.Random(2))
    assert len(chosen.responders) == n and all(kept(questions[i]) for i in chosen.responders)
    assert chosen.responders == [i for i, q in enumerate(questions) if kept(q)][:n]
    assert len(chosen.positives) == n and len(chosen.negatives) == n
    assert tasks_of(questions, chosen.negatives) == tasks_of(questions, chosen.positives)
    assert all(questions[i].reward <= 0 for i in chosen.negatives)
    assert len(chosen.verifiers) == math.ceil(n / v) == 16
    assert all(eligible(judged[g]) for g in chosen.verifiers)
    assert len(set(chosen.verifiers)) == 16 and chosen.verifiers == sorted(chosen.verifiers)
    rows = len(chosen.responders) * G + len(chosen.positives) + len(chosen.negatives)
    rows += len(chosen.verifiers) * v
    raw = n * (1 + G + G * G)
    assert (rows, raw) == (1408, 9344)
    assert Fraction(rows, raw) == Fraction(G + 3, 1 + G + G * G) == Fraction(11, 73)
    assert round(rows / raw, 3) == 0.151


def test_verifier_group_count_is_ceil_n_over_v():
    questions, judged = step(20, random.Random(3))
    for n, v, wanted in [(9, 8, 2), (8, 8, 1), (16, 8, 2), (17, 8, 3), (5, 4, 2)]:
        assert len(select(questions, judged, n, v, random.Random(0)).verifiers) == wanted
    few = [Judged(0, (1,) * 5 + (0,) * 3, 1, 1.0), Judged(0, (1,) * 8, 1, 1.0)]
    assert select(questions, few, 128, 8, random.Random(0)).verifiers == [0]  # all eligible ones
    without = select(questions, judged, 9, 8, random.Random(0), consistency=False)
    assert all(eligible(judged[g], consistency=False) for g in without.verifiers)


def test_selection_is_deterministic():
    questions, judged = step(40, random.Random(5))
    first = select(questions, judged, 32, 8, random.Random(11))
    assert select(questions, judged, 32, 8, random.Random(11)) == first
    other = select(questions, judged, 32, 8, random.Random(12))
    assert other.responders == first.responders  # no randomness there
    assert (other.negatives, other.verifiers) != (first.negatives, first.verifiers)
