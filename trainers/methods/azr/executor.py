"""AZR's code executor (AZR paper, §3.3.3-3.3.4, Fig. 8): validating proposals and checking answers.

Model-written code runs only in the harness sandbox, one sealed process per run
(`harness.sandbox.run_sealed`), and only when it keeps to the language subset
(`harness.sandbox.subset`: no name or attribute starting with ``_``, no string-driven attribute
lookup, no frames, imports from a list of pure modules), checked before any process starts. The
program cannot reach the channel its values travel on (the driver keeps the only means to write it,
and the harness reads it after the process ended with status 0); whether it raised, ran out of time
or memory is read from the exit status and the harness's own limits, and values cross the wall by
value (codec.py): the trainer compares plain builtin values with `==` and never evaluates model text
itself beyond `ast.parse` and `ast.literal_eval`. Validation and the answers' checks run a program
the same way (`run_f`: same process set-up, namespace and calls).

Validation of a proposal (program p defining `f`, input = an argument list such as ``"[1, 2], 3"``):

- safety: no forbidden module or name (`FORBIDDEN`, checked on the AST: imports, dotted uses such as
  `sys.exit`, `__import__`; a word match when the code does not parse), the program and any input
  that is not a literal inside the language subset (which refuses every forbidden name too), and at
  run time inside the sandbox: an import of a forbidden module fails, and an audit hook refuses
  files, processes, sockets, frames and code objects;
- integrity: p parses and `f(input)` returns within the time limit without raising;
- determinism: `runs` (j = 2) separate sandbox processes, each with its own random hash seed and
  address space, each calling `f` twice (state kept between calls shows too); every input and output
  must be equal by value;
- the input and output are plain values (None, bool, int, float, complex, str, bytes and containers
  of them: what crosses the sandbox wall), and the output's repr (the gold shown to solvers) is at
  most `max_output_chars` long.

None policy: a program that returns None is invalid ("returned None"), as the paper requires
"something is returned" (the official code accepts it: `accept_none=True`).

Invalid reasons: "forbidden import NAME", "syntax error", "malformed input" (not one argument list),
"outside the subset: WHY", "no function f", "raised TYPE: message" (the program's own words, shown
only), "timeout", "memory", "error: ..." (a crash or a flood of output), "input not a plain value",
"output not a plain value", "non-deterministic", "output not equal to itself (NaN)", "returned None",
"output too long".
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

from harness import sandbox
from harness.core.threadsafe_ast import parse
from harness.sandbox import Limits, Verdict, run_sealed
from harness.sandbox.codec import encode

# Fig. 8's list, as the paper prints it
FIG8 = (
    "logging",
    "random",
    "multiprocessing",
    "pebble",
    "subprocess",
    "threading",
    "datetime",
    "time",
    "hashlib",
    "calendar",
    "bcrypt",
    "os.sys",
    "os.path",
    "sys.exit",
    "os.environ",
)
# our superset of Fig. 8's list: the official config's hmac, the system, imports by name, builtins
# tampering, and other sources of non-determinism or of reach into the process
FORBIDDEN = FIG8 + (
    "hmac",
    "os",
    "sys",
    "shutil",
    "socket",
    "importlib",
    "ctypes",
    "builtins",
    "__builtins__",
    "__import__",
    "signal",
    "resource",
    "secrets",
    "uuid",
    "concurrent",
    "asyncio",
)
LIMITS = Limits(wall=10.0, cpu=10.0, memory_mb=1024, processes=32, output_mb=1)
RUNS = 2  # j, separate processes
CALLS = 2  # calls of f in each process
MAX_OUTPUT_CHARS = 10_000
CACHE_SIZE = 200_000
KINDS = ("deduction", "abduction", "induction")
OUTSIDE = "outside the subset"  # the reason's start for code outside the language subset
_ARGS = "(lambda *a, **k: [list(a), k])"  # an argument list's values, with no name a program could see
_UNPARSABLE = (SyntaxError, ValueError, RecursionError, MemoryError)


@dataclass(frozen=True)
class Run:
    """`f` called on one input. Valid when `reason` is empty: then `arguments` are the input's values
    (positional, keyword), `value` what f returned and `output` its repr (the gold)."""

    input: str
    reason: str = ""
    arguments: tuple[list, dict] | None = None
    value: Any = None
    output: str = ""

    @property
    def valid(self) -> bool:
        return not self.reason


@dataclass(frozen=True)
class Inputs:
    """An induction proposal's inputs validated on one program: valid only if every run is."""

    runs: tuple[Run, ...]
    reason: str = ""  # the first invalid input's ("input 3: timeout"), or "no inputs"

    @property
    def valid(self) -> bool:
        return not self.reason


