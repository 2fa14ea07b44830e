"""Splitting a thinking model's output into reasoning and answer."""

from __future__ import annotations

from dataclasses import dataclass

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


@dataclass(frozen=True)
class Split:
    reasoning: str
    answer: str | None  # None when a think block never closed: there is no answer
    unclosed_think: bool


def prompt_opens_think(prompt: str) -> bool:
    """True when a rendered prompt ends inside an open <think> block (R1- and Qwen3-style templates)."""
    return prompt.rfind(THINK_OPEN) > prompt.rfind(THINK_CLOSE)


def split_thinking(text: str, think_opened: bool = False) -> Split:
    """The answer is the text after the last </think>; an unclosed think block means no answer."""
    if THINK_CLOSE in text:
        reasoning, _, answer = text.rpartition(THINK_CLOSE)
        reasoning = reasoning.strip()
        reasoning = reasoning.removeprefix(THINK_OPEN).strip()
        return Split(reasoning=reasoning, answer=answer.strip(), unclosed_think=False)
    if think_opened or THINK_OPEN in text:
        return Split(reasoning=text.split(THINK_OPEN, 1)[-1].strip(), answer=None, unclosed_think=True)
    return Split(reasoning="", answer=text.strip(), unclosed_think=False)
