"""Small LaTeX helpers shared by benchmarks and scorers (no SymPy here)."""

from __future__ import annotations

import re

_BOX = re.compile(r"\\(?:boxed|fbox)\s*(\{)|\\boxed +([^\s$]+)")


def boxed_contents(text: str) -> list[str]:
    r"""Contents of every balanced ``\boxed{...}`` / ``\fbox{...}`` (and ``\boxed 5``) in order."""
    return [content for _, _, content in boxed_spans(text)]


def boxed_spans(text: str) -> list[tuple[int, int, str]]:
    r"""(start, end, content) of every complete box in `text`, in order (see `boxed_contents`)."""
    found: list[tuple[int, int, str]] = []
    pos = 0
    while match := _BOX.search(text, pos):
        if match.group(1) is None:  # "\boxed 5" form
            found.append((match.start(), match.end(), match.group(2)))
            pos = match.end()
            continue
        depth, start = 0, match.end(1)
        for i in range(match.start(1), len(text)):
            if text[i] not in "{}" or _escaped(text, i):
                continue
            if text[i] == "{":
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    found.append((match.start(), i + 1, text[start:i]))
                    pos = i + 1
                    break
        else:  # unbalanced: nothing after this point can be a complete box
            break
    return found


def _escaped(text: str, i: int) -> bool:
    r"""True when text[i] follows an odd run of backslashes (``\{`` is escaped, ``\\}`` is not)."""
    run = 0
    while i - run > 0 and text[i - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def last_boxed(text: str) -> str | None:
    r"""The content of the last complete, non-empty ``\boxed{}`` in `text`, or None (an empty box is
    the instruction "put your answer in \boxed{}" echoed, not an answer)."""
    boxes = [box for box in boxed_contents(text) if box.strip()]
    return boxes[-1] if boxes else None


# A control character followed by the rest of a LaTeX command it swallowed ("\t"+"riangle").
_CORRUPT_ESCAPE = re.compile(
    r"\t(?:riangle|imes|ext|frac|heta|ilde)|\r(?:ight|angle|ho|m\b)|\f(?:rac)"
    r"|\x08(?:eta|inom|egin|oxed|ar|ig)|\x0b(?:ec|arepsilon|dots)"
)


def has_corrupted_escape(text: str) -> bool:
    r"""True when a LaTeX command lost its backslash to JSON decoding (TAB+"riangle" for \triangle)."""
    return bool(_CORRUPT_ESCAPE.search(text))
