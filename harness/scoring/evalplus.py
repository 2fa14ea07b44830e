"""HumanEval+ and MBPP+ checked the evalplus way: differential testing against the ground truth.

The canonical solution runs once per task (in the sandbox too) to give the expected outputs and
their run times, kept in the harness cache (harness/core/cache.py) under a key of the solution, its
inputs, the sandbox's code and the Python that ran it, so that a later run reads them instead. Each
input of a candidate then has evalplus's time limit, max(MIN_TIME_LIMIT, GT_TIME_LIMIT_FACTOR x
ground-truth time), and its output is compared in the harness with evalplus's rules: exact equality,
float tolerance (`atol`, 1e-6 for float outputs), and evalplus's special oracles for the few tasks
whose outputs are not unique. Base and plus inputs are checked separately; the score is the plus
verdict (base and plus both pass), as on the evalplus leaderboard, and the base verdict is in the
details.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from evalplus.config import DEFAULT_GT_TIME_LIMIT_FACTOR, DEFAULT_MIN_TIME_LIMIT
from evalplus.eval import _special_oracle as oracle

from harness.core.cache import Cache
from harness.core.types import Score
from harness.sandbox import CallFailed, Limits, Served, Verdict
from harness.sandbox.codec import CodecError, decode, encode
from harness.sandbox.jobs import Digest
from harness.scoring.extract import function_code
from harness.scoring.verdicts import verdict_score

TASK_SECONDS = 60.0  # evalplus's per-task cap (EVALPLUS_TIMEOUT_PER_TASK)
MEMORY_MB = 4096  # evalplus's default memory cap (EVALPLUS_MAX_MEMORY_BYTES)
DIGEST_OVER = 1 << 20  # outputs whose encoding is longer are compared by sha256
LOAD_SECONDS = 10.0  # to execute the candidate's module code, before any input

INPUTS = ("base_input", "plus_input")

Truth = dict[str, tuple[list, list[float]]]  # per input set: expected outputs, and the seconds each took

_truth: dict[str, Truth] = {}
_truth_locks: dict[str, threading.Lock] = {}
_guard = threading.Lock()


def ground_truth(gold: dict, cache: Cache | None = None) -> Truth:
    """Per input set: expected outputs and run times of the canonical solution, from this process's
    memory, else from `cache` (an entry that fails its check is recomputed), else run in the sandbox
    and stored there."""
    key = truth_key(gold)
    with _guard:
        lock = _truth_locks.setdefault(key, threading.Lock())
    with lock:
        if key not in _truth:
            truth = _from_entry(cache.get(key), gold) if cache is not None else None
            if truth is None:
                truth = _run_solution(gold)
                if cache is not None:
                    cache.put(key, _entry(truth))
            _truth[key] = truth
    return _truth[key]


def truth_key(gold: dict) -> str:
    """What the expected outputs depend on: the solution and its inputs, how outputs are sent back, the
    sandbox's own code and the Python that runs it."""
    what = [gold["solution"], gold["entry_point"], _not_none(gold), DIGEST_OVER, *(gold[w] for w in INPUTS)]
    return hashlib.sha256(json.dumps([sandbox_version(), *what]).encode()).hexdigest()


