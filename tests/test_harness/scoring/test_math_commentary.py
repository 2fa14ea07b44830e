r"""Math rule: commentary after the answer (`commentary.answer_part`) is dropped only when it states no
value."""

from __future__ import annotations

from harness.scoring.commentary import answer_part


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
