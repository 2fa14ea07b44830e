r"""Final math answers found in model text and put in a form math-verify parses (no SymPy here).

`final_answer` asks the extractors of `EXTRACTORS`, in order, what a response answers: the last
non-empty ``\boxed{}`` (joined with the boxes before it when only "and", commas or spacing separate
them), else the text after the last explicit final-answer phrase, else the whole response when it is
nothing but an expression, else the value its closing statement gives.
`normalise` rewrites notation that math-verify misreads: Unicode superscripts and maths
(`math_symbols.as_latex`), ordinal suffixes, units after a number, thousands separators, e-notation
and symbols in subscripts.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

from harness.scoring.commentary import answer_part
from harness.scoring.latex import boxed_spans
from harness.scoring.math_forms import asks_for_percent
from harness.scoring.math_symbols import as_latex
from harness.scoring.units import UNIT_WORDS, asked_units, read_unit

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
_TEXT_GROUP = re.compile(r"\\(?:text|mathrm|textrm|mbox|operatorname|begin|end)\s*\{[^{}]*\}")
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")


NO_ANSWER = ""  # an extractor's word that the response gives no answer: the later ones are not asked


def final_answer(text: str, question: str | None = None) -> tuple[str, str] | None:
    """(source, answer) for the response's final answer, or None when it gives none: the first of
    `EXTRACTORS`, in their order, that finds one, where none before it said there is none."""
    for source, extract in EXTRACTORS:
        found = extract(text, question)
        if found == NO_ANSWER:
            return None
        if found is not None:
            return source, found
    return None


def boxed(text: str, question: str | None = None) -> str | None:
    """The last non-empty ``\\boxed{}``, joined with the boxes before it that only "and", commas or
    spacing separate from it; NO_ANSWER where the only boxes are empty (the instructions' own)."""
    spans = boxed_spans(text)
    boxes = [(start, end, content) for start, end, content in spans if content.strip()]
    if not boxes:
        return NO_ANSWER if spans else None
    parts = [boxes[-1]]
    for box in reversed(boxes[:-1]):
        if not _CONNECTOR.fullmatch(text[box[1] : parts[0][0]]):
            break
        parts.insert(0, box)
    return ", ".join(dict.fromkeys(content.strip() for _, _, content in parts))


def after_final_phrase(text: str, question: str | None = None) -> str | None:
    """What follows the last final-answer phrase ("The final answer is $x$", "Answer: x")."""
    plain = _plain(text)
    phrases = list(_PHRASE.finditer(plain))
    return _after_phrase(plain[phrases[-1].end() :]) if phrases else None


def whole_expression(text: str, question: str | None = None) -> str | None:
    """The response itself when it is nothing but an expression ("$\\frac{3}{4}$", "**204**"), and
    has no final-answer phrase; NO_ANSWER for an empty one."""
    plain = _plain(text)
    if _PHRASE.search(plain):
        return None
    math = _DELIMITED.fullmatch(plain.rstrip("."))
    if math:  # the whole response is one math span
        return next(g for g in math.groups() if g is not None).strip()
    whole = plain.rstrip(".").strip()
    if "\n" in whole or len(whole) > 200 or _PROSE_WORD.search(_TEXT_GROUP.sub("", whole)):
        return None
    return whole


def _plain(text: str) -> str:
    """The text without bold marks (Markdown's and \\textbf's)."""
    return _TEXTBF.sub(r"\1", _BOLD.sub(r"\1", text)).strip()


def _after_phrase(rest: str) -> str | None:
    """The answer that follows a final-answer phrase: the math span that opens it (the value after
    it when it is a label: "$N$ is 42"), else the value a sentence states ("The velocity $\\omega$
    is 1000 rad/s"), else the last math span of its sentence, else the sentence."""
    math = _DELIMITED.match(rest)
    if math:
        found = next(g for g in math.groups() if g is not None)
        if _LABEL.fullmatch(found.strip()):  # "Final answer: $N$ is 42."
            found = _labelled_value(rest[math.end() :]) or found
    else:
        end = _SENTENCE_END.search(rest)
        found = rest[: end.start()] if end else rest
        stated = _stated_value(found)
        spans = list(_DELIMITED.finditer(found))
        if stated:
            found = stated
        elif spans:  # "The answer is therefore $7$, as claimed."
            found = next(g for g in spans[-1].groups() if g is not None)
    return found.strip() or None


def _labelled_value(after: str) -> str | None:
    """The value stated after a label, up to the end of its sentence: " = 1000 rad/s" -> "1000 rad/s";
    a math span there is taken whole, as one right after the phrase is (" is $\\frac{1}{2}$")."""
    end = _SENTENCE_END.search(after)
    match = _LABELLED.match(after[: end.start()] if end else after)
    span = _DELIMITED.fullmatch(match.group("value")) if match else None
    if span:
        return _with_unit(next(g for g in span.groups() if g is not None).strip(), match.group("words"))
    return _stated(match)


# --- closing statements: the answer stated at the very end, not boxed, after no phrase -------

_MATH_SPAN = r"(?:\$\$.+?\$\$|(?<!\\)\$(?:\\.|[^$\\])+?\$|\\\(.+?\\\)|\\\[.+?\\\])"
_NUMBER = r"[-+−]?\\?\$?\d[\d,]*(?:\.\d+)?(?:/\d+)?%?"
_HEDGE = r"(?:(?:approximately|about|around|roughly|exactly|equal\s+to|only|just|now|then|=|\\approx)\s*)*"
_ASSIGNMENT = re.compile(  # "Q = ...", "x_{1} = ...", and a function's value "z_{p}(t) = ..."
    r"(?:\\[A-Za-z]+|[A-Za-z])(?:_\{[^{}]*\})?(?:\(\s*[A-Za-z](?:\s*,\s*[A-Za-z])*\s*\))?\s*=\s*([^=<>]+)"
)
_TOP_LEVEL_EQUALS = re.compile(r"=(?![^{]*\})")
_TAIL_WORD = r"\s+[A-Za-z][\w/.^{}\-]*"
_STATED_TAIL = (  # a value, then at most a few words (a unit, a noun) or "times" and words, to the end
    rf"{_HEDGE}(?P<value>{_MATH_SPAN}|{_NUMBER})(?P<words>(?:{_TAIL_WORD}){{0,4}}|\s+times(?:\s+[A-Za-z][\w'\-]*){{1,6}})"
    r"\s*[.!]?\s*$"
)
_STATED = re.compile(
    r"(?:^|\s)(?:is|are|was|were|equals|has|have|had|costs|measures|must\s+be|will\s+be|would\s+be"
    r"|bought|sold|spent|earned|paid|needs|gets|got|makes|made|takes|took|scored|becomes|remains"
    r"|(?:will\s+|would\s+)?(?:take|cost))\s+" + _STATED_TAIL,
    re.DOTALL,
)
_VALUE_AND_WORDS = re.compile(_STATED_TAIL, re.DOTALL)  # "6 kilometers"
_LABELLED = re.compile(r"\s*(?:=|is\b|equals\b)\s*" + _STATED_TAIL, re.DOTALL)
_LABEL = re.compile(r"(?!\\pi\b|\\infty\b)(?:\\[A-Za-z]+|[A-Za-z])(?:_\{[^{}]*\}|_[A-Za-z0-9])?")
_MARKER = re.compile(
    r"^(?:therefore|thus|hence|so|consequently|finally|overall|in\s+conclusion|in\s+summary|altogether)"
    r"\b\s*,?\s*",
    re.IGNORECASE,
)
_WORK_START = re.compile(  # "So we get ...", "First, ...", "Step 1: ...", "Let's try ..."; not "it will take"
    r"^(?:we|i|you|they|it(?!\s+(?:will\s+|would\s+)?(?:take|takes|took|cost|costs)\b)|this|that|let|let's"
    r"|here|first(?:ly)?|next|step|case|initially|try(?:ing)?"
    r"|suppose|substitut\w*|plugging|checking|for\s+example)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z*])")
_MODULUS = r"(?:\s*(?:\(\s*(?:\\text\s*\{\s*)?mod\s*\}?\s*\d+\s*\)|\\pmod\s*\{\s*\d+\s*\}))?"
_BOLD_END = re.compile(  # "= **194**", "is **6 km**", and a residue "≡ **333** (mod 1000)"
    r"(?:^|=|\bis|\bare|:|(?P<congruence>(?:≡|\\equiv)\s*\$?))\s*(?:\*\*(?P<bold>[^*\n]+?)\*\*|\\textbf\s*\{(?P<tex>[^{}]*)\})"
    rf"(?(congruence){_MODULUS})\s*\.?\s*$"
)
_CONVERTED = re.compile(  # "Converting to electron-volts, we get E = 2.48e-19 J = 1.55 eV."
    r"^(?:(?:therefore|thus|hence|so|finally),?\s*)?(?:converting|expressed|expressing)\s+(?:\w+\s+){0,2}?"
    r"(?:to|into|in)\s+[^,]{1,40},\s*(?:we\s+(?:get|have|obtain|find)|this\s+(?:is|gives)|that\s+is"
    r"|it\s+is|the\s+\w+\s+is)\s+(?P<chain>[^,;]+?)\s*[.!]?\s*$",
    re.IGNORECASE,
)
_CHAIN_LINK = re.compile(r"=|\\approx|≈")
_ALTERNATIVES = re.compile(r"\b(?:or|and)\b")
_PERCENT_SUBJECT = re.compile(  # "approximately 100% of the reaction is complete after 10 minutes."
    rf"{_HEDGE}(?P<value>[-+]?\d+(?:\.\d+)?)\s*(?:\\?%|\s+percent)\s+of\s+[^%$=]+?[.!]?",
    re.IGNORECASE,
)
_DISPLAY = re.compile(r"\$\$(?P<a>[^$]+)\$\$|\\\[(?P<b>.+?)\\\]")
_LEAD_IN = re.compile(r"(?:\bis|\bare|\bequals|answer|result)\s*:\s*$", re.IGNORECASE)
_CONCLUDING = re.compile(r"\b(?:therefore|thus|hence|so|final|answer|result|value)\b", re.IGNORECASE)
_HEADING = re.compile(r"[#*\s]*(?:final\s+)?answer[*:\s]*", re.IGNORECASE)


def closing_statement(text: str, question: str | None = None) -> str | None:
    """The answer a response states in its last line when it has no box and no final-answer phrase:
    a bold value ("= **194**", "997^{-1} ≡ **333** (mod 1000)"), a closing sentence ("Therefore,
    Hillary has 7 nickels."), the last equation before an empty lead-in ("... is:" with nothing after
    it), the value stated under a "**Final Answer**" heading, or, given the question, a display
    equation that simplifies the question's expression ("$$3(5x-20)-5 = 15x-65$$"). A step of the
    work ("So we get $x = 3$", "Step 1: **a = 4**") is not a closing statement (`_unfinished`).
    Sign-offs, an explanation section and value-free comments after that line are passed over
    (`commentary.answer_part`), unless what they hold states another value."""
    found = _closing_line(text, question)
    if found is None and (parts := answer_part(text)) is not None:
        part, rest = parts
        found = _closing_line(part, question)
        if found is not None and any(
            other not in (None, found) for line in rest.splitlines() for other in _line_values(line)
        ):
            return None  # "Thus x = 5." then "### Explanation ... Hence x = 6."
    return found or None


# What a response answers, in the order asked: the first that finds an answer gives it; one that says
# there is none (NO_ANSWER) ends the search. `final_answer`'s `source` is the first element.
EXTRACTORS = (
    ("boxed", boxed),
    ("phrase", after_final_phrase),
    ("whole", whole_expression),
    ("closing", closing_statement),
)


def _closing_line(text: str, question: str | None) -> str | None:
    """The value the last line of `text` states (see `_closing`), else None."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    previous = lines[-2] if len(lines) > 1 else ""
    found = _bold_value(lines[-1], previous) or _closing_sentence(lines[-1], question)
    if found is None and previous:
        found = _equation_before_lead_in(previous, lines[-1]) or _under_heading(previous, lines[-1])
    return found or _simplified_display(lines[-1], question)


def _line_values(line: str) -> tuple[str | None, str | None]:
    """What a line would state as a bold value or a closing sentence."""
    return _bold_value(line.strip(), ""), _closing_sentence(line.strip(), None)


def _bold_value(line: str, previous: str) -> str | None:
    """The bold value that ends the line, after "=", "is", ":" or alone ("m + n = **194**"), with
    the unit it names ("**6 kilometers**"); none after a step of the work ("We get: **x = 3**", or a
    bold line alone under "Let's try:"). An equation is kept whole: math-verify compares its right
    side with a gold that is a value."""
    match = _BOLD_END.search(line.rstrip("$ "))
    if not match:
        return None
    lead = line[: match.start()].strip() or (previous if previous.endswith(":") else "")
    if _unfinished(_SENTENCE.split(_plain_line(lead))[-1]):
        return None
    content = match.group("bold") if match.group("bold") is not None else match.group("tex")
    return _value(content) or _stated(_VALUE_AND_WORDS.match(content.strip()))


def _closing_sentence(line: str, question: str | None) -> str | None:
    """The value the last sentence states when it opens with "Therefore", "Thus", "So"...: after a
    stating verb ("Thus the angle is approximately $3\\times10^{-3}$ arcseconds.") or as its only
    math span, an equation ("Thus, $m+n=194$."); a value converted to a unit ("Converting to
    electron-volts, we get E = 2.48e-19 J = 1.55 eV."); for a question that asks for a percentage,
    the percentage that opens it ("So approximately 100% of the reaction is complete after 10
    minutes.")."""
    sentence = _SENTENCE.split(_plain_line(line))[-1]
    if (converted := _converted_value(sentence)) is not None:
        return converted
    marker = _MARKER.match(sentence)
    if not marker or _unfinished(sentence):
        return None
    rest = sentence[marker.end() :].strip()
    if asks_for_percent(question) and (share := _PERCENT_SUBJECT.fullmatch(rest)):
        return share.group("value") + "%"
    stated = _stated_value(rest)
    if stated:
        return stated
    math = _DELIMITED.fullmatch(rest.rstrip(".!").rstrip())
    inner = next((g for g in math.groups() if g is not None), "") if math else ""
    return _value(inner) if "=" in inner else None


def _converted_value(sentence: str) -> str | None:
    """The last value of a chain after "Converting to ..., we get": the value in the unit converted to
    ("E = 2.48e-19 J = 1.55 eV" -> "1.55 eV"), with the known unit its words name."""
    match = _CONVERTED.match(sentence.strip())
    if match is None:
        return None
    if _ALTERNATIVES.search(match.group("chain")):  # "1.55 eV or 1.6 eV", "10 or x = 5": two candidates
        return None
    last = _CHAIN_LINK.split(match.group("chain").replace("$", ""))[-1].strip()
    if not last:
        return None
    return _stated(_VALUE_AND_WORDS.fullmatch(last)) or _value(last)


def _simplified_display(line: str, question: str | None) -> str | None:
    """The end of a display equation that is the whole last line and opens with an expression the
    question writes as one math span ("Simplify $3(5x-20)-5x$." then "$$3(5x-20)-5x = 15x-60-5x =
    10x-60.$$" -> "10x-60"); without the question, or from another expression, None."""
    display = _DISPLAY.fullmatch(line.strip().rstrip("."))
    if display is None or not question:
        return None
    members = _TOP_LEVEL_EQUALS.split((display.group("a") or display.group("b")).strip().rstrip(".").strip())
    spans = {_compact(next(g for g in m.groups() if g is not None)) for m in _DELIMITED.finditer(question)}
    if len(members) < 2 or _compact(members[0]) not in spans:
        return None
    return _value(members[-1])


def _compact(math: str) -> str:
    """A math text without spaces, spacing commands, a final period, \\left and \\right."""
    for junk in ("\\left", "\\right", "\\,", "\\;", "\\!", "\\ "):
        math = math.replace(junk, "")
    return re.sub(r"\s+", "", math).rstrip(".")


def _equation_before_lead_in(equation: str, lead_in: str) -> str | None:
    """The equation on the line before an empty, concluding lead-in that ends the response
    ("$f^{-1}(1/5) = 9$" then "**Therefore, the value of $f^{-1}(1/5)$ is:**"): the whole line, free
    of prose, or the math span that ends it ("Solving, $f^{-1}(1/5) = 9$")."""
    lead = _TEXTBF.sub(r"\1", _BOLD.sub(r"\1", lead_in)).strip().strip("*").strip()
    if not (_LEAD_IN.search(lead) and _CONCLUDING.search(lead)):
        return None
    line = _TEXTBF.sub(r"\1", _BOLD.sub(r"\1", equation)).strip().rstrip(".").strip()
    math = _DELIMITED.fullmatch(line)
    inner = next(g for g in math.groups() if g is not None) if math else line
    if "=" in inner and (value := _value(inner)):
        return value
    last = next((m for m in _DELIMITED.finditer(line) if m.end() == len(line)), None)
    tail = next(g for g in last.groups() if g is not None) if last else ""
    return _value(tail) if "=" in tail else None


def _under_heading(heading: str, line: str) -> str | None:
    """The value the last line states under a "**Final Answer**" heading ("The number of nickels is 7.")."""
    if not _HEADING.fullmatch(heading):
        return None
    plain = _plain_line(line)
    return _stated_value(plain) or _value(plain)


def _unfinished(sentence: str) -> bool:
    """Whether a last sentence is a step of the work rather than its conclusion: after "So",
    "Therefore"..., its subject is "we", "it" or "let" ("So we get $x = 3$"), or it opens a step
    ("First, the discriminant is 16", "Step 1:", "Try $n = 2$")."""
    marker = _MARKER.match(sentence)
    rest = sentence[marker.end() :] if marker else sentence
    return bool(_WORK_START.match(rest.strip()))


def _plain_line(line: str) -> str:
    """A line without bold markup."""
    return _TEXTBF.sub(r"\1", _BOLD.sub(r"\1", line)).strip()


def _stated_value(sentence: str) -> str | None:
    """The value after the sentence's stating verb, when only a few words (a unit, a noun) follow it:
    "Hillary has 7 nickels" -> "7"; "the distance is 6 km" -> "6 km"; "it is $x$ or $y$" -> None."""
    return _stated(_STATED.search(sentence.strip()))


def _stated(match: re.Match | None) -> str | None:
    """The value a `_STATED_TAIL` match holds, with the unit its next words name (`_with_unit`)."""
    if match is None:
        return None
    value = match.group("value")
    span = _DELIMITED.fullmatch(value)
    found = _value(next(g for g in span.groups() if g is not None) if span else value)
    return _with_unit(found, match.group("words")) if found else None


def _with_unit(value: str, words: str) -> str:
    """`value` followed by the known unit its next words open with ("6" and " km in all" -> "6 km"),
    so that the unit is checked; the value alone when they name none ("7" and " nickels") or when
    `normalise` would not strip that unit again."""
    read = read_unit(words, known_only=True)
    if read is None:
        return value
    stated = f"{value} {words[: read[1]].strip()}"
    tail = _unit_tail(stated, set(), single_letters=True)
    return stated if tail is not None and tail.start() == len(value) else value


def _value(text: str) -> str | None:
    """`text` as an answer when it is a short expression rather than prose, else None; a chain of
    arithmetic ends in its value ("2\\cdot5!\\cdot5! = 28800" -> "28800")."""
    text = text.strip().strip("$").strip().rstrip(".").strip()
    if not text or len(text) > 100 or "\n" in text or _PROSE_WORD.search(_TEXT_GROUP.sub("", text)):
        return None
    members = _TOP_LEVEL_EQUALS.split(text)
    if len(members) > 1 and not any(variables(m) for m in members[:-1]):
        return members[-1].strip() or None
    return text


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
    return set(_VARIABLE.findall(_TEXT_GROUP.sub("", _E_NOTATION.sub("", gold))))


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
    tail = _unit_tail(text, symbols, single_letters)
    return text[: tail.start()].rstrip() if tail else text


def _unit_tail(text: str, symbols: set[str], single_letters: bool) -> re.Match | None:
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


# --- units, letter case and the question's wording -------------------------------------------

_SET_QUESTION = re.compile(  # a request for every value, not "for all values of $x$"
    r"\b(?:find|determine|enter|list|compute|give|identify|what\s+are)\s+all\b"
    r"|\ball\s+possible\s+(?:values|solutions)\b|separated\s+by\s+commas",
    re.IGNORECASE,
)
_ORDER_QUESTION = re.compile(r"\bordered\b|\bin\s+(?:that\s+)?order\b|\brespectively\b", re.IGNORECASE)
_FIXED_FORM = re.compile(r"\bgcd\b|greatest\s+common\s+divisor|relatively\s+prime", re.IGNORECASE)


def answer_unit(answer: str, gold_variables: set[str]) -> str | None:
    """The unit `normalise` strips from an answer, named canonically ("6 km" -> "km", "90^\\circ" ->
    "deg", "1625\\text{ cm}^2" -> "cm^2"), or None."""
    tail = _unit_tail(answer.strip(), gold_variables, single_letters=True)
    read = read_unit(tail.group()) if tail else None
    return read[0] if read else None


def units_disagree(answer: str, gold: str, question: str | None) -> bool:
    """Whether the answer's unit differs from the gold's, or, for a gold without a unit, from every
    unit the question asks for ("in meters", "How many square centimeters"). Unknown either way: agree."""
    unit = answer_unit(answer, variables(gold))
    if unit is None:
        return False
    gold_unit = answer_unit(gold, set())
    if gold_unit is not None:
        return gold_unit != unit
    asked = asked_units(question)
    return bool(asked) and unit not in asked


def letter_case_differs(answer: str, gold: str, question: str | None = None) -> bool:
    """Whether the answer writes a one-letter symbol of the gold in the other case (t for T) where
    that case means something else: math-verify lowercases symbols, but T and t are different
    quantities when the question's maths uses the answer's letter too ("at time $t$ ... in terms of
    $T$"). Where it does not, the case is a spelling (C for the constant c); without the question
    (runs made before questions were recorded) every case change is refused."""
    gold_letters = {v for v in variables(gold) if len(v) == 1}
    swapped = {
        v for v in variables(answer) if len(v) == 1 and v not in gold_letters and v.swapcase() in gold_letters
    }
    return bool(swapped) and (question is None or bool(swapped & question_letters(question)))


def question_letters(question: str) -> set[str]:
    """The one-letter symbols the question's maths uses ($t$, \\(T\\), \\[x = y\\]); letters of its
    prose ("a", "A ball") are not symbols."""
    spans = (next(g for g in m.groups() if g is not None) for m in _DELIMITED.finditer(question))
    return {v for span in spans for v in variables(span) if len(v) == 1}


def asks_for_values(question: str | None) -> bool:
    """Whether the question asks for a collection of values ("Find all ...", "separated by commas")
    rather than an ordered tuple ("ordered pair", "respectively")."""
    return bool(question) and bool(_SET_QUESTION.search(question)) and not _ORDER_QUESTION.search(question)


def fixes_form(question: str | None) -> bool:
    """Whether the question fixes an equation's scale ("... integers with gcd(|A|,|B|,|C|,|D|) = 1")."""
    return bool(question) and bool(_FIXED_FORM.search(question))


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
    match = _ASSIGNMENT.fullmatch(text.strip())
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
