"""Progress in a log (harness/core/progress.py): plain lines as the work goes, at every 5 % and at a bounded
interval, with done/total, rate and ETA; a real eval with stderr sent to a file writes them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core.progress import LogProgress, duration

LINE = re.compile(r"(?P<what>[\w ()]+): (?P<done>\d+)/(?P<total>\d+) samples \((?P<share>\d+)%\) in \S+")


class Clock:
    """A clock the test moves: by hand, or by `tick` seconds at each reading."""

    def __init__(self, tick: float = 0.0) -> None:
        self.now, self.tick = 0.0, tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


def test_a_line_at_each_five_percent_with_rate_and_eta_and_one_at_the_end():
    lines: list[str] = []
    clock = Clock()
    with LogProgress(lines.append, interval=30, clock=clock) as bar:
        task = bar.add_task("generating", total=40)
        for _ in range(40):
            clock.now += 1.5
            bar.advance(task, 1)
    assert len(lines) == 20  # 2 of 40 is 5 %, 3 s apart: a tenth of the interval
    assert lines[0] == "generating: 2/40 samples (5%) in 3s, 0.667 samples/s, ETA 57s"
    assert lines[9] == "generating: 20/40 samples (50%) in 30s, 0.667 samples/s, ETA 30s"
    assert lines[-1] == "generating: 40/40 samples (100%) in 1m00s, 0.667 samples/s"


def test_fast_steps_make_no_flood_but_the_end_is_always_said():
    lines: list[str] = []
    with LogProgress(lines.append, interval=30, clock=Clock()) as bar:
        task = bar.add_task("minhash web", total=121, unit="documents")
        for _ in range(121):
            bar.advance(task, 1)
    assert lines == ["minhash web: 121/121 documents (100%) in 0s"]


@given(
    total=st.integers(min_value=1, max_value=5000),
    steps=st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=60),
)
def test_lines_are_few_in_order_and_the_last_says_where_it_stopped(total, steps):
    """Whatever the batches: at most one line per 5 % step (and one at the end), counts that only grow,
    and the last line says the count the work stopped at."""
    lines: list[str] = []
    with LogProgress(lines.append, interval=3600, clock=Clock(tick=1000)) as bar:
        task = bar.add_task("scoring", total=total)
        done = 0
        for n in steps:
            n = min(n, total - done)
            if not n:
                break
            bar.advance(task, n)
            done += n
    counts = [int(LINE.match(line)["done"]) for line in lines]
    assert len(lines) <= 21
    assert counts == sorted(counts) and len(set(counts)) == len(counts)
    assert counts[-1] == done


def test_a_long_batch_still_gets_a_line_every_interval():
    """Nothing finishes for a while (one slow batch): the log still hears of the task at each interval."""
    lines: list[str] = []
    clock = Clock()

    def wait_for(count: int) -> None:
        deadline = time.monotonic() + 30
        while len(lines) < count and time.monotonic() < deadline:
            time.sleep(0.01)

    with LogProgress(lines.append, interval=0.05, clock=clock) as bar:
        task = bar.add_task("generating", total=60)
        bar.advance(task, 8)
        clock.now = 100.0
        wait_for(1)
        time.sleep(0.2)  # the clock stands still: no second line
        assert len(lines) == 1
        clock.now = 200.0
        wait_for(2)
    assert lines[0] == "generating: 8/60 samples (13%) in 1m40s, 0.08 samples/s, ETA 10m50s"
    assert lines[1] == "generating: 8/60 samples (13%) in 3m20s, 0.04 samples/s, ETA 21m40s"
    assert len(lines) == 2  # nothing new at the end: the last line said it


def test_durations_read_as_a_person_writes_them():
    assert [duration(s) for s in (0, 42.4, 185, 3720, 90000)] == ["0s", "42s", "3m05s", "1h02m", "25h00m"]


def test_an_eval_logging_to_a_file_writes_progress_lines_as_it_goes(tiny_model, shared_data, tmp_path):
    log = tmp_path / "eval.log"
    args = ["eval", "--benchmarks", "aime24", "--model", str(tiny_model), "--n", "2", "--max-tokens", "16",
            "--batch-size", "4", "--data-dir", str(shared_data), "--out", str(tmp_path / "run")]  # fmt: skip
    with open(log, "w") as stderr:
        done = subprocess.run(
            [sys.executable, "-m", "harness", *args],
            stderr=stderr,
            stdout=subprocess.PIPE,
            text=True,
            env=os.environ | {"HF_HUB_OFFLINE": "1", "HARNESS_PROGRESS_SECONDS": "0.2"},
            timeout=600,
        )
    assert done.returncode == 0, log.read_text()[-3000:]
    text = log.read_text()
    generating = [m for m in map(LINE.match, text.splitlines()) if m and m["what"] == "generating"]
    counts = [int(m["done"]) for m in generating]
    assert counts and counts == sorted(counts) and counts[-1] == 60 == int(generating[-1]["total"])
    assert {4, 8} & set(counts)  # a line as the first batches finish, not only at the end
    assert len(generating) > len(set(counts))  # and lines between them (every 0.2 s here)
    assert "\x1b[" not in text and "━" not in text  # plain lines, not a bar drawn for a terminal
    assert text.splitlines()[-1].startswith("scoring: 60/60 samples (100%)")  # the last line: all done
    assert "aime24" in done.stdout  # the table, on stdout as before


@pytest.mark.slow  # seconds each: `tox -e unit` leaves it to the full tier
def test_a_corpus_build_logging_to_a_file_says_each_long_stage(tmp_path):
    log = tmp_path / "corpus.log"
    with open(log, "w") as stderr:
        done = subprocess.run(
            [sys.executable, "-m", "harness", "corpus", "spell", "--synthetic", "--out", str(tmp_path / "c")],
            stderr=stderr,
            stdout=subprocess.PIPE,
            text=True,
            env=os.environ | {"HF_HUB_OFFLINE": "1"},
            timeout=600,
        )
    assert done.returncode == 0, log.read_text()[-3000:]
    said = {line.split(":")[0]: line for line in log.read_text().splitlines() if "(100%)" in line}
    assert said.keys() >= {"minhash web", "minhash docmath", "minhash passages", "embedding"}
    assert re.fullmatch(r"minhash web: (\d+)/\1 texts \(100%\) in \d+s, [\d.]+ texts/s", said["minhash web"])
    assert re.fullmatch(
        r"embedding: (\d+)/\1 documents \(100%\) in \S+, [\d.]+ documents/s", said["embedding"]
    )


ENVIRONMENT_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12
)


@given(ENVIRONMENT_TEXT | st.floats(allow_nan=True, allow_infinity=True).map(str))
def test_any_interval_setting_gives_a_usable_interval(text):
    import harness.core.progress as progress

    os.environ[progress.INTERVAL_VARIABLE] = text
    try:
        seconds = progress.log_interval()
    finally:
        del os.environ[progress.INTERVAL_VARIABLE]
    assert 0 < seconds < float("inf")
    try:
        given_as = float(text)
    except ValueError:
        given_as = None
    assert seconds == (given_as if given_as and 0 < given_as < float("inf") else 30.0)
