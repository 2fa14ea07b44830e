"""The generate stage on several engines: one per GPU group, each on its own share of the items.

The items are dealt round-robin to the shards (all samples of an item stay together, so vLLM
still sends them as one request). Each shard appends its records to the run's generations.jsonl
as they finish; a record's content depends only on its request and seed, so the merged run equals
a single-engine run. A shard that fails does not stop the others; the run then stops with a report
of each failed shard, and the same command resumes only what is missing. This is the static
sharding of vLLM's own offline data-parallel example; there is no scheduler to replace.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import queue
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from harness import HarnessError
from harness.backends import EngineConfig, make_backend
from harness.core.store import RunDir
from harness.core.terminate import exit_on_sigterm
from harness.core.types import Request
from harness.stages.generate import OnEngine, OnRecords, generate_into
from harness.stages.score import streamed

PR_SET_NAME = 15  # prctl: set the calling thread's name


def deal(requests: Sequence[Request], shards: int) -> list[list[Request]]:
    """Items round-robin over the shards, keeping each item's samples together and in order."""
    items: dict[tuple[str, str], list[Request]] = {}
    for r in requests:
        items.setdefault((r.benchmark, r.item_id), []).append(r)
    dealt: list[list[Request]] = [[] for _ in range(shards)]
    for i, samples in enumerate(items.values()):
        dealt[i % shards].extend(samples)
    return dealt


@dataclass(frozen=True)
class Placement:
    """Where one shard runs: its GPUs, or on a CPU-only machine its own cores."""

    label: str
    env: dict[str, str]
    cpus: list[int] | None = None


def placements(shards: int, per_shard: int) -> list[Placement]:
    """Disjoint GPU groups of `per_shard` devices (from CUDA_VISIBLE_DEVICES or all GPUs); on a
    CPU-only machine, disjoint core sets, because engines whose threads share cores stall each other."""
    import torch

    if torch.cuda.is_available():
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        devices = visible.split(",") if visible else [str(i) for i in range(torch.cuda.device_count())]
        if len(devices) < shards * per_shard:
            raise HarnessError(
                f"--data-parallel-size {shards} x --tensor-parallel-size {per_shard} needs "
                f"{shards * per_shard} GPUs; {len(devices)} are visible"
            )
        groups = [devices[k * per_shard : (k + 1) * per_shard] for k in range(shards)]
        return [Placement(f"GPUs {','.join(g)}", {"CUDA_VISIBLE_DEVICES": ",".join(g)}) for g in groups]
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < shards * per_shard:
        raise HarnessError(
            f"{shards * per_shard} engine workers need as many CPU cores; {len(cores)} are free"
        )
    size = len(cores) // shards
    result = []
    for k in range(shards):
        mine = cores[k * size : (k + 1) * size]
        ranks = [
            mine[r * len(mine) // per_shard : (r + 1) * len(mine) // per_shard] for r in range(per_shard)
        ]
        binding = "|".join(",".join(map(str, rank)) for rank in ranks)  # vLLM: one core list per worker
        env = {"VLLM_CPU_OMP_THREADS_BIND": binding, "OMP_NUM_THREADS": str(len(mine))}
        result.append(Placement(f"CPUs {','.join(map(str, mine))}", env, mine))
    return result


def _name_process(name: str) -> None:
    """The name `ps` and `top` show for this process (Linux), beside the scorer's worker processes."""
    try:
        ctypes.CDLL(None).prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)
    except (OSError, AttributeError):  # not Linux
        pass


def _shard(
    engine: EngineConfig, k: int, requests: list[Request], run_dir: Path, place: Placement, messages
) -> None:
    """A shard's process: its own engine on its own devices, appending to the shared run directory."""
    _name_process(f"harness-shard{k}")
    exit_on_sigterm()  # a stopped run stops its shards; each shard then stops its engine
    os.environ.update(place.env)
    if place.cpus is not None:
        os.sched_setaffinity(0, place.cpus)
    try:
        backend = make_backend(engine)
        try:
            generate_into(
                RunDir(run_dir),
                backend,
                requests,
                on_engine=lambda described: messages.put(("engine", k, described)),
                on_records=lambda records: messages.put(("records", k, [streamed(r) for r in records])),
            )
        finally:
            backend.close()
    except BaseException as e:
        messages.put(("error", k, f"{type(e).__name__}: {e}"))
        raise SystemExit(1) from None


def stop(process: multiprocessing.process.BaseProcess, grace: float = 60) -> None:
    """SIGTERM a shard (it stops its engine and exits), SIGKILL it after `grace` seconds."""
    process.terminate()
    process.join(grace)
    if process.is_alive():
        process.kill()
        process.join()


def generate_sharded(
    engine: EngineConfig,
    requests: Sequence[Request],
    run_dir: Path,
    *,
    on_engine: OnEngine,
    on_records: OnRecords,
) -> None:
    """Run `engine.data_parallel_size` shards to the end; raise one report for every shard that failed."""
    shards = engine.data_parallel_size
    places = placements(shards, engine.tensor_parallel_size)
    context = multiprocessing.get_context("spawn")
    messages = context.Queue()
    one_engine = replace(engine, data_parallel_size=1)
    processes, errors = [], {}
    for k, (share, place) in enumerate(zip(deal(requests, shards), places, strict=True)):
        if share:
            process = context.Process(
                target=_shard, args=(one_engine, k, share, run_dir, place, messages), name=f"shard-{k}"
            )
            process.start()
            processes.append((k, place, process))
    engine_seen = False
    try:
        while any(p.is_alive() for _, _, p in processes) or not messages.empty():
            try:
                kind, k, payload = messages.get(timeout=0.5)
            except queue.Empty:
                continue
            if kind == "records":
                on_records(payload)
            elif kind == "engine" and not engine_seen:
                engine_seen = True
                on_engine({**payload, "data_parallel_size": shards})
            elif kind == "error":
                errors[k] = payload
    except BaseException:  # Ctrl-C, SIGTERM, a failed write: the shards stop too, not at their end
        for _, _, process in processes:
            stop(process)
        raise
    reports = []
    for k, place, process in processes:
        process.join()
        if process.exitcode != 0:
            reason = errors.get(k, "no message")
            reports.append(f"shard {k} ({place.label}) exited with code {process.exitcode}: {reason}")
    if reports:
        raise HarnessError(
            "generation failed:\n"
            + "\n".join(reports)
            + "\nFinished samples are kept; run the same command again to generate only what is missing."
        )
