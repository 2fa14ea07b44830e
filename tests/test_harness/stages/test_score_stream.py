"""Scoring while generating: each batch is scored as it is submitted, and the finished run equals one
scored after generation, byte for byte, even when the streamed scorer fails."""

from __future__ import annotations

import sys
import threading
import time

from harness.backends import EngineConfig
from harness.core.records import generation_record
from harness.core.store import GENERATIONS, SCORES, RunDir
from harness.core.types import Score
from harness.scoring import timeless
from harness.scoring.judge import JudgeConfig
from harness.stages.score import ScoreStream, score_run

GOLDS = {str(i): str(i * 7) for i in range(12)}


def start_run(path) -> RunDir:
    run = RunDir(path)
    judge = JudgeConfig(EngineConfig("j", backend="openai", base_url="http://127.0.0.1:9/v1"))
    config = {
        "benchmarks": ["sums", "qa"],
        "scorers": {"sums": "math", "qa": "cem+judge"},
        "judge": judge.identity(),
    }
    answers = {"sums": GOLDS, "qa": {"q": "paris"}}
    run.start(
        {"config": config, "config_hash": "h", "answers": answers, "judge_base_url": judge.engine.base_url}
    )
    return run


def batch(item: str) -> list[dict]:
    """Two samples of an item: one right, one wrong."""
    right, wrong = f"\\boxed{{{int(item) * 7}}}", "\\boxed{-1}"
    return [generation_record("sums", item, k, text) for k, text in enumerate((right, wrong))]


def scored(run: RunDir) -> int:
    return len(run.records(SCORES)) if run.file(SCORES).exists() else 0


def generate_beside(stream: ScoreStream, run: RunDir, reference: RunDir) -> None:
    """Every batch written to both runs, and streamed for the first."""
    try:
        for item in GOLDS:
            run.append(GENERATIONS, batch(item))
            reference.append(GENERATIONS, batch(item))
            stream.submit(batch(item))
    finally:
        stream.close()


def test_batches_are_scored_as_they_arrive_and_equal_scoring_afterwards(tmp_path):
    streamed, after = start_run(tmp_path / "streamed"), start_run(tmp_path / "after")
    seen = []
    stream = ScoreStream(streamed, workers=1, on_scored=seen.append)
    assert stream.streams("sums") and not stream.streams("qa")  # the judged benchmark waits for the end
    try:
        for item in GOLDS:
            records = batch(item)
            streamed.append(GENERATIONS, records)
            after.append(GENERATIONS, records)
            stream.submit(records)
            if item == "0":  # the first batch is scored before the next one is generated
                deadline = time.monotonic() + 60
                while scored(streamed) < 2:
                    assert time.monotonic() < deadline, "the first batch was not scored"
                    time.sleep(0.05)
    finally:
        stream.close()
    assert scored(streamed) == 2 * len(GOLDS) and sum(seen) == 2 * len(GOLDS)
    results = score_run(streamed)
    assert results == score_run(after)
    assert results["sums"]["avg@2"] == 0.5 and results["sums"]["pass@2"] == 1.0
    for name in ("generations.jsonl", "scores.jsonl", "results.json"):
        assert streamed.file(name).read_bytes() == after.file(name).read_bytes(), name


def test_a_failing_streamed_scorer_leaves_its_batches_to_the_final_pass(tmp_path):
    run, reference = start_run(tmp_path / "failing"), start_run(tmp_path / "reference")
    stream = ScoreStream(run, workers=1, on_scored=lambda n: None)

    def broken(*args, **kwargs):
        raise RuntimeError("scorer crashed")
        yield

    stream.scorers["sums"].score = broken
    generate_beside(stream, run, reference)
    assert scored(run) == 0 and stream.failed
    score_run(run)
    score_run(reference)
    assert run.file(SCORES).read_bytes() == reference.file(SCORES).read_bytes()


def test_only_verdicts_a_busy_machine_cannot_change_are_streamed(tmp_path):
    assert timeless("math") and timeless("cem") and timeless("lm-eval:gsm8k")
    assert not timeless("code") and not timeless("judge") and not timeless("numeric+judge")
    run, reference = start_run(tmp_path / "timed-out"), start_run(tmp_path / "reference")
    stream = ScoreStream(run, workers=1, on_scored=lambda n: None)

    def timed_out(answers, golds, previous=None):
        for i in range(len(answers)):
            yield i, Score(0.0, None, None, {"error": "CallTimeout: no result within 10s; worker killed"})

    stream.scorers["sums"].score = timed_out
    generate_beside(stream, run, reference)
    assert scored(run) == 0 and not stream.failed  # not written: scored again once generation ends
    assert score_run(run) == score_run(reference)
    assert run.file(SCORES).read_bytes() == reference.file(SCORES).read_bytes()


class Signal(BaseException):
    """Stands for `harness.core.terminate.Interrupted`, raised where a signal handler would run."""


def interrupted_at(step: int, call) -> bool:
    """Run `call` raising `Signal` at its `step`-th bytecode, counting those of everything it calls, as a
    signal handler may raise at any of them; whether it was interrupted (False: `call` had fewer steps)."""
    seen = 0

    def trace(frame, event, arg):
        nonlocal seen
        frame.f_trace_opcodes = True
        if event == "opcode":
            seen += 1
            if seen == step:
                raise Signal
        return trace

    sys.settrace(trace)
    try:
        call()
    except Signal:
        return True
    finally:
        sys.settrace(None)
    return False


def test_a_signal_at_any_bytecode_of_a_hand_over_never_leaves_the_stream_waiting(tmp_path):
    """The main thread may be interrupted anywhere in `submit`; the stream must still take the end
    marker and stop (a queue.Queue, interrupted inside its notify, left the thread waiting forever)."""
    steps = 0
    while True:
        steps += 1
        stream = ScoreStream(start_run(tmp_path / f"run{steps}"), workers=1, on_scored=lambda n: None)
        records = batch("1")
        time.sleep(0.2)  # the thread is waiting for a batch
        cut = interrupted_at(steps, lambda stream=stream, records=records: stream.submit(records))
        closing = threading.Thread(target=stream.close, kwargs={"finish": False}, daemon=True)
        closing.start()
        closing.join(timeout=20)
        assert not closing.is_alive(), f"the stream did not stop after an interrupt at bytecode {steps}"
        if not cut:
            break
    assert steps > 1  # the hand-over was interrupted at each of its bytecodes, then ran whole
