"""Data parallel generation: one engine per GPU group, each on its own share of the items.

The items are dealt round-robin to the shards (all samples of an item stay together, so vLLM
still sends them as one request). Each shard appends its records to the run's generations.jsonl
as they finish; a record's content depends only on its request and seed, so the merged run equals
a single-engine run. A shard that fails does not stop the others; the run then stops with a report
of each failed shard, and the same command resumes only what is missing. This is the static
sharding of vLLM's own offline data-parallel example; there is no scheduler to replace.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.types import Request


def deal(requests: Sequence[Request], shards: int) -> list[list[Request]]:
    """Items round-robin over the shards, keeping each item's samples together and in order."""
    items: dict[tuple[str, str], list[Request]] = {}
    for r in requests:
        items.setdefault((r.benchmark, r.item_id), []).append(r)
    dealt: list[list[Request]] = [[] for _ in range(shards)]
    for i, samples in enumerate(items.values()):
        dealt[i % shards].extend(samples)
    return dealt


def device_groups(shards: int, per_shard: int) -> list[list[str]] | None:
    """Disjoint GPU groups of `per_shard` devices, from CUDA_VISIBLE_DEVICES or all GPUs; None on CPU."""
    import torch

    if not torch.cuda.is_available():
        return None
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    devices = visible.split(",") if visible else [str(i) for i in range(torch.cuda.device_count())]
    if len(devices) < shards * per_shard:
        raise HarnessError(
            f"--data-parallel-size {shards} x --tensor-parallel-size {per_shard} needs "
            f"{shards * per_shard} GPUs; {len(devices)} are visible"
        )
    return [devices[k * per_shard : (k + 1) * per_shard] for k in range(shards)]


def _shard(cfg, k: int, requests: list[Request], run_dir: Path, devices: list[str] | None, messages) -> None:
    """A shard's process: its own engine on its own devices, appending to the shared run directory."""
    if devices is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(devices)
    from harness.evaluate import check_context, make_backend
    from harness.pipeline import completion_record
    from harness.store import GENERATIONS, RunDir

    try:
        backend = make_backend(cfg)
        check_context(backend, requests)
        messages.put(("engine", k, backend.describe()))
        run = RunDir(run_dir)
        for batch in backend.generate(requests):
            run.append(GENERATIONS, [completion_record(c) for c in batch])
            messages.put(("done", k, len(batch)))
    except BaseException as e:
        messages.put(("error", k, f"{type(e).__name__}: {e}"))
        raise SystemExit(1) from None


def generate_sharded(
    cfg,
    requests: Sequence[Request],
    run_dir: Path,
    *,
    on_engine: Callable[[dict[str, Any]], None],
    on_done: Callable[[int], None],
) -> None:
    """Run `cfg.data_parallel_size` shards to the end; raise one report for every shard that failed."""
    shards = cfg.data_parallel_size
    groups = device_groups(shards, cfg.tensor_parallel_size) or [None] * shards
    context = multiprocessing.get_context("spawn")
    messages = context.Queue()
    one_engine = replace(cfg, data_parallel_size=1)
    processes, errors = [], {}
    for k, (share, devices) in enumerate(zip(deal(requests, shards), groups, strict=True)):
        if share:
            process = context.Process(
                target=_shard, args=(one_engine, k, share, run_dir, devices, messages), name=f"shard-{k}"
            )
            process.start()
            processes.append((k, devices, process))
    engine_seen = False
    while any(p.is_alive() for _, _, p in processes) or not messages.empty():
        try:
            kind, k, payload = messages.get(timeout=0.5)
        except queue.Empty:
            continue
        if kind == "done":
            on_done(payload)
        elif kind == "engine" and not engine_seen:
            engine_seen = True
            on_engine({**payload, "data_parallel_size": shards})
        elif kind == "error":
            errors[k] = payload
    reports = []
    for k, devices, process in processes:
        process.join()
        if process.exitcode != 0:
            where = f" on GPUs {','.join(devices)}" if devices else ""
            reports.append(
                f"shard {k}{where} exited with code {process.exitcode}: {errors.get(k, 'no message')}"
            )
    if reports:
        raise HarnessError(
            "generation failed:\n"
            + "\n".join(reports)
            + "\nFinished samples are kept; run the same command again to generate only what is missing."
        )
