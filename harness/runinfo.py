"""Facts about the software and machine, recorded in run.json."""

from __future__ import annotations

import hashlib
import json
import os
import platform
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import harness

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


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
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
