r"""Final math answers found in model text and put in a form math-verify parses (no SymPy here).

`final_answer` picks what a response answers: the last non-empty ``\boxed{}`` (joined with the
boxes before it when only "and", commas or spacing separate them), else the text after the last
explicit final-answer phrase, else the whole response when it is nothing but an expression.
`normalise` rewrites notation that math-verify misreads: Unicode superscripts, ordinal suffixes,
units after a number, thousands separators, e-notation and symbols in subscripts.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

from harness.scoring.latex import boxed_spans

# --- extraction ------------------------------------------------------------------------------

_CONNECTOR = re.compile(
    r"(?:\s|\$|\\[(),;:!\]\[]|\\quad|\\qquad|[,;]|\band\b|\bor\b|\\text\{\s*(?:and|or|,)?\s*\})*"
)
_PHRASE = re.compile(r"(?:final answer|the answer|answer)\s*(?:is\b|:|=)\s*:?", re.IGNORECASE)
_DELIMITED = re.compile(  # $$x$$, $x$ (where \$ is a dollar sign), \(x\), \[x\]
    r"\s*(?:\$\$(.+?)\$\$|(?<!\\)\$((?:\\.|[^$\\])+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\])", re.DOTALL
)
_SENTENCE_END = re.compile(r"\.(?!\d)\s|\.$|\n")
_BOLD = re.compile(r"\*\*([^*\n]+?)\*\*")
_TEXTBF = re.compile(r"\\textbf\s*\{([^{}]*)\}")
_TEXT_GROUP = re.compile(r"\\(?:text|mathrm|textrm|mbox|operatorname)\s*\{[^{}]*\}")
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")


def final_answer(text: str) -> tuple[str, str] | None:
    """(source, answer) for the response's final answer, or None when it gives none.

    source is "boxed", "phrase" ("The final answer is $x$", "Answer: x") or "whole" (the response
    is a bare expression such as "$\\frac{3}{4}$" or "**204**")."""
    spans = boxed_spans(text)
    boxes = [(start, end, content) for start, end, content in spans if content.strip()]
    if spans and not boxes:  # only the empty box of the instructions
        return None
    if boxes:
        parts = [boxes[-1]]
        for box in reversed(boxes[:-1]):
            if not _CONNECTOR.fullmatch(text[box[1] : parts[0][0]]):
                break
            parts.insert(0, box)
        contents = list(dict.fromkeys(content.strip() for _, _, content in parts))
        return "boxed", ", ".join(contents)
    plain = _TEXTBF.sub(r"\1", _BOLD.sub(r"\1", text)).strip()
    phrases = list(_PHRASE.finditer(plain))
    if phrases:
        found = _after_phrase(plain[phrases[-1].end() :])
        return ("phrase", found) if found else None
    math = _DELIMITED.fullmatch(plain.rstrip("."))
    if math:  # the whole response is one math span
        whole = next(g for g in math.groups() if g is not None).strip()
    else:
        whole = plain.rstrip(".").strip()
        if "\n" in whole or len(whole) > 200 or _PROSE_WORD.search(_TEXT_GROUP.sub("", whole)):
            return None
    return ("whole", whole) if whole else None


def _after_phrase(rest: str) -> str | None:
    """The answer that follows a final-answer phrase: the math span that opens it, else the last
    math span of its sentence, else the sentence."""
    math = _DELIMITED.match(rest)
    if math:
        found = next(g for g in math.groups() if g is not None)
    else:
        end = _SENTENCE_END.search(rest)
        found = rest[: end.start()] if end else rest
        spans = list(_DELIMITED.finditer(found))
        if spans:  # "The answer is therefore $7$, as claimed."
            found = next(g for g in spans[-1].groups() if g is not None)
    return found.strip() or None


# --- normalisation ---------------------------------------------------------------------------

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
_SUBSCRIPT_TEXT = re.compile(r"\\(?:text|mathrm|textrm|rm|mbox)\s*\{([^{}]*)\}")
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_UNIT_WORDS = (
    "mm cm km m kg mg g s ms min h hr hrs hour hours day days year years yr week weeks ft feet foot "
    "in inch inches mi mile miles mph kph J kJ cal kcal W kW N Pa kPa atm K eV keV MeV GeV L mL mol "
    "Hz kHz MHz GHz V mV A mA Ohm pc kpc Mpc AU ly Angstrom dollar dollars cent cents unit units "
    "degree degrees deg sq square cubic meter meters metre metres second seconds minute minutes"
).split()
_POWER = r"(?:\s*\^\s*(?:\{\s*-?\s*\d+\s*\}|-?\d|\{\s*\\circ\s*\}|\\circ))?"
_UNIT_TOKEN = (
    r"(?:\\(?:text|mathrm|textrm|mbox|operatorname)\s*\{[^{}]*\}|\^\s*\{?\s*\\circ\s*\}?|\\circ"
    r"|(?<![A-Za-z\\])(?P<word>[A-Za-z]+))" + _POWER
)
_UNIT_GAP = r"(?:\s|\\[,;:! ]|~|/|\\cdot)*"
_UNIT_TAIL = re.compile(rf"(?<=[\d}})]){_UNIT_GAP}(?:{_UNIT_TOKEN}{_UNIT_GAP})+$")
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_THIN_SPACE_THOUSANDS = re.compile(r"(?<=\d)\\,(?=\d{3}(?!\d))")
_E_NOTATION = re.compile(r"(?<![\w\\.{])(\d+(?:\.\d+)?)[eE]([-+]?\d+)(?![\w.])")
_WORDS = re.compile(r"(?:\s+[A-Za-z]{2,})+\s*")
_MATH_WORD = re.compile(r"\b(?:pi|sqrt|sin|cos|tan|log|ln|exp|inf|infty)\b")
_VARIABLE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]+")
_TOP_LEVEL_COMMA = re.compile(r",(?![^({\[]*[)}\]])")
_DECIMAL = re.compile(r"-?(?:\d+\.?\d*|\.\d+)")
_SCIENTIFIC = re.compile(rf"({_DECIMAL.pattern})(?:\\(?:times|cdot)10\^(?:\{{([-+]?\d+)\}}|([-+]?\d)))?")


def variables(gold: str) -> set[str]:
    r"""The letter runs a gold uses as symbols (outside ``\commands``, ``\text{}`` and e-notation)."""
    return set(_VARIABLE.findall(_TEXT_GROUP.sub("", _E_NOTATION.sub("", gold))))


def normalise(text: str, gold_variables: set[str] | None = None) -> str:
    """`text` rewritten for parsing. With `gold_variables` it is an answer: single-letter units it
    uses as the gold's symbols stay, and e-notation is left alone when the gold uses Euler's e."""
    is_gold = gold_variables is None
    symbols = set() if is_gold else gold_variables
    text = _SUPERSCRIPT_RUN.sub(lambda m: "^{" + m.group().translate(_SUPERSCRIPTS) + "}", text.strip())
    for symbol, latex in _SYMBOLS.items():
        text = text.replace(symbol, latex)
    text = _ORDINAL.sub(r"\1", text)
    text = _SUBSCRIPT.sub(_plain_subscript, text)
    text = _strip_units(text, symbols, single_letters=not is_gold)
    text = _THIN_SPACE_THOUSANDS.sub("", text).replace("{,}", ",")
    if _THOUSANDS.fullmatch(text.strip().strip("$").strip()):
        text = text.replace(",", "")
    if is_gold or "e" not in symbols:
        text = _E_NOTATION.sub(r"\1\\times10^{\2}", text)
    return text


def _plain_subscript(match: re.Match) -> str:
    r"""``_{\text{max}}`` -> ``_{max}``, ``_{\odot}`` -> ``_{odot}``; Greek letters stay commands."""
    inner = _SUBSCRIPT_TEXT.sub(lambda m: m.group(1).replace(" ", ""), match.group(1))
    inner = _COMMAND.sub(lambda m: m.group() if m.group(1) in _GREEK else m.group(1), inner)
    return "_{" + inner + "}"


def _strip_units(text: str, symbols: set[str], single_letters: bool) -> str:
    """`text` without a unit tail after its final number, unless a stripped word is a gold symbol."""
    match = _UNIT_TAIL.search(text)
    if not match or not text[: match.start()].strip():
        return text
    for token in re.finditer(_UNIT_TOKEN, match.group()):
        word = token.group("word")
        if word is None:
            continue
        if word not in _UNIT_WORDS and not _is_prose(text[: match.start()], match.group()):
            return text
        if word in symbols or (len(word) == 1 and not single_letters):
            return text
    return text[: match.start()].rstrip()


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
