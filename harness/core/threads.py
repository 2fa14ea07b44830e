"""Threads that fit the machine: how many threads torch computes with, and how they wait.

Torch's default is one thread per core that busy-waits (spins) between parallel regions. On a machine
that other work uses, or beside the harness's own scorer workers, spinning threads fight for the
cores: one batch of 8 prompts took 405 s that way and 55 s with one thread. The harness gives each of
its processes (one per rank under torchrun) an equal share of the CPUs it may use
(`os.sched_getaffinity`) less one, left to its scorer workers and the machine's other work (at least
one thread), and makes OpenMP threads sleep while they wait (OMP_WAIT_POLICY=PASSIVE, KMP_BLOCKTIME=0
for Intel's runtime). Measured: tests/perf/bench_threads.py.

Which count wins: `--threads N`, then HARNESS_THREADS=N, then OMP_NUM_THREADS, then the share.
HARNESS_THREADS=torch leaves torch's own defaults alone (to compare them: tests/perf/bench_threads.py).
A wait policy counts only if it is in the environment before torch starts its OpenMP runtime, so
`configure` runs when the command line starts, before anything imports torch; worker processes and
ranks inherit the environment. run.json records the choice (`recorded`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from harness import HarnessError

VARIABLE = "HARNESS_THREADS"
TORCH_DEFAULTS = "torch"  # HARNESS_THREADS=torch: the harness sets nothing
WAIT = {"OMP_WAIT_POLICY": "PASSIVE", "KMP_BLOCKTIME": "0"}


@dataclass(frozen=True)
class ThreadPolicy:
    """How many threads each process of the harness computes with, and why."""

    threads: int | None  # None: torch's own default
    source: str  # --threads, HARNESS_THREADS, OMP_NUM_THREADS, share of the CPUs, or torch
    wait_policy: str | None  # OMP_WAIT_POLICY as the process runs with it
    cpus: int  # the CPUs this process may use
    processes: int  # the harness's processes sharing them (ranks on this machine)


def usable_cpus() -> int:
    return len(os.sched_getaffinity(0))


def local_processes(environ: Mapping[str, str]) -> int:
    """The processes of this run on this machine: torchrun's and accelerate's LOCAL_WORLD_SIZE, else 1."""
    try:
        return max(1, int(environ.get("LOCAL_WORLD_SIZE", "1")))
    except ValueError:
        return 1


def _count(text: str, where: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise HarnessError(f"{where}={text!r}: a number of threads (1 or more){_TORCH_HINT[where]}")
    return value


_TORCH_HINT = {
    "--threads": "",
    VARIABLE: f", or {TORCH_DEFAULTS} for torch's own defaults",
    "OMP_NUM_THREADS": "",
}


def choose(environ: Mapping[str, str], requested: int | None, cpus: int) -> ThreadPolicy:
    """The policy for a process with `cpus` CPUs and the environment `environ` (as the user gave it)."""
    processes = local_processes(environ)
    wait = environ.get("OMP_WAIT_POLICY", WAIT["OMP_WAIT_POLICY"])
    if requested is not None:
        return ThreadPolicy(_count(str(requested), "--threads"), "--threads", wait, cpus, processes)
    own = environ.get(VARIABLE, "").strip()
    if own.lower() == TORCH_DEFAULTS:
        return ThreadPolicy(None, TORCH_DEFAULTS, environ.get("OMP_WAIT_POLICY"), cpus, processes)
    if own:
        return ThreadPolicy(_count(own, VARIABLE), VARIABLE, wait, cpus, processes)
    omp = environ.get("OMP_NUM_THREADS", "").strip()
    if omp:
        first = omp.split(",")[0]  # a nested list ("4,2"): the outer level is torch's
        return ThreadPolicy(_count(first, "OMP_NUM_THREADS"), "OMP_NUM_THREADS", wait, cpus, processes)
    # one CPU of each share is left to the scorer workers and the machine's other work: on 2 CPUs with
    # two busy processes beside it, one thread beat two sleeping ones by 20 % (docs/install.md)
    share = cpus // processes
    return ThreadPolicy(max(1, share - 1), "share of the CPUs less one", wait, cpus, processes)


_given: dict[str, str] | None = None  # the environment as the user gave it, before `configure` changed it
_chosen: ThreadPolicy | None = None


def configure(requested: int | None = None) -> ThreadPolicy:
    """Choose the policy and put it in the environment (and in torch, if it is already imported)."""
    global _given, _chosen
    environ = os.environ
    if _given is None:
        _given = dict(environ)
    policy = choose(_given, requested, usable_cpus())
    if policy.threads is not None:
        for name, value in WAIT.items():
            if name not in _given:
                environ[name] = value
        if policy.source != "OMP_NUM_THREADS":  # the user's own value stays as given
            environ["OMP_NUM_THREADS"] = str(policy.threads)
        if "MKL_NUM_THREADS" not in _given:
            environ["MKL_NUM_THREADS"] = str(policy.threads)
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(policy.threads)
    _chosen = policy
    return policy


def recorded() -> dict:
    """What run.json says of the threads: the policy `configure` chose, or (a library caller that did
    not configure) what torch uses."""
    if _chosen is not None:
        return asdict(_chosen)
    threads = sys.modules["torch"].get_num_threads() if "torch" in sys.modules else None
    wait = os.environ.get("OMP_WAIT_POLICY")
    return asdict(ThreadPolicy(threads, "not configured", wait, usable_cpus(), local_processes(os.environ)))
