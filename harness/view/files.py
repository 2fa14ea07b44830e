"""Read-only access to the files of a run folder: nothing outside it, nothing written into it.

Every file is read by the one reader (`harness.core.io.read`): a regular file reached from the run folder
without a link, bounded in size, depth and integer digits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.io.read import (
    RECORDS_BYTES,
    Unfit,
    is_folder,
    is_regular,
    loads,
    open_regular,
)
from harness.core.io.read import (
    read_json as read_value,
)

MAX_LINE_BYTES = 64 << 20  # one record the page may ask for


def inside(root: Path, name: str) -> Path | None:
    """`root/name` when it is a regular file reached from `root` without a link; else None."""
    path = Path(root) / name
    return path if is_regular(path, root) else None


def folder_inside(root: Path, folder: Path) -> bool:
    """Whether `folder` is a folder under `root` reached without a link (evals/step-N linked out is not)."""
    return is_folder(folder, root)


def read_json(root: Path, name: str) -> Any:
    """The JSON in `root/name`, or None where it is absent (or not a regular file); a clear error where it
    is not bounded JSON."""
    path = inside(root, name)
    return None if path is None else read_value(path, root)


def scan(path: Path | None) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(offset, length, record) of each complete JSONL line that holds an object; a half-written last
    line and lines that are not bounded JSON objects are skipped (and the file left as it is)."""
    if path is None:
        return
    offset = 0
    with open(open_regular(path), "rb") as f:
        if f.seek(0, 2) > RECORDS_BYTES:
            raise HarnessError(f"{path}: larger than {RECORDS_BYTES >> 30} GiB")
        f.seek(0)
        for line in f:
            if not line.endswith(b"\n"):
                break
            try:
                record = loads(line) if len(line) <= MAX_LINE_BYTES else None
            except Unfit:
                record = None
            if isinstance(record, dict):
                yield offset, len(line), record
            offset += len(line)


def read_line(path: Path, offset: int, length: int) -> dict[str, Any]:
    """The record of one JSONL line found by `scan` (bounded by the reader; the page draws long lists
    without recursion, thinning what it plots)."""
    with open(open_regular(path), "rb") as f:
        f.seek(offset)
        try:
            return loads(f.read(length))
        except Unfit as e:
            raise HarnessError(f"{path}: changed while it was shown ({e})") from None
