"""The run directory: run.json, generations.jsonl, scores.jsonl, results.json.

Records are appended with one write() per batch and flushed, so a SIGKILL leaves at most a
half-written last line, which the next reader drops. Finished runs are compacted into canonical
order so an interrupted-and-resumed run ends byte-identical to an uninterrupted one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness import HarnessError

RUN, GENERATIONS, SCORES, RESULTS = "run.json", "generations.jsonl", "scores.jsonl", "results.json"


def record_key(record: dict[str, Any]) -> tuple[str, str, int]:
    return (record["benchmark"], record["item_id"], record["sample_idx"])


def config_differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """Human-readable differences between two (nested) configurations."""
    lines = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            lines += config_differences(a, b, f"{prefix}{key}.")
        elif a != b:
            lines.append(f"{prefix}{key}: existing run has {a!r}, this command has {b!r}")
    return lines


class RunDir:
    def __init__(self, path: Path):
        self.path = Path(path)

    def file(self, name: str) -> Path:
        return self.path / name

    def read_json(self, name: str) -> dict[str, Any]:
        path = self.file(name)
        if not path.is_file():
            raise HarnessError(f"{path}: not found (is {self.path} a run directory?)")
        try:
            return json.loads(path.read_text())
        except json.JSONDecodeError as e:
            raise HarnessError(f"{path}: invalid JSON ({e.msg} at line {e.lineno})") from None

    def write_json(self, name: str, obj: Any) -> None:
        _atomic_write(self.file(name), json.dumps(obj, indent=2, ensure_ascii=False) + "\n")

    def start(self, run_info: dict[str, Any]) -> bool:
        """Create the run, or check that an existing one has the same configuration. True if resuming."""
        self.path.mkdir(parents=True, exist_ok=True)
        if self.file(RUN).exists():
            existing = self.read_json(RUN)
            if existing.get("config_hash") != run_info["config_hash"]:
                diffs = config_differences(existing.get("config", {}), run_info["config"])
                raise HarnessError(
                    f"{self.path} holds a run with a different configuration:\n  "
                    + "\n  ".join(diffs or ["(configuration hash differs)"])
                    + "\nUse another --out directory, or repeat the original command to resume."
                )
            return True
        self.write_json(RUN, run_info)
        return False

    def records(self, name: str) -> list[dict[str, Any]]:
        """All complete records of a JSONL file; a half-written last line is cut off the file."""
        path = self.file(name)
        if not path.exists():
            return []
        data = path.read_bytes()
        complete = data.rfind(b"\n") + 1
        if complete < len(data):  # killed mid-write: drop the partial line
            with open(path, "r+b") as f:
                f.truncate(complete)
        records = []
        for number, line in enumerate(data[:complete].decode("utf-8").split("\n"), start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise HarnessError(f"{path}:{number}: corrupt record ({e.msg})") from None
        return records

    def append(self, name: str, records: Iterable[dict[str, Any]]) -> None:
        """Append records with a single write() and flush them to disk."""
        data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
        if not data:
            return
        fd = os.open(self.file(name), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            while data:
                data = data[os.write(fd, data) :]
            os.fsync(fd)
        finally:
            os.close(fd)

    def rewrite(self, name: str, records: Iterable[dict[str, Any]]) -> None:
        """Replace a JSONL file atomically."""
        _atomic_write(self.file(name), "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
