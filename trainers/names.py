"""The `harness train METHOD` names: every installed package's `harness.methods` entry points (this
project's six in its pyproject.toml), read without importing any method (the command line's help and its
refusal of an unknown method list them; `trainers.methods.METHODS` loads a method's class)."""

from __future__ import annotations

from harness import HarnessError
from harness.core.registry import registered

GROUP = "harness.methods"


def method_names() -> tuple[str, ...]:
    """Every registered method's name, by name."""
    return tuple(registered(GROUP, "method"))


def check_method(name: str) -> None:
    """Refuse a method name no installed package registers, naming the valid ones."""
    if name not in method_names():
        raise HarnessError(f"unknown method {name!r}; valid methods: {', '.join(method_names())}")
