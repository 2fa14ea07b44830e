"""A small library of simple Python programs, written for Absolute Zero's cold start and its optional
richer seed buffers (`dataset: library`): each program with a one-line description (the induction
message) and a few argument lists. The programs live in `library.yaml`, beside this module, in order.
Outputs are never written there: the sandboxed executor computes them. None of these programs comes
from an evaluation set (the cold start checks it against the sets it is given).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files

import yaml


@dataclass(frozen=True)
class Program:
    code: str  # defines f
    message: str  # what f does, as an induction proposer would describe it
    inputs: tuple[str, ...]  # argument lists, as an input fence holds them


def _load() -> tuple[Program, ...]:
    entries = yaml.safe_load(files(__package__).joinpath("library.yaml").read_text(encoding="utf-8"))
    programs = []
    for entry in entries:
        inputs = tuple(entry["inputs"])
        if not all(isinstance(text, str) for text in inputs):  # an unquoted `- 0` reads as a number
            raise TypeError(f"library.yaml: quote every input of {entry['message']!r}: {inputs}")
        programs.append(Program(entry["code"].strip("\n"), entry["message"], inputs))
    return tuple(programs)


PROGRAMS: tuple[Program, ...] = _load()
