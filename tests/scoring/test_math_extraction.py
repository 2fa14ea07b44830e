r"""Math scorer rules 4 (issue 46), grouped by rule: each pattern the held-out audit found, credited
when right and refused when wrong, unfinished or naming two candidates.

Golds carry their question where a rule reads it (`rules.gold_text`), as run.json's `questions`
make the score stage pass them. All scorer cases go through one `MathScorer.score` call (it spawns
worker processes); the property tests call `verify_pair` in this process.
"""

from __future__ import annotations

import json

import pytest
from helpers import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.scoring.commentary import answer_part
from harness.scoring.math import MathScorer, verify_pair
from harness.scoring.math_forms import (
    answer_choice,
    asks_for_percent,
    gold_choice,
    integer_parameter,
    same_parameter,
    without_percent,
)
from harness.scoring.math_symbols import as_latex
from harness.scoring.math_text import final_answer, letter_case_differs, question_letters, variables
from harness.scoring.rules import gold_text

WORK = "We set up the equations and solve them step by step.\n\n"
HOURS = "A tank fills at 3 litres per minute. How many hours does it take to fill 720 litres?"
PHOTON = "What is the energy of a photon of wavelength 800 nm, in eV?"
LUMINOSITY = "How many times brighter than the Sun is a star of 5 solar radii at 5 times its temperature?"
REACTION = "What percentage of the reaction is complete after 10 minutes?"
SIMPLIFY = "Simplify $3(5x-20)-5(x+4)$."
DECAY = (  # Minerva 96
    "Find the general solution of the differential equation $\\dot{x}+2 x=e^{t}$, using $c$ for the "
    "arbitrary constant of integration which will occur."
)
SUPPLY = "Find the supply curve of the industry of 100 identical firms in terms of the price."
SUPPLY_BOTH = "Find the supply $P$ of the industry in terms of the price $p$."
PASSED = "Of the 40 students, 7 failed. What percentage of the students passed?"
CHOICE = (  # MATH-500 intermediate_algebra/754, shortened
    "Which equation does $r$ satisfy? $\\textbf{(A)}\\ 3(1 + r)^x = 7\\qquad \\textbf{(B)}\\ "
    "3(1 + r/10)^x = 7\\qquad \\textbf{(C)}\\ 3(1 + 2r)^x = 7$"
)
FAMILY = r"x=\frac{1}{6} \pi+\pi k, \frac{1}{3} \pi+\pi k, \frac{2}{3} \pi+\pi k, \frac{5}{6} \pi+\pi k"
ROOTS = r"\frac{\pi}{6} + n\pi, \frac{\pi}{3} + n\pi, \frac{2\pi}{3} + n\pi, \frac{5\pi}{6} + n\pi"


def case(rule: str, answer: str, gold: str, value: float, question: str | None = None):
    """One scorer case: (rule, answer, stored gold, expected value)."""
    return (rule, answer, gold if question is None else gold_text(gold, question), value)


