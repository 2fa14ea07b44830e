"""The scorers' process pool (`harness.scoring.pool`): results, exceptions, crashes and timeouts by index."""

from __future__ import annotations

import os
import time

from harness.scoring.pool import CallCrashed, CallTimeout, map_with_timeout

# spawned workers import this module to find the task, so it lives at top level


def pool_task(payload):
    kind, arg = payload
    if kind == "ok":
        return arg * 2
    if kind == "raise":
        raise ValueError(arg)
    if kind == "exit":
        os._exit(arg)
    if kind == "sleep":
        time.sleep(arg)
        return "slept"
    raise AssertionError(kind)


def test_pool_exception_crash_and_timeout_are_results():
    payloads = [
        ("ok", 1),
        ("raise", "boom"),
        ("ok", 2),
        ("exit", 3),
        ("ok", 3),
        ("sleep", 30),
        ("ok", 4),
        ("sleep", 0.05),
    ]
    start = time.monotonic()
    results = list(map_with_timeout(pool_task, payloads, timeout=1.5, workers=2))
    elapsed = time.monotonic() - start
    assert elapsed < 20, elapsed
    assert sorted(i for i, _ in results) == list(range(len(payloads)))
    by_index = dict(results)
    assert by_index[0] == 2
    assert by_index[2] == 4
    assert by_index[4] == 6
    assert by_index[6] == 8
    assert by_index[7] == "slept"
    assert isinstance(by_index[1], RuntimeError)
    assert "ValueError" in str(by_index[1]) and "boom" in str(by_index[1])
    assert isinstance(by_index[3], CallCrashed)
    assert "code 3" in str(by_index[3])
    assert isinstance(by_index[5], CallTimeout)


def test_pool_single_worker_recovers_after_crash_and_timeout():
    payloads = [("exit", 7), ("sleep", 30), ("ok", 21)]
    start = time.monotonic()
    results = list(map_with_timeout(pool_task, payloads, timeout=1.0, workers=1))
    assert time.monotonic() - start < 20
    # one worker: strictly in order
    assert [i for i, _ in results] == [0, 1, 2]
    assert isinstance(results[0][1], CallCrashed)
    assert isinstance(results[1][1], CallTimeout)
    assert results[2][1] == 42


def test_pool_empty_payloads():
    assert list(map_with_timeout(pool_task, [], timeout=1.0, workers=2)) == []
