"""`harness eval --ray ADDRESS --shards 3` on a real Ray cluster on 127.0.0.1 (a head node and a worker
node, one CPU each, started with `ray start`): the merged run equals the unsplit run file for file, and a
shard whose worker is killed mid-run is run again by Ray and resumes its folder."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from helpers import SHARED_DATA, run_cli
from multiproc.launch import free_port

from harness.stages.plan import shard_of

FILES = ("generations.jsonl", "scores.jsonl", "results.json", "run.json")
RAY = [sys.executable, "-m", "ray.scripts.scripts"]  # the `ray` command of this environment
ENV = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}  # Ray asks no server of its own


@pytest.fixture(scope="module")
def cluster():
    """A head node and a worker node on this machine; its address. `ray stop` ends both."""
    port, temp = free_port(), tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # Ray's sockets need short paths
    head = ["start", "--head", "--port", str(port), "--include-dashboard", "false", "--disable-usage-stats"]
    node = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--temp-dir", temp]
    try:
        subprocess.run([*RAY, *head, *node], env=ENV, check=True, capture_output=True, timeout=120)
        worker = ["start", "--address", f"127.0.0.1:{port}", *node]
        subprocess.run([*RAY, *worker], env=ENV, check=True, capture_output=True, timeout=120)
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([*RAY, "stop", "--force"], env=ENV, capture_output=True, timeout=120)
        shutil.rmtree(temp, ignore_errors=True)


def arguments(model, out, n, *extra):
    # a generous scorer limit: a loaded machine must not turn a slow math-verify call into a different score
    return ["--benchmarks", "aime24", "--model", str(model), "--n", str(n), "--max-tokens", "6", "--limit",
            "4", "--data-dir", str(SHARED_DATA), "--seed", "3", "--score-timeout", "120", "--out", str(out),
            *extra]  # fmt: skip


def assert_same_run(merged: Path, whole: Path) -> None:
    """The same records and results; run.json the same but for the machine (the first shard's: a Ray
    worker's thread settings are Ray's)."""
    for name in FILES[:3]:
        assert (merged / name).read_bytes() == (whole / name).read_bytes(), name
    ours, theirs = (json.loads((folder / "run.json").read_text()) for folder in (merged, whole))
    assert ours.pop("machine")["cpu_count"] == theirs.pop("machine")["cpu_count"]
    assert ours == theirs


def test_three_shards_on_a_ray_cluster_merge_into_the_unsplit_run(cluster, answering_model, tmp_path):
    run_cli("eval", *arguments(answering_model, tmp_path / "whole", 20))
    on_ray = arguments(answering_model, tmp_path / "ray", 20, "--ray", cluster, "--shards", "3")
    done = run_cli("eval", *on_ray)
    assert_same_run(tmp_path / "ray", tmp_path / "whole")
    said = (done.stdout + done.stderr).splitlines()
    assert sorted(line for line in said if line.startswith("ray: shard")) == [
        f"ray: shard {k}/3 done" for k in (1, 2, 3)
    ]
    assert sorted(p.name for p in (tmp_path / "ray.shards").iterdir()) == ["1-of-3", "2-of-3", "3-of-3"]
    # the same command again: the merged run is there, and is not overwritten
    again = run_cli("eval", *on_ray, check=False)
    assert again.returncode == 2 and "is not empty" in again.stderr and again.stderr.count("\n") == 1


def task_process(name: str) -> int | None:
    """The Ray worker running the task called `name` (Ray titles it `ray::NAME`)."""
    for entry in Path("/proc").iterdir():
        try:
            title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if title.startswith(f"ray::{name}"):
            return int(entry.name)
    return None


def test_a_shard_whose_worker_is_killed_is_run_again_and_resumes(cluster, answering_model, tmp_path):
    n = 32  # 2 blocks of 16 samples per item: the largest shard is killed while it writes them
    run_cli("eval", *arguments(answering_model, tmp_path / "whole", n, "--batch-size", "2"))
    sizes = [0, 0, 0]
    for line in (tmp_path / "whole" / "generations.jsonl").read_text().splitlines():
        record = json.loads(line)
        sizes[shard_of(record["benchmark"], record["item_id"], record["sample_idx"], 3)] += 1
    k = sizes.index(max(sizes)) + 1
    command = [sys.executable, "-m", "harness", "eval"]
    command += arguments(
        answering_model, tmp_path / "ray", n, "--batch-size", "2", "--ray", cluster, "--shards", "3"
    )
    launcher = subprocess.Popen(command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    generations = tmp_path / "ray.shards" / f"{k}-of-3" / "generations.jsonl"
    deadline, victim = time.monotonic() + 300, None
    try:
        while victim is None:
            assert launcher.poll() is None and time.monotonic() < deadline, "the shard never started writing"
            if generations.is_file() and generations.read_text().count("\n") >= 2:
                victim = task_process(f"harness eval shard {k}/3")
            time.sleep(0.05)
        os.kill(victim, signal.SIGKILL)
        output, _ = launcher.communicate(timeout=600)
    finally:
        launcher.kill()
    assert launcher.returncode == 0, output[-3000:]
    resumed = re.search(rf"resuming \S*{k}-of-3: (\d+)/{sizes[k - 1]} samples already generated", output)
    assert resumed and 2 <= int(resumed.group(1)) < sizes[k - 1], [
        s for s in output.splitlines() if "resum" in s
    ]
    assert_same_run(tmp_path / "ray", tmp_path / "whole")