CASES = [
    # 1. unboxed final answers: the answer line followed by more text
    case(
        "1 sign-off",
        f"{WORK}Therefore, it will take 4 hours.\n\nLet me know if you have other questions!",
        "4",
        1.0,
        HOURS,
    ),
    case(
        "1 sign-off",
        f"{WORK}Therefore, it will take 5 hours.\n\nLet me know if you have other questions!",
        "4",
        0.0,
        HOURS,
    ),
    case("1 sign-off", f"{WORK}Therefore, it will take 4 or 5 hours.\n\nHope this helps!", "4", 0.0, HOURS),
    case("1 sign-off", f"{WORK}So Maria bought 12 apples.\n\nI hope it is correct.", "12", 1.0),
    case(
        "1 explanation",
        f"{WORK}So Maria bought 12 apples.\n\n### Explanation\n\n1. She had 5.\n2. She bought 7.",
        "12",
        1.0,
    ),
    case(
        "1 explanation",
        f"{WORK}So Maria bought 13 apples.\n\n### Explanation\n\n1. She had 5.\n2. She bought 8.",
        "12",
        0.0,
    ),
    case(
        "1 explanation",
        f"{WORK}So Maria bought 12 apples.\n\n**Explanation:**\n\nBut this is not all of them.",
        "12",
        0.0,
    ),
    case(
        "1 explanation",
        f"{WORK}So Maria bought 12 apples.\n\n### Explanation\n\nSo Maria bought 13 apples.\n\nEach counts.",
        "12",
        0.0,
    ),
    case(
        "1 comment", f"{WORK}So Maria bought 12 apples.\n\nThis assumes that none were returned.", "12", 1.0
    ),
    case(
        "1 comment", f"{WORK}So Maria bought 11 apples.\n\nThis assumes that none were returned.", "12", 0.0
    ),
    case(
        "1 comment", f"{WORK}So Maria bought 12 apples.\n\nWait, that ignores the returned ones.", "12", 0.0
    ),
    case(
        "1 comment",
        f"{WORK}Thus the discriminant is 16.\n\nNow we find the roots of the quadratic",
        "16",
        0.0,
    ),
    # 1. a cue word in a closing sentence that states the value
    case("1 cue", f"{WORK}Therefore, it will take 4 hours.", "4", 1.0, HOURS),
    case("1 cue", f"{WORK}Therefore, it will take 4 minutes.", "4", 0.0, HOURS),
    case("1 cue", f"{WORK}Thus it is 4.", "4", 0.0),  # "it is" stays a step of the work
    case(
        "1 cue",
        f"{WORK}Therefore, it will take 2 hours for half, and the whole takes 4 hours.",
        "4",
        1.0,
        HOURS,
    ),
    case(
        "1 cue",
        f"{WORK}Therefore, it will take 4 hours for half, and the whole takes 8 hours.",
        "4",
        0.0,
        HOURS,
    ),
    case(
        "1 cue", f"{WORK}Converting to electron-volts, we get E = 2.48e-19 J = 1.55 eV.", "1.55", 1.0, PHOTON
    ),
    case(
        "1 cue", f"{WORK}Converting to electron-volts, we get E = 2.48e-19 J = 1.65 eV.", "1.55", 0.0, PHOTON
    ),
    case("1 cue", f"{WORK}Converting to electron-volts, we get 1.55 eV or 1.6 eV.", "1.55", 0.0, PHOTON),
    case("1 cue", f"{WORK}Converting to the asked units, we get $10$ or $x=5$.", "x=5", 0.0),  # differential
    # 1. the value followed by words
    case(
        "1 words",
        f"{WORK}Therefore, the luminosity is 15625 times that of the Sun.",
        "15625",
        1.0,
        LUMINOSITY,
    ),
    case(
        "1 words", f"{WORK}Therefore, the luminosity is 3125 times that of the Sun.", "15625", 0.0, LUMINOSITY
    ),
    case("1 words", f"{WORK}Therefore, the luminosity is 15625 times 2.", "15625", 0.0, LUMINOSITY),
    case(
        "1 words",
        f"{WORK}So approximately 100% of the reaction is complete after 10 minutes.",
        "100",
        1.0,
        REACTION,
    ),
    case(
        "1 words",
        f"{WORK}So approximately 90% of the reaction is complete after 10 minutes.",
        "100",
        0.0,
        REACTION,
    ),
    case(
        "1 words",
        f"{WORK}So approximately 100% of the reaction is complete after 10 minutes.",
        "10",
        0.0,
        HOURS,
    ),
    # 1. a bold value after a congruence
    case("1 congruence", f"{WORK}So 997⁻¹ ≡ **333** (mod 1000)", "333", 1.0),
    case("1 congruence", f"{WORK}So $997^{{-1}} \\equiv$ **333** \\pmod{{1000}}", "333", 1.0),
    case("1 congruence", f"{WORK}So 997⁻¹ ≡ **334** (mod 1000)", "333", 0.0),
    case("1 congruence", f"{WORK}We get: 997⁻¹ ≡ **333** (mod 1000)", "333", 0.0),
    case("1 congruence", f"{WORK}So 997⁻¹ ≡ **333** (mod 1000) or **334** (mod 1000)", "333", 0.0),
    # 1. a display equation that ends the response
    case(
        "1 display",
        "Expand each product.\n\n$$3(5x-20)-5(x+4) = 15x-60-5x-20 = 10x-80.$$",
        "10x-80",
        1.0,
        SIMPLIFY,
    ),
    case(
        "1 display",
        "Expand each product.\n\n$$3(5x-20)-5(x+4) = 15x-60-5x-20 = 10x-70.$$",
        "10x-80",
        0.0,
        SIMPLIFY,
    ),
    case("1 display", "Expand each product.\n\n$$3(5x-20)-5(x+4) = 15x-60-5x-20 = 10x-80.$$", "10x-80", 0.0),
    case("1 display", "Expand each product.\n\n$$5x-20 = 10x-80$$", "10x-80", 0.0, SIMPLIFY),
    # 2. Unicode maths and plain function names
    case("2 notation", r"\boxed{√5}", r"\sqrt{5}", 1.0),
    case("2 notation", r"\boxed{√6}", r"\sqrt{5}", 0.0),
    case("2 notation", r"\boxed{3√13}", r"3\sqrt{13}", 1.0),
    case("2 notation", r"\boxed{3√12}", r"3\sqrt{13}", 0.0),
    case("2 notation", r"\boxed{1 + i√3}", r"1+i \sqrt{3}", 1.0),
    case("2 notation", r"\boxed{1 - i√3}", r"1+i \sqrt{3}", 0.0),
    case("2 notation", r"\boxed{-τ ln Δ}", r"-\tau \ln \Delta", 1.0),
    case("2 notation", r"\boxed{τ ln Δ}", r"-\tau \ln \Delta", 0.0),
    case("2 notation", r"\boxed{ln 2 + iπ/3}", r"\ln 2 + i\pi / 3", 1.0),
    case("2 notation", r"\boxed{ln 3 + iπ/3}", r"\ln 2 + i\pi / 3", 0.0),
    case("2 notation", r"\boxed{∛2}", r"\sqrt[3]{2}", 1.0),
    # 3. a letter's case matters only where the question gives both cases a meaning
    case("3 case", r"\boxed{\frac{e^t}{3} + C e^{-2t}}", r"\frac{e^{t}} {3}+c e^{-2 t}", 1.0, DECAY),
    case("3 case", r"\boxed{x = \frac{e^t}{3} + C e^{-2t}}", r"\frac{e^{t}} {3}+c e^{-2 t}", 1.0, DECAY),
    case("3 case", r"\boxed{\frac{e^t}{3} + C e^{2t}}", r"\frac{e^{t}} {3}+c e^{-2 t}", 0.0, DECAY),
    case("3 case", r"\boxed{100\sqrt{P}}", r"100 p^{1/2}", 1.0, SUPPLY),
    case("3 case", r"\boxed{100\sqrt{P}}", r"100 p^{1/2}", 0.0, SUPPLY_BOTH),
    case("3 case", r"\boxed{100\sqrt{P}}", r"100 p^{1/2}", 0.0),  # no question: every case change refused
    case("3 case", r"\boxed{10\sqrt{P}}", r"100 p^{1/2}", 0.0, SUPPLY),
    # 4. golds or answers a plain parse misreads
    case("4 code gold", r"\boxed{\arcsin(1/1.3)}", "np.arcsin(10/13)", 1.0),
    case("4 code gold", r"\boxed{\arccos(10/13)}", "np.arcsin(10/13)", 0.0),
    case("4 code gold", r"\boxed{\arcsin(13/10)}", "np.arcsin(10/13)", 0.0),
    case("4 parameter", f"\\boxed{{x = {ROOTS},\\ n \\in \\mathbb{{Z}}}}", FAMILY, 1.0),
    case("4 parameter", f"\\boxed{{x = {ROOTS} \\text{{ for }} n ∈ ℤ}}", FAMILY, 1.0),
    case("4 parameter", f"\\boxed{{x = {ROOTS.replace('n', '2n')},\\ n \\in \\mathbb{{Z}}}}", FAMILY, 0.0),
    case("4 parameter", f"\\boxed{{x = {ROOTS}}}", FAMILY, 0.0),  # n undeclared: another symbol
    case("4 percent", r"\boxed{82.5}", "82.5%", 1.0, PASSED),
    case("4 percent", r"\boxed{82.5\%}", "82.5%", 1.0, PASSED),
    case("4 percent", r"\boxed{17.5}", "82.5%", 0.0, PASSED),
    case("4 percent", r"\boxed{0.825}", "82.5%", 0.0, PASSED),
    case("4 percent", r"\boxed{82.5}", "82.5%", 0.0),  # no question asking for a percentage
    case("4 percent", r"\boxed{20\%}", "0.2", 1.0, "A 20% share of 50 is taken. What fraction is taken?"),
    case("4 choice", r"\boxed{\textbf{(B)}\ 3(1+r/10)^x=7}", r"\text{(B)}", 1.0, CHOICE),
    case("4 choice", r"\boxed{\textbf{(C)}\ 3(1+2r)^x=7}", r"\text{(B)}", 0.0, CHOICE),
    case("4 choice", r"\boxed{(B) \text{ or } (C)}", r"\text{(B)}", 0.0, CHOICE),
    case("4 function", r"\boxed{z_p(t) = \frac{e^{2it}}{2+2i}}", r"\frac{e^{2 i t}}{(2+2 i)}", 1.0),
    case("4 function", r"\boxed{z_p(t) = \frac{e^{2it}}{2-2i}}", r"\frac{e^{2 i t}}{(2+2 i)}", 0.0),
    # found by the differential: a plain-symbol retry must not turn Eq(x, {...}) into False = False
    case("4 function", f"{WORK}Thus, $Q = [-1,-\\frac{{1}}{{2}}]$.", FAMILY, 0.0),
    case("4 function", r"\boxed{\lambda \in (3,4]}", "(3,4]", 1.0),
    case(
        "4 choice",
        f"{WORK}Converting to the required units, we get $\\text{{(C)}}$ or $288 \\pi$.",
        r"\text{(C)}",
        0.0,
    ),
    case("4 choice", r"\boxed{\text{(B)} \text{ or } 103}", r"\text{(B)}", 0.0, CHOICE),
]


