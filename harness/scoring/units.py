r"""Units read from answers and questions, named canonically so that two spellings of
one unit agree: "square centimeters", ``\text{ cm}^2`` and "sq cm" are all ``cm^2``; "mph", "miles
per hour" and ``\text{mi/h}`` are all ``mi/h``; km is not m, and cm is not cm^2.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_NAMES = {
    **dict.fromkeys(("meter", "meters", "metre", "metres"), "m"),
    **dict.fromkeys(("kilometer", "kilometers", "kilometre", "kilometres"), "km"),
    **dict.fromkeys(("centimeter", "centimeters", "centimetre", "centimetres"), "cm"),
    **dict.fromkeys(("millimeter", "millimeters", "millimetre", "millimetres"), "mm"),
    **dict.fromkeys(("second", "seconds", "sec", "secs"), "s"),
    **dict.fromkeys(("minute", "minutes", "mins"), "min"),
    **dict.fromkeys(("hour", "hours", "hr", "hrs"), "h"),
    **dict.fromkeys(("day", "days"), "day"),
    **dict.fromkeys(("week", "weeks"), "week"),
    **dict.fromkeys(("year", "years", "yr", "yrs"), "year"),
    **dict.fromkeys(("gram", "grams"), "g"),
    **dict.fromkeys(("kilogram", "kilograms"), "kg"),
    **dict.fromkeys(("foot", "feet"), "ft"),
    **dict.fromkeys(("inch", "inches"), "in"),
    **dict.fromkeys(("mile", "miles"), "mi"),
    **dict.fromkeys(("yard", "yards"), "yd"),
    **dict.fromkeys(("liter", "liters", "litre", "litres"), "L"),
    **dict.fromkeys(("dollar", "dollars"), "dollar"),
    **dict.fromkeys(("cent", "cents"), "cent"),
    **dict.fromkeys(("degree", "degrees", "deg"), "deg"),
    **dict.fromkeys(("radian", "radians"), "rad"),
    **dict.fromkeys(("unit", "units"), "unit"),
}
_COMPOUNDS = {"mph": (("mi", 1), ("h", -1)), "kph": (("km", 1), ("h", -1)), "kmh": (("km", 1), ("h", -1))}
_SYMBOLS = frozenset(
    "mm cm km m kg mg g s ms min h ft in mi yd J kJ cal kcal W kW N Pa kPa atm K eV keV MeV GeV L mL "
    "mol Hz kHz MHz GHz V mV A mA Ohm pc kpc Mpc AU ly Angstrom erg rad".split()
)
_POWERS = {"square": 2, "sq": 2, "cubic": 3, "cu": 3}
_POWER_SUFFIXES = {"squared": 2, "cubed": 3}
# every word a unit tail may hold: `math_normalise.normalise` strips them after a number
UNIT_WORDS = frozenset(_NAMES) | _SYMBOLS | frozenset(_COMPOUNDS) | {"per", *_POWERS, *_POWER_SUFFIXES}

_PIECE = re.compile(
    r"(?P<gap>\s+|\\[,;:! ]|~|\\cdot|\.|\$)"
    r"|\\(?:text|mathrm|textrm|mbox|operatorname|rm)\s*\{(?P<group>[^{}]*)\}"
    r"|(?P<degree>\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|°)"
    r"|\^\s*(?:\{\s*(?P<power>[-+]?\s*\d+)\s*\}|(?P<digit>[-+]?\d))"
    r"|(?P<per>/|per\b)"
    r"|(?P<word>[A-Za-z]+)"
)
_ASKED = re.compile(r"\b(?:in\s+(?:units\s+of\s+)?|how\s+many\s+)", re.IGNORECASE)
_LONE_LETTER = re.compile(r"\$?\s*[A-Za-z](?![A-Za-z])")  # "in $A_1$", "in m/s": as often a symbol as a unit


def read_unit(text: str, known_only: bool = False) -> tuple[str, int] | None:
    """The unit `text` opens with, named canonically ("square centimeters of paper" -> "cm^2"), and
    the offset where it ends; None when it opens with none. An unknown word ends the unit, except
    after "per" ("dollars per bushel") and, unless `known_only`, as the first word (a counted noun:
    "7 nickels" -> "nickels")."""
    pieces = list(_pieces(text))
    factors: list[tuple[str, int]] = []
    power, sign, end = 1, 1, 0
    for i, (kind, value, grouped, stop) in enumerate(pieces):
        if kind == "per":
            sign = -1
            continue
        if kind in ("power", "digit", "suffix"):
            if not factors:
                break
            factors[-1] = (factors[-1][0], factors[-1][1] * int(value.replace(" ", "")))
        elif kind == "prefix":
            power = int(value)
            continue
        else:
            powered = power != 1 or (i + 1 < len(pieces) and pieces[i + 1][0] in ("power", "digit"))
            free = sign == -1 or not (factors or known_only)
            names = _names(value, grouped=grouped, powered=powered, free=free)
            if names is None:
                break
            factors += [(name, exponent * power * sign) for name, exponent in names]
            power, sign = 1, 1
        end = stop
    return (_canonical(factors), end) if factors else None


def asked_units(question: str | None) -> set[str]:
    """The units a question asks for ("in meters" -> m, "How many square centimeters" -> cm^2,
    "in miles per hour" -> mi/h); only known unit names count, and a lone letter ("in $N$", "in m/s")
    does not: it names a symbol as often as a unit."""
    found = set()
    for lead in _ASKED.finditer(question or ""):
        rest = question[lead.end() : lead.end() + 100]
        if not _LONE_LETTER.match(rest) and (read := read_unit(rest, known_only=True)):
            found.add(read[0])
    return found


def _pieces(text: str, grouped: bool = False) -> Iterator[tuple[str, str, bool, int]]:
    """(kind, text, inside \\text{}, end offset in `text`) for each piece of a unit, up to the first
    character that is none: words, powers ("^2", "square", "squared"), "/" or "per", degrees."""
    pos = 0
    while (match := _PIECE.match(text, pos)) and match.end() > pos:
        pos, kind = match.end(), match.lastgroup
        if kind == "group":
            yield from ((k, v, True, pos) for k, v, _, _ in _pieces(match["group"], grouped=True))
        elif kind == "degree":
            yield "word", "deg", grouped, pos
        elif kind == "word" and match["word"].lower() in _POWERS:
            yield "prefix", str(_POWERS[match["word"].lower()]), grouped, pos
        elif kind == "word" and match["word"].lower() in _POWER_SUFFIXES:
            yield "suffix", str(_POWER_SUFFIXES[match["word"].lower()]), grouped, pos
        elif kind != "gap":
            yield kind, match[kind], grouped, pos


def _names(word: str, grouped: bool, powered: bool, free: bool) -> tuple[tuple[str, int], ...] | None:
    """The canonical (name, power) factors one word names ("mph" -> mi, h^-1), or None where it is no
    unit: an unknown word unless `free`, and a bare "in" with no power ("5 in total")."""
    if word == "in" and not (grouped or powered or free):
        return None
    if word in _COMPOUNDS:
        return _COMPOUNDS[word]
    name = _NAMES.get(word) or _NAMES.get(word.lower()) or (word if word in _SYMBOLS or free else None)
    return ((name, 1),) if name else None


def _canonical(factors: list[tuple[str, int]]) -> str:
    """Factors as one name: powers summed per unit, numerator then "/" and denominator ("cm^2", "m/s^2")."""
    total: dict[str, int] = {}
    for name, exponent in factors:
        total[name] = total.get(name, 0) + exponent

    powers = sorted(total.items())
    up = " ".join(n if e == 1 else f"{n}^{e}" for n, e in powers if e > 0)
    down = " ".join(n if e == -1 else f"{n}^{-e}" for n, e in powers if e < 0)
    return (up or "1") + (f"/{down}" if down else "")
