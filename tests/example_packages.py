"""The docs' example packages (`<!-- example: external-method -->` and `external-paper` in
docs/training/interface.md, `<!-- example: external-benchmark -->` in docs/evaluating/index.md), run as
written in empty folders with their `pip install .` put into a folder of its own: nothing touches the
shared environment, and a process with that folder on PYTHONPATH has the packages installed (entry points
included)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from helpers import REPO

EXAMPLES = {
    "external-method": REPO / "docs" / "training" / "interface.md",
    "external-paper": REPO / "docs" / "training" / "interface.md",
    "external-benchmark": REPO / "docs" / "evaluating" / "index.md",
}


def example(name: str, page: Path | None = None) -> str:
    """The bash block right after `<!-- example: NAME -->` on its page."""
    page = page or EXAMPLES[name]
    text = page.read_text()
    found = re.search(rf"^<!-- example: {name} -->\n```bash\n(.*?)\n```$", text, re.MULTILINE | re.DOTALL)
    assert found, f"{page} has no bash block right after <!-- example: {name} -->"
    return found.group(1)


def install_examples(root: Path) -> Path:
    """Run the blocks under `root`, their `pip install .` offline into root/site; returns root/site."""
    site, bin_dir = root / "site", root / "bin"
    bin_dir.mkdir(parents=True)
    pip = bin_dir / "pip"
    pip.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -m pip "$@" --quiet --no-deps --no-build-isolation '
        f'--no-index --target "{site}"\n'
    )
    pip.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    for name in EXAMPLES:
        folder = root / name
        folder.mkdir()
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", example(name)],
            cwd=folder, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, f"{name}: {done.stderr[-2000:]}"
    return site