@pytest.fixture(scope="module")
def scored():
    scorer = MathScorer(timeout=30, workers=2)
    results = dict(scorer.score([c[1] for c in CASES], [c[2] for c in CASES]))
    assert sorted(results) == list(range(len(CASES)))
    return results


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_verdict(scored, index):
    rule, answer, gold, value = CASES[index]
    score = scored[index]
    assert "error" not in score.details, score
    assert score.value == value, (rule, answer, gold, score)


# --- 1. extraction --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "question", "expected"),
    [
        ("Thus x = 5.\n\nLet me know if you have other questions!", None, None),  # "x = 5" is no closing
        (f"{WORK}Therefore, it will take 4 hours.\n\nFeel free to ask.", None, ("closing", "4 hours")),
        (f"{WORK}So 997⁻¹ ≡ **333** (mod 1000)", None, ("closing", "333")),
        (f"{WORK}So 997⁻¹ = **333** (mod 1000)", None, None),  # a modulus only after a congruence
        (f"{WORK}Converting to eV, we get E = 2.48e-19 J = 1.55 eV.", None, ("closing", "1.55 eV")),
        (f"{WORK}Therefore, the luminosity is 15625 times that of the Sun.", None, ("closing", "15625")),
        (f"{WORK}So approximately 100% of it is complete after 10 minutes.", REACTION, ("closing", "100%")),
        (f"{WORK}So approximately 100% of it is complete after 10 minutes.", None, None),
        (f"{WORK}So about 95 percent of it is complete after 10 minutes.", REACTION, ("closing", "95%")),
        (f"{WORK}So 50% of it and 20% of the rest are complete.", REACTION, None),
        ("Expand.\n\n$$3(5x-20)-5(x+4) = 10x-80$$", SIMPLIFY, ("closing", "10x-80")),
        ("Expand.\n\n\\[3(5x - 20) - 5(x + 4) = 10x - 80.\\]", SIMPLIFY, ("closing", "10x - 80")),
        ("Expand.\n\n$$3(5x-20)-5(x+4)$$", SIMPLIFY, None),
    ],
)
def test_final_answer_v4_shapes(text, question, expected):
    assert final_answer(text, question) == expected


