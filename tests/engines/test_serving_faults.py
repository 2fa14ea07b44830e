"""`harness eval` through the openai backend when serving goes wrong: the real `vllm serve` killed and
started again, a fault proxy on 127.0.0.1 for an outage and for HTML replies; and what a resume records."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fault_proxy import FaultProxy
from helpers import run_cli
from serving import eval_args, free_port, kill_server, same_files, start_server, stop_server


@pytest.fixture(scope="module")
def served(server, tiny_model, shared_data, tmp_path_factory) -> Path:
    """A run straight through the server: what every faulty run must end up with."""
    out = tmp_path_factory.mktemp("faults") / "served"
    run_cli(*eval_args(tiny_model, shared_data, out, "--backend", "openai", "--base-url", server))
    return out


def through(proxy: FaultProxy, tiny_model, shared_data, out: Path, *extra: str) -> list[str]:
    return eval_args(
        tiny_model, shared_data, out, "--backend", "openai", "--base-url", proxy.base_url, *extra
    )


def test_a_resume_records_no_other_engine_and_keeps_the_endpoint(served, server, tiny_model, shared_data):
    args = eval_args(tiny_model, shared_data, served, "--backend", "openai", "--base-url", server)
    run_cli(*args)
    info = json.loads((served / "run.json").read_text())
    assert "resumed_with" not in info and info["config"]["api"] == "chat"
    stable = {"id", "object", "owned_by", "root", "parent", "max_model_len"}  # not `created`, `permission`
    assert set(info["engine"]["server_model"]) == stable
    refused = run_cli(*args, "--api", "completions", check=False)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "different configuration" in refused.stderr
    assert "api: existing run has 'chat', this command has 'completions'" in refused.stderr


def test_an_outage_is_waited_out_and_the_run_goes_on_within_seconds(
    served, server, tiny_model, shared_data, tmp_path
):
    """Connections dropped and refused for 8 s: no request counts that as a retry (--max-retries 0),
    polling finds the server again at once, and the run ends with the same files."""
    out = tmp_path / "outage"
    with FaultProxy(server, outage_after=4, outage_s=8) as proxy:
        run_cli(*through(proxy, tiny_model, shared_data, out, "--concurrency", "2", "--max-retries", "0",
                         "--server-wait", "60"))  # fmt: skip
    assert proxy.back_at is not None and proxy.posts > 18  # the dropped requests were sent again
    first_back = min(t for t in proxy.forwarded if t >= proxy.back_at)
    assert first_back - proxy.back_at < 3.0
    same_files(out, served)


def test_html_replies_are_retried(served, server, tiny_model, shared_data, tmp_path):
    out = tmp_path / "html"
    with FaultProxy(server, html=2) as proxy:
        run_cli(*through(proxy, tiny_model, shared_data, out, "--concurrency", "2", "--max-retries", "2"))
    assert proxy.posts == 20
    same_files(out, served)


def test_a_proxy_that_only_answers_html_is_a_one_line_error(server, tiny_model, shared_data, tmp_path):
    with FaultProxy(server, html=10**6) as proxy:
        done = run_cli(
            *through(proxy, tiny_model, shared_data, tmp_path / "run", "--max-retries", "1"), check=False
        )
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and "Traceback" not in done.stderr and len(errors) == 1
    assert f"POST {proxy.base_url}/chat/completions still failing after 1 retries in " in errors[0]
    assert (
        "HTTP 200 with a body that is not a JSON object: <!DOCTYPE html> <html><head><title>Gateway"
        in errors[0]
    )


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_a_real_server_restart_is_waited_out(served, tiny_model, shared_data, tmp_path):
    """`vllm serve` killed mid-run and started again on its port (the 26-40 s a CPU restart takes):
    the run waits it out although --max-retries is 0, goes on within seconds of the server's return,
    and ends with the same files as a run that saw no restart."""
    port, log, out = free_port(), tmp_path / "vllm-serve.log", tmp_path / "restart"
    server = start_server(tiny_model, port, log)
    args = eval_args(tiny_model, shared_data, out, "--backend", "openai", "--base-url",
                     f"http://127.0.0.1:{port}/v1", "--concurrency", "1", "--max-retries", "0",
                     "--server-wait", "240")  # fmt: skip
    run = subprocess.Popen([sys.executable, "-m", "harness", *args], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while lines(out / "generations.jsonl") < 3 and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        kill_server(server)
        written = lines(out / "generations.jsonl")
        assert 0 < written < 18, "the run must be under way when the server dies"
        server = start_server(tiny_model, port, log)
        back = time.monotonic()
        while (
            lines(out / "generations.jsonl") == written
            and run.poll() is None
            and time.monotonic() < back + 60
        ):
            time.sleep(0.05)
        resumed_after = time.monotonic() - back
        stderr = run.communicate(timeout=240)[1]
    finally:
        run.kill()
        stop_server(server)
    assert run.returncode == 0, stderr[-2000:]
    assert resumed_after < 5.0, f"first record {resumed_after:.1f} s after the server was back"
    same_files(out, served)
