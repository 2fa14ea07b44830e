"""Finding what a sandbox test left behind (marked processes, the test process's cgroups), and turning the
language subset's check off to test the seal alone."""

from __future__ import annotations

import os
import random
from pathlib import Path

from harness.sandbox import cgroup, subset


def marker() -> str:
    """A unique `sleep` duration: a process whose argv holds it is one this test started."""
    return f"{random.randint(3000, 3999)}.{random.randint(10**8, 10**9 - 1)}"


def survivors(mark: str) -> list[int]:
    """Pids of live processes on this machine whose command line contains `mark` (zombies have none)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if mark.encode() in cmdline:
            found.append(int(entry))
    return found


def own_cgroups() -> set[Path]:
    """Control groups the sandbox made for this process that still exist."""
    version, _ = cgroup.available()
    if version is None:
        return set()
    assert isinstance(cgroup._state, tuple)
    prefix = f"{os.getpid()}-"
    return {d for base in set(cgroup._state[1].values()) for d in base.iterdir() if d.name.startswith(prefix)}


def without_subset(monkeypatch) -> None:
    """Sealed runs skip the language subset's check and its attribute guard (subset.py): a fault
    injected so that a test reaches the second layer, the sealed process, with code the first refuses."""
    monkeypatch.setattr(subset, "check_program", lambda code, mode="exec": None)
    monkeypatch.setattr(subset, "add_guards", lambda code, mode="exec": code)
