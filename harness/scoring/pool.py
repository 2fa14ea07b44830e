"""A pool of worker processes with a hard wall-clock limit per call.

A call that exceeds its limit has its worker killed (SIGKILL) and replaced; the caller gets a
`CallTimeout` for it. Nothing a call does can stall the pool, and `signal.alarm` is not needed.
Workers ignore Ctrl-C (`terminate.ignored_by_children`): their parent stops them, and a worker that
printed a traceback or died first would be a crashed call.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import Connection, wait
from typing import Any

from harness.core.terminate import ignored_by_children


class CallTimeout(Exception):
    """The call ran past the pool's wall-clock limit and its worker was killed."""


class CallCrashed(Exception):
    """The worker died during the call (e.g. out of memory)."""


def _serve(conn: Connection, fn: Callable[[Any], Any]) -> None:
    """A worker: fn's result, or its error by name, for each payload, until the pipe to its parent ends
    or is reset (the parent is gone or stopped listening): then it returns quietly, no traceback."""
    try:
        conn.send(("ready", None))
        while True:
            payload = conn.recv()
            try:
                reply = ("ok", fn(payload))
            except Exception as e:  # reported to the caller, the worker lives on
                reply = ("error", f"{type(e).__name__}: {e}")
            try:
                conn.send(reply)
            except (OSError, EOFError):
                raise
            except Exception as e:  # a result that does not pickle
                conn.send(("error", f"{type(e).__name__}: {e}"))
    except (OSError, EOFError):
        return


class _Worker:
    def __init__(self, ctx: Any, fn: Callable[[Any], Any]):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(child, fn), daemon=True)
        with ignored_by_children():
            self.process.start()
        child.close()
        self.ready = False
        self.task: int | None = None
        self.deadline = float("inf")

    def kill(self) -> None:
        self.process.kill()
        self.process.join()
        self.conn.close()


class TimeoutPool:
    """Worker processes that stay alive across `map` calls; `close()` ends them.

    Starting a spawned worker re-imports the parent's main module, which costs seconds in a process
    that imported torch: a trainer scoring every step keeps one pool for the whole run.
    """

    def __init__(self, fn: Callable[[Any], Any], *, timeout: float, workers: int):
        self.fn, self.timeout = fn, timeout
        self.ctx = mp.get_context("spawn")
        self.pool = [_Worker(self.ctx, fn) for _ in range(max(1, workers))]

    def map(self, payloads: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        """Yield (index, result) for each payload, in completion order.

        `result` is fn's return value, or a CallTimeout / CallCrashed / RuntimeError instance.
        """
        queue = list(enumerate(payloads))
        queue.reverse()
        pool = self.pool
        pending = len(queue)
        while pending:
            for worker in pool:
                if worker.ready and worker.task is None and queue:
                    worker.task, payload = queue.pop()
                    worker.conn.send(payload)
                    worker.deadline = time.monotonic() + self.timeout
            next_deadline = min(w.deadline for w in pool)
            wait_for = None if next_deadline == float("inf") else max(0.0, next_deadline - time.monotonic())
            ready = wait([w.conn for w in pool], timeout=wait_for)
            for i, worker in enumerate(pool):
                if worker.conn in ready:
                    try:
                        kind, value = worker.conn.recv()
                    except (EOFError, OSError):
                        kind, value = "crash", None
                    if kind == "ready":
                        worker.ready = True
                        continue
                    if kind == "crash":
                        pool[i] = _Worker(self.ctx, self.fn)
                        worker.kill()
                        if worker.task is None:
                            raise RuntimeError("a scoring worker died while starting")
                        result: Any = CallCrashed(f"worker exited with code {worker.process.exitcode}")
                    else:
                        result = value if kind == "ok" else RuntimeError(value)
                    task, worker.task, worker.deadline = worker.task, None, float("inf")
                    pending -= 1
                    yield task, result
                elif worker.task is not None and time.monotonic() >= worker.deadline:
                    worker.kill()
                    pool[i] = _Worker(self.ctx, self.fn)
                    pending -= 1
                    yield worker.task, CallTimeout(f"no result within {self.timeout:g}s; worker killed")

    def close(self) -> None:
        for worker in self.pool:
            worker.kill()


def map_with_timeout(
    fn: Callable[[Any], Any], payloads: Iterable[Any], *, timeout: float, workers: int
) -> Iterator[tuple[int, Any]]:
    """`TimeoutPool.map` on a pool of at most `workers` made for this call and closed after it.

    `fn` must be a module-level function (workers are spawned, not forked).
    """
    payloads = list(payloads)
    if not payloads:
        return
    pool = TimeoutPool(fn, timeout=timeout, workers=min(workers, len(payloads)))
    try:
        yield from pool.map(payloads)
    finally:
        pool.close()
