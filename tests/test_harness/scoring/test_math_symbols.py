r"""Math rule: symbols: LaTeX math-verify cannot parse, function identities, subscripts, Unicode and code
notation (`math_symbols.as_latex`), and letter case (`math_question.letter_case_differs`)."""

from __future__ import annotations

import pytest
from scoring_cases import (
    DECAY,
    FIELD,
    KCAL,
    SINH_GOLD,
    SUPPLY,
    SUPPLY_BOTH,
    case,
    right_and_wrong,
    verdict_test,
)

from harness.scoring.math_normalise import list_items, normalise, variables
from harness.scoring.math_question import letter_case_differs, question_letters
from harness.scoring.math_symbols import as_latex

# (label, answer, gold, expected value): the audit's patterns 1 and 5, rules 3's shapes 4 and 6 (case),
# rules 4's rules 2 and 3
CASES = [
    # 1. LaTeX math-verify cannot parse: never equal by a truncated prefix; equations as equations
    ("1", r"\boxed{L_{\odot}}", r"L_{\odot}", 1.0),
    ("1", r"\boxed{2 L_{\odot}}", r"L_{\odot}", 0.0),
    ("1", r"\boxed{M_{\odot}^6}", r"M_{\odot}^{6}", 1.0),
    ("1", r"\boxed{M_{\odot}^5}", r"M_{\odot}^{6}", 0.0),
    ("1", r"\boxed{x²}", "x^2", 1.0),
    ("1", r"\boxed{x³}", "x^2", 0.0),
    ("1", r"\boxed{L_{\odot}, M_{\odot}}", r"M_{\odot}, L_{\odot}", 1.0),
    ("1", r"\boxed{L_{\odot}, R_{\odot}}", r"M_{\odot}, L_{\odot}", 0.0),
    ("1", r"\boxed{\lambda_{\text{max}}}", r"\lambda_{\mathrm{max}}", 1.0),
    ("1", r"\boxed{\lambda_{\text{a}}}", r"\lambda_{\text{b}}", 0.0),
    ("1", r"\boxed{\lambda_{\text{max}} = 5}", r"\lambda_{\text{max}} = 5", 1.0),
    ("1", r"\boxed{\lambda_{\text{max}} = 5}", r"\lambda_{\text{max}} = 7", 0.0),
    ("1", r"\boxed{\lambda_{\text{max}} = 5}", r"\lambda_{\text{peak}} = 5", 0.0),
    ("1", r"\boxed{\unknowncmd{abc}}", r"\unknowncmd{abc}", 1.0),
    ("1", r"\boxed{\unknowncmd{abd}}", r"\unknowncmd{abc}", 0.0),
    # 5. function identities
    ("5", r"\boxed{\frac{\sinh(at)}{a}}", SINH_GOLD, 1.0),
    ("5", r"\boxed{\frac{\sinh(at)}{2a}}", SINH_GOLD, 0.0),
    ("5", r"\boxed{\frac{\cosh(at)}{a}}", SINH_GOLD, 0.0),
    ("5", r"\boxed{\cosh x}", r"\frac{e^{x}+e^{-x}}{2}", 1.0),
    ("5", r"\boxed{\cosh x}", r"\frac{e^{x}-e^{-x}}{2}", 0.0),
    # 4. subscript braces in the string comparison
    *right_and_wrong("4 subscripts", r"\boxed{E_1, E_2}", r"\boxed{E_1, E_3}", "E_{1},E_{2}"),
    *right_and_wrong("4 subscripts", r"\boxed{\lambda_1}", r"\boxed{\lambda_2}", r"\lambda_{1}"),
    # 6. letter case and units
    *right_and_wrong("6 case", r"\boxed{100\sqrt{T}}", r"\boxed{100\sqrt{t}}", "100T^{1/2}", FIELD),
    *right_and_wrong("6 case", r"\boxed{\text{Yes}}", r"\boxed{\text{No}}", r"\text{yes}"),
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
]


test_verdict = verdict_test(CASES)


@pytest.mark.parametrize(
    ("text", "gold", "expected"),
    [
        ("x²+y³", None, "x^{2}+y^{3}"),
        ("x⁻¹", None, "x^{-1}"),
        (r"12^{\mathrm{th}}", None, "12"),
        (r"3^{rd}", None, "3"),
        (r"\lambda_{\text{max}}", None, r"\lambda_{max}"),
        (r"L_{\odot}", None, "L_{odot}"),
        (r"x_{\alpha}", None, r"x_{\alpha}"),
        (KCAL, None, "15000"),
        (r"5 \text{ cm}^2", None, "5"),
        ("5 m", None, "5 m"),  # a gold keeps a single letter after a number: it may be a symbol
        ("5 m", "5", "5"),
        ("5 m", "5m", "5 m"),
        ("5 cm", None, "5"),
        (r"90^\circ", None, "90"),
        ("1e-5", None, r"1\times10^{-5}"),
        ("2.5E3", None, r"2.5\times10^{3}"),
        ("2e-5", "e^2", "2e-5"),  # the gold uses Euler's e
        ("x = 2e", None, "x = 2e"),
        ("1{,}000", None, "1000"),
        ("1, 2", None, "1, 2"),
    ],
)
def test_normalise(text, gold, expected):
    assert normalise(text, None if gold is None else variables(gold)) == expected


def test_subscripts_get_braces():
    assert normalise("E_1, E_2") == normalise("E_{1},E_{2}").replace(",", ", ")
    assert normalise(r"x_\alpha") == r"x_{\alpha}"
    assert list_items(r"\{1, 1, 3\}") == ["1", "1", "3"] and list_items("5") is None


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


def test_letter_case_reads_the_question():
    assert question_letters(DECAY) >= {"c", "x", "t"} and "C" not in question_letters(DECAY)
    assert question_letters("A ball has a mass of $m$.") == {"m"}  # prose letters are not symbols
    assert not letter_case_differs("C e^{-2t}", "c e^{-2t}", DECAY)
    assert letter_case_differs("C e^{-2t}", "c e^{-2t}", "Use $C$ for the capacity and $c$ for the constant.")
    assert letter_case_differs("C e^{-2t}", "c e^{-2t}")  # no question: refused
    assert letter_case_differs("100\\sqrt{P}", "100 p^{1/2}", SUPPLY_BOTH)
    assert not letter_case_differs("100\\sqrt{P}", "100 p^{1/2}", SUPPLY)