def test_answer_part_drops_only_value_free_comment():
    answer = "Work.\n\nSo the total is 12."
    sign_off = "Let me know if you have other questions!"
    assert answer_part(f"{answer}\n\n{sign_off}") == (answer, sign_off)
    assert answer_part(f"{answer}\n\n\n  \nThis assumes no returns.\n\nHappy to help!") == (
        answer,
        "This assumes no returns.\n\nHappy to help!",
    )
    assert answer_part(f"{answer}\n\n## Explanation\n\nWe added 5 and 7.")[0] == answer
    assert answer_part(f"{answer}\n\nThis is 5 more than before.") is None  # states a value
    assert answer_part(f"{answer}\n\nHowever, some were returned.") is None  # doubts it
    assert answer_part(f"{answer}\n\nNext we compute the cost") is None  # the work goes on
    assert answer_part(f"{answer}\n\n### Verification\n\nThis is wrong.") is None
    assert answer_part(answer) is None


# --- 2. notation ----------------------------------------------------------------------------


def test_as_latex():
    assert as_latex("√5") == r"\sqrt{5}" and as_latex("3√13") == r"3\sqrt{13}"
    assert as_latex("√(x+1)") == r"\sqrt{x+1}" and as_latex("∛2") == r"\sqrt[3]{2}"
    assert as_latex("sqrt(2)") == r"\sqrt{2}"
    assert as_latex("-τ ln Δ") == r"-\tau  \ln  \Delta "
    assert as_latex("np.arcsin(10/13)") == r"\arcsin (10/13)"
    assert as_latex("2*np.pi**2") == r"2*\pi ^2"
    assert as_latex("x₁ ± 2") == r"x_{1} \pm  2"
    assert as_latex(r"\cosh x + \ln 2") == r"\cosh x + \ln 2"  # commands stay
    assert as_latex("10 sec") == "10 sec" and as_latex("5 μm") == "5 μm"  # units stay
    assert as_latex("cosine") == "cosine"


