"""`harness eval` end to end with the vllm and openai backends: records, resume, data parallel."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import run_cli
from serving import VLLM_OPTIONS, eval_args, same_files


def vllm_args(*extra: str) -> tuple[str, ...]:
    return ("--backend", "vllm", *VLLM_OPTIONS, *extra)


def interrupt(args: list[str], out: Path, records: int, sig: signal.Signals = signal.SIGKILL) -> int:
    """Start `harness eval` in its own process group and send `sig` once `records` samples are written:
    SIGKILL to the whole group (the harness and its engine), any other signal to the harness alone,
    which must then stop the engine itself. Returns the samples written."""
    with (out.parent / f"{out.name}.stderr").open("w+") as log:  # what the harness said, shown if it hangs
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness", *args], env={**os.environ, "HF_HUB_OFFLINE": "1"},
            stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
        )  # fmt: skip
        generations = out / "generations.jsonl"
        deadline = time.monotonic() + 300
        while not (generations.exists() and generations.read_text().count("\n") >= records):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.02)
        if sig == signal.SIGKILL:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        else:
            proc.send_signal(sig)
            try:  # the engine's shutdown is slower beside other engines (the vllm tier runs several)
                code = proc.wait(timeout=240)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                log.seek(0)
                raise AssertionError(
                    f"still running 240 s after {sig.name}; it said:\n{log.read()[-3000:]}"
                ) from None
            assert code == 128 + sig
            assert group_ends(proc.pid, within=60), "the engine outlived the harness"
    return generations.read_text().count("\n")


def group_ends(pgid: int, within: float) -> bool:
    """Whether every process of group `pgid` is gone within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    os.killpg(pgid, signal.SIGKILL)
    return False


@pytest.fixture(scope="module")
def vllm_run(tiny_model, shared_data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "vllm"
    done = run_cli(*eval_args(tiny_model, shared_data, out, *vllm_args()))
    assert "aime24" in done.stdout
    return out


def test_vllm_run_records_the_engine(vllm_run):
    info = json.loads((vllm_run / "run.json").read_text())
    engine = info["engine"]
    assert engine["backend"] == "vllm" and engine["vllm"].startswith("0.31.")
    assert (engine["dtype"], engine["tensor_parallel_size"], engine["data_parallel_size"]) == (
        "float32",
        1,
        1,
    )
    gens = [json.loads(line) for line in (vllm_run / "generations.jsonl").read_text().splitlines()]
    assert len(gens) == 18 and len({g["text"] for g in gens}) == 18
    assert all(0 < g["completion_tokens"] <= 40 and g["prompt_tokens"] > 50 for g in gens)


def test_vllm_resume_after_sigkill_equals_uninterrupted(vllm_run, tiny_model, shared_data, tmp_path):
    out = tmp_path / "killed"
    args = eval_args(tiny_model, shared_data, out, *vllm_args("--max-num-seqs", "3"))  # one item at a time
    written = interrupt(args, out, records=3)
    assert 3 <= written < 18
    done = run_cli(*args)
    assert f"{written}/18 samples already generated" in done.stderr.replace("\n", " ")
    same_files(out, vllm_run)


def test_vllm_sigterm_stops_the_engine_and_keeps_the_samples(vllm_run, tiny_model, shared_data, tmp_path):
    """A scheduler's SIGTERM: the harness exits 143, its EngineCore process with it, and resumes."""
    out = tmp_path / "terminated"
    args = eval_args(tiny_model, shared_data, out, *vllm_args("--max-num-seqs", "3"))
    written = interrupt(args, out, records=3, sig=signal.SIGTERM)
    assert 3 <= written < 18
    run_cli(*args)
    same_files(out, vllm_run)


def test_vllm_data_parallel_equals_one_engine(vllm_run, tiny_model, shared_data, tmp_path):
    out = tmp_path / "dp"
    run_cli(*eval_args(tiny_model, shared_data, out, *vllm_args("--data-parallel-size", "2")))
    same_files(out, vllm_run)
    assert json.loads((out / "run.json").read_text())["engine"]["data_parallel_size"] == 2


def test_openai_run_against_vllm_serve_equals_the_offline_engine(
    vllm_run, server, tiny_model, shared_data, tmp_path
):
    out = tmp_path / "served"
    run_cli(*eval_args(tiny_model, shared_data, out, "--backend", "openai", "--base-url", server))
    same_files(out, vllm_run)
    engine = json.loads((out / "run.json").read_text())["engine"]
    assert engine["base_url"] == server and engine["server_model"]["max_model_len"] == 32768


def test_openai_resume_after_sigkill(vllm_run, server, tiny_model, shared_data, tmp_path):
    out = tmp_path / "served-killed"
    args = eval_args(tiny_model, shared_data, out, "--backend", "openai", "--base-url", server)
    written = interrupt([*args, "--concurrency", "1"], out, records=4)
    assert 4 <= written < 18
    run_cli(*args)
    same_files(out, vllm_run)
