"""SPELL's corpus on disk: a folder with `clusters.jsonl` and `manifest.json`, and its reader.

`clusters.jsonl` holds one JSON object per document cluster, in the order written:

    {"id": "web-00012", "task": "doc_mc", "source": "ultra-fineweb", "documents": ["...", "..."]}

`task` is one of `TASKS`; `documents` keeps the order of the source (the questioner samples indices
from it). `manifest.json` says how the file was made (`build.py`): the format version, the dataset
version (the first 16 hex digits of the sha256 of `clusters.jsonl`), the parameters, the library
versions, the inputs and the counts after every stage. It holds no timestamps, so building twice from
the same inputs gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.io.read import (
    CONFIG_BYTES,
    DATA_INT_DIGITS,
    RECORDS_BYTES,
    Unfit,
    loads,
    read_bytes,
    read_json,
    read_text,
)

TASKS = ("doc_general_qa", "docmath_qa", "doc_mc")
FORMAT_VERSION = 1
CLUSTERS_FILE, MANIFEST_FILE = "clusters.jsonl", "manifest.json"
FIELDS = ("id", "task", "source", "documents")


@dataclass(frozen=True)
class Cluster:
    id: str  # unique in its file, e.g. "web-00012" or "docmath-00003"
    task: str  # one of TASKS
    documents: tuple[str, ...]  # in the source's order
    source: str  # "ultra-fineweb", "docmath", "synthetic-web", "synthetic-docmath", ...


def dataset_version(clusters_file: Path) -> str:
    """The dataset's version: the first 16 hex digits of the sha256 of its clusters.jsonl."""
    return hashlib.sha256(read_bytes(clusters_file, limit=RECORDS_BYTES)).hexdigest()[:16]


def _row(cluster: Cluster) -> str:
    row = {"id": cluster.id, "task": cluster.task, "source": cluster.source, "documents": cluster.documents}
    return json.dumps(row, ensure_ascii=False) + "\n"


def write_dataset(out_dir: str | Path, clusters: Iterable[Cluster], manifest: dict[str, Any]) -> Path:
    """Write OUT_DIR/clusters.jsonl and OUT_DIR/manifest.json (`manifest` plus the format and dataset
    versions and the cluster counts per task); returns OUT_DIR. Clusters are checked as the reader would."""
    out = Path(out_dir)
    clusters = list(clusters)
    seen: set[str] = set()
    for number, cluster in enumerate(clusters, start=1):
        _check(cluster, f"cluster {number}", seen)
    out.mkdir(parents=True, exist_ok=True)
    path = out / CLUSTERS_FILE
    path.write_text("".join(map(_row, clusters)), encoding="utf-8")
    per_task = {task: sum(c.task == task for c in clusters) for task in TASKS}
    full = {
        "format_version": FORMAT_VERSION,
        "dataset_version": dataset_version(path),
        "clusters": {"total": len(clusters), **per_task},
        **manifest,
    }
    (out / MANIFEST_FILE).write_text(json.dumps(full, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def load_clusters(path: str | Path) -> list[Cluster]:
    """The clusters of a corpus folder (holding clusters.jsonl and manifest.json) or of a clusters .jsonl
    file, in file order. A bad row, an unknown task, an empty document list, a repeated id, a missing
    folder or file, or a clusters.jsonl that no longer matches its manifest's dataset version is a
    HarnessError naming the file (and line)."""
    path = Path(path)
    if path.is_dir():
        file = path / CLUSTERS_FILE
        if not file.is_file():
            raise HarnessError(f"{path}: no {CLUSTERS_FILE} in this folder (is it a SPELL corpus folder?)")
    elif path.suffix == ".jsonl":
        if not path.is_file():
            raise HarnessError(f"{path}: no such file")
        file = path
    else:
        raise HarnessError(f"{path}: no such corpus folder (expected a folder with {CLUSTERS_FILE})")
    clusters = list(_read(file))
    if not clusters:
        raise HarnessError(f"{file}: no clusters in the file")
    _check_manifest(file)
    return clusters


def _read(file: Path) -> Iterable[Cluster]:
    seen: set[str] = set()
    lines = read_text(file, limit=RECORDS_BYTES).splitlines()  # the one reader: no link, no FIFO
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{file}:{number}"
        try:
            row = loads(line, DATA_INT_DIGITS)
        except Unfit as e:
            raise HarnessError(f"{where}: malformed JSON line ({e})") from None
        if not isinstance(row, dict):
            raise HarnessError(f"{where}: expected a JSON object, got {type(row).__name__}")
        missing = [k for k in FIELDS if k not in row]
        unknown = sorted(set(row) - set(FIELDS))
        if missing or unknown:
            parts = [f"missing {missing}"] * bool(missing) + [f"unknown keys {unknown}"] * bool(unknown)
            raise HarnessError(f"{where}: {'; '.join(parts)} (a cluster has {', '.join(FIELDS)})")
        documents = row["documents"]
        if not isinstance(documents, list):
            raise HarnessError(f"{where}: documents must be a list of strings")
        cluster = Cluster(id=row["id"], task=row["task"], documents=tuple(documents), source=row["source"])
        _check(cluster, where, seen)
        yield cluster


def _check(cluster: Cluster, where: str, seen: set[str]) -> None:
    if not isinstance(cluster.id, str) or not cluster.id.strip():
        raise HarnessError(f"{where}: id must be a non-empty string, got {cluster.id!r}")
    if cluster.id in seen:
        raise HarnessError(f"{where}: id {cluster.id!r} is used twice")
    seen.add(cluster.id)
    if cluster.task not in TASKS:
        raise HarnessError(f"{where}: unknown task {cluster.task!r}; tasks are {', '.join(TASKS)}")
    if not isinstance(cluster.source, str) or not cluster.source.strip():
        raise HarnessError(f"{where}: source must be a non-empty string, got {cluster.source!r}")
    if not cluster.documents:
        raise HarnessError(f"{where}: cluster {cluster.id!r} has an empty documents list")
    for index, document in enumerate(cluster.documents):
        if not isinstance(document, str) or not document.strip():
            raise HarnessError(
                f"{where}: cluster {cluster.id!r} document {index} must be non-empty text, got {document!r}"
            )


def _check_manifest(file: Path) -> None:
    """A manifest beside the file must name this file's dataset version (edited by hand otherwise)."""
    manifest = file.parent / MANIFEST_FILE
    if file.name != CLUSTERS_FILE or not os.path.lexists(manifest):
        return
    recorded = read_json(manifest, limit=CONFIG_BYTES)
    if not isinstance(recorded, dict):
        raise HarnessError(f"{manifest}: not a JSON object")
    recorded = recorded.get("dataset_version")
    actual = dataset_version(file)
    if recorded != actual:
        raise HarnessError(
            f"{file}: its sha256 prefix is {actual} but {manifest} says dataset_version {recorded!r}; the "
            "file was changed after it was built (rebuild it with `harness corpus spell`, or delete the "
            "manifest if the edit is deliberate)"
        )
