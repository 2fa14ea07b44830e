"""Reading the corpus's sources: Ultra-FineWeb rows as web documents and DocMath-Eval rows as reports,
from local files (with their sha256) or streamed from the Hub."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.data import read_rows, sha256_file

DATA_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".parquet")


@dataclass(frozen=True)
class WebDoc:
    text: str
    score: float | None
    where: str  # file:line or Hub row, for messages


@dataclass(frozen=True)
class Report:
    id: str
    paragraphs: tuple[str, ...]
    where: str

    @property
    def text(self) -> str:
        return "\n".join(self.paragraphs)


def web_document(row: dict[str, Any], where: str) -> WebDoc:
    """An Ultra-FineWeb row (`content`, `score`, `source`) as a document."""
    text = row.get("content")
    if not isinstance(text, str):
        raise HarnessError(f"{where}: `content` must be the document's text, got {type(text).__name__}")
    score = row.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        raise HarnessError(f"{where}: `score` must be a number, got {score!r}")
    return WebDoc(text=text, score=None if score is None else float(score), where=where)


def docmath_report(row: dict[str, Any], where: str) -> Report:
    """A DocMath-Eval row (`question_id`, `paragraphs` with tables in them, ...) as a report; its
    question and answer are not used. Blank paragraphs are left out."""
    if "paragraphs" not in row:
        raise HarnessError(f"{where}: missing field 'paragraphs' (has: {', '.join(map(repr, sorted(row)))})")
    paragraphs = row["paragraphs"]
    if isinstance(paragraphs, str):  # some exports keep the list as a JSON string
        try:
            paragraphs = json.loads(paragraphs)
        except json.JSONDecodeError:
            paragraphs = [paragraphs]
    if not isinstance(paragraphs, list):
        raise HarnessError(f"{where}: `paragraphs` must be a list of texts")
    kept = tuple(str(p).strip() for p in paragraphs if p is not None and str(p).strip())
    return Report(id=str(row.get("question_id") or where), paragraphs=kept, where=where)


def _data_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise HarnessError(f"{path}: no such file or folder")
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(DATA_SUFFIXES))
    if not files:
        raise HarnessError(f"{path}: no {', '.join(DATA_SUFFIXES)} files in this folder")
    return files


def _file_inputs(path: Path, given: str, files: list[Path]) -> dict[str, Any]:
    root = path if path.is_dir() else path.parent
    return {
        "kind": "local",
        "path": given,
        "files": [{"name": str(f.relative_to(root)), "sha256": sha256_file(f)} for f in files],
    }


def read_web_local(path: Path, given: str, max_read: int | None) -> tuple[Iterator[WebDoc], dict]:
    """Web documents from a .jsonl/.json/.parquet file (maybe .gz) or a folder of them, in name order."""
    files = _data_files(path)

    def documents() -> Iterator[WebDoc]:
        read = 0
        for file in files:
            for number, row in read_rows(file):
                if max_read is not None and read >= max_read:
                    return
                read += 1
                yield web_document(row, f"{file}:{number}")

    return documents(), _file_inputs(path, given, files)


def read_web_hub(repo: str, revision: str, split: str, max_read: int | None) -> tuple[Iterator[WebDoc], dict]:
    """Web documents streamed from a Hub dataset (Ultra-FineWeb: 1.16 billion English rows)."""
    from datasets import load_dataset

    try:
        stream = load_dataset(repo, split=split, revision=revision, streaming=True)
    except Exception as e:  # offline, moved, renamed split: one message
        raise HarnessError(
            f"could not open {repo}@{revision} split {split!r}: {type(e).__name__}: {e}"
        ) from None

    def documents() -> Iterator[WebDoc]:
        for number, row in enumerate(stream, start=1):
            if max_read is not None and number > max_read:
                return
            yield web_document(row, f"{repo}@{revision[:12]} {split} row {number}")

    inputs = {"kind": "hub", "repo": repo, "revision": revision, "split": split, "max_read": max_read}
    return documents(), inputs


def read_docmath_local(path: Path, given: str, subsets: list[str], split: str) -> tuple[list[Report], dict]:
    """Reports from FOLDER/{subset}_{split}.jsonl (or .json, .parquet, or the Hub's
    data/{subset}_{split}-00000-of-00001.parquet) for each subset, in subset order."""
    if not path.is_dir():
        raise HarnessError(f"{path}: no such folder (DocMath-Eval files, e.g. complong_{split}.json)")
    files = []
    for subset in subsets:
        names = [f"{subset}_{split}{ext}" for ext in (".jsonl", ".json", ".parquet")]
        names.append(f"data/{subset}_{split}-00000-of-00001.parquet")
        found = [path / n for n in names if (path / n).is_file()]
        if not found:
            raise HarnessError(f"{path}: no DocMath-Eval file for subset {subset!r}; expected one of {names}")
        files.append(found[0])
    reports = [docmath_report(row, f"{file}:{n}") for file in files for n, row in read_rows(file)]
    return reports, _file_inputs(path, given, files)


def read_docmath_hub(repo: str, revision: str, subsets: list[str], split: str) -> tuple[list[Report], dict]:
    """Reports from the Hub's DocMath-Eval (gated: accept its terms and log in first)."""
    from datasets import load_dataset

    reports = []
    for subset in subsets:
        name = f"{subset}_{split}"
        try:
            rows = load_dataset(repo, split=name, revision=revision)
        except Exception as e:
            raise HarnessError(
                f"could not load {repo}@{revision} split {name!r} ({type(e).__name__}: {e}). The dataset is "
                f"gated: accept its terms at https://huggingface.co/datasets/{repo} and log in, or pass "
                "--data-dir with a local copy"
            ) from None
        reports += [docmath_report(row, f"{repo} {name} row {n}") for n, row in enumerate(rows, start=1)]
    return reports, {
        "kind": "hub",
        "repo": repo,
        "revision": revision,
        "splits": [f"{s}_{split}" for s in subsets],
    }


def read_web(web: dict[str, Any], base: Path) -> tuple[Iterator[WebDoc], dict]:
    if web["path"]:
        return read_web_local(base / web["path"], web["path"], web["max_read"])
    return read_web_hub(web["hub"], web["revision"], web["split"], web["max_read"])


def read_docmath(docmath: dict[str, Any], base: Path) -> tuple[list[Report], dict]:
    if docmath["path"]:
        path = base / docmath["path"]
        return read_docmath_local(path, docmath["path"], docmath["subsets"], docmath["split"])
    return read_docmath_hub(docmath["hub"], docmath["revision"], docmath["subsets"], docmath["split"])
