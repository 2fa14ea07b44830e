"""SIGTERM as an orderly exit: a scheduler's preemption, `timeout` or `kill` unwinds the process like
Ctrl-C, so its `finally` blocks stop engine processes and shards that would otherwise outlive it.
What was written stays, and the same command resumes from it."""

from __future__ import annotations

import signal
import sys

TERMINATED = 128 + signal.SIGTERM  # the exit code, as a shell reports a process a SIGTERM ended


def _exit(signum: int, frame: object) -> None:
    sys.exit(TERMINATED)


def exit_on_sigterm() -> None:
    """From now on (main thread only), SIGTERM raises SystemExit(143) wherever the process is."""
    signal.signal(signal.SIGTERM, _exit)
