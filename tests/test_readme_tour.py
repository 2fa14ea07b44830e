"""The README's tour runs from a fresh clone: its blocks after a `<!-- tour -->` line, as one bash
script in a copy of the repository's files with nothing beside it (no ../shared), offline, with
`harness` imported from the copy (tests/test_docs.py checks every page's commands without running them;
this one runs them: a few minutes on 2 cores)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOUR = "<!-- tour -->"


def tour_blocks(text: str) -> list[list[str]]:
    """The lines of each ```bash block right after a `<!-- tour -->` line, in order."""
    lines, blocks = text.split("\n"), []
    for i, line in enumerate(lines):
        if (
            line.strip() == "```bash"
            and next((x.strip() for x in reversed(lines[:i]) if x.strip()), "") == TOUR
        ):
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
            blocks.append(lines[i + 1 : end])
    return blocks


def fresh_clone(parent: Path) -> Path:
    """The repository's files as a clone has them (those git tracks or would track, as they are in the
    working tree; nothing it ignores) copied to parent/clone."""
    import shutil

    command = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    listed = subprocess.run(command, cwd=REPO, capture_output=True, check=True).stdout
    clone = parent / "clone"
    for name in filter(None, listed.decode().split("\0")):
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, clone / name)
    return clone


@pytest.mark.slow  # builds the tiny model, evaluates and trains
def test_the_readme_tour_runs_from_a_fresh_clone(tmp_path):
    """Every tour block, as one bash script in a copy of the repository with nothing beside it (no
    ../shared), offline, with `harness` imported from the copy: each command succeeds (`harness regress`
    may give any verdict) and leaves what the README says it does."""
    readme = (REPO / "README.md").read_text()
    assert "../shared" not in readme.split("## A short tour")[1].split("\n## ")[0]
    clone = fresh_clone(tmp_path)
    assert not (clone.parent / "shared").exists()
    script = "\n".join(line for block in tour_blocks(readme) for line in block).replace(
        "/tmp/", f"{tmp_path}/"
    )
    trap = "trap 'echo \"failed with $?: $BASH_COMMAND\" >&2' ERR\n"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": str(clone)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env.pop("HARNESS_DATA_DIR", None)
    done = subprocess.run(
        ["bash", "-c", trap + script], cwd=clone, env=env, capture_output=True, text=True, timeout=1200
    )
    failed = [line for line in done.stderr.splitlines() if line.startswith("failed with ")]
    regress = re.search(r"^exit (\d+)$", done.stdout, flags=re.MULTILINE)
    assert regress and regress.group(1) in ("0", "1", "2", "4"), done.stdout[-2000:] + done.stderr[-3000:]
    assert all(": harness regress " in line for line in failed), done.stderr[-3000:]
    assert json.loads((clone / "data" / "checksums.json").read_text()).keys() == {"aime24", "aime25"}
    for seed in (1, 2):
        info = json.loads((clone / "runs" / f"ck{seed}" / "run.json").read_text())
        assert {d["kind"] for d in info["datasets"].values()} == {"local"}  # read from data/
        assert (clone / "runs" / f"ck{seed}" / "results.json").is_file()
    assert "(paper)" in done.stdout and "Not comparable with the paper's rows" in done.stdout
    assert (clone / "runs" / "grpo" / "checkpoint-4").is_dir()
    assert (clone / "runs" / "grpo" / "evals" / "step-4" / "results.json").is_file()
