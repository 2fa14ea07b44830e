"""How sandboxed processes are isolated on this machine, and the command line that does it.

bubblewrap gives each process tree new user, pid, network, ipc and uts namespaces, a read-only
view of the system's /usr and the Python installation only (no home directories, no /etc, no
harness files), size-capped private tmpfs for /work and /tmp, an empty environment and no
capabilities; the tree dies with its bwrap parent. Without bubblewrap (or with
HARNESS_SANDBOX=none) code runs under rlimits only, and `facts()` says so for the run's records.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from harness.sandbox import cgroup
from harness.sandbox.limits import Limits

DRIVER_DIR = Path(__file__).resolve().parent
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/work"}


@functools.cache
def interpreter() -> tuple[str, tuple[str, ...]]:
    """The Python that runs sandboxed code (this one, outside any virtualenv) and the dirs it needs."""
    python = os.path.realpath(sys.executable)
    roots = {os.path.realpath(sys.base_prefix), str(Path(python).parent.parent)}
    return python, tuple(sorted(r for r in roots if not r.startswith("/usr/")))


def _bwrap_argv(limits: Limits) -> list[str]:
    python, roots = interpreter()
    argv = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    argv += ["--uid", "65534", "--gid", "65534", "--hostname", "sandbox", "--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64"):
        path = Path("/") / top
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    for root in roots:
        argv += ["--ro-bind", root, root]
    disk = str(limits.disk_mb << 20)
    # /proc read-only: run as root, the sandbox's uid maps to host root, and /proc/sys is host-wide
    argv += [
        "--ro-bind",
        str(DRIVER_DIR),
        "/sandbox",
        "--proc",
        "/proc",
        "--remount-ro",
        "/proc",
        "--dev",
        "/dev",
    ]
    argv += ["--size", disk, "--tmpfs", "/tmp", "--size", disk, "--tmpfs", "/work", "--chdir", "/work"]
    argv += ["--clearenv"] + [x for k, v in ENV.items() for x in ("--setenv", k, v)]
    return argv + ["--", python, "-I", "-S", "/sandbox/driver.py"]


@functools.cache
def _bwrap_problem() -> str | None:
    """Why bubblewrap cannot be used here, or None if a trial run works."""
    if os.environ.get("HARNESS_SANDBOX") == "none":
        return "disabled by HARNESS_SANDBOX=none"
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed; apt-get install bubblewrap"
    argv = _bwrap_argv(Limits())[:-1] + ["-c", "pass"]
    try:
        trial = subprocess.run(argv, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap failed to start: {e}"
    if trial.returncode != 0:
        return f"bwrap cannot create namespaces here: {trial.stderr.decode(errors='replace').strip()}"
    return None


def isolated() -> bool:
    return _bwrap_problem() is None


def command(limits: Limits) -> tuple[list[str], dict[str, str] | None]:
    """argv and environment for one sandboxed driver process."""
    if isolated():
        return _bwrap_argv(limits), {}
    return [interpreter()[0], "-I", "-S", str(DRIVER_DIR / "driver.py")], dict(ENV)


def facts() -> dict[str, object]:
    """What protects the harness from the code it runs, for run.json and score details."""
    problem = _bwrap_problem()
    version, why = cgroup.available()
    return {
        "isolation": "bwrap" if problem is None else "none",
        **({"warning": f"NO ISOLATION: {problem}; code runs under rlimits only"} if problem else {}),
        "cgroup": version or f"unavailable ({why}); processes and memory bounded by rlimits",
        "bwrap": _bwrap_version() if problem is None else None,
    }


@functools.cache
def _bwrap_version() -> str:
    out = subprocess.run(["bwrap", "--version"], capture_output=True, text=True).stdout
    return out.strip().removeprefix("bubblewrap ")
