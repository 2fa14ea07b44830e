"""Config fields that carry their own help and bounds, so an option's name, default, help and valid
range are written once.

A frozen config dataclass declares each field with `setting(default, "help", minimum=...)`; the CLI
turns the fields into options (`harness/cli/options.py`), and the config's `__post_init__` calls
`check` so that every way of building it (flags, config files, run.json) refuses a nonsense number
with one line naming the option: "--batch-size must be at least 1, got -4".
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import MISSING, field, fields
from typing import Any, get_type_hints

from harness import HarnessError


def setting(
    default: Any = MISSING,
    help: str = "",
    *,
    cli: bool = True,
    minimum: float | None = None,
    exclusive_minimum: float | None = None,
    maximum: float | None = None,
    also: tuple[Any, ...] = (),
    choices: tuple[Any, ...] = (),
) -> Any:
    """A dataclass field with its command-line help (`cli=False` keeps it off the command line) and
    its bounds: `minimum <= value`, `exclusive_minimum < value`, `value <= maximum`, or one of `also`;
    or, with `choices`, its allowed values. An empty mapping as the default gives each instance its own."""
    limits = {"at least": minimum, "greater than": exclusive_minimum, "at most": maximum}
    bounds = {k: v for k, v in limits.items() if v is not None}
    metadata = {"help": help, "cli": cli, "bounds": bounds, "also": also, "choices": tuple(choices)}
    if isinstance(default, dict):
        if default:
            raise TypeError("a setting's mapping default must be empty")
        return field(default_factory=dict, metadata=metadata)
    return field(default=default, metadata=metadata)


BROKEN = {
    "at least": lambda value, bound: value < bound,
    "greater than": lambda value, bound: value <= bound,
    "at most": lambda value, bound: value > bound,
}


def option_name(name: str) -> str:
    """A field as the command line spells it: batch_size -> --batch-size."""
    return "--" + name.replace("_", "-")


def check(config: type, values: dict[str, Any], name: Callable[[str], str] = option_name) -> None:
    """Refuse the first value outside its field's declared bounds or choices, naming it `name(field)`."""
    for f in fields(config):
        value = values.get(f.name)
        allowed = f.metadata.get("choices")
        if allowed and value not in allowed:
            raise HarnessError(f"{name(f.name)} must be one of {', '.join(map(str, allowed))}, got {value!r}")
        if value is None or not f.metadata.get("bounds") or value in f.metadata["also"]:
            continue
        problem = _problem(value, f.metadata["bounds"], _integral(config, f.name))
        if problem:
            also = "".join(f" (or {a!r})" for a in f.metadata["also"])
            raise HarnessError(f"{name(f.name)} must be {problem}{also}, got {value!r}")


def _problem(value: Any, bounds: dict[str, float], integral: bool) -> str | None:
    """What `value` must be, if it is not; None if it is fine."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "an integer" if integral else "a number"
    if integral and not isinstance(value, int):
        return "an integer"
    if isinstance(value, float) and not math.isfinite(value):  # an int is finite (and may not fit a float)
        return "a finite number"
    if any(BROKEN[kind](value, bound) for kind, bound in bounds.items()):
        return " and ".join(f"{kind} {bound}" for kind, bound in bounds.items())
    if integral and not -(2**63) <= value < 2**63:  # what run.json and the engines hold
        return "an integer that fits in 64 bits"
    return None


@functools.cache
def _integral(config: type, name: str) -> bool:
    """Whether the field is declared an int (not a float)."""
    hint = str(get_type_hints(config)[name])
    return "int" in hint and "float" not in hint
