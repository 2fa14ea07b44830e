r"""Math rule: the final answer's extraction (`math_text.final_answer`): boxes, answer phrases, closing
sentences and lines, bold values, displays; unfinished work and prose without an answer give none."""

from __future__ import annotations

import pytest
from scoring_cases import (
    ALL_TEN,
    ECHO,
    GAVE_UP,
    HOURS,
    LOOPING,
    LUMINOSITY,
    OMEGA,
    PHOTON,
    REACTION,
    SIMPLIFY,
    TWO_BOXES,
    WORK,
    case,
    right_and_wrong,
    verdict_test,
)

from harness.scoring.math_text import final_answer

# (label, answer, gold, expected value): the audit's patterns 7-8, rules 3's shape 1, rules 4's rule 1
CASES = [
    # 7. no final answer: nothing taken from the prose
    ("7", GAVE_UP, "0", 0.0),
    ("7", ECHO, "m", 0.0),
    ("7", "Therefore we get 12 in the end", "12", 0.0),
    ("7", "Answer: 12", "12", 1.0),
    ("7", "So the final answer is $\\frac{1}{2}$. I hope it is correct.", "0.5", 1.0),
    ("7", "The answer is therefore $7$, as claimed.", "7", 1.0),
    ("7", "$MR=SRMC$", "MR=SRMC", 1.0),
    # 8. several boxes: empty boxes never count, boxes joined by "and" form one answer
    ("8", TWO_BOXES, ALL_TEN, 1.0),
    ("8", TWO_BOXES, "-2, -1, 0, 1, 2", 0.0),
    ("8", LOOPING, "5", 1.0),
    ("8", r"$\boxed{3}$ and $\boxed{5}$", "3, 5", 1.0),
    ("8", r"First $\boxed{3}$. Then, after checking, $\boxed{5}$.", "3, 5", 0.0),
    ("8", r"\boxed{}", "5", 0.0),
    # 1. extraction: the value stated at the end, without a box or "the answer is"
    *right_and_wrong("1 bold", "Add them.\n\nso m + n = 25 + 169 = **194**", "... = **195**", "194"),
    *right_and_wrong(
        "1 closing",
        "Count the coins.\n\nTherefore, Hillary has 7 nickels.",
        "Therefore, Hillary has 8 nickels.",
        "7",
    ),
    *right_and_wrong(
        "1 closing",
        "Work.\n\nThus the angle is approximately $3\\times10^{-3}$ arcseconds.",
        "Work.\n\nThus the angle is approximately $3\\times10^{-4}$ arcseconds.",
        "3e-3",
    ),
    *right_and_wrong(
        "1 lead-in",
        "Invert.\n\n$f^{-1}(1/5) = 9$\n\n**Therefore, the value of $f^{-1}(1/5)$ is:**",
        "Invert.\n\n$f^{-1}(1/5) = 8$\n\n**Therefore, the value of $f^{-1}(1/5)$ is:**",
        "9",
    ),
    *right_and_wrong(
        "1 label",
        "Final answer: The steady-state velocity \\(\\omega_{ss}\\) is 1000 rad/s",
        "Final answer: The steady-state velocity \\(\\omega_{ss}\\) is 100 rad/s",
        "1000",
    ),
    *right_and_wrong(
        "1 lead-in",
        "Invert: $5 = 1/(x-4)$, so $f^{-1}(1/5) = 9$\n\n**Therefore, the value of $f^{-1}(1/5)$ is:**",
        "Invert: $5 = 1/(x-4)$, so $f^{-1}(1/5) = 8$\n\n**Therefore, the value of $f^{-1}(1/5)$ is:**",
        "9",
    ),
    ("1 lead-in", "Invert.\n\nSo $x = 9$ is the first root, and $x = 2$ the second", "9", 0.0),
    ("1 unfinished", "Expand both sides.\n\nSo we get $x = 12$", "12", 0.0),
    ("1 unfinished", "Therefore we get 12 in the end", "12", 0.0),
    ("1 unfinished", "Therefore, we have $x = 12$", "12", 0.0),
    ("1 unfinished", "$x = 12$\n\nLet's check:", "12", 0.0),
    *right_and_wrong("1 bold", "Add them.\n\nThe answer is **194**", "The answer is **195**", "194"),
    *right_and_wrong(
        "1 bold", "Add them.\n\nTherefore the total is **194**.", "Therefore the total is **195**.", "194"
    ),
    ("1 unfinished", "Try small cases.\n\nLet's try a small case first: **n = 2**", "2", 0.0),
    ("1 unfinished", "Set up the system.\n\nFirst, we substitute: **x = 5**", "5", 0.0),
    ("1 unfinished", "Expand both sides.\n\nWe get: **x = 3**", "3", 0.0),
    ("1 unfinished", "Plan the solution.\n\nStep 1: **a = 4**", "4", 0.0),
    ("1 unfinished", "Use the quadratic formula.\n\nFirst, the discriminant is **16**", "16", 0.0),
    ("1 unfinished", "Try small cases.\n\nLet's try:\n\n**n = 2**", "2", 0.0),
    ("1 unfinished", "Count the fruit.\n\nSo we bought 12 apples.", "12", 0.0),
    *right_and_wrong(
        "1 label",
        "Balance the torques.\n\nFinal answer: \\(\\omega_{ss}\\) = 1000 rad/s",
        "Balance the torques.\n\nFinal answer: \\(\\omega_{ss}\\) = 100 rad/s",
        "1000",
        OMEGA,
    ),
    *right_and_wrong(
        "1 label",
        "Balance the torques.\n\n**Final Answer:** $\\omega_{ss}$ is 1000 rad/s.",
        "Balance the torques.\n\n**Final Answer:** $\\omega_{ss}$ is 100 rad/s.",
        "1000",
    ),
    *right_and_wrong(
        "1 label", "Count.\n\nFinal answer: $N$ is 42.", "Count.\n\nFinal answer: $N$ is 41.", "42"
    ),
    *right_and_wrong(
        "1 label", "Heat it.\n\nThe final answer is $T$ = 300 K.", "The final answer is $T$ = 30 K.", "300"
    ),
    *right_and_wrong(
        "1 closing", "Count the fruit.\n\nSo Maria bought 12 apples.", "So Maria bought 13 apples.", "12"
    ),
    *right_and_wrong(
        "1 heading",
        "Count the coins.\n\n**Final Answer**\n\nThe number of nickels is 7.",
        "Count the coins.\n\n**Final Answer**\n\nThe number of nickels is 8.",
        "7",
    ),
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
]


