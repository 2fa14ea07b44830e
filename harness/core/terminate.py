"""Ctrl-C and SIGTERM as an orderly exit. The signal unwinds the process from wherever it is, so its
`finally` blocks stop engine processes, scorer workers and shards that would otherwise outlive it;
what was written stays, and the same command resumes from it.

A command says what it keeps (`keeping`); the command line ends an interrupted command with that one
line and exit code 130 (SIGINT) or 143 (SIGTERM), as a shell reports a process the signal ended.
A second signal while the first unwinds ends the process at once, with the same line.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Callable, Iterator

TERMINATED = 128 + signal.SIGTERM  # the exit code, as a shell reports a process a SIGTERM ended
INTERRUPTED = 128 + signal.SIGINT
STOPPING = (signal.SIGINT, signal.SIGTERM)
SIGACTION_BYTES = 256  # room for libc's struct sigaction (152 bytes on Linux x86-64 and arm64)
SIG_IGN = 1


class Interrupted(BaseException):
    """A SIGINT or SIGTERM, raised in the main thread. Not a KeyboardInterrupt: click would turn that
    into "Aborted!" and exit 1, and `except Exception` blocks let neither pass."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.exit_code = 128 + signum


RESUMES = "the same command resumes"
_kept: list[tuple[Callable[[], str | None], str]] = []  # what the running command keeps, then; innermost last
_stopping = False


def _exit(signum: int, frame: object) -> None:
    sys.exit(TERMINATED)


def exit_on_sigterm() -> None:
    """From now on (main thread only), SIGTERM raises SystemExit(143) wherever the process is (a shard)."""
    signal.signal(signal.SIGTERM, _exit)


def _interrupt(signum: int, frame: object) -> None:
    global _stopping
    if _stopping:  # the first one is unwinding: stop now
        line = final_line()
        if line is not None:
            print(line, file=sys.stderr, flush=True)
        os._exit(128 + signum)
    _stopping = True
    raise Interrupted(signum)


def interrupt_on_signals() -> None:
    """From now on (main thread only), SIGINT and SIGTERM raise `Interrupted` wherever the process is."""
    global _stopping
    _stopping = False
    for signum in STOPPING:
        signal.signal(signum, _interrupt)


@contextlib.contextmanager
def keeping(describe: Callable[[], str | None], then: str = RESUMES) -> Iterator[None]:
    """While inside, an interrupt's last line says `describe()`, what the command has written so far,
    and `then`, what running it again does; `describe()` None: this process says nothing (one of several
    ranks, another reports)."""
    entry = (describe, then)
    _kept.append(entry)
    try:
        yield
    except Interrupted:  # the entry stays: the command line says it once everything has unwound
        raise
    except BaseException:
        _kept.remove(entry)
        raise
    _kept.remove(entry)


def final_line() -> str | None:
    """The line that ends an interrupted command (None: another process says it)."""
    kept: str | None = "nothing was written"
    then = RESUMES
    if _kept:
        describe, then = _kept[-1]
        try:
            kept = describe()
        except Exception as e:  # a folder it cannot read now: say so, keep the line
            kept = f"what was written stays ({type(e).__name__} while counting it)"
    return None if kept is None else f"interrupted: {kept}; {then}"


@contextlib.contextmanager
def ignored_by_children() -> Iterator[None]:
    """Processes started inside ignore SIGINT from their first instruction (an ignored signal stays
    ignored across fork and exec, and Python then installs no handler of its own): Ctrl-C reaches every
    process of the terminal's group, and a worker must neither print a KeyboardInterrupt traceback nor
    die under its parent, which stops it itself. SIGTERM keeps its default, a silent end, which
    multiprocessing's exit handler relies on to stop daemonic workers. Works in any thread (sigaction
    through libc: Python's `signal.signal` is for the main thread); meanwhile, for the few milliseconds
    a start takes, this process ignores SIGINT too."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        sigaction = libc.sigaction
    except (OSError, AttributeError):  # no libc to ask: children get the signals as before
        yield
        return
    ignore = ctypes.create_string_buffer(SIGACTION_BYTES)  # sa_handler first, no flags, empty mask
    ctypes.c_void_p.from_buffer(ignore).value = SIG_IGN
    saved = ctypes.create_string_buffer(SIGACTION_BYTES)
    sigaction(int(signal.SIGINT), ignore, saved)
    try:
        yield
    finally:
        sigaction(int(signal.SIGINT), saved, None)