@functools.cache
def sandbox_version() -> str:
    """The sha256 of the sandbox's code (harness/sandbox/*.py) and of the Python version running it."""
    digest = hashlib.sha256(sys.version.encode())
    for path in sorted((Path(__file__).parents[1] / "sandbox").glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _run_solution(gold: dict) -> Truth:
    truth = {}
    with Served(gold["solution"], _limits(TASK_SECONDS)) as served:
        for which in INPUTS:
            if which != INPUTS[0]:
                served.reload()  # each input set starts fresh, as in evalplus's own runs
            outputs, seconds = [], []
            for args in decode(gold[which]):
                started = time.perf_counter()
                outputs.append(
                    served.call(gold["entry_point"], args, not_none=_not_none(gold), digest_over=DIGEST_OVER)
                )
                seconds.append(time.perf_counter() - started)
            truth[which] = (outputs, seconds)
    return truth


def _entry(truth: Truth) -> dict:
    """The cache's JSON of a ground truth: each output by value (the sandbox codec) or by its digest."""
    return {
        which: {
            "outputs": [
                {"digest": o.sha256} if isinstance(o, Digest) else {"value": encode(o)} for o in outputs
            ],
            "seconds": seconds,
        }
        for which, (outputs, seconds) in truth.items()
    }


def _from_entry(entry: Any, gold: dict) -> Truth | None:
    """The ground truth an entry holds, or None where it is not one for `gold`'s inputs."""
    try:
        truth = {}
        for which in INPUTS:
            stored, count = entry[which], len(decode(gold[which]))
            outputs = [
                Digest(o["digest"]) if "digest" in o else decode(o["value"]) for o in stored["outputs"]
            ]
            seconds = [float(s) for s in stored["seconds"]]
            if len(outputs) != count or len(seconds) != count:
                return None
            truth[which] = (outputs, seconds)
        return truth
    except (TypeError, KeyError, ValueError, CodecError):  # None, or an entry of another shape
        return None


def _limits(wall: float) -> Limits:
    return Limits(wall=wall, cpu=TASK_SECONDS, memory_mb=MEMORY_MB)


def _not_none(gold: dict) -> bool:
    """Tasks whose outputs (re.Match objects) evalplus only checks for being None or not."""
    return gold["dataset"] == "mbpp" and gold["entry_point"] in oracle.MBPP_OUTPUT_NOT_NONE_TASKS


def _is_floats(x: Any) -> bool:
    if isinstance(x, float):
        return True
    return isinstance(x, list | tuple) and bool(x) and all(isinstance(i, float) for i in x)


def outputs_match(
    dataset: str, entry: str, args: list, out: Any, exp: Any, atol: float
) -> tuple[bool, float]:
    """evalplus's comparison of one output; returns (match, the tolerance for the next inputs)."""
    exact = out == exp
    if dataset == "mbpp":
        if entry == "are_equivalent":
            exact = True
        elif entry == "sum_div":
            exact = exact or out == 0
        elif entry == "surface_Area":
            exact = exact or abs(out - oracle._surface_Area(*args)) <= atol
        elif entry == "digit_distance_nums":
            exact = exact or out == oracle._digit_distance_nums(*args)
        elif entry in oracle.MBPP_OUTPUT_SET_EQ_TASKS:
            exact = set(out) == set(exp)
        elif entry in oracle.MBPP_OUTPUT_NOT_NONE_TASKS:
            exact = out == exp if isinstance(out, bool) else exp == (out is not None)
    if dataset == "humaneval" and entry == "find_zero":
        return abs(oracle._poly(*args, out)) <= atol, atol
    if atol == 0 and _is_floats(exp):
        atol = 1e-6  # kept for the task's later inputs, as evalplus does
    if exact or atol == 0:
        return bool(exact), atol
    if type(out) is not type(exp) or (isinstance(exp, list | tuple) and len(out) != len(exp)):
        return False, atol
    return bool(np.allclose(out, exp, rtol=1e-07, atol=atol)), atol


def run_inputs(served: Served, gold: dict, truth: Truth, which: str) -> Verdict:
    """Call the candidate on one input set, each input under evalplus's time limit."""
    expected, seconds = truth[which]
    limits = [max(DEFAULT_MIN_TIME_LIMIT, DEFAULT_GT_TIME_LIMIT_FACTOR * t) for t in seconds]
    deadline = time.monotonic() + min(TASK_SECONDS, sum(limits)) + 1
    atol = gold["atol"]
    for i, (args, exp, limit) in enumerate(zip(decode(gold[which]), expected, limits, strict=True)):
        budget = min(limit, deadline - time.monotonic())
        if budget <= 0:
            return Verdict("timeout", f"task time limit reached at {which} input {i}")
        try:
            out = served.call(
                gold["entry_point"], args, timeout=budget, not_none=_not_none(gold), digest_over=DIGEST_OVER
            )
        except CallFailed as e:
            return Verdict(e.verdict.status, f"{which} input {i}: {e.verdict.reason}")
        try:
            ok, atol = outputs_match(gold["dataset"], gold["entry_point"], args, out, exp, atol)
        except Exception:  # an output the oracle cannot handle (e.g. not iterable)
            ok = False
        if not ok:
            return Verdict("fail", f"wrong output on {which} input {i}")
    return Verdict("pass")


def run_candidate(code: str, gold: dict, truth: Truth) -> tuple[Verdict, Verdict]:
    """Base and plus verdicts (plus only runs when base passes), from one sandbox."""
    skipped = Verdict("fail", "base tests failed")
    try:
        served = Served(code, _limits(LOAD_SECONDS))
    except CallFailed as e:  # the code did not load
        return e.verdict, skipped
    with served:
        base = run_inputs(served, gold, truth, "base_input")
        if not base.passed:
            return base, skipped
        try:
            served.reload(LOAD_SECONDS)  # a fresh module, as evalplus's process per input set gives
        except CallFailed as e:
            return base, Verdict(e.verdict.status, f"reloading the code: {e.verdict.reason}")
        return base, run_inputs(served, gold, truth, "plus_input")


def check(answer: str, gold: dict, limits: Limits, cache: Cache | None = None) -> Score:  # noqa: ARG001 - limits come from the ground truth
    """`cache`: where the ground truth is kept between runs (None: computed in this process only)."""
    entry = gold["entry_point"]
    code = function_code(answer, entry)
    if code is None:
        return verdict_score(Verdict("fail", f"no code defining {entry} in the answer"), None)
    if gold["dataset"] == "humaneval" and f"def {entry}" not in code:
        code = gold["prompt"] + code  # a completion of the prompt's function body
    base, plus = run_candidate(code, gold, ground_truth(gold, cache))
    return verdict_score(
        plus, code, base=base.status, **({"base_reason": base.reason} if base.reason else {})
    )