test_verdict = verdict_test(CASES)


def test_no_answer_is_said(verdicts):
    scored = verdicts(CASES)
    for answer in (GAVE_UP, ECHO, r"\boxed{}"):
        index = next(i for i, c in enumerate(CASES) if c[1] == answer)
        assert scored[index].extracted is None
        assert scored[index].details == {"reason": "no answer found"}


def test_joined_boxes_are_the_extracted_answer(verdicts):
    scored = verdicts(CASES)
    index = next(i for i, c in enumerate(CASES) if c[1] == TWO_BOXES)
    assert scored[index].extracted == "10, 11, 12, 13, 14, -2, -1, 0, 1, 2"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"\boxed{5}", ("boxed", "5")),
        (r"\boxed{5} \boxed{ }", ("boxed", "5")),
        (r"$\boxed{1}$, $\boxed{2}$", ("boxed", "1, 2")),
        (r"\boxed{1} \text{ or } \boxed{2}", ("boxed", "1, 2")),
        (r"\boxed{2} and \boxed{2}", ("boxed", "2")),
        (r"I first guessed \boxed{1}, but it is \boxed{2}", ("boxed", "2")),
        ("The final answer is $x = 3$. Done.", ("phrase", "x = 3")),
        ("Final Answer: The final answer is 1.6. I hope it is correct.", ("phrase", "1.6")),
        ("**Answer:** 204", ("phrase", "204")),
        ("The answer is:\n\\[ \\frac{1}{2} \\]", ("phrase", r"\frac{1}{2}")),
        ("The answer is not clear.", ("phrase", "not clear")),
        (r"\(204\)", ("whole", "204")),
        (r"$$\frac{3}{4}$$.", ("whole", r"\frac{3}{4}")),
        ("x = 5", ("whole", "x = 5")),
        ("Hence x = 5", None),
        ("12\n13", None),
        ("", None),
    ],
)
def test_final_answer(text, expected):
    assert final_answer(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Work.\n\nso m + n = 25 + 169 = **194**", ("closing", "194")),
        ("Work.\n\nThe sum is **12**.", ("closing", "12")),
        ("Work.\n\n**Step 2: add the parts**", None),
        ("Work.\n\nTherefore, Hillary has 7 nickels.", ("closing", "7")),
        ("Work.\n\nThus, $m + n = 194$.", ("closing", "m + n = 194")),
        ("Work.\n\nHence the number of ways is $\\binom{5}{2} = 10$.", ("closing", "10")),
        ("Work.\n\nSo the plane is $5x - 7y + 11z + 4 = 0$.", ("closing", "5x - 7y + 11z + 4 = 0")),
        ("Work.\n\nSo the total is 12, which is less than 15.", None),
        ("Work.\n\nSo the count is $2\\cdot5!\\cdot5! = 2\\cdot120\\cdot120 = 28800$.", ("closing", "28800")),
        ("Work.\n\nThus it is 5.", None),
        ("Work.\n\nSo we get $x = 3$", None),
        ("Hence x = 5", None),
        ("Work.\n\n$x = 5$\n\nThe final answer is:", ("closing", "x = 5")),
        ("Work.\n\n$x = 5$\n\nLet's check:", None),
        ("The answer is: the speed $v$ is 30 m/s", ("phrase", "30 m/s")),
        ("Work.\n\nLet's try a small case first: **n = 2**", None),
        ("Work.\n\nStep 1: **a = 4**", None),
        ("Work.\n\nFirst, the discriminant is **16**", None),
        ("Work.\n\nLet's try:\n\n**n = 2**", None),
        ("Work.\n\nThe answer is:\n\n**194**", ("closing", "194")),
        ("Work.\n\nSo the distance is **6 kilometers**.", ("closing", "6 kilometers")),
        ("Work.\n\nTherefore, the distance she rides is 6 km.", ("closing", "6 km")),
        ("Work.\n\nThus there are 5 in total.", ("closing", "5")),
        (
            "Work.\n\nTherefore, assuming a fair die, the chance is $\\frac{1}{6}$.",
            ("closing", "\\frac{1}{6}"),
        ),
        ("Work.\n\nSo first, the discriminant is 16.", None),
        ("Work.\n\nSo Maria bought 12 apples.", ("closing", "12")),
        ("Work.\n\n**Final Answer**\n\nThe number of nickels is 7.", ("closing", "7")),
        ("Final answer: \\(\\omega_{ss}\\) = 1000 rad/s", ("phrase", "1000 rad/s")),
        ("The final answer is $T$ = 300 K.", ("phrase", "300 K")),
        ("Final answer: $N$ is 42.", ("phrase", "42")),
        ("Final answer: $Q$ is $MR = SRMC$.", ("phrase", "MR = SRMC")),  # a math span is taken whole
        ("Final answer: $N$, the number of paths.", ("phrase", "N")),
        ("Final answer: $\\pi$ = 3.14", ("phrase", "\\pi")),  # a constant is not a label
        ("The final answer is $x = 3$. Done.", ("phrase", "x = 3")),
    ],
)
def test_final_answer_closing_shapes(text, expected):
    assert final_answer(text) == expected


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


def test_the_extractors_are_an_ordered_table_and_one_that_finds_no_answer_ends_the_search():
    """`final_answer` is the table's first answer: box, then phrase, then the whole response, then the
    closing statement; an instructions' empty box says there is none, so the closing line is not read."""
    from harness.scoring.math_text import EXTRACTORS, NO_ANSWER, boxed

    assert [source for source, _ in EXTRACTORS] == ["boxed", "phrase", "whole", "closing"]
    closing = "We add them.\nTherefore, Hillary has 7 nickels."
    assert final_answer(closing) == ("closing", "7")
    assert boxed("Put it in \\boxed{}.\n" + closing) == NO_ANSWER
    assert final_answer("Put it in \\boxed{}.\n" + closing) is None
    assert final_answer("The answer is $5$. \\boxed{6}") == ("boxed", "6")
    assert final_answer("The answer is $5$.") == ("phrase", "5")
    assert final_answer("$\\frac{3}{4}$") == ("whole", "\\frac{3}{4}")
