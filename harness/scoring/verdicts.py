"""The score of a sandbox verdict on a code answer, shared by the code checkers."""

from __future__ import annotations

import hashlib
from typing import Any

from harness.core.types import Score
from harness.sandbox import Verdict


def verdict_score(verdict: Verdict, code: str | None, **details: Any) -> Score:
    """1 for a pass, else 0; the code is the extracted answer, its hash the canonical one."""
    return Score(
        value=1.0 if verdict.passed else 0.0,
        extracted=code,
        canonical=hashlib.sha256(code.encode()).hexdigest()[:16] if code is not None else None,
        details={
            "verdict": verdict.status,
            **({"reason": verdict.reason} if verdict.reason else {}),
            **details,
        },
    )