@dataclass(frozen=True)
class Check:
    """A solver's answer. deduction: `answer` is an output, equal to `gold` by value; abduction:
    `answer` is an argument list on which p = `code` returns `gold`; induction: `answer` is a program
    defining f that must return each hidden case's output (the second half of `cases`)."""

    kind: str
    answer: str
    code: str = ""
    gold: Any = None
    cases: tuple[Run, ...] = ()

    def key(self) -> str:
        cases = [[encode(c.arguments), encode(c.value)] for c in self.cases]
        return _key(self.kind, self.answer, self.code, encode(self.gold), cases)


class Invalid(Exception):
    """A proposal that is not a valid task; the message is the reason."""


# --- static checks (no code runs) ---------------------------------------------------------------


def forbidden(code: str, names: Iterable[str] = FORBIDDEN) -> str | None:
    """The forbidden name `code` uses (the most specific: "os.path" for `import os.path`), or None.

    On the AST: imported modules and names (`from os import environ` is "os.environ"), attribute
    chains on a name (`sys.exit(0)`), bare names (`__import__`) and dunder strings; code that does
    not parse is matched word by word, as the official code does."""
    banned = frozenset(names)
    try:
        tree = parse(code)
    except _UNPARSABLE:
        words = [n for n in banned if re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", code)]
        return max(words, key=lambda n: (len(n), n), default=None)
    for node in ast.walk(tree):
        for dotted in _names(node):
            parts = dotted.split(".")
            for k in range(len(parts), 0, -1):
                if ".".join(parts[:k]) in banned:
                    return ".".join(parts[:k])
    return None


def _names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        return [f"{node.module}.{alias.name}" if node.module else alias.name for alias in node.names]
    if isinstance(node, ast.Attribute):
        chain = [node.attr]
        while isinstance(node.value, ast.Attribute):
            node = node.value
            chain.append(node.attr)
        return [".".join([node.value.id, *reversed(chain)])] if isinstance(node.value, ast.Name) else []
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("__"):
        return [node.value]
    return []


def parses(code: str) -> bool:
    try:
        parse(code)
    except _UNPARSABLE:
        return False
    return True


def _call_text(name: str, arguments: str) -> str:
    return f"{name}({arguments}\n)"  # the newline ends a trailing comment


def arguments(text: str) -> tuple[list, dict] | None:
    """The values of the argument list `text` when all are literals, else None (host-side, by
    `ast.literal_eval`); ValueError if `text` is not exactly one argument list."""
    try:
        call = parse(_call_text("f", text), "eval").body
    except _UNPARSABLE:
        raise ValueError("not an argument list") from None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "f"):
        raise ValueError("not an argument list")
    try:
        args = [ast.literal_eval(a) for a in call.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
    except (*_UNPARSABLE, TypeError):
        return None
    return (args, kwargs) if len(kwargs) == len(call.keywords) else None


def refusal(code: str, text: str, names: Iterable[str] = FORBIDDEN) -> str:
    """Why a proposal is refused before it runs (forbidden names, syntax), or ""."""
    hit = forbidden(code, names)
    if hit:
        return f"forbidden import {hit}"
    if not parses(code):
        return "syntax error"
    try:
        arguments(text)
    except ValueError:
        return "malformed input"
    hit = forbidden(_call_text("f", text), names)
    return f"forbidden import {hit}" if hit else ""


def split_cases(cases: Sequence[Run]) -> tuple[Sequence[Run], Sequence[Run]]:
    """(shown, hidden): the first N//2 cases go in the solver's prompt, the rest score its program."""
    return cases[: len(cases) // 2], cases[len(cases) // 2 :]


# --- runs in the sandbox ----------------------------------------------------------------------------


def _sealed(code: str, limits: Limits, names: Iterable[str], what: str, **job: Any) -> list:
    """The values of a sealed one-shot run (`harness.sandbox.run_sealed`): one per case, or the
    expression's; Invalid for code outside the language subset, a raise (the driver stops at the first:
    every caller fails the run on it), "no function f", a value that is not plain (`what`: input,
    output or answer), a limit or a broken reply. Every ending is the harness's reading of the exit
    status and its own limits, never the program's text."""
    sealed = run_sealed({"code": code, "forbidden": sorted(names), **job}, limits)
    if sealed.ending == "ok":
        return list(sealed.values)
    if sealed.ending == "refused":
        raise Invalid(f"{OUTSIDE}: {sealed.reason}")
    if sealed.ending == "raised":
        raise Invalid(f"raised {sealed.reason}"[:500])
    if sealed.ending == "no function":
        raise Invalid("no function f")
    if sealed.ending == "not a value":
        raise Invalid(f"{what} not a plain value")
    if sealed.ending in ("timeout", "memory"):
        raise Invalid(sealed.ending)
    raise Invalid(f"error: {sealed.reason}")


def argument_values(code: str, text: str, limits: Limits, names: Iterable[str] = FORBIDDEN) -> tuple:
    """The values of the argument list `text`: literals read here, any other expression evaluated in a
    sealed sandbox where `code` ran without its `f` (so an input cannot patch the program it feeds)."""
    values = arguments(text)
    if values is not None:
        return values
    [value] = _sealed(code, limits, names, "input", expression=_call_text(_ARGS, text))
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], list)):
        raise Invalid("malformed input")
    return value[0], value[1]


