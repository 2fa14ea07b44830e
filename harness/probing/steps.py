"""SPAE's step accounting (SPAE paper, Eq. 9-10) as pure functions of a tokenised response.

A response's thinking region is cut into steps at `".\\n\\n"` boundaries; given the first step k* at which
the answer is reached (saturation in probe mode, a mention in the proxy mode), every thinking token up to
and including boundary k* is a solving token and every later thinking token a checking token.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from harness.core.thinking import THINK_CLOSE, THINK_OPEN

DELIMITER = ".\n\n"
TAU_SAT = 0.9
REFLECT_MARKERS = (
    "wait",
    "hmm",
    "alternatively",
    "let me check",
    "let me verify",
    "double-check",
    "re-examine",
)
_REFLECT = re.compile(
    r"\b(?:" + "|".join(re.escape(m) + "+" for m in REFLECT_MARKERS) + r")\b", re.IGNORECASE
)


@dataclass(frozen=True)
class Tokens:
    """A response's token ids and each token's [start, end) character span in `text`."""

    text: str
    ids: list[int]
    spans: list[tuple[int, int]]

    @classmethod
    def from_pieces(cls, ids: Sequence[int], pieces: Sequence[str]) -> Tokens:
        """Token ids with the text each one decodes to, alone (a training rollout's generated ids)."""
        spans, at = [], 0
        for piece in pieces:
            spans.append((at, at + len(piece)))
            at += len(piece)
        return cls("".join(pieces), list(ids), spans)

    @cached_property
    def _ends(self) -> list[int]:
        return [end for _, end in self.spans]

    def token_at(self, char: int) -> int:
        """The index of the (first) token holding character `char`; len(ids) past the end."""
        return bisect_right(self._ends, char)


@dataclass(frozen=True)
class Segments:
    """Token indices of the thinking region [t0, t1), the first summary token, and the step boundaries."""

    t0: int  # the token after <think> if the response holds one, else 0
    t1: int  # the </think> token, or len(ids) when the think block never closes
    summary_start: int  # the token after </think>, or len(ids)
    boundaries: list[int]  # b_1 < ... < b_K: the tokens that end a delimiter inside [t0, t1)
    think_chars: tuple[int, int]  # the thinking region in characters
    no_think_close: bool


def segment(tokens: Tokens, delimiter: str = DELIMITER) -> Segments:
    """Find the thinking region and the step boundaries inside it."""
    text, n = tokens.text, len(tokens.ids)
    close_at = text.find(THINK_CLOSE)
    region_end = close_at if close_at >= 0 else len(text)
    open_at = text.find(THINK_OPEN, 0, region_end)
    region_start = open_at + len(THINK_OPEN) if open_at >= 0 else 0
    t0 = tokens.token_at(region_start - 1) + 1 if open_at >= 0 else 0
    if close_at >= 0:
        t1, summary_start = tokens.token_at(close_at), tokens.token_at(close_at + len(THINK_CLOSE) - 1) + 1
    else:
        t1 = summary_start = n
    ends = delimiter_tokens(tokens, delimiter, region_start, region_end)
    return Segments(
        t0=t0,
        t1=t1,
        summary_start=summary_start,
        boundaries=[b for b in ends if t0 <= b < t1],
        think_chars=(region_start, region_end),
        no_think_close=close_at < 0,
    )


def delimiter_tokens(tokens: Tokens, delimiter: str, start: int, end: int) -> list[int]:
    """Tokens that end a delimiter found in text[start:end].

    A token whose string ends with the delimiter (Qwen's `.ĊĊ`) is one; where the tokenizer splits the
    delimiter over several tokens, the token holding its last character is. A delimiter inside one token
    that does not end it (`.ĊĊĊ`) is none, as in the authors' token-suffix rule.
    """
    found: list[int] = []
    at = tokens.text.find(delimiter, start, end)
    while at >= 0:
        last = at + len(delimiter) - 1
        j = tokens.token_at(last)
        if j >= len(tokens.ids):
            break
        token_start, token_end = tokens.spans[j]
        if (token_end == last + 1 or token_start > at) and (not found or found[-1] != j):
            found.append(j)
        at = tokens.text.find(delimiter, at + len(delimiter), end)
    return found


def step_texts(tokens: Tokens, seg: Segments) -> list[str]:
    """The text of each step k = 1..K: tokens (b_{k-1}, b_k], the first step starting the thinking region."""
    ends = [tokens.spans[b][1] for b in seg.boundaries]
    starts = [seg.think_chars[0], *ends][: len(ends)]
    return [tokens.text[start:end] for start, end in zip(starts, ends, strict=True)]


def reflect_count(tokens: Tokens, seg: Segments) -> int:
    """Reflection markers (REFLECT_MARKERS, whole words, any case, last letter may repeat: "Hmmm")
    in the thinking region. The paper does not give its rule; not comparable with its Reflect column."""
    start, end = seg.think_chars
    return len(_REFLECT.findall(tokens.text, start, end))


def potential(acc: float, conf: float) -> float:
    """Step Potential (Eq. 8): Phi = 1.5 Acc Conf + 0.5 Acc - Conf, in [-1, 1]."""
    return 1.5 * acc * conf + 0.5 * acc - conf


def first_step(reached: Sequence[bool]) -> int | None:
    """k* = the first step (1-based) at which the answer is reached, or None."""
    return next((k for k, hit in enumerate(reached, start=1) if hit), None)


def solve_check_fields(seg: Segments, n_tokens: int, k_star: int | None, correct: bool) -> dict[str, Any]:
    """SPAE paper §3.2: solve / check / summary tokens, the first saturated step, R2W and flags."""
    n_steps = len(seg.boundaries)
    boundary = None if k_star is None else seg.boundaries[k_star - 1]
    if boundary is None:
        solve, check = seg.t1 - seg.t0, 0
    else:
        solve, check = boundary - seg.t0 + 1, seg.t1 - (boundary + 1)
    return {
        "think_tokens": seg.t1 - seg.t0,
        "n_steps": n_steps,
        "saturated": k_star is not None,
        "first_sat_step": k_star,
        "first_sat_token": boundary,
        "first_sat_relpos": None if k_star is None else k_star / n_steps,
        "solve_tokens": solve,
        "check_tokens": check,
        "summary_tokens": 0 if seg.no_think_close else n_tokens - seg.summary_start,
        "r2w": k_star is not None and not correct,
        "no_think_close": seg.no_think_close,
        "no_boundaries": n_steps == 0,
    }
