"""`harness fetch-data`: a benchmark's pinned files put once under DIR/<benchmark>/, laid out as
`--data-dir DIR` reads them, so later runs need no network; each file's sha256 and origin (Hub dataset
and revision, release URL, shipped copy or local folder) go into DIR/checksums.json.

Sources: the Hub (a benchmark's pinned revision), a folder that already holds the files (`--from`,
laid out as --data-dir reads them), or, for the AIME sets when the Hub does not answer, the copies
shipped in the package. DAPO-Math-17K, a training set, becomes DIR/dapo-math-17k.jsonl.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.data import sha256_file
from harness.core.io.read import (
    CONFIG_BYTES,
    Missing,
    check_regular,
    is_regular,
    open_regular,
    read_bytes,
    read_json,
)
from harness.core.io.write import OutDir

CHECKSUMS = "checksums.json"
HOW_TO = "docs/install.md, 'Benchmark data'"  # the page that says where the files come from


@dataclass
class Fetched:
    """One benchmark or training set put under DIR: its origin and files (paths relative to DIR)."""

    name: str
    origin: dict[str, Any]
    files: list[dict[str, Any]] = field(default_factory=list)  # path, sha256, bytes
    note: str = ""


def fetch(names: list[str], to: Path, source: Path | None = None) -> list[Fetched]:
    """Put each named benchmark (or `dapo-math-17k`) under `to`, from the Hub or from `source`."""
    from benchmarks import get_benchmark
    from benchmarks.dapo import NAME as DAPO

    if not names:
        raise HarnessError("name the benchmarks to fetch (see `harness list`), or dapo-math-17k")
    if source is not None and not source.is_dir():
        raise HarnessError(f"--from {source}: no such folder")
    if to.exists() and not to.is_dir():
        raise HarnessError(f"--to {to} is a file, not a folder")
    done = []
    for name in dict.fromkeys(names):
        if name.startswith(("jsonl:", "lm-eval:")):
            raise HarnessError(f"{name}: a local file or an lm-eval task; there is nothing to fetch")
        done.append(
            _fetch_dapo(to, source) if name == DAPO else _fetch_benchmark(get_benchmark(name), to, source)
        )
        _record(to, done[-1])
    return done


def _fetch_benchmark(bench, to: Path, source: Path | None) -> Fetched:
    if source is not None:
        loaded = bench.load(source)  # the first clean copy there, as --data-dir would read it
        folder = Path(loaded.source["dir"])
        files = [(folder / f["path"], f["path"]) for f in loaded.source["files"]]
        origin = {"kind": "local", "from": str(folder)}
        if "laid_out_as" in loaded.source:
            origin["laid_out_as"] = loaded.source["laid_out_as"]
        fetched = _place(bench.name, files, to, origin, source)
    else:
        fetched = _from_origin(bench, to)
    bench.load(to)  # what was placed is what --data-dir reads (an error names the file if not)
    return fetched


def _from_origin(bench, to: Path) -> Fetched:
    """From the pinned source; offline, the shipped copy of a benchmark that has one, else an error
    saying where the files come from."""
    from benchmarks.base import PACKAGED_DIR
    from harness.core.hub import hub_unreachable

    why = hub_unreachable() if bench.hub is not None else None
    if why is None:
        files, origin = bench.pinned_files()
        return _place(bench.name, files, to, origin)
    if bench.packaged is None:
        raise HarnessError(_offline_message(bench.name, bench.hub, why, to))
    shipped = bench.load(PACKAGED_DIR).source
    files = [(PACKAGED_DIR / bench.name / f["path"], f["path"]) for f in shipped["files"]]
    fetched = _place(bench.name, files, to, {"kind": "packaged", **bench.packaged})
    fetched.note = f"the Hub cannot be reached ({why}): the copy shipped in the package"
    return fetched


def _offline_message(name: str, hub, why: str, to: Path) -> str:
    files = ", ".join(hub.layout.files)
    return (
        f"cannot fetch {name}: the Hub cannot be reached ({why}). Its files ({files}) come from the "
        f"Hub dataset {hub.repo} at revision {hub.revision} ({hub.url}); fetch them where the Hub "
        f"answers, or copy a folder that holds them: harness fetch-data {name} --from FOLDER --to {to} "
        f"(see {HOW_TO})"
    )


def _fetch_dapo(to: Path, source: Path | None) -> Fetched:
    from benchmarks.dapo import DAPO_MATH_17K, NAME, convert
    from harness.core.hub import hub_unreachable

    (name,) = DAPO_MATH_17K.layout.files
    if source is not None:
        parquet = source / NAME / name
        try:
            check_regular(parquet, source)
        except Missing:
            raise HarnessError(
                f"--from {source}: no {NAME}/{name} (the Hub's layout, under {NAME}/)"
            ) from None
        origin: dict[str, Any] = {"kind": "local", "from": str(source / NAME)}
    else:
        why = hub_unreachable()
        if why is not None:
            raise HarnessError(_offline_message(NAME, DAPO_MATH_17K, why, to))
        (parquet,), origin = DAPO_MATH_17K.download(NAME)
    with tempfile.TemporaryDirectory(prefix=f".{NAME}.") as scratch:
        made = Path(scratch) / f"{NAME}.jsonl"
        converted = convert(parquet, made)
        fetched = Fetched(NAME, {**origin, "file": name, "sha256": sha256_file(parquet, source)})
        digest = sha256_file(made)
        _refuse_other_file(to / made.name, digest, to)
        with OutDir.open(to) as out, open(open_regular(made), "rb") as f:
            out.write(made.name, f)
        fetched.files.append({"path": made.name, "sha256": digest, "bytes": os.path.getsize(made)})
    fetched.note = f"{converted.rows} rows -> {converted.written} distinct questions" + (
        f" ({converted.conflicting} with two answers left out)" if converted.conflicting else ""
    )
    return fetched


def _place(
    name: str, files: list[tuple[Path, str]], to: Path, origin: dict[str, Any], source: Path | None = None
) -> Fetched:
    """Copy `files` (source path, path under the benchmark's folder) to to/<name>/ through the one writer;
    a file already there with the same bytes is kept, one with other bytes is refused before anything is
    copied. Sources are read from `source` (the --from folder; default: each file's own folder) and
    existing files from `to`, neither through a link."""
    planned = []
    for path, relative in files:
        digest = sha256_file(path, source)
        target = to / name / relative
        _refuse_other_file(target, digest, to)
        planned.append((path, f"{name}/{relative}", digest))
    fetched = Fetched(name, origin)
    with OutDir.open(to) as out:
        for path, relative, digest in planned:
            if not is_regular(to / relative, to):
                with open(open_regular(path, source), "rb") as f:
                    out.write(relative, f)
            size = os.fstat(fd := open_regular(to / relative, to)).st_size
            os.close(fd)
            fetched.files.append({"path": relative, "sha256": digest, "bytes": size})
    return fetched


def _refuse_other_file(target: Path, digest: str, to: Path) -> None:
    """Refuse a file at `target` (reached from `to` without a link) whose bytes differ; a link or a
    folder on the way or at the name is refused by the reader."""
    try:
        found = sha256_file(target, to)
    except Missing:
        return
    if found != digest:
        raise HarnessError(
            f"{target} exists with other bytes than the source's (sha256 {digest[:12]}...); move it "
            "or choose another --to"
        )


def read_checksums(to: Path) -> dict[str, Any]:
    """DIR/checksums.json through the one reader: benchmark -> {origin, files}; {} where there is none."""
    path = to / CHECKSUMS
    try:
        recorded = read_json(path, to, CONFIG_BYTES)
    except Missing:
        return {}
    except HarnessError as e:
        raise HarnessError(f"not a checksums file harness fetch-data wrote: {e}") from None
    if not isinstance(recorded, dict) or not all(isinstance(v, dict) for v in recorded.values()):
        raise HarnessError(f"{path}: not a checksums file harness fetch-data wrote")
    return recorded


def _record(to: Path, fetched: Fetched) -> None:
    """Add (or replace) one entry of DIR/checksums.json, written whole by the one writer."""
    recorded = read_checksums(to)
    recorded[fetched.name] = {"origin": fetched.origin, "files": fetched.files}
    with OutDir.open(to) as out:
        out.write(CHECKSUMS, json.dumps(recorded, indent=2, sort_keys=True) + "\n")


def manifest_files(manifest: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    """A manifest's name and files (path under DIR -> url, sha256, bytes), through the one reader."""
    listed = read_json(manifest, manifest.parent, CONFIG_BYTES)
    files = listed.get("files") if isinstance(listed, dict) else None
    fields = {"url": str, "sha256": str, "bytes": int}
    if (
        not isinstance(listed.get("name"), str)
        or not isinstance(files, dict)
        or any(Path(p).is_absolute() or ".." in Path(p).parts for p in files)
        or not all(
            isinstance(f, dict) and all(isinstance(f.get(k), kind) for k, kind in fields.items())
            for f in files.values()
        )
    ):
        raise HarnessError(
            f"{manifest}: not a manifest (name, and files: a relative path -> url, sha256, bytes)"
        )
    return listed["name"], files


def manifest_problems(manifest: Path, folder: Path) -> list[str]:
    """What in `folder` differs from the manifest: each listed file missing or with other bytes."""
    problems = []
    for relative, expected in manifest_files(manifest)[1].items():
        try:
            found = sha256_file(folder / relative, folder)
        except Missing:
            problems.append(f"{relative}: missing")
            continue
        if found != expected["sha256"]:
            problems.append(f"{relative}: sha256 {found[:12]}..., expected {expected['sha256'][:12]}...")
    return problems


def fetch_manifest(manifest: Path, to: Path, source: Path | None = None) -> Fetched:
    """Every file the manifest lists put under `to`, each kept only with the manifest's sha256: one
    already there with those bytes stays, one with other bytes is refused, and the rest come from
    `source` (laid out as the manifest's paths) or, without one, from their URLs."""
    name, files = manifest_files(manifest)
    origin = {"kind": "manifest", "manifest": str(manifest)}
    fetched = Fetched(name, {**origin, "from": str(source)} if source else origin)
    for relative, expected in files.items():
        where = f"{to / relative}, already there"
        try:
            found = sha256_file(to / relative, to)
        except Missing:
            where = f"{source / relative}" if source else expected["url"]
            data = (
                read_bytes(source / relative, source, expected["bytes"])
                if source
                else _download(where, expected)
            )
            found = hashlib.sha256(data).hexdigest()
            if found == expected["sha256"]:
                with OutDir.open(to) as out:
                    out.write(relative, data)
        if found != expected["sha256"]:
            raise HarnessError(
                f"{where}: sha256 {found[:12]}..., but {manifest.name} pins {expected['sha256'][:12]}... "
                f"for {relative}"
            )
        fetched.files.append({"path": relative, "sha256": found, "bytes": expected["bytes"]})
    _record(to, fetched)
    return fetched


def _download(url: str, expected: dict[str, Any]) -> bytes:
    """The bytes at `url`, refused beyond the manifest's size for them."""
    import httpx

    size = expected["bytes"]
    try:
        with httpx.stream("GET", url, follow_redirects=True, timeout=60) as response:
            response.raise_for_status()
            data = bytearray()
            for block in response.iter_bytes():
                data += block
                if len(data) > size:
                    raise HarnessError(f"{url}: more than the manifest's {size} bytes")
    except httpx.HTTPError as e:
        raise HarnessError(
            f"could not download {url} ({type(e).__name__}); offline, copy a folder that holds the files: "
            "harness fetch-data --manifest MANIFEST --from FOLDER --to DIR"
        ) from None
    return bytes(data)
