"""Isolated execution of untrusted code: namespaces (bubblewrap), a cgroup and rlimits per process tree."""

from harness.sandbox.isolation import Unavailable, allow_unisolated, facts, isolated, require
from harness.sandbox.jobs import (
    ENDINGS,
    VERDICTS,
    CallFailed,
    Sealed,
    Served,
    Verdict,
    run_program,
    run_sealed,
    run_tests,
)
from harness.sandbox.limits import Limits
from harness.sandbox.process import Exit

__all__ = [
    "ENDINGS",
    "VERDICTS",
    "CallFailed",
    "Exit",
    "Limits",
    "Sealed",
    "Served",
    "Unavailable",
    "Verdict",
    "allow_unisolated",
    "facts",
    "isolated",
    "require",
    "run_program",
    "run_sealed",
    "run_tests",
]
