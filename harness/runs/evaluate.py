"""`harness eval`: plan the run, generate what is missing while scoring it, then aggregate."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from harness.backends import check_engine, check_model, make_backend
from harness.config import EvalConfig
from harness.core.progress import console, progress_bar
from harness.core.store import GENERATIONS, RunDir, record_key
from harness.core.terminate import keeping
from harness.core.types import Request
from harness.scoring.judge import check_judge_engine
from harness.stages.generate import OnRecords, generate_into, record_engine
from harness.stages.plan import plan
from harness.stages.score import ScoreStream, kept, score_run
from harness.stages.shards import generate_sharded


def default_out(model: str, config_hash: str) -> Path:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(model.rstrip("/")).name) or "model"
    return Path("runs") / f"{name}-{config_hash[:10]}"


def run_eval(cfg: EvalConfig, backend=None) -> tuple[Path, dict]:
    """Generate what is missing in the run directory, scoring each batch as it arrives; then score
    whatever is left and aggregate, once every planned sample has its generation and score. The run
    directory is locked meanwhile.

    `backend`: an engine already loaded for `cfg` (kept open), instead of starting one.
    Returns the run directory and results.json's content.
    """
    check_engine(cfg.engine)
    if cfg.judge is not None:
        check_judge_engine(cfg.judge)
    p = plan(cfg)
    out = cfg.out or default_out(cfg.engine.model, p.run_info["config_hash"])
    if backend is None:
        check_model(cfg.engine)  # before --out is written
    run = RunDir(out)
    with run.locked(), keeping(functools.partial(kept, run, len(p.requests))):
        resuming = run.start(p.run_info)
        done = {record_key(r) for r in run.records(GENERATIONS)}
        pending = [r for r in p.requests if r.key not in done]
        if resuming:
            have = len(p.requests) - len(pending)
            console.print(
                f"resuming {out}: {have}/{len(p.requests)} samples already generated", soft_wrap=True
            )
        timeout, workers = cfg.scoring.score_timeout, cfg.scoring.score_workers
        if pending:
            generate_and_stream(cfg, run, pending, backend)
        planned = [r.key for r in p.requests]
        include = cfg.scoring.lm_eval_include_path
        return out, score_run(
            run,
            timeout=timeout,
            workers=workers,
            planned=planned,
            include_path=include,
            cache=cfg.scoring.cache,
        )


def generate_and_stream(cfg: EvalConfig, run: RunDir, pending: list[Request], backend) -> None:
    """Generate `pending`, scoring each batch as it arrives where the scorer allows it."""
    timeout, workers = cfg.scoring.score_timeout, cfg.scoring.score_workers
    with progress_bar() as bar:
        generating = bar.add_task("generating", total=len(pending))
        scoring = bar.add_task("scoring", total=0)
        stream = ScoreStream(
            run,
            timeout=timeout,
            workers=workers,
            include_path=cfg.scoring.lm_eval_include_path,
            on_scored=lambda n: bar.advance(scoring, n),
        )
        bar.update(scoring, total=sum(stream.streams(r.benchmark) for r in pending))

        def on_records(records: list[dict]) -> None:
            bar.advance(generating, len(records))
            stream.submit(records)

        try:
            generate(cfg, run, pending, backend, on_records)
        except BaseException:  # what was written stays; score_run scores it on the next run
            stream.close(finish=False)
            raise
        stream.close()


def generate(cfg: EvalConfig, run: RunDir, pending: list[Request], backend, on_records: OnRecords) -> None:
    """On `backend`, on a fresh engine, or on one engine per data-parallel shard."""
    on_engine = functools.partial(record_engine, run)
    if cfg.engine.data_parallel_size > 1:
        generate_sharded(cfg.engine, pending, run.path, on_engine=on_engine, on_records=on_records)
        return
    engine = backend or make_backend(cfg.engine)
    try:
        generate_into(run, engine, pending, on_engine=on_engine, on_records=on_records)
    finally:
        if backend is None:
            engine.close()
