"""Code and answers taken out of model text."""

from __future__ import annotations

import re

from harness.core.threadsafe_ast import parse

_FENCE = re.compile(r"^[ \t]*```[^\n`]*\n(.*?)^[ \t]*```", re.DOTALL | re.MULTILINE)


def code_blocks(text: str) -> list[str]:
    """The contents of fenced (```) blocks, in order."""
    return [m.group(1) for m in _FENCE.finditer(text)]


def last_code_block(text: str) -> str | None:
    """The last fenced block (LiveCodeBench's rule), or None."""
    blocks = code_blocks(text)
    return blocks[-1] if blocks else None


def function_code(text: str, entry_point: str) -> str | None:
    """A program defining `entry_point`: the last fenced block that defines it, else the last block,
    else the whole text if it is Python that defines it (evalplus-style answers)."""
    blocks = code_blocks(text)
    defining = [b for b in blocks if re.search(rf"^\s*def\s+{re.escape(entry_point)}\s*\(", b, re.M)]
    if defining:
        return defining[-1]
    if blocks:
        return blocks[-1]
    try:
        parse(text)
    except (SyntaxError, ValueError):
        return None
    return text if re.search(rf"def\s+{re.escape(entry_point)}\s*\(", text) else None
