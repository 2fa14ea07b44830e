r"""Math answers judged with math-verify, in worker processes with a hard time limit per call.

The final answer is the LAST ``\boxed{}`` of the answer text (plain math-verify joins several
boxes into one number). Without a box, math-verify's LaTeX/expression extraction of the text is
used ("final answer is $x$", the last expression). Integer gold answers (AIME, AMC) take an exact
integer fast path when the extracted answer is a plain integer ("033", "204.0", "1{,}000").
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from importlib.metadata import version

from harness.scoring.latex import last_boxed
from harness.scoring.pool import TimeoutPool, map_with_timeout
from harness.types import Score

RULES_VERSION = "1"
DEFAULT_TIMEOUT = 10.0

_INTEGER = re.compile(r"[-+]?\d+(?:\.0*)?")
_THOUSANDS = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+")
_WRAPPERS = re.compile(r"\\(?:text|textbf|mathbf|mathrm|boxed)\s*\{([^{}]*)\}")
_BOLD = re.compile(r"\*\*([^*\n]+?)\*\*")


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


def verify_pair(payload: tuple[str, str]) -> dict:
    """Decide whether one answer text matches its gold (math-verify, after the integer fast path).

    Runs inside a pool worker; may be killed at any point."""
    import logging

    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    logging.getLogger("math_verify").setLevel(logging.ERROR)  # we enforce time limits ourselves
    answer, gold = payload
    boxed = last_boxed(answer)
    if boxed is not None:
        source, candidate = "boxed", boxed.strip()
        predicted = parse(
            "\\boxed{" + candidate + "}",
            extraction_config=[LatexExtractionConfig(boxed_match_priority=0)],
            parsing_timeout=None,
        )
    else:
        source, text = "text", _BOLD.sub(r"\1", answer)
        text = re.sub(r"\\textbf\s*\{([^{}]*)\}", r"\1", text)
        predicted = parse(
            text, extraction_config=[LatexExtractionConfig(), ExprExtractionConfig()], parsing_timeout=None
        )
        candidate = str(predicted[-1]) if predicted else None
    if candidate is None or candidate == "":
        return {"value": 0.0, "extracted": None, "canonical": None, "details": {"reason": "no answer found"}}

    gold_int, pred_int = as_integer(gold), as_integer(candidate)
    if gold_int is not None and pred_int is not None:
        return _verdict(pred_int == gold_int, candidate, str(pred_int), "integer", source)

    if predicted:
        gold_parsed = parse(
            "\\boxed{" + gold + "}",
            extraction_config=[LatexExtractionConfig(boxed_match_priority=0)],
            parsing_timeout=None,
        )
        if gold_parsed:
            ok = verify(gold_parsed, predicted, timeout_seconds=None)
            return _verdict(ok, candidate, str(predicted[0]), "math_verify", source)
    same = _plain(candidate).lower() == _plain(gold).lower()
    return _verdict(same, candidate, _plain(candidate), "string", source)


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
    """

    name = "math"

    def __init__(
        self, timeout: float = DEFAULT_TIMEOUT, workers: int | None = None, persistent: bool = False
    ):
        self.timeout = timeout
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
            if answer is None or not answer.strip():
                reason = "no answer (unclosed think block)" if answer is None else "empty answer"
                yield i, Score(0.0, None, None, {"reason": reason})
            else:
                calls.append((i, (answer, gold)))
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
