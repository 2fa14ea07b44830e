r"""Math answers put in a form math-verify parses (no SymPy here): `normalise` rewrites notation that
math-verify misreads (Unicode superscripts and maths through `math_symbols.as_latex`, ordinal suffixes,
units after a number, thousands separators, e-notation and symbols in subscripts), and the helpers read
an answer's unit, list items, assignment and decimal value.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

from harness.scoring.math_symbols import as_latex
from harness.scoring.units import UNIT_WORDS, read_unit

TEXT_GROUP = re.compile(r"\\(?:text|mathrm|textrm|mbox|operatorname|begin|end)\s*\{[^{}]*\}")


ASSIGNMENT = re.compile(  # "Q = ...", "x_{1} = ...", and a function's value "z_{p}(t) = ..."
    r"(?:\\[A-Za-z]+|[A-Za-z])(?:_\{[^{}]*\})?(?:\(\s*[A-Za-z](?:\s*,\s*[A-Za-z])*\s*\))?\s*=\s*([^=<>]+)"
)


_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")


_SUPERSCRIPT_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")


_SYMBOLS = {"−": "-", "×": r"\times ", "·": r"\cdot ", "π": r"\pi ", "∞": r"\infty ", "°": r"^\circ"}


_SUFFIX = r"\s*(?:st|nd|rd|th)\s*"


_TEXT_COMMAND = r"\\(?:mathrm|text|textrm|rm)\s*"


_ORDINAL = re.compile(  # 12^{\mathrm{th}}, 12^{th}, 12\text{th}, 12^\text{th}, 12th, 12^th
    rf"(\d)(?:\^\s*\{{\s*{_TEXT_COMMAND}\{{{_SUFFIX}\}}\s*\}}|\^\s*\{{{_SUFFIX}\}}"
    rf"|(?:\^\s*)?{_TEXT_COMMAND}\{{{_SUFFIX}\}}|\^?(?:st|nd|rd|th)\b)"
)


_GREEK = frozenset(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi "
    "pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta "
    "Lambda Xi Pi Sigma Upsilon Phi Psi Omega".split()
)


_SUBSCRIPT = re.compile(r"_\{((?:[^{}]|\{[^{}]*\})*)\}")


_BARE_SUBSCRIPT = re.compile(r"_\s*(\\[A-Za-z]+|[A-Za-z0-9])")  # E_1 -> E_{1}, x_\alpha -> x_{\alpha}


_SUBSCRIPT_TEXT = re.compile(r"\\(?:text|mathrm|textrm|rm|mbox)\s*\{([^{}]*)\}")


_COMMAND = re.compile(r"\\([A-Za-z]+)")


_POWER = r"(?:\s*\^\s*(?:\{\s*-?\s*\d+\s*\}|-?\d|\{\s*\\circ\s*\}|\\circ))?"


_UNIT_TOKEN = (
    r"(?:\\(?:text|mathrm|textrm|mbox|operatorname)\s*\{[^{}]*\}|\^\s*\{?\s*\\circ\s*\}?|\\circ"
    r"|(?<![A-Za-z\\])(?P<word>[A-Za-z]+))" + _POWER
)


_UNIT_GAP = r"(?:\s|\\[,;:! ]|~|/|\\cdot)*"


_UNIT_TAIL = re.compile(rf"(?:(?<=[\d}})])|(?<=\\pi)){_UNIT_GAP}(?:{_UNIT_TOKEN}{_UNIT_GAP})+$")  # 2\pi cm


_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")


_THIN_SPACE_THOUSANDS = re.compile(r"(?<=\d)\\,(?=\d{3}(?!\d))")


_E_NOTATION = re.compile(r"(?<![\w\\.{])(\d+(?:\.\d+)?)[eE]([-+]?\d+)(?![\w.])")


_FULL_STOP = re.compile(r"(?<!\.)\.\s*$")  # a sentence's period, not an ellipsis


_WORDS = re.compile(r"(?:\s+[A-Za-z]{2,})+\s*")


_MATH_WORD = re.compile(r"\b(?:pi|sqrt|sin|cos|tan|log|ln|exp|inf|infty)\b")


_VARIABLE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]+")


_TOP_LEVEL_COMMA = re.compile(r",(?![^({\[]*[)}\]])")


_DECIMAL = re.compile(r"-?(?:\d+\.?\d*|\.\d+)")


_SCIENTIFIC = re.compile(rf"({_DECIMAL.pattern})(?:\\(?:times|cdot)10\^(?:\{{([-+]?\d+)\}}|([-+]?\d)))?")


def variables(gold: str) -> set[str]:
    r"""The letter runs a gold uses as symbols (outside ``\commands``, ``\text{}`` and e-notation)."""
    return set(_VARIABLE.findall(TEXT_GROUP.sub("", _E_NOTATION.sub("", gold))))


def normalise(text: str, gold_variables: set[str] | None = None) -> str:
    """`text` rewritten for parsing. With `gold_variables` it is an answer: single-letter units it
    uses as the gold's symbols stay, and e-notation is left alone when the gold uses Euler's e. A
    final period goes (golds such as "(-\\infty, 0) \\cup\\{1\\}." carry one)."""
    is_gold = gold_variables is None
    symbols = set() if is_gold else gold_variables
    text = _SUPERSCRIPT_RUN.sub(lambda m: "^{" + m.group().translate(_SUPERSCRIPTS) + "}", text.strip())
    text = as_latex(text)
    for symbol, latex in _SYMBOLS.items():
        text = text.replace(symbol, latex)
    text = _ORDINAL.sub(r"\1", text)
    text = _BARE_SUBSCRIPT.sub(r"_{\1}", text)
    text = _SUBSCRIPT.sub(_plain_subscript, text)
    text = _strip_units(text, symbols, single_letters=not is_gold)
    text = _THIN_SPACE_THOUSANDS.sub("", text).replace("{,}", ",")
    if _THOUSANDS.fullmatch(text.strip().strip("$").strip()):
        text = text.replace(",", "")
    if is_gold or "e" not in symbols:
        text = _E_NOTATION.sub(r"\1\\times10^{\2}", text)
    return _FULL_STOP.sub("", text)


def _plain_subscript(match: re.Match) -> str:
    r"""``_{\text{max}}`` -> ``_{max}``, ``_{\odot}`` -> ``_{odot}``; Greek letters stay commands."""
    inner = _SUBSCRIPT_TEXT.sub(lambda m: m.group(1).replace(" ", ""), match.group(1))
    inner = _COMMAND.sub(lambda m: m.group() if m.group(1) in _GREEK else m.group(1), inner)
    return "_{" + inner + "}"


def _strip_units(text: str, symbols: set[str], single_letters: bool) -> str:
    """`text` without a unit tail after its final number, unless a stripped word is a gold symbol."""
    tail = unit_tail(text, symbols, single_letters)
    return text[: tail.start()].rstrip() if tail else text


def unit_tail(text: str, symbols: set[str], single_letters: bool) -> re.Match | None:
    """The unit tail `_strip_units` removes from `text`, or None."""
    match = _UNIT_TAIL.search(text)
    if not match or not text[: match.start()].strip():
        return None
    for token in re.finditer(_UNIT_TOKEN, match.group()):
        word = token.group("word")
        if word is None:
            continue
        if word not in UNIT_WORDS and not _is_prose(text[: match.start()], match.group()):
            return None
        if word in symbols or (len(word) == 1 and not single_letters):
            return None
    return match


def answer_unit(answer: str, gold_variables: set[str]) -> str | None:
    """The unit `normalise` strips from an answer, named canonically ("6 km" -> "km", "90^\\circ" ->
    "deg", "1625\\text{ cm}^2" -> "cm^2"), or None."""
    tail = unit_tail(answer.strip(), gold_variables, single_letters=True)
    read = read_unit(tail.group()) if tail else None
    return read[0] if read else None


def _is_prose(head: str, tail: str) -> bool:
    """A bare number followed only by words ("12 grade", "3 apples"): the words name what it counts."""
    return (
        bool(_DECIMAL.fullmatch(head.strip()))
        and bool(_WORDS.fullmatch(tail))
        and not _MATH_WORD.search(tail)
    )


def repeated_list_as_tuple(text: str) -> str | None:
    """A bare comma list with a repeated item ("-2,-2") as a tuple "(-2,-2)", else None: a list
    with repeats is ordered, so it must keep its multiplicity instead of collapsing to a set."""
    stripped = text.strip()
    if stripped[:1] in "([{" or "=" in stripped:
        return None
    items = [item.strip() for item in _TOP_LEVEL_COMMA.split(stripped)]
    if len(items) < 2 or len(set(items)) == len(items):
        return None
    return "(" + ", ".join(items) + ")"


def assigned_value(text: str) -> str | None:
    """The right side of a one-symbol assignment ("Q = 10,\\!080", "x_{1} = p - q", "z_{p}(t) = ..."),
    else None."""
    found = assignment(text)
    return found[1] if found else None


def assignment(text: str) -> tuple[str, str] | None:
    """(left side without spaces, right side) of a one-symbol assignment, else None."""
    match = ASSIGNMENT.fullmatch(text.strip())
    if match is None:
        return None
    return text.strip()[: match.start(1)].rstrip().rstrip("=").replace(" ", ""), match.group(1).strip()


def list_items(text: str) -> list[str] | None:
    """The items of a comma list (one pair of enclosing brackets dropped), or None for a single item."""
    stripped = text.strip()
    if stripped[:2] in ("\\{", "\\[") and stripped[-2:] in ("\\}", "\\]"):
        stripped = stripped[2:-2]
    elif stripped[:1] in "([{" and stripped[-1:] in ")]}":
        stripped = stripped[1:-1]
    items = [item.strip() for item in _TOP_LEVEL_COMMA.split(stripped)]
    return items if len(items) >= 2 and all(items) else None


def as_tuple(text: str) -> str:
    """A bare comma list as a tuple (the answer to a gold that `repeated_list_as_tuple` rewrote)."""
    stripped = text.strip()
    return stripped if stripped[:1] in "([{" else "(" + stripped + ")"


def decimal(text: str) -> Decimal | None:
    r"""The decimal number `text` spells ("6630.65", "-0.5", "2.88\times10^{-19}"), or None."""
    text = text.strip().strip("$").replace(" ", "")
    found = _SCIENTIFIC.fullmatch(text)
    if found is None:
        return None
    mantissa, exponent = found.group(1), found.group(2) or found.group(3)
    return Decimal(mantissa + (f"e{exponent}" if exponent else ""))


def matches_at_gold_precision(answer: Decimal, gold: Decimal) -> bool:
    """An answer written more precisely than its gold, rounded half up to the gold's significant
    figures, equals the gold (6630.65 ~ 6630). Trailing zeros of an integer are not significant;
    golds with fewer than 2 significant figures (20, 2000) and answers no more precise than the
    gold must match exactly."""
    if answer == gold:
        return True
    if gold == 0 or answer.as_tuple().exponent >= gold.as_tuple().exponent:
        return False
    integral = gold == gold.to_integral()
    gold_exponent = (gold.normalize() if integral else gold).as_tuple().exponent
    significant = gold.adjusted() - gold_exponent + 1
    if significant < 2:
        return False
    return answer.quantize(Decimal(1).scaleb(gold_exponent), rounding=ROUND_HALF_UP) == gold