# --- 3. letter case -------------------------------------------------------------------------


def test_letter_case_reads_the_question():
    assert question_letters(DECAY) >= {"c", "x", "t"} and "C" not in question_letters(DECAY)
    assert question_letters("A ball has a mass of $m$.") == {"m"}  # prose letters are not symbols
    assert not letter_case_differs("C e^{-2t}", "c e^{-2t}", DECAY)
    assert letter_case_differs("C e^{-2t}", "c e^{-2t}", "Use $C$ for the capacity and $c$ for the constant.")
    assert letter_case_differs("C e^{-2t}", "c e^{-2t}")  # no question: refused
    assert letter_case_differs("100\\sqrt{P}", "100 p^{1/2}", SUPPLY_BOTH)
    assert not letter_case_differs("100\\sqrt{P}", "100 p^{1/2}", SUPPLY)


# --- 4. forms -------------------------------------------------------------------------------


def test_percent_questions():
    assert asks_for_percent(PASSED) and asks_for_percent(REACTION)
    assert asks_for_percent("What percent of 40 is 7?")
    assert asks_for_percent("Give the yield (in %).") and asks_for_percent("Express it as a percent.")
    assert not asks_for_percent("A 20% discount applies. What is the price?") and not asks_for_percent(None)
    assert not asks_for_percent("It grew by 5 percent. Find $x$.")
    assert without_percent(r"17.5\%") == without_percent("17.5 %") == "17.5"


def test_choice_letters():
    assert gold_choice(r"\text{(B)}") == gold_choice("(B)") == "B" and gold_choice("B") is None
    assert answer_choice(r"\textbf{(B)}\ 3(1+r/10)^x=7") == "B"
    assert answer_choice(r"\text{(B)} 7") == "B" and answer_choice("(B) or (C)") is None
    assert answer_choice("3(1+r/10)^x=7") is None and answer_choice("(x+1)") is None


def test_integer_parameters():
    assert integer_parameter(r"2n\pi, n \in \mathbb{Z}") == (r"2n\pi", "n")
    assert integer_parameter(r"2n\pi \text{ where } n \text{ is an integer}") == (r"2n\pi", "n")
    assert integer_parameter(r"2n\pi \text{ for any integer } n") == (r"2n\pi", "n")
    assert integer_parameter(r"2n\pi (n \in \mathbb{Z})") == (r"2n\pi", "n")
    assert integer_parameter(r"2n\pi") is None and integer_parameter(r"n \in \mathbb{Z}") is None
    assert same_parameter(r"2n\pi, n \in \mathbb{Z}", r"2\pi k", variables) == (r"2k\pi", r"2\pi k")
    assert same_parameter(r"2k\pi, k \in \mathbb{Z}", r"2\pi k", variables) == (r"2k\pi", r"2\pi k")
    # not one letter for one: left whole, and refused by the comparison
    assert (
        same_parameter(r"2n\pi, n \in \mathbb{Z}", r"2\pi k + m", variables)[0] == r"2n\pi, n \in \mathbb{Z}"
    )


# --- properties: a wrong value is refused in every rules-4 shape -----------------------------

