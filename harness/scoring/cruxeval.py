"""CRUXEval: predict the output of `f` on an input (O), or an input that gives an output (I).

The answer is the assertion in the last [ANSWER] ... [/ANSWER] block (or the answer text). For O,
the right-hand side of `==` is evaluated in a sandbox where `f` does not exist and compared by
value with the expected output. For I, the answer must be a call `f(...)`: its arguments are
evaluated in one sandbox (without `f`), then the benchmark's `f` runs on those values in another,
so an answer cannot redefine or patch `f`. An unextractable or invalid answer fails.

`invalid` in the details marks what the upstream scorer drops from n (I: no "f(" in the answer;
O: the answer copies the call `f(input)`); `upstream_compat` aggregation uses it.
"""

from __future__ import annotations

import ast
import hashlib
import re
from typing import Any

from harness.core.threadsafe_ast import parse
from harness.core.types import Score
from harness.sandbox import CallFailed, Limits, Served, Verdict

SECONDS = 3.0  # CRUXEval's per-check limit
_ANSWER = re.compile(r"\[ANSWER\](.*?)(?:\[/ANSWER\]|$)", re.DOTALL)
_ARGS = "__harness_args__"
_WORD = re.compile(r"\w*+")

_expected: dict[str, Any] = {}
_by_value: dict[str, bool] = {}


def extract(answer: str, mode: str) -> str:
    """The predicted output (O) or call `f(...)` (I), cut out of the assertion the model wrote."""
    blocks = _ANSWER.findall(answer)
    text = (blocks[-1] if blocks else answer).strip()
    text = _unfenced(text).strip()
    if mode == "output":
        text = text.split("==", 1)[1] if "==" in text else text
    else:
        if "assert f" in text:
            text = "f" + text.split("assert f", 1)[1]
        text = text.split("==", 1)[0]
    return text.strip()


def _unfenced(text: str) -> str:
    """`text` without an opening ```label fence and a closing ``` fence: `^```\\w*\\s*|\\s*```$` removed,
    in one pass (the regex re-scans a run of blank space from each of its characters: quadratic)."""
    if text.startswith("```"):
        text = text[_WORD.match(text, 3).end() :].lstrip()
    return text[:-3].rstrip() if text.endswith("```") else text


def expected_output(gold: dict) -> Any:
    """The benchmark's output literal as a value (evaluated in a sandbox, cached)."""
    key = hashlib.sha256(gold["output"].encode()).hexdigest()
    if key not in _expected:  # two threads may both compute it: same value
        with Served("", Limits(wall=SECONDS)) as served:
            _expected[key] = served.eval(gold["output"])
    return _expected[key]


def predicted_value(gold: dict, guess: str) -> Any:
    """What the answer claims `f` returns (O), or what `f` returns on the answer's input (I)."""
    limits = Limits(wall=SECONDS, cpu=SECONDS)
    if gold["mode"] == "output":
        with Served("", limits) as served:
            return served.eval(guess)
    call = parse(guess, mode="eval").body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "f"):
        raise ValueError("the answer is not a call f(...)")
    arguments = guess[call.func.end_col_offset :]
    if _one_process(gold):
        with Served(gold["code"], limits) as served:
            return served.eval("f" + arguments)
    args, kwargs = _arguments(gold, arguments, limits)
    with Served(gold["code"], limits) as served:
        return served.call("f", args, kwargs)


def _arguments(gold: dict, arguments: str, limits: Limits) -> tuple[list, dict]:
    """The values of "(...)" evaluated beside the benchmark's globals, but without `f`."""
    helper = f"\ndel f\ndef {_ARGS}(*args, **kwargs):\n    return [list(args), kwargs]\n"
    with Served(gold["code"] + helper, limits) as served:
        args, kwargs = served.eval(_ARGS + arguments)
    return args, kwargs


def _one_process(gold: dict) -> bool:
    """Whether the item's own input cannot cross the wall by value (a lambda, a range): then `f` and
    the answer's arguments run in one sandbox, as upstream does; the output is still compared outside."""
    key = hashlib.sha256((gold["code"] + "\0" + gold["input"]).encode()).hexdigest()
    if key not in _by_value:
        try:
            _arguments(gold, f"({gold['input']})", Limits(wall=SECONDS, cpu=SECONDS))
            _by_value[key] = True
        except CallFailed as e:
            _by_value[key] = e.verdict.details.get("exception") != "CodecError"
    return not _by_value[key]


def check(answer: str, gold: dict, limits: Limits) -> Score:  # noqa: ARG001 - CRUXEval's own limit applies
    guess = extract(answer, gold["mode"])
    if gold["mode"] == "input":
        invalid = "f(" not in guess
    else:
        invalid = f"f({gold['input']})" in guess
    details: dict[str, Any] = {"invalid": True} if invalid else {}
    if not guess:
        return Score(0.0, None, None, {"verdict": "fail", "reason": "no answer found", **details})
    try:
        got = predicted_value(gold, guess)
        verdict = Verdict("pass") if got == expected_output(gold) else Verdict("fail", "wrong value")
    except CallFailed as e:
        verdict = e.verdict
    except (SyntaxError, ValueError) as e:
        verdict = Verdict("fail", f"invalid answer: {e}")
    return Score(
        1.0 if verdict.passed else 0.0,
        guess,
        guess,
        {"verdict": verdict.status, **({"reason": verdict.reason} if verdict.reason else {}), **details},
    )
