"""A control group per sandboxed process tree: a cap on processes and on total memory, and OOM facts.

cgroup v1 (pids and memory hierarchies) or v2 (pids and memory delegated under a `harness-sandbox`
group) when the harness may create groups, typically as root; otherwise `available()` says why not
and the sandbox relies on rlimits for the same bounds. Groups are named `<harness pid>-<n>`, so that
the next harness removes those a killed one left (`remove_stale`).
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
_counter = itertools.count()


def _own_path(controller: str) -> str:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path.lstrip("/")
    raise OSError(f"no {controller} cgroup")


def _v1_bases() -> dict[str, Path]:
    return {c: ROOT / c / _own_path(c) / "harness-sandbox" for c in ("pids", "memory")}


def _v2_base() -> Path:
    base = ROOT / "harness-sandbox" if (ROOT / "cgroup.controllers").exists() else None
    if base is None:
        raise OSError("no cgroup v2 hierarchy at /sys/fs/cgroup")
    base.mkdir(exist_ok=True)
    for parent in (ROOT, base):
        (parent / "cgroup.subtree_control").write_text("+pids +memory")
    return base


def _setup() -> tuple[str, dict[str, Path]]:
    errors = []
    if (ROOT / "pids").is_dir() and (ROOT / "memory").is_dir():
        try:
            bases = _v1_bases()
            for base in bases.values():
                base.mkdir(exist_ok=True)
            return "v1", bases
        except OSError as e:
            errors.append(f"v1: {e}")
    try:
        return "v2", {"pids": _v2_base(), "memory": _v2_base()}
    except OSError as e:
        errors.append(f"v2: {e}")
    raise OSError("; ".join(errors))


_state: tuple[str, dict[str, Path]] | str | None = None


def available() -> tuple[str | None, str]:
    """(version, "") when groups can be made, else (None, why not)."""
    global _state
    if _state is None:
        try:
            _state = _setup()
        except OSError as e:
            _state = str(e)
    return (_state[0], "") if isinstance(_state, tuple) else (None, _state)


class Cgroup:
    """One group: created with limits, joined by the child before exec, killed and removed after."""

    def __init__(self, max_processes: int, max_memory_bytes: int):
        version, why = available()
        if version is None:
            raise OSError(why)
        assert isinstance(_state, tuple)
        self.version = version
        name = f"{os.getpid()}-{next(_counter)}"
        self.dirs = {c: base / name for c, base in _state[1].items()}
        for d in set(self.dirs.values()):
            d.mkdir()
        pids, memory = self.dirs["pids"], self.dirs["memory"]
        (pids / "pids.max").write_text(str(max_processes))
        if version == "v1":
            (memory / "memory.limit_in_bytes").write_text(str(max_memory_bytes))
            try:
                (memory / "memory.memsw.limit_in_bytes").write_text(str(max_memory_bytes))
            except OSError:
                pass  # no swap accounting
        else:
            (memory / "memory.max").write_text(str(max_memory_bytes))
            (memory / "memory.swap.max").write_text("0")

    def add(self, pid: int) -> None:
        """Move the process `pid` (of this machine's pid namespace) into the group."""
        for d in set(self.dirs.values()):
            (d / "cgroup.procs").write_text(str(pid))

    def out_of_memory(self) -> bool:
        memory = self.dirs["memory"]
        if self.version == "v1":
            control = (memory / "memory.oom_control").read_text()
            kills = [int(line.split()[1]) for line in control.splitlines() if line.startswith("oom_kill ")]
            return bool(kills and kills[0]) or int((memory / "memory.failcnt").read_text()) > 0
        events = dict(line.split() for line in (memory / "memory.events").read_text().splitlines())
        return int(events.get("oom_kill", 0)) > 0 or int(events.get("max", 0)) > 0

    def kill(self) -> None:
        """SIGKILL every process left in the group (daemons that escaped the process group too)."""
        _kill_all(self.dirs["pids"])

    def remove(self) -> None:
        self.kill()
        for d in set(self.dirs.values()):
            _remove(d)


def _kill_all(group: Path) -> None:
    procs = group / "cgroup.procs"
    for attempt in range(100):
        pids = [int(p) for p in procs.read_text().split()]
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(min(0.01, 0.0005 * 2**attempt))


def _remove(group: Path) -> None:
    for _ in range(50):
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.02)


def remove_stale(dead: Callable[[int], bool]) -> None:
    """Kill what is left in the groups of harness processes that are `dead`, and remove the groups."""
    if available()[0] is None:
        return
    assert isinstance(_state, tuple)
    for base in set(_state[1].values()):
        for group in base.iterdir():
            owner = group.name.split("-")[0]
            if group.is_dir() and owner.isdigit() and dead(int(owner)):
                try:
                    _kill_all(group)
                    _remove(group)
                except OSError:
                    pass  # another harness removed it first
