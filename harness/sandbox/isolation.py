"""How sandboxed processes are isolated on this machine, and the command line that does it.

bubblewrap gives each process tree new pid, network, ipc, uts, cgroup, mount and user namespaces, a
read-only view of the system's /usr and the Python installation only (no home directories, no
/etc, no harness files), size-capped private tmpfs for /work and /tmp, an empty environment and no
capabilities; the tree dies with the harness. The code runs as an unprivileged user: a harness
running as root sets up the mounts as root, drops to uid/gid 65534 (nobody, no groups, no
capabilities) with setpriv, and a second bubblewrap puts the code in a user namespace of its own
that maps nobody to host nobody and allows no further user namespaces, and in a pid namespace of its
own (so it cannot signal the bubblewraps, which run as nobody too); a harness running as another
user runs one bubblewrap that maps nobody to that user. Either way the first process inside is the
init of that pid namespace (--as-pid-1): the zygote of a warm sandbox (warm.py, zygote.py).

Without working bubblewrap, code does not run (`require` raises) unless the user opted in
(`--unsafe-no-sandbox`, i.e. HARNESS_UNSAFE_NO_SANDBOX=1); then it runs under rlimits only, as the
harness's own user, and `facts()` says so for the run's records.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import HarnessError
from harness.sandbox import cgroup
from harness.sandbox.limits import Limits

DRIVER_DIR = Path(__file__).resolve().parent
# one thread per numerical library, as LiveCodeBench's runner sets (and within the process limit)
THREADS = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/work", **THREADS}
# third-party packages sandboxed code may import (read-only), as in LiveCodeBench's grading environment
PACKAGES = ("numpy",)
PACKAGES_MOUNT = "/packages"
NOBODY = "65534"
UNSAFE = "HARNESS_UNSAFE_NO_SANDBOX"
SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"


class Unavailable(HarnessError):
    """Code would run without isolation and the user did not opt in."""


class Missing(Exception):
    """A program the sandbox needs is not installed."""


def allow_unisolated() -> None:
    """The user's explicit opt-in (`--unsafe-no-sandbox`), for this process and its children."""
    os.environ[UNSAFE] = "1"


def unsafe_opt_in() -> bool:
    return os.environ.get(UNSAFE) == "1"


@functools.cache
def interpreter() -> tuple[str, tuple[str, ...]]:
    """The Python that runs sandboxed code (this one, outside any virtualenv) and the dirs it needs."""
    python = os.path.realpath(sys.executable)
    roots = {os.path.realpath(sys.base_prefix), str(Path(python).parent.parent)}
    return python, tuple(sorted(r for r in roots if not r.startswith("/usr/")))


@functools.cache
def package_dirs() -> tuple[Path, ...]:
    """The folders of `PACKAGES` as installed with the harness, with their bundled libraries
    (numpy.libs); a package that is not installed is left out."""
    found: list[Path] = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        folder = Path(spec.submodule_search_locations[0]).resolve()
        found += [folder] + [p for p in (folder.parent / f"{name}.libs",) if p.is_dir()]
    return tuple(found)


def _package_mounts() -> list[str]:
    """`PACKAGES` read-only under /packages, which nobody may list (bwrap's own dirs are 0700)."""
    mounts = [x for d in package_dirs() for x in ("--ro-bind", str(d), f"{PACKAGES_MOUNT}/{d.name}")]
    return ["--perms", "0755", "--dir", PACKAGES_MOUNT, *mounts] if mounts else []


def packages_path() -> str:
    """Where sandboxed code finds `PACKAGES`: the read-only mount, or without isolation a folder of
    links to them (so the rest of the harness's environment stays out of reach of imports)."""
    return PACKAGES_MOUNT if isolated() else _linked_packages()


@functools.cache
def _linked_packages() -> str:
    folder = Path(tempfile.mkdtemp(prefix=f"harness-sandbox-{os.getpid()}-packages-"))
    for target in package_dirs():
        (folder / target.name).symlink_to(target)
    return str(folder)


def _system_dirs() -> list[str]:
    argv = ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64"):
        path = Path("/") / top
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    return argv


def _scratch(limits: Limits) -> list[str]:
    """The private, size-capped /work and /tmp."""
    disk = str(limits.disk_mb << 20)
    return ["--size", disk, "--tmpfs", "/tmp", "--size", disk, "--tmpfs", "/work"]


def _command(script: str) -> list[str]:
    """`script` (of this folder) started in /work."""
    return ["--chdir", "/work", "--", interpreter()[0], "-I", "-S", f"/sandbox/{script}"]


