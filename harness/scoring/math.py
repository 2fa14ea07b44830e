r"""Math answers judged with math-verify, in worker processes with a hard time limit per call.

The final answer is found by `math_text.final_answer`: the last non-empty ``\boxed{}`` (boxes
joined only by "and" or commas count together), else an explicit final-answer phrase, else a
response that is a bare expression, else a value stated in the last line (a bold value,
a closing "Therefore ... is X." sentence, the last equation before an empty "... is:", the line
under a "Final Answer" heading; never a step of the work such as "We get: **x = 3**"); anything
else is "no answer found". Both sides are rewritten by `math_normalise.normalise`, then compared:
integers exactly ("033" = 33, "1{,}000" = 1000); decimals exactly, or at the gold's significant
figures on measured benchmarks (6630.65 = 6630 on Minerva only); then math-verify, on parsed
expressions only: an answer that does not parse is compared as a whole string, never by a prefix.
With the question (a JSON gold), "find all" lists with repeats compare as multisets and equations
whose form the question fixes compare as written. One-letter symbols keep their case where the
question gives both cases a meaning, and an answer's unit must agree with the gold's or the
question's. The rules also read Unicode and code notation (`math_symbols`), percentages, choice
letters, families of solutions and function values (`math_forms`), and an answer line followed
by comments (`commentary`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Sequence
from importlib.metadata import version

from harness.core.types import Score
from harness.scoring.latex import last_boxed
from harness.scoring.math_forms import (
    answer_choice,
    asks_for_percent,
    gold_choice,
    same_parameter,
    without_percent,
)
from harness.scoring.math_normalise import (
    as_tuple,
    assigned_value,
    assignment,
    decimal,
    list_items,
    matches_at_gold_precision,
    normalise,
    repeated_list_as_tuple,
    variables,
)
from harness.scoring.math_question import asks_for_values, fixes_form, letter_case_differs, units_disagree
from harness.scoring.math_text import final_answer
from harness.scoring.pool import TimeoutPool, map_with_timeout
from harness.scoring.rules import no_answer, parse_gold

RULES_VERSION = "4"
DEFAULT_TIMEOUT = 10.0

_INTEGER = re.compile(r"[-+]?\d+(?:\.0*)?")
_THOUSANDS = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+")
_WRAPPERS = re.compile(r"\\(?:text|textbf|mathbf|mathrm|boxed)\s*\{([^{}]*)\}")


def _plain(text: str) -> str:
    """Strip the decorations that do not change a value: $, \text{}, thin spaces, a final period."""
    text = text.strip().strip("$").strip()
    for _ in range(3):
        text = _WRAPPERS.sub(r"\1", text)
    for junk in ("\\,", "\\!", "\\;", "\\ ", "{,}", "\\left", "\\right", "^\\circ", "^{\\circ}"):
        text = text.replace(junk, "" if junk != "{,}" else ",")
    return text.replace(" ", "").rstrip(".")


def as_integer(text: str) -> int | None:
    """The integer `text` spells exactly, or None ("033" -> 33, "204.0" -> 204, "1,000" -> 1000)."""
    text = _plain(text)
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    if not _INTEGER.fullmatch(text):
        return None
    return int(text.split(".")[0])


def verify_pair(payload: tuple) -> dict:
    """Decide whether one answer text matches its gold: exact integers, then decimals (at the gold's
    precision when `measured`), then math-verify on both parsed (with an identity check for
    exp/trig/hyperbolic forms), and a whole-string comparison only when either side does not parse.

    payload is (answer, gold) or (answer, gold, measured); the gold may be the JSON form of
    `rules.gold_text`, whose question lets lists of values be compared as multisets and fixed-form
    equations as written. Runs inside a pool worker; may be killed at any point."""
    import logging

    logging.getLogger("math_verify").setLevel(logging.ERROR)  # we enforce time limits ourselves
    answer, gold, *rest = payload
    measured = bool(rest and rest[0])
    parsed = parse_gold(gold)
    found = final_answer(answer, parsed.question)
    if found is None:
        return {"value": 0.0, "extracted": None, "canonical": None, "details": {"reason": "no answer found"}}
    source, candidate = found
    verdicts = [_judge(candidate, g, parsed.question, measured) for g in parsed.answers]
    ok, canonical, method = next((v for v in verdicts if v[0]), verdicts[0])
    return _verdict(ok, candidate, canonical, method, source)


def _judge(candidate: str, gold: str, question: str | None, measured: bool) -> tuple[bool, str, str]:
    """(right, canonical answer, method) for one accepted gold; the method names the rule that decided."""
    gold_text, text = normalise(gold), normalise(candidate, variables(gold))
    text, gold_text = same_parameter(text, gold_text, variables)
    if (letter := gold_choice(gold_text)) and (chosen := answer_choice(text)):
        return chosen == letter, chosen, "choice"  # "\textbf{(B)}\ 3(1+r/10)^x=7" for "(B)"
    if asks_for_percent(question):
        gold_text, text = without_percent(gold_text), without_percent(text)
    if "=" not in gold_text and (value := assigned_value(text)) is not None:
        text = value  # "Q = 28800" answers 28800: its right side is compared (and its letters' case)
    elif (sides := assignment(text)) and (gold_sides := assignment(gold_text)) and sides[0] == gold_sides[0]:
        text, gold_text = sides[1], gold_sides[1]  # "x = a, b" for "x=a, b": math-verify misreads sets in Eq
    if units_disagree(candidate, gold, question):
        return False, text, "unit"
    if (ordered_gold := repeated_list_as_tuple(gold_text)) is not None:
        if asks_for_values(question):
            return _same_multiset(text, gold_text, measured)
        gold_text, text = ordered_gold, as_tuple(text)
    ok, canonical, method = _compare(text, gold_text, measured, fixes_form(question))
    if ok and letter_case_differs(text, gold_text, question):
        return False, canonical, "case"
    return ok, canonical, method


def _compare(text: str, gold_text: str, measured: bool, fixed_form: bool = False) -> tuple[bool, str, str]:
    """Integers exactly, decimals exactly (or at the gold's precision when `measured`), then math-verify,
    then the whole strings."""
    from math_verify import verify

    gold_int, pred_int = as_integer(gold_text), as_integer(text)
    if gold_int is not None and pred_int is not None:
        return pred_int == gold_int, str(pred_int), "integer"
    gold_number, number = decimal(_plain(gold_text)), decimal(_plain(text))
    if gold_number is not None and number is not None:
        if number == gold_number or (measured and matches_at_gold_precision(number, gold_number)):
            return True, str(number), "decimal"
    gold_parsed, predicted = _parse(gold_text), _parse(text)
    if _parsed(gold_parsed) and _parsed(predicted):
        ok = verify(gold_parsed, predicted, timeout_seconds=None) and not _tiny_and_apart(
            gold_parsed[0], predicted[0]
        )
        if not ok and (plain := _same_symbols(gold_parsed, predicted)) is not None:
            gold_parsed, predicted = plain
            ok = verify(gold_parsed, predicted, timeout_seconds=None) and not _tiny_and_apart(
                gold_parsed[0], predicted[0]
            )
        ok = ok or _same_function(gold_parsed[0], predicted[0])
        if ok and fixed_form and _is_equation(gold_parsed[0]):
            return _same_equation(gold_parsed[0], predicted[0]), str(predicted[0]), "form"
        return ok, str(predicted[0]), "math_verify"
    same = _plain(text).lower() == _plain(gold_text).lower()
    return same, _plain(text), "string"


def _same_multiset(text: str, gold_text: str, measured: bool) -> tuple[bool, str, str]:
    """A list answering "find all ..." against a gold list with repeats: the same items, each as often,
    in any order ("16, 3, 1, 1" for "1,1,3,16"; not "1, 3, 16")."""
    items, gold_items = list_items(text) or [text], list_items(gold_text) or [gold_text]
    left = list(gold_items)
    for item in items:
        match = next((g for g in left if _compare(item, g, measured)[0]), None)
        if match is None:
            return False, text, "multiset"
        left.remove(match)
    return not left, text, "multiset"


def _parse(text: str) -> list:
    """math-verify's parse of one answer, read as LaTeX (without its unit stripping, which took
    letters such as "m" for metres), else as a plain expression ("2*x+1")."""
    from latex2sympy2_extended import NormalizationConfig
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse

    latex = LatexExtractionConfig(
        boxed_match_priority=0,
        normalization_config=NormalizationConfig(
            basic_latex=True, units=False, malformed_operators=True, nits=True, boxed="all"
        ),
    )
    parsed = parse("\\boxed{" + text + "}", extraction_config=[latex], parsing_timeout=None)
    if not _parsed(parsed):
        parsed = parse(text, extraction_config=[ExprExtractionConfig()], parsing_timeout=None) or parsed
    return parsed


def _same_symbols(gold: list, answer: list) -> tuple[list, list] | None:
    """Both parses with plain symbols, so that one name is one symbol, where they are expressions
    that name a symbol by two objects: the parser gives the letters it splits from a run ("2it")
    other assumptions than spaced ones ("2 i t"), and SymPy then holds them apart. None otherwise:
    equations, sets and relations are left alone (SymPy would evaluate Eq(x, {..}) to False)."""
    import sympy

    if not all(isinstance(p[0], sympy.Expr) for p in (gold, answer)):
        return None
    symbols = {s for p in (gold, answer) for s in p[0].free_symbols if isinstance(s, sympy.Symbol)}
    names = [s.name for s in symbols]
    if len(names) == len(set(names)):
        return None
    plain = [p[0].xreplace({s: sympy.Symbol(s.name) for s in symbols}) for p in (gold, answer)]
    if not all(isinstance(p, sympy.Expr) for p in plain):
        return None
    return [plain[0], *gold[1:]], [plain[1], *answer[1:]]


def _parsed(result: list) -> bool:
    """Whether math-verify read an expression (it returns only the string when it could not)."""
    return bool(result) and not isinstance(result[0], str)


def _tiny_and_apart(gold, answer) -> bool:
    """Two numbers below 1e-3 that differ by more than one part in a million: math-verify rounds
    numbers to 6 decimal places, which would make 2.88e-19 equal 1.325e-27 (or "Q = 1.325e-27")."""
    import sympy

    gold, answer = (x.rhs if isinstance(x, sympy.Eq) else x for x in (gold, answer))  # "Q = 1.3e-27"
    if not all(isinstance(x, sympy.Expr) and x.is_number for x in (gold, answer)):
        return False
    try:
        g, a = float(sympy.N(gold)), float(sympy.N(answer))
    except (TypeError, ValueError):  # complex
        return False
    return max(abs(g), abs(a)) < 1e-3 and not math.isclose(g, a, rel_tol=1e-6)


def _same_function(gold, answer) -> bool:
    """Equal once exponential, trigonometric and hyperbolic functions are all written with exp
    (sinh(at)/a against (e^{at} - e^{-at})/(2a))."""
    import sympy
    from sympy.functions.elementary.hyperbolic import HyperbolicFunction
    from sympy.functions.elementary.trigonometric import TrigonometricFunction

    if not (isinstance(gold, sympy.Expr) and isinstance(answer, sympy.Expr)):
        return False
    kinds = (sympy.exp, HyperbolicFunction, TrigonometricFunction)
    if not (gold.has(*kinds) or answer.has(*kinds)):
        return False
    return sympy.simplify((gold - answer).rewrite(sympy.exp)) == 0


def _is_equation(expr) -> bool:
    import sympy

    return isinstance(expr, sympy.Eq)


def _same_equation(gold, answer) -> bool:
    """The same equation as written, up to moving terms across "=": 20x-28y+44z+16=0 is not
    5x-7y+11z+4=0 when the question fixes the scale (integers with gcd 1, leading coefficient > 0)."""
    import sympy

    if not _is_equation(answer):
        return False
    return sympy.expand((gold.lhs - gold.rhs) - (answer.lhs - answer.rhs)) == 0


def _verdict(correct: bool, extracted: str, canonical: str, method: str, source: str) -> dict:
    details = {"method": method, "source": source}
    return {
        "value": 1.0 if correct else 0.0,
        "extracted": extracted,
        "canonical": canonical,
        "details": details,
    }


class MathScorer:
    """Judges final math answers; `score` runs `verify_pair` in a pool with a per-call time limit.

    `persistent=True` keeps the pool's workers between `score` calls (a trainer scores every step).
    `measured=True` is for benchmarks whose golds are measured quantities (Minerva's physics): a
    decimal more precise than the gold counts when it rounds to the gold's significant figures.
    Elsewhere answers are exact: 165.93 is not 166.
    """

    name = "math"

    def __init__(
        self,
        timeout: float = DEFAULT_TIMEOUT,
        workers: int | None = None,
        persistent: bool = False,
        measured: bool = False,
    ):
        self.timeout = timeout
        self.measured = measured
        self.workers = workers or min(4, os.cpu_count() or 1)
        self.pool = TimeoutPool(verify_pair, timeout=timeout, workers=self.workers) if persistent else None

    @property
    def version(self) -> str:
        return (
            f"math-{RULES_VERSION}+math-verify-{version('math-verify')}"
            f"+latex2sympy2_extended-{version('latex2sympy2_extended')}"
        )

    def score(
        self,
        answers: Sequence[str | None],
        golds: Sequence[str],
        previous: Sequence[dict | None] | None = None,
    ) -> Iterator[tuple[int, Score]]:
        """Yield (index, Score) in completion order; None or blank answers are wrong without a call."""
        calls = []
        for i, (answer, gold) in enumerate(zip(answers, golds, strict=True)):
            missing = no_answer(answer)
            if missing is not None:
                yield i, missing
            else:
                calls.append((i, (answer, gold, self.measured)))
        payloads = [p for _, p in calls]
        if self.pool is not None:
            results = self.pool.map(payloads)
        else:
            results = map_with_timeout(verify_pair, payloads, timeout=self.timeout, workers=self.workers)
        for j, result in results:
            index = calls[j][0]
            if isinstance(result, dict):
                yield index, Score(**result)
            else:  # timeout, crash or exception inside math-verify: recorded as wrong
                error = {"error": f"{type(result).__name__}: {result}"}
                yield index, Score(0.0, last_boxed(calls[j][1][0]), None, error)

    def close(self) -> None:
        """End the persistent pool's workers (a later `score` starts workers per call)."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None
