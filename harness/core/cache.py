"""Results worth keeping between runs, under one folder the user can move (`HARNESS_CACHE`, default
~/.cache/harness): one JSON file per key, read through the one reader and written through the one writer.

An entry is signed with HMAC-SHA256 under a secret made once per cache folder (`.secret`, never copied
with an entry): a damaged, edited, truncated or copied-in entry, or one stored under another key, fails
its check and is recomputed by the caller, never trusted.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.io.read import JSON_BYTES, Missing, read_bytes, read_json
from harness.core.io.write import OutDir

SECRET = ".secret"
_making = threading.Lock()  # one thread makes a folder's secret; the others read it


def cache_root() -> Path:
    return Path(os.environ.get("HARNESS_CACHE", Path.home() / ".cache" / "harness"))


class Cache:
    """The entries of one kind (`name`, a folder under the cache root)."""

    def __init__(self, name: str, root: Path | None = None):
        self.folder = (root or cache_root()) / name

    def get(self, key: str) -> Any | None:
        """The value stored under `key`, or None: none stored, or an entry that fails its check."""
        try:
            entry = read_json(self.folder / f"{key}.json", self.folder, JSON_BYTES)
        except Missing:
            return None
        except HarnessError:  # unreadable, not JSON, too deep: recomputed like a forged one
            return None
        if not (isinstance(entry, dict) and entry.keys() == {"key", "value", "mac"}) or entry["key"] != key:
            return None
        secret = self._secret(create=False)
        if secret is None or not hmac.compare_digest(str(entry["mac"]), _mac(secret, key, entry["value"])):
            return None
        return entry["value"]

    def put(self, key: str, value: Any) -> None:
        """Store `value` (plain JSON) under `key`, replacing any entry there."""
        entry = {"key": key, "value": value, "mac": _mac(self._secret(create=True), key, value)}
        with OutDir.open(self.folder) as out:
            out.write(f"{key}.json", json.dumps(entry, sort_keys=True, allow_nan=False))

    def _secret(self, create: bool) -> bytes | None:
        """The folder's secret; made once, with `create`, where there is none. Another process making
        one at the same moment can win: entries signed with the other are then recomputed."""
        with _making:
            try:
                return read_bytes(self.folder / SECRET, self.folder, 1024)
            except Missing:
                if not create:
                    return None
            with OutDir.open(self.folder) as out:
                out.write(SECRET, secrets.token_hex(32).encode())
            return read_bytes(self.folder / SECRET, self.folder, 1024)


def _mac(secret: bytes, key: str, value: Any) -> str:
    text = json.dumps([key, value], sort_keys=True, allow_nan=False, separators=(",", ":"))
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()
