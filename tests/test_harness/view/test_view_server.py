"""`harness view`'s data, server and bundle without a browser: what it reads, what it refuses to serve,
and that run folders are left exactly as they were."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote

import pytest
from helpers import answered_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner
from view_runs import base_run, candidate_run, generations_run, training_run

from harness import HarnessError
from harness.cli import app
from harness.report.plotdata import training_series
from harness.view.bundle import write_bundle
from harness.view.evalrun import CORRECT, TRUNCATED, UNEXTRACTED, WRONG, EvalRun
from harness.view.server import BadPath, make_server, request_path, static_file, url
from harness.view.site import Site


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("view")
    base, candidate = base_run(tmp / "base"), candidate_run(tmp / "candidate")
    return [
        base,
        candidate,
        generations_run(tmp / "elsewhere", tmp),
        training_run(tmp / "train", base, candidate),
    ]


def snapshot(folders: list[Path]) -> dict[str, tuple[str, int]]:
    """Every file under the folders: its content hash and modification time."""
    return {
        str(p): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for folder in folders
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def served(runs):
    server = make_server(Site(runs), port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def get(server, path: str, host: str | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(*server.server_address[:2], timeout=10)
    headers = {"Host": host} if host else {}
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    return response.status, response.read()


def test_every_page_reads_the_runs_and_writes_nothing(runs, tmp_path, served):
    before = snapshot(runs)
    site = Site(runs)
    answers = {path: site.get(path) for path in site.paths()}
    write_bundle(site, tmp_path / "bundle")
    for path in ("/", "/api/index", "/api/run/0/bench/0/sample/3", "/api/compare/0/1", "/api/run/3/step/1"):
        assert get(served, path)[0] == 200, path
    assert snapshot(runs) == before
    # the bundle's page carries the server's Content-Security-Policy; each answer is a script that hands
    # the page its JSON
    assert "script-src 'self'" in (tmp_path / "bundle" / "index.html").read_text()
    shard = (tmp_path / "bundle" / "data" / "run" / "0" / "bench" / "0" / "rows.js").read_text()
    assert shard.startswith('harnessData("run/0/bench/0/rows", ')
    assert json.loads(shard[shard.index(", ") + 2 : -3]) == answers["run/0/bench/0/rows"]


def test_verdicts_and_samples_of_an_eval_run(runs):
    run = EvalRun(runs[0])
    assert run.benchmarks == ["aime24", "humaneval"]
    rows = run.rows(0)
    flags = {item["id"]: [s[2] for s in item["samples"]] for item in rows["items"]}
    assert flags["60"] == [CORRECT, CORRECT]
    assert flags["65"] == [WRONG, WRONG | TRUNCATED | UNEXTRACTED]  # cut off while thinking
    assert rows["items"][0]["problem"].startswith("Every morning Aya")  # read from the run's data
    sample = run.sample(0, 11)
    assert sample["generation"]["finish_reason"] == "length" and sample["score"]["extracted"] is None
    assert sample["messages"][0]["content"].startswith("Let $ABCD$ be a tetrahedron")
    seed = run.sample(0, 0)["generation"]["seed"]
    shown = Site(runs).get("run/0/bench/0/sample/0")["generation"]["seed"]
    assert seed > 2**53 and shown == str(seed)  # as text: a JavaScript number would round it
    assert sample["count"] == 12  # the page offers no "next" after the last sample


def test_regression_view_is_harness_regress_and_its_flips(runs):
    from harness.report.regress import compare_runs

    report = Site(runs).get("compare/0/1")
    code, comparisons, _ = compare_runs(runs[0], runs[1])
    assert report["exit_code"] == code == 0 and report["verdict"] == "no significant regression"
    assert [c["p"] for c in report["comparisons"]] == [c.p for c in comparisons]
    aime = report["flips"][0]
    assert [e["id"] for e in aime["right_to_wrong"]] == ["60"]
    assert [e["id"] for e in aime["wrong_to_right"]] == ["63"]


def test_training_run_curves_steps_and_evaluations(runs):
    site = Site(runs)
    assert [(r["name"], r["kind"], r["parent"], r["step"]) for r in site.get("index")["runs"][3:]] == [
        ("train", "train", None, None),
        ("train/evals/step-0", "eval", 3, 0),
        ("train/evals/step-2", "eval", 3, 2),
    ]
    summary = site.get("run/3")
    assert summary["method"] == "spell" and [e["run"] for e in summary["evals"]] == [4, 5]
    curve = training_series(runs[3], "reward")
    assert site.get("run/3/curves")["reward"] == [[x, y] for x, y in zip(curve.x, curve.y, strict=True)]
    step = site.get("run/3/step/2")
    assert [r["role"] for r in step["records"]] == [
        "question", "propose", "solve", "routed group", "judge replies", "released group", "group",
    ]  # fmt: skip
    assert step["records"][-1]["record"]["samples"][0]["phi"][-1] == 0.99


def test_groups_filter_fields_come_from_run_json(tmp_path):
    run = answered_run(tmp_path / "r", ["1", "2", None], ["1", "3", "4"])
    info = json.loads((run / "run.json").read_text())
    info["groups"] = {"sums": {"difficulty": {"0": "easy", "1": "hard", "2": "hard"}}}
    (run / "run.json").write_text(json.dumps(info))
    rows = EvalRun(run).rows(0)
    assert rows["groups"] == ["difficulty"]
    assert [i["groups"]["difficulty"] for i in rows["items"]] == ["easy", "hard", "hard"]
    assert EvalRun(run).sample(0, 0)["prompt_note"]  # no data to rebuild the prompt from: said why


def test_server_binds_loopback_and_serves_nothing_else(served, runs):
    assert served.server_address[0] == "127.0.0.1"
    port = served.server_address[1]
    for path in (
        "/static/../../../../etc/passwd",
        "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/static/..%2fsite.py",
        "/static/../site.py",
        "/run.json",
        f"/{runs[0]}/run.json",
        "/api/../../run.json",
        "/api/run/0/../../../etc/passwd",
        "/api/run/99",
        "/api/run/0/bench/0/sample/999",
        "/api/run/-1",
        "/api/run/0/bench/x/rows",
    ):
        status, body = get(served, path)
        traverses = ".." in unquote(path).split("/")  # malformed: 400; naming nothing: 404
        assert status == (400 if traverses else 404), (path, status)
        assert b"root:" not in body and b"harnessData" not in body
    assert get(served, "/static/app.js")[0] == 200
    assert get(served, "/api/index", host=f"evil.example:{port}")[0] == 421  # a rebound DNS name


def test_a_symlink_out_of_the_run_folder_is_not_followed(runs, tmp_path):
    secret = tmp_path / "secret.jsonl"
    secret.write_text(
        json.dumps({"benchmark": "aime24", "item_id": "60", "sample_idx": 0, "text": "SECRET"}) + "\n"
    )
    run = tmp_path / "run"
    run.mkdir()
    for name in ("run.json", "scores.jsonl", "results.json"):
        (run / name).write_bytes((runs[0] / name).read_bytes())
    (run / "generations.jsonl").symlink_to(secret)
    view = EvalRun(run)
    assert view.generations is None
    assert "SECRET" not in json.dumps(view.sample(0, 0))


def test_an_evaluation_linked_out_of_a_training_run_is_not_served(runs, tmp_path):
    linked = tmp_path / "linked"
    (linked / "evals").mkdir(parents=True)
    for name in ("train.json", "metrics.jsonl", "samples.jsonl"):
        (linked / name).write_bytes((runs[3] / name).read_bytes())
    (linked / "evals" / "step-7").symlink_to(runs[0])
    (linked / "evals" / "step-8").symlink_to(linked / "evals" / "step-9")  # dangling
    whole = tmp_path / "whole"
    whole.mkdir()
    (whole / "train.json").write_bytes((runs[3] / "train.json").read_bytes())
    (whole / "evals").symlink_to(runs[3] / "evals")
    for folder in (linked, whole):
        assert [r["name"] for r in Site([folder]).get("index")["runs"]] == [folder.name]
    shutil.copytree(runs[0], linked / "evals" / "step-3")  # a real folder inside is read
    assert [r["name"] for r in Site([linked]).get("index")["runs"]] == ["linked", "linked/evals/step-3"]


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not ipv6_loopback(), reason="this machine has no IPv6 loopback")
def test_ipv6_loopback_is_served_when_chosen(runs):
    server = make_server(Site(runs[:1]), host="::1", port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert url(server) == f"http://[::1]:{server.server_address[1]}/"
        status, body = get(server, "/api/index")
        assert status == 200 and json.loads(body)["runs"][0]["name"] == runs[0].name
    finally:
        server.shutdown()
        server.server_close()


def test_bundle_refuses_a_run_folder_and_a_foreign_folder(runs, tmp_path):
    site = Site(runs[:1])
    with pytest.raises(HarnessError, match="inside the run folder"):
        write_bundle(site, runs[0] / "view")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(HarnessError, match="was not made by this command"):
        write_bundle(site, tmp_path / "mine")
    write_bundle(site, tmp_path / "out")
    write_bundle(site, tmp_path / "out")  # an earlier bundle is replaced
    assert (tmp_path / "out" / "index.html").is_file()
    index = (tmp_path / "out" / "data" / "index.js").read_text()
    assert str(runs[0].parent) not in index  # a shared bundle does not say where the runs lay


def test_cli_bundle_and_server(runs, tmp_path):
    done = CliRunner().invoke(app, ["view", "--bundle", str(tmp_path / "b"), str(runs[0]), str(runs[2])])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "b" / "data" / "run" / "1" / "bench" / "0" / "sample" / "1.js").is_file()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "harness", "view", str(runs[0]), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = server.stdout.readline()
        assert line.startswith("serving 1 run(s) at http://127.0.0.1:") and "Ctrl-C" in line
        address = line.split("at http://")[1].split("/")[0]
        connection = http.client.HTTPConnection(address, timeout=10)
        connection.request("GET", "/api/index")
        assert json.loads(connection.getresponse().read())["runs"][0]["name"] == "base"
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=20) == 0
        assert "stopped" in server.stdout.read()
    finally:
        server.kill()


# --- hostile paths ---------------------------------------------------------------------------------

HOSTILE = st.one_of(
    st.sampled_from(["\x00", "%00", "%01", "%7f", "%7F", "\x01", "\x1b", "\x7f", "\x85", "..", "%2e%2e"]),
    st.integers(0x80, 0xBF).map(lambda b: f"%{b:02X}"),  # a UTF-8 continuation byte alone
    st.sampled_from(["%C0", "%C1", "%F5", "%FF", "%E2%82", "%F0%9F%98"]),  # never valid, or cut short
    st.integers(2100, 20000).map(lambda n: "a" * n),  # past the longest path served
)
HARMLESS = st.text(alphabet=st.sampled_from("abcz09._-~%/"), max_size=12)
PREFIX = st.sampled_from(["/", "/static/", "/api/", "/api/run/0/", "//", "/static/vendor/"])


@pytest.fixture(scope="module")
def view_process(runs, tmp_path_factory):
    """`harness view` in its own process, its stderr kept in a file."""
    stderr = tmp_path_factory.mktemp("stderr") / "stderr.txt"
    with stderr.open("w") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "harness", "view", str(runs[0]), str(runs[3]), "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=sink,
            text=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
    try:
        address = process.stdout.readline().split("at http://")[1].split("/")[0]
        yield address, process, stderr
    finally:
        process.kill()
        process.wait()


def status_of(address: str, target: bytes) -> int:
    """The status a raw request for `target` gets (bytes as they are: no client cleans them)."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: " + address.encode() + b"\r\n\r\n")
        line = sock.makefile("rb").readline()
    return int(line.split()[1])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=PREFIX, before=HARMLESS, hostile=HOSTILE, after=HARMLESS)
