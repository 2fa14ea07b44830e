"""`--model-arg KEY=VALUE`: extra keyword arguments for the engine, with typed values."""

from __future__ import annotations

import re
from typing import Any

from harness import HarnessError
from harness.backends.remote_code import FLAG, code_settings

KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_model_args(items: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """KEY=VALUE pairs as keyword arguments: VALUE is a bool (true/false), an int, a float, else a string.
    A key that would run a model's code is refused (that is `--trust-remote-code`'s job), as is a
    repeated key."""
    args: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not KEY.match(key):
            raise HarnessError(f"--model-arg expects KEY=VALUE with KEY a Python name, got {item!r}"[:300])
        if key in args:
            raise HarnessError(f"--model-arg {key} is given twice")
        args[key] = typed_value(text)
    found = sorted(code_settings(args))
    if found:
        raise HarnessError(f"--model-arg {', '.join(found)} would run the model's code: use {FLAG}")
    return args


def typed_value(text: str) -> bool | int | float | str:
    """'true'/'false' (any case) as bools, integers as ints, other numbers as floats, the rest as text."""
    if text.strip().lower() in ("true", "false"):
        return text.strip().lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
