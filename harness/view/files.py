"""Read-only access to the files of a run folder: nothing outside it, nothing written into it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness import HarnessError


def inside(root: Path, name: str) -> Path | None:
    """`root/name` when it is a regular file whose real path stays in `root` (a symlink out is refused)."""
    try:
        real = (root / name).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not real.is_relative_to(root.resolve()) or not real.is_file():
        return None
    return real


def folder_inside(root: Path, folder: Path) -> bool:
    """Whether `folder` is a folder whose real path stays in `root` (evals/step-N linked out is refused)."""
    try:
        real = folder.resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    return real.is_dir() and real.is_relative_to(root.resolve())


def read_json(root: Path, name: str) -> Any:
    """The JSON in `root/name`, or None where it is absent; a clear error where it is not JSON."""
    path = inside(root, name)
    if path is None:
        return None
    try:
        return json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as e:
        raise HarnessError(f"{root / name}: not valid JSON ({e})") from None


def scan(path: Path | None) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(offset, length, record) of each complete JSONL line that holds an object; a half-written last
    line and lines that are not JSON objects are skipped (and the file left as it is)."""
    if path is None:
        return
    offset = 0
    with open(path, "rb") as f:
        for line in f:
            if not line.endswith(b"\n"):
                break
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if isinstance(record, dict):
                yield offset, len(line), record
            offset += len(line)


def read_line(path: Path, offset: int, length: int) -> dict[str, Any]:
    """The record of one JSONL line found by `scan`."""
    with open(path, "rb") as f:
        f.seek(offset)
        return json.loads(f.read(length))
