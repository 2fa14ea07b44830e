"""Splitting a response into reasoning and answer at the think tags (`harness.core.thinking`)."""

from __future__ import annotations

import pytest

from harness.core.thinking import prompt_opens_think, split_thinking


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
