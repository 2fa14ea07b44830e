r"""Math rule: forms a plain parse misreads (`math_forms`): percentages, choice letters, integer
parameters, code golds and function definitions."""

from __future__ import annotations

from scoring_cases import CHOICE, FAMILY, PASSED, REACTION, ROOTS, WORK, case, verdict_test

from harness.scoring.math_forms import (
    answer_choice,
    asks_for_percent,
    gold_choice,
    integer_parameter,
    same_parameter,
    without_percent,
)
from harness.scoring.math_normalise import variables

# (label, answer, gold, expected value): rules 4's rule 4
CASES = [
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


test_verdict = verdict_test(CASES)


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