def test_a_malformed_path_is_answered_4xx_and_the_server_prints_no_traceback(
    view_process, prefix, before, hostile, after
):
    address, process, stderr = view_process
    target = (prefix + before + hostile + after).encode("latin-1")
    assert 400 <= status_of(address, target) < 500, target[:200]
    assert process.poll() is None
    assert stderr.read_text() == ""  # no traceback, no error line


def test_the_request_path_reader_names_each_malformation():
    assert request_path("/static/app.js?x=1") == "/static/app.js"
    assert request_path("/api/run/%C3%A9") == "/api/run/é"
    for target, status in [
        ("/static/a%00b", 400), ("/static/\x00", 400), ("/a%FF", 400), ("/a%E2%82", 400), ("//[", 400),
        ("/static/../x", 400), ("/static/%2e%2e/x", 400), ("/\x1b[31m", 400), ("/" + "a" * 5000, 414),
    ]:  # fmt: skip
        with pytest.raises(BadPath) as refused:
            request_path(target)
        assert refused.value.status == status, target[:40]
    assert static_file("a" * 5000) is None and static_file("app.js") is not None


def _idle(server, count: int) -> list[socket.socket]:
    return [socket.create_connection(server.server_address[:2], timeout=10) for _ in range(count)]


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


@pytest.mark.slow
def test_two_thousand_idle_connections_cost_no_thread_and_a_request_is_still_answered(served):
    held = _idle(served, 2000)
    started = time.monotonic()
    status, body = get(served, "/")
    assert status == 200 and b"<html" in body.lower() and time.monotonic() - started < 5
    assert threading.active_count() < 40  # the idle ones wait in a selector, not in threads
    for sock in held:
        sock.close()


def test_an_idle_connection_is_closed_and_the_oldest_goes_beyond_the_cap(served):
    served.idle_seconds, served.max_waiting = 1.0, 5
    first = _idle(served, 7)
    assert all(_closed_by_server(s, 2.0) for s in first[:2])  # over the cap of 5: the two oldest
    assert all(_closed_by_server(s, 3.0) for s in first[2:])  # then idle past a second
    assert get(served, "/")[0] == 200
