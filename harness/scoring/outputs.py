"""Comparing what a program produced with what was expected (LiveCodeBench's rules)."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any


def stdout_matches(output: str, expected: str) -> bool:
    """Line by line after stripping; a line may also match token by token as decimal numbers."""
    got, want = output.strip().split("\n"), expected.strip().split("\n")
    if len(got) != len(want):
        return False
    return all(_line_matches(g.strip(), w.strip()) for g, w in zip(got, want, strict=True))


def _line_matches(got: str, want: str) -> bool:
    if got == want:
        return True
    got_tokens, want_tokens = got.split(), want.split()
    if len(got_tokens) != len(want_tokens):
        return False
    try:
        return all(Decimal(g) == Decimal(w) for g, w in zip(got_tokens, want_tokens, strict=True))
    except InvalidOperation:
        return False


def as_lists(value: Any) -> Any:
    """Tuples become lists, recursively (a LeetCode answer's JSON cannot tell them apart)."""
    if isinstance(value, tuple | list):
        return [as_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: as_lists(v) for k, v in value.items()}
    return value
