"""The three ways the harness runs untrusted code, each returning values or a Verdict.

- `run_program`: a whole program on a given stdin; the harness compares its stdout.
- `Served`: the code loaded once in a sandbox, then called with arguments; the harness compares
  the returned values (which come back by value: see codec.py).
- `run_sealed`: code in the language subset (subset.py) run once, sealed (driver.py's ``call`` mode):
  only its values come back, read after the process ended with status 0; whether it raised, ran out
  of time or memory is read from the exit status and the harness's own limits (`Sealed`).
- `run_tests`: trusted test code that holds the expected values, in a second sandbox, calling the
  candidate across the wall through the harness; the candidate never sees the test code, and the
  verdict counts only when signed with a secret that only the test process gets (`Proc`'s key).
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from harness.core.threadsafe_ast import literal_eval
from harness.sandbox import exits, subset
from harness.sandbox.codec import CodecError, decode, encode
from harness.sandbox.limits import Limits
from harness.sandbox.process import Ended, Exit, Proc

VERDICTS = ("pass", "fail", "timeout", "memory", "error")


@dataclass(frozen=True)
class Verdict:
    status: str  # one of VERDICTS
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == "pass"


def failed(exit: Exit, fallback: str) -> Verdict:
    """The verdict for a process that did not deliver: its limit, or `fallback` with its stderr."""
    if exit.status in ("timeout", "memory"):
        return Verdict(exit.status, exit.reason)
    return Verdict("error", exit.reason or fallback)


def run_program(code: str, stdin: str, limits: Limits, exit_ends: bool = False) -> Exit:
    """Run `code` as __main__ with `stdin`; the Exit holds its stdout. With `exit_ends`, a SystemExit
    of any code ends the program normally (LiveCodeBench's rule)."""
    proc = Proc({"mode": "program", "code": code, "exit_ends": exit_ends}, limits, stdin=stdin.encode())
    return proc.wait(time.monotonic() + limits.wall)


@dataclass(frozen=True)
class Digest:
    """The sha256 of a large result's repr, standing for it; equal digests mean equal reprs."""

    sha256: str


class CallFailed(Exception):
    """A call that did not return a value: `verdict` says why (raise, timeout, crash)."""

    def __init__(self, verdict: Verdict):
        super().__init__(verdict.reason)
        self.verdict = verdict


ENDINGS = ("ok", "refused", "raised", "no function", "not a value", "timeout", "memory", "error")
_BY_EXIT_STATUS = {exits.RAISED: "raised", exits.NO_FUNCTION: "no function", exits.NOT_A_VALUE: "not a value"}


@dataclass(frozen=True)
class Sealed:
    """How a sealed run ended, decided here: `ending` (one of ENDINGS) from the language subset, the
    exit status and this process's own limits; `values` only when "ok". `reason`: why it was refused,
    the limit or crash, or for "raised" the program's own "Type: message" (shown, never acted on)."""

    ending: str
    values: tuple = ()
    reason: str = ""


def run_sealed(job: dict, limits: Limits) -> Sealed:
    """A one-shot ``call`` job (driver.py): `job["code"]` (and `job["expression"]`, if any) must keep to
    the language subset (subset.py), checked before any process starts; then the code runs sealed, and
    its single line of values is read here once the process has ended with exit status 0. The values
    are decoded with the codec's depth limit from a reply no larger than `limits.output_mb`."""
    expression = job.get("expression")
    refused = subset.check_program(job["code"]) or (
        subset.check_program(expression, "eval") if expression is not None else None
    )
    if refused:
        return Sealed("refused", reason=refused)
    guarded = {"code": subset.add_guards(job["code"])}
    if expression is not None:
        guarded["expression"] = subset.add_guards(expression, "eval")
    proc = Proc(
        {**job, **guarded, "mode": "call", "preload": list(subset.EXTENSIONS)}, limits, fresh_interpreter=True
    )
    ended = proc.wait(time.monotonic() + limits.wall)
    if ended.status in ("timeout", "memory"):
        return Sealed(ended.status, reason=ended.reason)
    if proc.failure is None and ended.returncode in _BY_EXIT_STATUS:
        shown = ended.stderr.strip().splitlines()[-1:] or [""]
        return Sealed(_BY_EXIT_STATUS[ended.returncode], reason=shown[0][:500])
    if ended.status != "ok":
        return Sealed("error", reason=ended.reason or "the sealed process ended without values")
    values = reply_values(proc.received, 1 if expression is not None else len(job.get("cases", [])))
    if values is None:
        return Sealed("error", reason="the sealed process's reply was not one line of values")
    return Sealed("ok", values)


def reply_values(received: bytes, expected: int) -> tuple | None:
    """The `expected` values of a sealed reply, or None: exactly one line, the driver's own `repr` of a
    list of encoded values, to the byte (text written before it, such as ``[42] #``, changes the line
    and is refused), decoded with the codec's depth limit."""
    line, newline, rest = received.partition(b"\n")
    if not newline or rest:
        return None
    try:
        text = line.decode("utf-8")
        encoded = literal_eval(text)
        if type(encoded) is not list or len(encoded) != expected or repr(encoded) != text:
            return None
        return tuple(decode(value) for value in encoded)
    except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):  # CodecError is a ValueError
        return None


