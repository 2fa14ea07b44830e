"""`harness score --generations FILE`: score generations made by another tool as a run directory."""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from pathlib import Path

from benchmarks import get_benchmark
from harness import HarnessError
from harness.config import ScoringConfig
from harness.core.data import read_rows, sha256_file
from harness.core.records import generation_record
from harness.core.runinfo import machine, packages, stable_hash
from harness.core.store import GENERATIONS, RunDir
from harness.core.terminate import keeping
from harness.scoring.judge import JudgeConfig
from harness.stages.plan import (
    extra_config,
    item_questions,
    judge_record,
    sandbox_record,
    scorer_name,
    scoring_config,
)
from harness.stages.score import kept, score_run


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def import_generations(
    file: Path,
    benchmark: str,
    out: Path,
    *,
    data_dir: Path | None = None,
    scoring: ScoringConfig,
    judge: JudgeConfig | None = None,
) -> dict:
    """Read FILE (JSONL: `item_id` or `problem`, `sample_idx`, `text`), then score it into `out`.

    `problem` is matched to the benchmark's problem text (exactly, then up to whitespace). Without
    `sample_idx`, samples are numbered in file order per item. Optional fields kept when present:
    `finish_reason`, `prompt_tokens`, `completion_tokens`. `scoring` gives the scorer of jsonl: files,
    the numeric tolerance, lm-eval's task folder and the scorers' time limit and workers.
    """
    bench = get_benchmark(benchmark, scoring.scorer, scoring.lm_eval_include_path)
    loaded = bench.load(data_dir)
    by_id = {item.id: item for item in loaded.items}
    by_text = {_normalise(item.problem): item for item in loaded.items}
    records, counters = {}, defaultdict(int)
    for number, row in read_rows(file):
        if "item_id" in row:
            item = by_id.get(str(row["item_id"]))
            if item is None:
                raise HarnessError(f"{file}:{number}: item_id {row['item_id']!r} is not in {bench.name}")
        elif "problem" in row:
            item = by_text.get(_normalise(str(row["problem"])))
            if item is None:
                raise HarnessError(f"{file}:{number}: problem text does not match any {bench.name} problem")
        else:
            raise HarnessError(f"{file}:{number}: needs `item_id` or `problem`")
        if not isinstance(row.get("text"), str):
            raise HarnessError(f"{file}:{number}: missing string field 'text'")
        _check_fields(row, file, number)
        sample_idx = row["sample_idx"] if "sample_idx" in row else counters[item.id]
        counters[item.id] = max(counters[item.id], sample_idx + 1)
        key = (item.id, sample_idx)
        if key in records:
            raise HarnessError(f"{file}:{number}: duplicate sample {sample_idx} for item {item.id}")
        records[key] = generation_record(
            bench.name,
            item.id,
            sample_idx,
            row["text"],
            prompt_tokens=row.get("prompt_tokens"),
            completion_tokens=row.get("completion_tokens"),
            finish_reason=row.get("finish_reason"),
        )
    if not records:
        raise HarnessError(f"{file}: no generations")
    scored_items = {item_id for item_id, _ in records}
    scorers = {bench.name: scorer_name(bench, judge)}
    asked = item_questions(scorers[bench.name], [i for i in loaded.items if i.id in scored_items])
    config = {
        "benchmarks": [bench.name],
        "generations_sha256": sha256_file(file),
        "scorers": scorers,
        "dataset_hashes": {bench.name: loaded.source["content_hash"]},
        **extra_config([bench], scoring.upstream_compat),  # the benchmark's own pass@k, as eval's
        **scoring_config(scoring, judge, scorers, getattr(bench, "include_path", None)),
    }
    run_info = {
        "config": config,
        "config_hash": stable_hash(config),
        "generations_file": str(file),
        "datasets": {bench.name: loaded.source},
        "packages": packages(),
        "machine": machine(),
        "answers": {bench.name: {i.id: i.answer for i in loaded.items if i.id in scored_items}},
        **({"questions": {bench.name: asked}} if asked is not None else {}),
        **sandbox_record([bench], scoring.unsafe_no_sandbox),
        **judge_record(judge, config),
    }
    run = RunDir(out)
    with run.locked(), keeping(functools.partial(kept, run)):
        run.start(run_info)
        written = {(r["item_id"], r["sample_idx"]) for r in run.records(GENERATIONS)}
        run.append(GENERATIONS, [r for key, r in records.items() if key not in written])
        return score_run(
            run,
            timeout=scoring.score_timeout,
            workers=scoring.score_workers,
            include_path=scoring.lm_eval_include_path,
            cache=scoring.cache,
        )


COUNTS = (
    "sample_idx",
    "prompt_tokens",
    "completion_tokens",
)  # whole numbers from 0 (token counts may be null)


def _check_fields(row: dict, file: Path, number: int) -> None:
    """The optional fields, when present, have the types a run's records have."""
    for field in COUNTS:
        if field not in row or (row[field] is None and field != "sample_idx"):
            continue
        value = row[field]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise HarnessError(f"{file}:{number}: {field} must be a whole number from 0, got {value!r}")
    reason = row.get("finish_reason")
    if reason is not None and not isinstance(reason, str):
        raise HarnessError(f"{file}:{number}: finish_reason must be a string, got {reason!r}")
