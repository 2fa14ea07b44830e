"""Reading benchmark files (JSONL, JSON, parquet, gzip) with errors that name the file and line."""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.io.read import DATA_INT_DIGITS, Missing, Unfit, check_regular, loads, open_regular

JSON_WHITESPACE = " \t\r\n"  # a JSONL line of only these is blank
MAX_LINE_BYTES = 16 << 20  # bounds the memory one line of a data file takes (and a prompt made of it)
# bound what a (decompressed) text file may hold, blank lines included: a gzip of blank lines is no
# benchmark (benchmarks and generations files hold thousands to hundreds of thousands of lines)
MAX_TEXT_BYTES, MAX_LINES = 8 << 30, 5_000_000


def sha256_file(path: Path, root: Path | None = None) -> str:
    """The file's sha256, read without following a link between `root` (default: its folder) and it."""
    digest = hashlib.sha256()
    with open(open_regular(path, root), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_rows(path: Path, root: Path | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line or row number, row) from a .jsonl, .json, .csv or .tsv file (maybe .gz) or .parquet,
    reached from `root` (the folder the user named; default: the file's own) without following a link."""
    name = path.name
    try:
        check_regular(path, root)
    except Missing:
        raise HarnessError(f"{path}: no such file") from None
    if name.endswith(".parquet"):
        yield from enumerate(_parquet_rows(path, root), start=1)
        return
    lines = _text_lines(path, root)
    if name.endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz")):
        import csv

        csv.field_size_limit(MAX_LINE_BYTES)  # a field within a line's bound (the module's own is 128 KiB)
        delimiter = "\t" if ".tsv" in name else ","
        rows = csv.DictReader(lines, delimiter=delimiter)
        try:
            yield from enumerate(rows, start=1)
        except csv.Error as e:
            raise HarnessError(f"{path}:{rows.line_num}: not a CSV row ({e})") from None
        return
    if name.endswith((".json", ".json.gz")):
        try:
            rows = loads("".join(lines), DATA_INT_DIGITS)
        except Unfit as e:
            raise HarnessError(f"{path}: {e}") from None
        if not isinstance(rows, list):
            raise HarnessError(f"{path}: expected a JSON array of objects")
        for number, row in enumerate(rows, start=1):
            yield number, _object(row, path, f"row {number}")
        return
    for number, line in enumerate(lines, start=1):
        if not line.strip(JSON_WHITESPACE):  # str.strip would also drop \x1c-\x1f, which JSON refuses
            continue
        try:
            row = loads(line, DATA_INT_DIGITS)
        except Unfit as e:
            raise HarnessError(f"{path}:{number}: malformed JSON line ({e})") from None
        yield number, _object(row, path, f"line {number}")


def _text_lines(path: Path, root: Path | None) -> Iterator[str]:
    """The file's lines (gunzipped for .gz), each decoded as UTF-8, or an error naming the line."""
    try:
        raw = open(open_regular(path, root), "rb")
        with gzip.open(raw) if path.name.endswith(".gz") else raw as f, raw:
            read = 0
            for number, line in enumerate(iter(lambda: f.readline(MAX_LINE_BYTES + 1), b""), start=1):
                if len(line) > MAX_LINE_BYTES:
                    raise HarnessError(
                        f"{path}:{number}: a line longer than {MAX_LINE_BYTES >> 20} MiB, more than any item"
                    )
                read += len(line)
                if number > MAX_LINES or read > MAX_TEXT_BYTES:
                    raise HarnessError(
                        f"{path}: more than {MAX_LINES:,} lines or {MAX_TEXT_BYTES >> 30} GiB of text "
                        "(decompressed), more than any benchmark or generations file"
                    )
                try:
                    yield line.decode("utf-8")
                except UnicodeDecodeError:
                    raise HarnessError(f"{path}:{number}: not UTF-8 text; save the file as UTF-8") from None
    except (OSError, EOFError) as e:  # not gzip, or cut short
        raise HarnessError(f"{path}: unreadable ({e})") from None


def _parquet_rows(path: Path, root: Path | None) -> list[dict[str, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with open(open_regular(path, root), "rb") as f:
            return pq.read_table(f).to_pylist()
    except (pa.ArrowException, OSError) as e:
        raise HarnessError(f"{path}: not a readable parquet file ({e})") from None


def _object(row: Any, path: Path, where: str) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise HarnessError(f"{path}: {where} is not a JSON object")
    return row


def require(row: dict[str, Any], field: str, path: Path, number: int) -> Any:
    """The value of a required field, or an error naming the file, line and field."""
    value = row.get(field)
    if field not in row:
        raise HarnessError(
            f"{path}:{number}: missing field {field!r} (has: {', '.join(map(repr, sorted(row)))})"
        )
    if value is None:
        raise HarnessError(f"{path}:{number}: field {field!r} is null")
    if _blank(value):  # present but empty: say so, not "missing"
        raise HarnessError(f"{path}:{number}: empty field {field!r}")
    return value


def _blank(value: Any) -> bool:
    """An empty or whitespace-only string, or a list of nothing else ([], [""], [" "])."""
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list):
        return all(_blank(v) for v in value)
    return False
