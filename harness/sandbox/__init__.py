"""Isolated execution of untrusted code: namespaces (bubblewrap), a cgroup and rlimits per process tree."""

from harness.sandbox.isolation import facts, isolated
from harness.sandbox.jobs import VERDICTS, CallFailed, Served, Verdict, run_program, run_tests
from harness.sandbox.limits import Limits
from harness.sandbox.process import Exit

__all__ = [
    "VERDICTS",
    "CallFailed",
    "Exit",
    "Limits",
    "Served",
    "Verdict",
    "facts",
    "isolated",
    "run_program",
    "run_tests",
]
