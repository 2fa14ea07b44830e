"""The `harness train METHOD` registry: every installed package's `harness.methods` entry points (this
project's six in its pyproject.toml). Listing the names imports no method (the command line's help and
its refusal of an unknown method list them); a method's module is imported when it is first used."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness import HarnessError
from harness.registry import Registry

if TYPE_CHECKING:
    from trainers.method import Method


def _method(name: str, loaded: Any) -> type[Method]:
    """A registered object as a method: a `Method` subclass whose `name` is its entry point's."""
    from trainers.method import Method

    if not (isinstance(loaded, type) and issubclass(loaded, Method)):
        raise HarnessError(f"method {name!r} is registered as {loaded!r}, not a subclass of Method")
    if loaded.name != name:
        raise HarnessError(f"method {name!r} is registered with a class named {loaded.name!r}")
    return loaded


METHODS: Registry[type[Method]] = Registry("harness.methods", "method", _method)


def method_names() -> tuple[str, ...]:
    """Every registered method's name, without importing any."""
    return METHODS.names()


def check_method(name: str) -> None:
    """Refuse a method name no installed package registers, naming the valid ones."""
    if name not in METHODS:
        raise HarnessError(f"unknown method {name!r}; valid methods: {', '.join(METHODS)}")