SHAPES = (
    "{work}Therefore, it will take {v} hours.\n\nLet me know if you have other questions!",
    "{work}So Maria bought {v} apples.\n\n### Explanation\n\nShe counted them twice.",
    "{work}So Maria bought {v} apples.\n\nThis assumes none were returned.",
    "{work}Converting to the asked units, we get Q = {o} J = {v} eV.",
    "{work}Therefore, the luminosity is {v} times that of the Sun.",
    "{work}So 997⁻¹ ≡ **{v}** (mod 1000)",
    "{work}Therefore, it will take {o} hours for half, and the whole takes {v} hours.",
)
TRAPS = (  # unfinished work, doubt or two candidates: never credited, whatever the values
    "{work}Therefore, it will take {g} hours.\n\nNow we check this against the budget",
    "{work}So Maria bought {g} apples.\n\nWait, some of them were returned.",
    "{work}So Maria bought {g} apples.\n\n### Explanation\n\nBut this is not the whole count.",
    "{work}So 997⁻¹ ≡ **{g}** (mod 1000) or **{o}** (mod 1000)",
    "{work}Converting to the asked units, we get {g} eV or {o} eV.",
    "{work}Therefore, the luminosity is {g} times {o}.",
    "{work}So Maria bought {g} apples.\n\n### Explanation\n\nSo Maria bought {o} apples.\n\nEach counts.",
)


@settings(max_examples=40, deadline=None)
@given(
    gold=st.integers(1, 10**6),
    other=st.integers(1, 10**6),
    shape=st.sampled_from(SHAPES),
)
def test_a_wrong_value_is_never_credited(gold, other, shape):
    right = shape.format(work=WORK, v=gold, o=other)
    wrong = shape.format(work=WORK, v=other, o=gold)
    assert verify_pair((right, str(gold)))["value"] == 1.0
    assert verify_pair((wrong, str(gold)))["value"] == (1.0 if other == gold else 0.0)


@settings(max_examples=40, deadline=None)
@given(gold=st.integers(1, 10**6), other=st.integers(1, 10**6), trap=st.sampled_from(TRAPS))
def test_unfinished_or_two_candidates_are_never_credited(gold, other, trap):
    if other == gold:
        other += 1
    assert verify_pair((trap.format(work=WORK, g=gold, o=other), str(gold)))["value"] == 0.0


# --- rescoring ------------------------------------------------------------------------------


def test_a_rules_3_score_is_recomputed_by_a_resumed_eval(tmp_path, tiny_model, shared_data):
    run = tmp_path / "run"
    args = ["eval", "--benchmarks", "aime24", "--model", str(tiny_model), "--backend", "hf"]
    args += ["--n", "1", "--limit", "2", "--max-tokens", "8", "--data-dir", str(shared_data)]
    args += ["--out", str(run), "--seed", "3"]
    run_cli(*args)
    scores = run / "scores.jsonl"
    records = [json.loads(line) for line in scores.read_text().splitlines()]
    assert len(records) == 2 and all(r["scorer"].startswith("math-4+") for r in records)
    stale = [
        {**r, "scorer": r["scorer"].replace("math-4+", "math-3+"), "value": 1 - r["value"]} for r in records
    ]
    scores.write_text("".join(json.dumps(r) + "\n" for r in stale))
    run_cli(*args)  # the run is complete: the resumed eval only rescores
    again = [json.loads(line) for line in scores.read_text().splitlines()]
    assert [(r["scorer"], r["value"]) for r in again] == [(r["scorer"], r["value"]) for r in records]


# --- hostile text: the rules-4 patterns stay fast on long repeated input ---------------------

FRAGMENTS = (
    "Converting to a ",
    "1 = ",
    "(mod 1) ",
    "≡ ",
    "**1** ",
    "the ",
    "a=",
    "word ",
    "\n\nThis is fine.",
    "Hence we ",
    "√",
    ", n \\in \\mathbb{Z}",
    " \\text{ where } n",
    "5% of ",
    "$$",
    "times ",
)


@settings(max_examples=25, deadline=None)
@given(
    head=st.sampled_from(("So ", "Therefore, it is ", "Converting to x, we get ", "So 5% of ", "$$3x = ")),
    fragment=st.sampled_from(FRAGMENTS),
    count=st.integers(1000, 10000),
)
def test_hostile_text_is_read_quickly(head, fragment, count):
    import time

    text = head + fragment * count + " 5"
    start = time.monotonic()
    final_answer(text, SIMPLIFY + " " + REACTION)
    same_parameter(text, r"2\pi k", variables)
    as_latex(text)
    answer_part(text)
    assert time.monotonic() - start < 10  # linear: well under a second unloaded
