"""The training methods: one package each (`grpo.py` alone), registered by name in pyproject.toml's
`harness.methods` entry points; `METHODS` maps a name to its class, importing it on first use."""

from typing import Any

from harness import HarnessError
from harness.core.registry import Registry
from trainers.method import Method
from trainers.names import GROUP


def _method(name: str, loaded: Any) -> type[Method]:
    """A registered object as a method: a `Method` subclass whose `name` is its entry point's."""
    if not (isinstance(loaded, type) and issubclass(loaded, Method)):
        raise HarnessError(f"method {name!r} is registered as {loaded!r}, not a subclass of Method")
    if loaded.name != name:
        raise HarnessError(f"method {name!r} is registered with a class named {loaded.name!r}")
    return loaded


METHODS: Registry[type[Method]] = Registry(GROUP, "method", _method)

__all__ = ["METHODS"]
