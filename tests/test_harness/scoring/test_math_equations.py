r"""Math rule: equations: proportional equations are accepted, except where the question fixes the form
(`math_question.fixes_form`)."""

from __future__ import annotations

from scoring_cases import LINE, PLANE, right_and_wrong, verdict_test

from harness.scoring.rules import gold_text

# (label, answer, gold, expected value): the audit's pattern 11, rules 3's shape 5
CASES = [
    # 11. proportional equations are accepted (a documented limit)
    ("11", r"\boxed{2x+4y=6}", "x+2y=3", 1.0),
    ("11", r"\boxed{2x+4y=7}", "x+2y=3", 0.0),
    # 5. a multiple of an equation whose form the question fixes
    *right_and_wrong(
        "5 form",
        r"\boxed{5x - 7y + 11z + 4 = 0}",
        r"\boxed{20x-28y+44z+16=0}",
        "5x - 7y + 11z + 4 = 0",
        PLANE,
    ),
    ("5 form", r"\boxed{-5x + 7y - 11z - 4 = 0}", gold_text("5x - 7y + 11z + 4 = 0", PLANE), 0.0),
    ("5 form", r"\boxed{5x - 7y + 11z = -4}", gold_text("5x - 7y + 11z + 4 = 0", PLANE), 1.0),
    *right_and_wrong("5 free form", r"\boxed{2x + 2y = 2}", r"\boxed{2x + 2y = 1}", "x + y = 1", LINE),
]


test_verdict = verdict_test(CASES)