def run_f(
    code: str, values: tuple, limits: Limits, names: Iterable[str] = FORBIDDEN, calls: int = CALLS
) -> list:
    """What `f` returns when called `calls` times on `values` in one new sealed sandbox; Invalid if it
    does not return. Validation and the answers' checks call this same function, so a program sees the
    same process, namespace and calls whichever is running it."""
    case = encode([list(values[0]), dict(values[1])])
    return _sealed(code, limits, names, "output", cases=[case] * calls)


def validate(
    code: str,
    text: str,
    limits: Limits = LIMITS,
    *,
    runs: int = RUNS,
    accept_none: bool = False,
    max_output_chars: int = MAX_OUTPUT_CHARS,
    names: Iterable[str] = FORBIDDEN,
) -> Run:
    """Program `code` on input `text` as a task: its output, or why it is not a valid task."""
    refused = refusal(code, text, names)
    if refused:
        return Run(text, refused)
    try:
        results = []
        for _ in range(runs):
            args, kwargs = argument_values(code, text, limits, names)
            results += [(args, kwargs, value) for value in run_f(code, (args, kwargs), limits, names)]
    except Invalid as e:
        return Run(text, str(e))
    first = results[0]
    if any(result != first for result in results[1:]):
        if all(repr(result) == repr(first) for result in results):
            return Run(text, "output not equal to itself (NaN)")
        return Run(text, "non-deterministic")
    args, kwargs, value = first
    if value is None and not accept_none:
        return Run(text, "returned None")
    output = repr(value)
    if len(output) > max_output_chars:
        return Run(text, "output too long")
    return Run(text, "", (args, kwargs), value, output)


def _compare(got: Any, gold: Any) -> Verdict:
    return Verdict("pass") if got == gold else Verdict("fail", "wrong value")


def _verdict(error: Invalid) -> Verdict:
    reason = str(error)
    return Verdict(reason, reason) if reason in ("timeout", "memory") else Verdict("fail", reason)


def check_deduction(
    answer: str, gold: Any, limits: Limits = LIMITS, names: Iterable[str] = FORBIDDEN
) -> Verdict:
    """The predicted output equals `gold` by value: a literal is read here, any other expression is
    evaluated in a sealed sandbox where no program is defined (so `f(...)` is no answer)."""
    answer = answer.strip()
    try:
        tree = parse(answer, "eval")
    except _UNPARSABLE:
        return Verdict("fail", "malformed answer")
    try:
        return _compare(ast.literal_eval(tree), gold)
    except (*_UNPARSABLE, TypeError):
        pass
    try:
        [value] = _sealed("", limits, names, "answer", expression=answer)
        return _compare(value, gold)
    except Invalid as e:
        return _verdict(e)


def check_abduction(
    code: str, answer: str, gold: Any, limits: Limits = LIMITS, names: Iterable[str] = FORBIDDEN
) -> Verdict:
    """p = `code` returns `gold` on the argument list `answer`, on every call of validation's
    (`run_f`). Arguments that are not literals are evaluated first, apart (`argument_values`)."""
    try:
        arguments(answer)
    except ValueError:
        return Verdict("fail", "malformed input")
    try:
        values = argument_values(code, answer, limits, names)
        outputs = run_f(code, values, limits, names)
    except Invalid as e:
        return _verdict(e)
    return Verdict("pass") if all(o == gold for o in outputs) else Verdict("fail", "wrong value")


