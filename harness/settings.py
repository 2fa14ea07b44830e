"""Config fields that carry their own help, so an option's name, default and help are written once.

A frozen config dataclass declares each field with `setting(default, "help")`; the CLI turns the
fields into options (`harness/cli/options.py`), and everything else reads the dataclass.
"""

from __future__ import annotations

from dataclasses import MISSING, field
from typing import Any


def setting(default: Any = MISSING, help: str = "", *, cli: bool = True) -> Any:
    """A dataclass field with its command-line help; `cli=False` keeps it off the command line."""
    return field(default=default, metadata={"help": help, "cli": cli})
