"""The run directory: run.json, generations.jsonl, scores.jsonl, results.json.

Records are appended with one write() per batch and flushed, so a SIGKILL leaves at most a
half-written last line, which the next reader drops. Finished runs are compacted into canonical
order so an interrupted-and-resumed run ends byte-identical to an uninterrupted one. The process
that writes a run holds its lock (`RunDir.locked`), so a second harness on the same folder stops at
once instead of generating everything again beside the first.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, RootModel, model_validator

from harness import HarnessError
from harness.core.io.read import RECORDS_BYTES, RUN_JSON_BYTES, Missing, Unfit, loads, read_bytes, validate
from harness.core.io.write import append_file, open_file
from harness.core.io.write import write_file as atomic_write

RUN, GENERATIONS, SCORES, RESULTS = "run.json", "generations.jsonl", "scores.jsonl", "results.json"
LOCK = ".lock"  # holds the pid of the process writing the run

# What readers rely on in each record; anything else in a line is corrupt
NUMBER, OPTIONAL_INT, OPTIONAL_STR = (int, float), (int, type(None)), (str, type(None))
RECORD_FIELDS: dict[str, dict[str, Any]] = {
    GENERATIONS: {
        "benchmark": str,
        "item_id": str,
        "sample_idx": int,
        "text": str,
        "answer": OPTIONAL_STR,
        "truncated": (bool, type(None)),
        "completion_tokens": OPTIONAL_INT,
    },
    SCORES: {
        "benchmark": str,
        "item_id": str,
        "sample_idx": int,
        "value": NUMBER,
        "extracted": OPTIONAL_STR,
        "details": dict,
    },
}
JSON_FIELDS: dict[str, dict[str, Any]] = {RUN: {"config": dict}}
CONFIG_FIELDS = {"benchmarks": list}  # run.json's config
METRICS_FIELDS = {"n_items": int}  # each benchmark's in results.json


class Metrics(BaseModel, extra="allow"):
    """One benchmark's entry in results.json (and each group's in its breakdown): the named fields
    of their types, and every `NAME@K` metric a number."""

    n_items: int
    n_samples: int = 0
    ci95: list[float] | None = None
    truncated_rate: float | None = None
    unextracted_rate: float | None = None
    mean_completion_tokens: float | None = None
    distinct_answers: int | None = None
    mode_answer: str | None = None
    mode_answer_share: float | None = None
    constant_baseline: float | None = None
    samples_per_item: dict[str, int] | None = None
    breakdown: dict[str, dict[str, Metrics]] | None = None

    @model_validator(mode="after")
    def _metrics_are_numbers(self) -> Metrics:
        for key, value in (self.model_extra or {}).items():
            if "@" in key and (isinstance(value, bool) or not isinstance(value, int | float)):
                raise ValueError(f"{key} is {value!r}, not a number"[:120])
        return self


Results = RootModel[dict[str, Metrics]]


class RunConfig(BaseModel, extra="allow"):
    """run.json's `config`, as far as readers rely on it (fields are checked only where present)."""

    benchmarks: list[str]
    scorers: dict[str, str] = {}
    sampling: dict[str, dict[str, Any]] = {}
    prompt_hashes: dict[str, str] = {}
    dataset_hashes: dict[str, str] = {}
    model: str | None = None
    backend: str | None = None
    revision: str | None = None
    seed: int | None = None
    limit: int | None = None
    pass_k: dict[str, list[int]] = {}


class RunInfo(BaseModel, extra="allow"):
    """run.json, as far as readers rely on it: a wrong type is a one-line error naming the field."""

    config: RunConfig
    config_hash: str = ""
    generations_file: str = ""
    datasets: dict[str, dict[str, Any]] = {}
    prompts: dict[str, dict[str, Any]] = {}
    answers: dict[str, dict[str, str]] = {}
    questions: dict[str, dict[str, str]] = {}
    groups: dict[str, dict[str, dict[str, str]]] = {}
    engine: dict[str, Any] = {}
    resumed_with: list[dict[str, Any]] = []
    scorer_versions: dict[str, str] = {}
    sandbox: dict[str, Any] = {}
    judge_base_url: str | None = None


SCHEMAS: dict[str, Any] = {RUN: RunInfo, RESULTS: Results}


