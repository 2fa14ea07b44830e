"""Resource limits of one sandboxed process tree."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Limits:
    """`wall` bounds each process (or, for a served process, each request to it)."""

    wall: float = 10.0  # seconds
    cpu: float = 10.0  # seconds of CPU time (rlimit)
    memory_mb: int = 1024  # address space per process (rlimit) and memory of the whole tree (cgroup)
    processes: int = 32  # processes and threads of the tree (cgroup) or of the sandbox user (rlimit)
    file_mb: int = 16  # largest file written
    disk_mb: int = 64  # each of the private /work and /tmp
    output_mb: int = 16  # stdout kept; more kills the process
    stderr_kb: int = 64  # stderr kept (the rest is counted and dropped)

    def for_driver(self) -> dict:
        return asdict(self)
