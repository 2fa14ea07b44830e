"""Facts about the software and machine, recorded in run.json."""

from __future__ import annotations

import hashlib
import json
import os
import platform
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import harness
from harness.core.threads import recorded as recorded_threads

TRACKED_PACKAGES = (
    "math-verify",
    "latex2sympy2_extended",
    "evalplus",
    "transformers",
    "torch",
    "vllm",
    "numpy",
)


def stable_hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def packages() -> dict[str, str | None]:
    found: dict[str, str | None] = {"harness": harness.__version__}
    for name in TRACKED_PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def source_commit() -> str | None:
    """The git commit of the checkout harness runs from (an editable install), else None."""
    import subprocess
    from pathlib import Path

    root = Path(harness.__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def version_line() -> str:
    """What `harness --version` prints: the version, and the commit when run from a checkout."""
    commit = source_commit()
    return f"harness {harness.__version__}" + (f" (git {commit})" if commit else "")


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "threads": recorded_threads(),  # torch's threads and their wait policy (harness.core.threads)
    }
    try:
        import torch

        if torch.cuda.is_available():
            info["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except ImportError:
        pass
    return info


UNSANDBOXED = "[unsandboxed]"
UNSANDBOXED_NOTE = f"{UNSANDBOXED}: model code ran WITHOUT sandbox isolation (--unsafe-no-sandbox)."


def unsandboxed(info: dict[str, Any]) -> bool:
    """Whether a run (its run.json) executed model code without isolation, by the user's opt-in."""
    return info.get("sandbox", {}).get("isolation") == "none"