def read_file(path: Path, limit: int = RECORDS_BYTES) -> bytes:
    """A run folder's file, whole: a regular file reached without a link, bounded in size (the records
    by memory; run.json and results.json by what they hold)."""
    return read_bytes(path, limit=limit)


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
        try:
            obj = loads(read_file(path, RUN_JSON_BYTES))
        except Missing:
            raise HarnessError(f"{path}: not found (is {self.path} a run directory?)") from None
        except Unfit as e:
            raise HarnessError(f"{path}: {e}; {REPAIR_JSON}") from None
        problem = _json_problem(name, obj)
        if problem:
            raise HarnessError(f"{path}: not a harness {name} ({problem}); {REPAIR_JSON}")
        if name in SCHEMAS:
            validate(SCHEMAS[name], obj, str(path))
        return obj

    def write_json(self, name: str, obj: Any) -> None:
        atomic_write(self.file(name), json.dumps(obj, indent=2, ensure_ascii=False) + "\n")

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the run's lock while writing it (released on exit, and by the kernel if the process dies);
        a second process fails at once, naming the one that holds it."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            fd = open_file(self.file(LOCK), os.O_RDWR | os.O_CREAT)
        except OSError as e:
            raise HarnessError(f"{self.path}: cannot write a run directory there ({e.strerror})") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
                raise HarnessError(
                    f"{self.path} is in use by another harness process (pid {holder}); "
                    "wait for it to finish, or use another directory"
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            yield
        finally:
            os.close(fd)

    def start(self, run_info: dict[str, Any]) -> bool:
        """Create the run, or check that an existing one has the same configuration. True if resuming.

        A run that generated nothing (its engine failed to start, say) holds nothing to keep: the new
        configuration replaces it."""
        self.path.mkdir(parents=True, exist_ok=True)
        if self.file(RUN).exists() and not self.records(GENERATIONS):
            self.file(RUN).unlink()
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
        """All complete records of a JSONL file; a half-written last line is cut off the file.

        A line that is not a whole record (cut, or edited) is an error naming the file and line."""
        path = self.file(name)
        if not os.path.lexists(path):
            return []
        data = read_file(path)
        complete = data.rfind(b"\n") + 1
        if complete < len(data):  # killed mid-write: drop the partial line
            fd = open_file(path, os.O_WRONLY)
            try:
                os.ftruncate(fd, complete)
            finally:
                os.close(fd)
        records = []
        for number, line in enumerate(data[:complete].split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                record = loads(line)
            except Unfit as e:
                problem = str(e)
            else:
                problem = _shape_problem(record, RECORD_FIELDS.get(name, {}))
            if problem:
                raise HarnessError(f"{path}:{number}: corrupt record ({problem}); {REPAIR}")
            records.append(record)
        return records

    def append(self, name: str, records: Iterable[dict[str, Any]]) -> None:
        """Append records with a single write() and flush them to disk."""
        append_file(self.file(name), "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))

    def rewrite(self, name: str, records: Iterable[dict[str, Any]]) -> None:
        """Replace a JSONL file atomically."""
        atomic_write(self.file(name), "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


REPAIR = "delete that line and rerun the command, which makes it again, or start a new run"
REPAIR_JSON = (
    "rerun the command that wrote it (harness score RUN_DIR rewrites results.json), or start a new run"
)


def _shape_problem(obj: Any, expected: dict[str, Any]) -> str | None:
    """Why `obj` is not a JSON object with these fields of these types; None if it is."""
    if not isinstance(obj, dict):
        return f"a JSON {type(obj).__name__}, not an object"
    for key, types in expected.items():
        if key not in obj:
            return f"no field {key!r}"
        value = obj[key]
        if not isinstance(value, types) or (isinstance(value, bool) and types in (int, NUMBER)):
            return f"field {key!r} is {value!r}"[:120]
        if key == "sample_idx" and value < 0:
            return f"field 'sample_idx' is {value}"
        if key == "value" and not (math.isfinite(value) and 0 <= value <= 1):
            return f"field 'value' is {value!r}, not a number in [0, 1]"
    return None


def _json_problem(name: str, obj: Any) -> str | None:
    """Why `obj` is not what run.json or results.json hold; None if it is (or for other files)."""
    if name == RUN:
        return _shape_problem(obj, JSON_FIELDS[RUN]) or _shape_problem(obj["config"], CONFIG_FIELDS)
    if name == RESULTS:
        if not isinstance(obj, dict):
            return _shape_problem(obj, {})
        shape = next(filter(None, (_shape_problem(m, METRICS_FIELDS) for m in obj.values())), None)
        return shape or _non_finite(obj)
    return None


def _non_finite(obj: Any, where: str = "") -> str | None:
    """Where `obj` holds NaN or an infinity (JSON allows them in Python's reading); None if nowhere."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return f"{where.lstrip('.')} is {obj!r}"
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    return next(filter(None, (_non_finite(v, f"{where}.{k}") for k, v in items)), None)


def describes(info: dict[str, Any], benchmarks: Iterable[str], path: Path) -> None:
    """Refuse a run.json that does not describe every benchmark of the run's scores (a run.json from
    another run): readers would look up its gold answers and scorer."""
    config, answers = info["config"], info.get("answers")
    scorers = config.get("scorers")
    for benchmark in benchmarks:
        if not (isinstance(answers, dict) and isinstance(answers.get(benchmark), dict)) or not (
            isinstance(scorers, dict) and isinstance(scorers.get(benchmark), str)
        ):
            raise HarnessError(
                f"{path}: run.json does not describe benchmark {benchmark!r} that its scores.jsonl holds "
                f"(run.json's benchmarks: {', '.join(map(str, config['benchmarks'])) or 'none'}); the two "
                "files are from different runs"
            )
