"""Reads sized by the file, not by the limit (issue 52, part 4): a clean run's `table` and `regress` work
under a 2 GB address-space cap, a small file reads under a 512 MB one whatever its kind's limit, and a
sparse run.json of gigabytes is refused by its size before a byte is read."""

import resource
import subprocess
import sys
import time

import pytest
from view_runs import base_run, candidate_run

from harness import HarnessError
from harness.core.io.read import RECORDS_BYTES, read_bytes
from harness.core.store import RUN, RunDir

GB = 1 << 30


def capped(limit: int):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_a_small_file_reads_under_a_cap_far_below_its_limit(tmp_path):
    path = tmp_path / "generations.jsonl"
    path.write_text('{"a": 1}\n' * 10)
    code = (
        "import sys; from harness.core.io.read import read_bytes; "
        "print(len(read_bytes(sys.argv[1], None, 2**33)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, preexec_fn=capped(GB // 2)
    )
    assert done.returncode == 0 and done.stdout.strip() == "90", done.stderr[-1500:]
    assert read_bytes(path, limit=RECORDS_BYTES) == b'{"a": 1}\n' * 10


@pytest.mark.slow
def test_table_and_regress_of_a_clean_run_under_two_gigabytes(tmp_path):
    base, candidate = base_run(tmp_path / "base"), candidate_run(tmp_path / "candidate")
    for args in (["table", base, candidate], ["regress", base, candidate]):
        command = [sys.executable, "-m", "harness", *map(str, args)]
        done = subprocess.run(command, capture_output=True, text=True, preexec_fn=capped(2 * GB))
        assert done.returncode in (0, 1), done.stderr[-1500:]
        assert "aime24" in done.stdout


def test_a_sparse_run_json_of_gigabytes_is_refused_by_its_size(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    with open(run / RUN, "wb") as f:
        f.truncate(6 * GB)
    started = time.perf_counter()
    with pytest.raises(HarnessError, match="larger than 64 MiB"):
        RunDir(run).read_json(RUN)
    assert time.perf_counter() - started < 1


def test_a_file_that_grows_past_its_limit_while_read_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "x.json"
    path.write_bytes(b"1" * 100)
    import harness.core.io.read as read

    real = read.os.fstat
    monkeypatch.setattr(
        read.os, "fstat", lambda fd: type("S", (), {"st_size": 10, "st_mode": real(fd).st_mode})()
    )
    with pytest.raises(HarnessError, match="larger than 50 bytes"):
        read_bytes(path, limit=50)
    assert read_bytes(path, limit=200) == b"1" * 100  # grown, within the limit: read whole
