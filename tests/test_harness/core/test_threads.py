"""Threads that fit the machine (harness/core/threads.py): which count wins, the wait policy in the
environment before torch starts, and run.json's record of both."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import run_cli
from hypothesis import given
from hypothesis import strategies as st

from harness import HarnessError
from harness.core.threads import choose

counts = st.integers(min_value=1, max_value=512)
maybe = st.none() | counts


@given(cpus=counts, requested=maybe, own=maybe, omp=maybe, ranks=maybe)
def test_the_count_is_the_first_of_the_option_the_variables_and_the_share(cpus, requested, own, omp, ranks):
    environ = {
        name: str(value)
        for name, value in (("HARNESS_THREADS", own), ("OMP_NUM_THREADS", omp), ("LOCAL_WORLD_SIZE", ranks))
        if value is not None
    }
    policy = choose(environ, requested, cpus)
    expected = next(
        (value, source)
        for value, source in (
            (requested, "--threads"),
            (own, "HARNESS_THREADS"),
            (omp, "OMP_NUM_THREADS"),
            (max(1, cpus // (ranks or 1) - 1), "share of the CPUs less one"),
        )
        if value is not None
    )
    assert (policy.threads, policy.source) == expected
    assert policy.wait_policy == "PASSIVE" and policy.processes == (ranks or 1)
    if requested is own is omp is None:  # the share: every rank gets one, and together they fit
        assert 1 <= policy.threads and policy.threads * policy.processes <= max(cpus, policy.processes)


def positive(text: str) -> int | None:
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value >= 1 else None


@given(st.text(max_size=8) | st.integers(min_value=-3, max_value=3).map(str))
def test_a_count_is_a_positive_number_or_refused_in_one_line(text):
    """Whatever HARNESS_THREADS or OMP_NUM_THREADS holds: a positive whole number is the count; blank is
    unset; anything else (0, -2, 'many') is one line naming the variable, never a traceback."""
    for name, given_as in (
        ("HARNESS_THREADS", text.strip()),
        ("OMP_NUM_THREADS", text.strip().split(",")[0]),
    ):
        if not text.strip() or (name == "HARNESS_THREADS" and text.strip().lower() == "torch"):
            continue
        if (count := positive(given_as)) is not None:
            assert choose({name: text}, None, 4).threads == count
            continue
        with pytest.raises(HarnessError) as refused:
            choose({name: text}, None, 4)
        assert str(refused.value).startswith(f"{name}=") and "\n" not in str(refused.value)


def test_the_users_wait_policy_stays_and_torch_defaults_set_nothing():
    assert choose({"OMP_WAIT_POLICY": "ACTIVE"}, None, 8).wait_policy == "ACTIVE"
    torch_own = choose({"HARNESS_THREADS": "torch", "OMP_NUM_THREADS": "3"}, None, 8)
    assert (torch_own.threads, torch_own.source, torch_own.wait_policy) == (None, "torch", None)


PROBE = """
import json, os, sys
from harness.core.threads import configure
configure({requested})
import torch
print(json.dumps({{"torch": torch.get_num_threads(), "omp": os.environ.get("OMP_NUM_THREADS"),
    "wait": os.environ.get("OMP_WAIT_POLICY"), "kmp": os.environ.get("KMP_BLOCKTIME")}}))
"""


def probe(requested: int | None, **env: str) -> dict:
    """What torch and the environment hold in a fresh process after `configure(requested)`."""
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "KMP_", "MKL_", "HARNESS_T"))
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(requested=requested)],
        env={**environment, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.slow  # seconds each: `tox -e unit` leaves it to the full tier
def test_torch_computes_with_the_chosen_threads_which_sleep_while_they_wait():
    cpus = len(os.sched_getaffinity(0))
    share = max(1, cpus - 1)  # one CPU left over
    assert probe(None) == {"torch": share, "omp": str(share), "wait": "PASSIVE", "kmp": "0"}
    assert probe(1) == {"torch": 1, "omp": "1", "wait": "PASSIVE", "kmp": "0"}
    assert probe(2) == {"torch": 2, "omp": "2", "wait": "PASSIVE", "kmp": "0"}
    assert probe(None, LOCAL_WORLD_SIZE=str(cpus)) == {"torch": 1, "omp": "1", "wait": "PASSIVE", "kmp": "0"}
    # the user's settings stay as given; HARNESS_THREADS=torch leaves torch alone
    assert probe(None, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="ACTIVE")["wait"] == "ACTIVE"
    assert probe(None, OMP_NUM_THREADS="1")["torch"] == 1
    assert probe(None, HARNESS_THREADS="torch") == {"torch": cpus, "omp": None, "wait": None, "kmp": None}


def test_eval_records_the_threads_in_run_json_and_a_bad_count_is_one_line(tiny_model, shared_data, tmp_path):
    args = ["eval", "--benchmarks", "aime24", "--model", str(tiny_model), "--limit", "1", "--n", "1",
            "--max-tokens", "4", "--data-dir", str(shared_data)]  # fmt: skip
    run_cli(*args, "--out", str(tmp_path / "a"), "--threads", "1")
    machine = json.loads((tmp_path / "a" / "run.json").read_text())["machine"]
    assert machine["threads"] == {
        "threads": 1,
        "source": "--threads",
        "wait_policy": "PASSIVE",
        "cpus": len(os.sched_getaffinity(0)),
        "processes": 1,
    }
    refused = run_cli(*args, "--out", str(tmp_path / "b"), check=False, HARNESS_THREADS="many")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "error: HARNESS_THREADS='many': a number of threads (1 or more), or torch for torch's own defaults"
    ]
    assert not (tmp_path / "b").exists()
