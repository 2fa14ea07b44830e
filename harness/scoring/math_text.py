r"""Final math answers found in model text: the extraction half of the math rules (no SymPy here).

`final_answer` asks the extractors of `EXTRACTORS`, in order, what a response answers: the last
non-empty ``\boxed{}`` (joined with the boxes before it when only "and", commas or spacing separate
them), else the text after the last explicit final-answer phrase, else the whole response when it is
nothing but an expression, else the value its closing statement gives. What is found is then rewritten
by `math_normalise` and judged with the question's wording by `math_question`.
"""

from __future__ import annotations

import re

from harness.scoring.commentary import answer_part
from harness.scoring.latex import boxed_spans
from harness.scoring.math_forms import asks_for_percent
from harness.scoring.math_normalise import TEXT_GROUP, unit_tail, variables
from harness.scoring.units import read_unit

_CONNECTOR = re.compile(
    r"(?:\s|\$|\\[(),;:!\]\[]|\\quad|\\qquad|[,;]|\band\b|\bor\b|\\text\{\s*(?:and|or|,)?\s*\})*"
)


_PHRASE = re.compile(r"(?:final answer|the answer|answer)\s*(?:is\b|:|=)\s*:?", re.IGNORECASE)


DELIMITED = re.compile(  # $$x$$, $x$ (where \$ is a dollar sign), \(x\), \[x\]
    r"\s*(?:\$\$(.+?)\$\$|(?<!\\)\$((?:\\.|[^$\\])+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\])", re.DOTALL
)


_SENTENCE_END = re.compile(r"\.(?!\d)\s|\.$|\n")


_BOLD = re.compile(r"\*\*([^*\n]+?)\*\*")


_TEXTBF = re.compile(r"\\textbf\s*\{([^{}]*)\}")


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
    math = DELIMITED.fullmatch(plain.rstrip("."))
    if math:  # the whole response is one math span
        return next(g for g in math.groups() if g is not None).strip()
    whole = plain.rstrip(".").strip()
    if "\n" in whole or len(whole) > 200 or _PROSE_WORD.search(TEXT_GROUP.sub("", whole)):
        return None
    return whole


def _plain(text: str) -> str:
    """The text without bold marks (Markdown's and \\textbf's)."""
    return _TEXTBF.sub(r"\1", _BOLD.sub(r"\1", text)).strip()


def _after_phrase(rest: str) -> str | None:
    """The answer that follows a final-answer phrase: the math span that opens it (the value after
    it when it is a label: "$N$ is 42"), else the value a sentence states ("The velocity $\\omega$
    is 1000 rad/s"), else the last math span of its sentence, else the sentence."""
    math = DELIMITED.match(rest)
    if math:
        found = next(g for g in math.groups() if g is not None)
        if _LABEL.fullmatch(found.strip()):  # "Final answer: $N$ is 42."
            found = _labelled_value(rest[math.end() :]) or found
    else:
        end = _SENTENCE_END.search(rest)
        found = rest[: end.start()] if end else rest
        stated = _stated_value(found)
        spans = list(DELIMITED.finditer(found))
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
    span = DELIMITED.fullmatch(match.group("value")) if match else None
    if span:
        return _with_unit(next(g for g in span.groups() if g is not None).strip(), match.group("words"))
    return _stated(match)


_MATH_SPAN = r"(?:\$\$.+?\$\$|(?<!\\)\$(?:\\.|[^$\\])+?\$|\\\(.+?\\\)|\\\[.+?\\\])"


_NUMBER = r"[-+−]?\\?\$?\d[\d,]*(?:\.\d+)?(?:/\d+)?%?"


_HEDGE = r"(?:(?:approximately|about|around|roughly|exactly|equal\s+to|only|just|now|then|=|\\approx)\s*)*"


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
    math = DELIMITED.fullmatch(rest.rstrip(".!").rstrip())
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
    spans = {_compact(next(g for g in m.groups() if g is not None)) for m in DELIMITED.finditer(question)}
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
    math = DELIMITED.fullmatch(line)
    inner = next(g for g in math.groups() if g is not None) if math else line
    if "=" in inner and (value := _value(inner)):
        return value
    last = next((m for m in DELIMITED.finditer(line) if m.end() == len(line)), None)
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
    span = DELIMITED.fullmatch(value)
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
    tail = unit_tail(stated, set(), single_letters=True)
    return stated if tail is not None and tail.start() == len(value) else value


def _value(text: str) -> str | None:
    """`text` as an answer when it is a short expression rather than prose, else None; a chain of
    arithmetic ends in its value ("2\\cdot5!\\cdot5! = 28800" -> "28800")."""
    text = text.strip().strip("$").strip().rstrip(".").strip()
    if not text or len(text) > 100 or "\n" in text or _PROSE_WORD.search(TEXT_GROUP.sub("", text)):
        return None
    members = _TOP_LEVEL_EQUALS.split(text)
    if len(members) > 1 and not any(variables(m) for m in members[:-1]):
        return members[-1].strip() or None
    return text