def check_induction(
    code: str, cases: Sequence[Run], limits: Limits = LIMITS, names: Iterable[str] = FORBIDDEN
) -> Verdict:
    """The program `code` returns every hidden case's output (only the hidden half is scored), each
    case in a fresh module namespace of one sealed sandbox; passes only if all do."""
    if not parses(code):
        return Verdict("fail", "syntax error")
    _, hidden = split_cases(cases)
    calls = [encode([list(c.arguments[0]), dict(c.arguments[1])]) for c in hidden]
    try:
        outputs = _sealed(code, limits, names, "output", cases=calls, fresh=True)
    except Invalid as e:
        return _verdict(e)
    for n, (output, case) in enumerate(zip(outputs, hidden, strict=True)):
        if output != case.value:
            return Verdict("fail", f"wrong value on hidden case {n + 1}")
    return Verdict("pass")


def check(item: Check, limits: Limits = LIMITS, names: Iterable[str] = FORBIDDEN) -> Verdict:
    if item.kind == "deduction":
        return check_deduction(item.answer, item.gold, limits, names)
    if item.kind == "abduction":
        return check_abduction(item.code, item.answer, item.gold, limits, names)
    if item.kind == "induction":
        return check_induction(item.answer, item.cases, limits, names)
    raise ValueError(f"unknown kind {item.kind!r}: one of {KINDS}")


# --- batches and the cache ------------------------------------------------------------------------


def _key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


class Executor:
    """Validates proposals and checks answers in sandboxes, `workers` at a time. With `cache`, a
    proposal already validated or an answer already checked on the same task is not run again
    (also within a batch); `stats()` counts the runs made and the results taken from the cache."""

    def __init__(
        self,
        limits: Limits = LIMITS,
        cache: bool = True,
        workers: int | None = None,
        *,
        runs: int = RUNS,
        accept_none: bool = False,
        max_output_chars: int = MAX_OUTPUT_CHARS,
        names: Sequence[str] = FORBIDDEN,
        cache_size: int = CACHE_SIZE,
    ):
        sandbox.require()  # no model code runs unisolated without the user's --unsafe-no-sandbox
        self.limits = limits
        self.workers = workers or os.cpu_count() or 1
        self.options = {"runs": runs, "accept_none": accept_none, "max_output_chars": max_output_chars}
        self.names = tuple(names)
        self.cache: dict[str, Any] | None = {} if cache else None
        self.cache_size = cache_size
        self.calls = self.hits = 0
        self._lock = threading.Lock()

    def validate(self, code: str, text: str) -> Run:
        return self.validate_many([(code, text)])[0]

    def validate_many(self, proposals: Sequence[tuple[str, str]]) -> list[Run]:
        """Each (program, input) proposal's Run, in order."""
        jobs = [
            partial(validate, code, text, self.limits, names=self.names, **self.options)
            for code, text in proposals
        ]
        return self._run([_key("validate", code, text, self.names) for code, text in proposals], jobs)

    def validate_inputs(self, code: str, inputs: Sequence[str]) -> Inputs:
        """An induction proposal's inputs on the (validated) program `code`."""
        runs = tuple(self.validate_many([(code, text) for text in inputs]))
        bad = [f"input {n + 1}: {run.reason}" for n, run in enumerate(runs) if not run.valid]
        return Inputs(runs, bad[0] if bad else "" if runs else "no inputs")

    def check(self, item: Check) -> Verdict:
        return self.check_many([item])[0]

    def check_many(self, items: Sequence[Check]) -> list[Verdict]:
        """Each answer's Verdict (pass, fail, timeout, memory or error), in order."""
        return self._run(
            [item.key() for item in items], [partial(check, item, self.limits, self.names) for item in items]
        )

    def stats(self) -> dict[str, int]:
        return {"calls": self.calls, "cache_hits": self.hits}

    def _run(self, keys: list[str], jobs: list[Callable[[], Any]]) -> list[Any]:
        results: list[Any] = [None] * len(jobs)
        pending: dict[str | int, list[int]] = {}  # what runs -> where its result goes
        with self._lock:
            for i, key in enumerate(keys):
                if self.cache is None:
                    pending[i] = [i]
                elif key in self.cache:
                    results[i] = self.cache[key]
                    self.hits += 1
                else:
                    self.hits += key in pending
                    pending.setdefault(key, []).append(i)
            self.calls += len(pending)
        if not pending:
            return results
        with ThreadPoolExecutor(min(self.workers, len(pending))) as pool:
            done = pool.map(lambda where: jobs[where[0]](), pending.values())
            for (key, where), result in zip(pending.items(), done, strict=True):
                for i in where:
                    results[i] = result
                if self.cache is not None:
                    self._store(str(key), result)
        return results

    def _store(self, key: str, result: Any) -> None:
        with self._lock:
            self.cache[key] = result
            while len(self.cache) > self.cache_size:
                del self.cache[next(iter(self.cache))]  # the oldest