def _as_root(bwrap: str, setpriv: str, limits: Limits, script: str) -> list[str]:
    """Mounts made as root (it can read a Python under /root), then nobody in a user namespace."""
    argv = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup"]
    argv += ["--die-with-parent", "--new-session", "--hostname", "sandbox", *_system_dirs()]
    roots = interpreter()[1]
    for parent in sorted({str(p) for r in roots for p in Path(r).parents if str(p) != "/"}, key=len):
        argv += ["--perms", "0755", "--dir", parent]  # traversable by nobody, unlike /root itself
    for root in roots:
        argv += ["--ro-bind", root, root]
    if not bwrap.startswith("/usr/"):
        argv += ["--ro-bind", bwrap, bwrap]
    argv += ["--ro-bind", str(DRIVER_DIR), "/sandbox", *_package_mounts(), "--proc", "/proc", "--dev", "/dev"]
    argv += ["--dir", "/work", "--dir", "/tmp", "--clearenv"]
    argv += [x for k, v in ENV.items() for x in ("--setenv", k, v)]
    argv += ["--", setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    argv += ["--inh-caps=-all", "--bounding-set=-all", "--"]
    # nobody now: its own user and pid namespaces, everything read-only but its /work and /tmp
    argv += [bwrap, "--unshare-user", "--uid", NOBODY, "--gid", NOBODY, "--disable-userns"]
    argv += [
        "--unshare-pid",
        "--as-pid-1",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--ro-bind",
        "/proc",
        "/proc",
    ]
    return argv + ["--dev-bind", "/dev", "/dev", *_scratch(limits), *_command(script)]


def _as_user(bwrap: str, limits: Limits, script: str) -> list[str]:
    """One unprivileged bubblewrap: nobody inside maps to the harness's own (non-root) user."""
    argv = [bwrap, "--unshare-all", "--as-pid-1", "--unshare-user", "--disable-userns", "--die-with-parent"]
    argv += ["--new-session", "--cap-drop", "ALL", "--uid", NOBODY, "--gid", NOBODY]
    argv += ["--hostname", "sandbox", *_system_dirs()]
    for root in interpreter()[1]:
        argv += ["--ro-bind", root, root]
    argv += ["--ro-bind", str(DRIVER_DIR), "/sandbox", *_package_mounts()]
    argv += ["--proc", "/proc", "--remount-ro", "/proc"]
    argv += ["--dev", "/dev", "--clearenv"] + [x for k, v in ENV.items() for x in ("--setenv", k, v)]
    # the root and /dev that bubblewrap made belong to the sandbox's user here: read-only, as they are
    # under root, so that only /work and /tmp hold what a program writes (and the zygote empties them)
    return argv + _scratch(limits) + ["--remount-ro", "/dev", "--remount-ro", "/"] + _command(script)


def _bwrap_argv(limits: Limits, script: str) -> list[str]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise Missing("bubblewrap (bwrap) is not installed or not on PATH")
    if os.geteuid() != 0:
        return _as_user(bwrap, limits, script)
    setpriv = shutil.which("setpriv", path=SYSTEM_PATH)
    if setpriv is None:
        raise Missing("setpriv (util-linux) is not installed")
    return _as_root(os.path.realpath(bwrap), setpriv, limits, script)


@functools.cache
def _bwrap_problem() -> str | None:
    """Why bubblewrap cannot be used here, or None if a trial run works."""
    try:
        argv = _bwrap_argv(Limits(), "driver.py")[:-1] + ["-c", "pass"]
    except Missing as e:
        return str(e)
    try:
        trial = subprocess.run(argv, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap failed to start: {e}"
    if trial.returncode != 0:
        why = trial.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {trial.returncode}"]
        return f"bwrap cannot create an unprivileged sandbox here: {why[0]}"
    return None


def isolated() -> bool:
    return _bwrap_problem() is None


def require() -> None:
    """Refuse (one line, naming the package) to run code without isolation unless opted in."""
    problem = _bwrap_problem()
    if problem is not None and not unsafe_opt_in():
        raise Unavailable(
            f"code scoring needs the bubblewrap sandbox: {problem}. Install the 'bubblewrap' package "
            "(apt-get install bubblewrap), or pass --unsafe-no-sandbox to run model code unisolated"
        )


def warm_command(disk_mb: int) -> list[str]:
    """argv of a warm sandbox: bubblewrap around the zygote (zygote.py), which forks each job's
    driver; its /work and /tmp hold `disk_mb` each."""
    return _bwrap_argv(Limits(disk_mb=disk_mb), "zygote.py")


def unisolated_command() -> tuple[list[str], dict[str, str]]:
    """argv and environment of one driver process without isolation (only where the user opted in)."""
    require()
    return [interpreter()[0], "-I", "-S", str(DRIVER_DIR / "driver.py")], dict(ENV)


def facts() -> dict[str, object]:
    """What protects the harness from the code it runs, for run.json and score details."""
    problem = _bwrap_problem()
    version, why = cgroup.available()
    if problem is None:
        user = "nobody (own user namespace)" if os.geteuid() == 0 else f"uid {os.geteuid()} (as nobody)"
        isolation: dict[str, object] = {"isolation": "bwrap", "bwrap": _bwrap_version(), "user": user}
    else:
        isolation = {
            "isolation": "none",
            "unsafe_opt_in": unsafe_opt_in(),
            "warning": f"NO ISOLATION: {problem}; code runs under rlimits only",
        }
    environment = {"python": platform.python_version(), "packages": _package_versions()}
    cgroup_fact = version or f"unavailable ({why}); processes and memory bounded by rlimits"
    return {**isolation, "cgroup": cgroup_fact, **environment}


def _package_versions() -> dict[str, str]:
    """The version of each of `PACKAGES` sandboxed code can import."""
    names = {d.name for d in package_dirs()}
    return {name: importlib.metadata.version(name) for name in PACKAGES if name in names}


@functools.cache
def _bwrap_version() -> str:
    out = subprocess.run(
        [shutil.which("bwrap") or "bwrap", "--version"], capture_output=True, text=True
    ).stdout
    return out.strip().removeprefix("bubblewrap ")