class Served:
    """Candidate code loaded in a sandbox and called by name, each call under its own time limit."""

    def __init__(self, code: str, limits: Limits):
        self.limits = limits
        self.proc = Proc({"mode": "serve", "code": code}, limits)
        self.names: list[str] = []
        ready = self._reply(limits.wall)
        if not isinstance(ready.get("ready"), list):
            self.close()
            raise CallFailed(Verdict("error", "the sandbox did not start properly"))
        self.names = [str(n) for n in ready["ready"]]

    def call(
        self,
        name: str,
        args: list,
        kwargs: dict | None = None,
        timeout: float | None = None,
        not_none: bool = False,
        digest_over: int | None = None,
    ) -> Any:
        """The value `name(*args, **kwargs)` returns; CallFailed if it raises, runs too long or crashes.

        `not_none`: a non-bool result comes back as `result is not None`. `digest_over`: a list or
        tuple whose repr is longer comes back as a Digest of it (for outputs too large to send)."""
        request = {"call": name, "args": encode(list(args)), "kwargs": encode(kwargs or {})}
        if not_none:
            request["not_none"] = True
        if digest_over:
            request["digest_over"] = digest_over
        self.proc.send(request)
        return self._value(self._reply(timeout or self.limits.wall))

    def eval(self, expression: str, timeout: float | None = None) -> Any:
        self.proc.send({"eval": expression})
        return self._value(self._reply(timeout or self.limits.wall))

    def reload(self, timeout: float | None = None) -> None:
        """Execute the code again in a fresh module namespace, as a new process would (but cheaper)."""
        self.proc.send({"reload": True})
        names = self._value(self._reply(timeout or self.limits.wall))
        if not isinstance(names, list):
            raise CallFailed(Verdict("error", "malformed reply from the sandbox"))
        self.names = [str(n) for n in names]

    def relay(self, message: dict, timeout: float) -> dict:
        """Forward a request made by test code and return the raw answer (for run_tests)."""
        self.proc.send({k: message[k] for k in ("call", "args", "kwargs") if k in message})
        return self._reply(timeout)

    def _reply(self, timeout: float) -> dict:
        try:
            return self.proc.recv(time.monotonic() + timeout)
        except Ended:
            ended = self.proc.wait(time.monotonic() + 1.0)  # its own exit status, if it ended by itself
            raise CallFailed(failed(ended, "the candidate's process ended")) from None

    @staticmethod
    def _value(reply: dict) -> Any:
        if isinstance(reply.get("digest"), str):
            return Digest(reply["digest"])
        if "ok" in reply:
            try:
                return decode(reply["ok"])
            except (CodecError, RecursionError) as e:
                raise CallFailed(Verdict("error", f"unreadable value: {e}")) from None
        raised = reply.get("raise")
        if not (isinstance(raised, list) and len(raised) == 2 and all(isinstance(x, str) for x in raised)):
            raise CallFailed(Verdict("error", "malformed reply from the sandbox"))
        kind, message = raised
        raise CallFailed(Verdict("fail", f"raised {kind}: {message}"[:500], {"exception": str(kind)}))

    def close(self) -> Exit:
        return self.proc.close()

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_tests(
    code: str, tests: str, limits: Limits, entry_point: str | None = None, prelude: str = ""
) -> Verdict:
    """Run trusted `tests` against `code`, the two in separate sandboxes.

    The tests see the candidate's top-level functions as proxies (arguments and results go by value),
    and `check(candidate)` is called when the tests define `check` and `entry_point` is given.
    The whole exchange is bounded by `limits.wall`. Every message of the test process is signed
    with a fresh secret of this call, so a line forged into its channel ends the check as an error.
    """
    deadline = time.monotonic() + limits.wall
    try:
        candidate = Served(code, limits)
    except CallFailed as e:
        return e.verdict
    key = secrets.token_bytes(32)
    checker = Proc(
        {
            "mode": "check",
            "key": key.hex(),
            "tests": tests,
            "prelude": prelude,
            "entry_point": entry_point,
            "names": candidate.names,
        },
        limits,
        key=key,
    )
    try:
        while True:
            try:
                message = checker.recv(deadline)
            except Ended:
                return failed(checker.close(), "the test process ended without a verdict")
            if "call" in message:
                try:
                    checker.send(candidate.relay(message, max(0.0, deadline - time.monotonic())))
                except CallFailed as e:
                    return e.verdict
            elif message.get("done") is True:
                return Verdict("pass")
            else:
                return Verdict("fail", str(message.get("failed", "malformed verdict"))[:500])
    finally:
        checker.close()
        candidate.close()
