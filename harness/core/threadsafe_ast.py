"""`ast.parse` and `ast.literal_eval` of text, one thread at a time: CPython 3.11 builds AST objects with
an interpreter-wide recursion counter that concurrent threads corrupt ("AST constructor recursion depth
mismatch", python/cpython#106905), and sandboxed runs are checked and read from thread pools."""

from __future__ import annotations

import ast
import threading
from typing import Any

_LOCK = threading.Lock()


def parse(source: str, mode: str = "exec") -> ast.AST:
    with _LOCK:
        return ast.parse(source, mode=mode)


def literal_eval(text: str) -> Any:
    with _LOCK:
        return ast.literal_eval(text)
