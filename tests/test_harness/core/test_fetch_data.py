"""`harness fetch-data`: benchmark files put where `--data-dir` reads them, from the Hub (a local server
that answers as the Hub does), from a folder that has them, or offline from the shipped AIME copies;
every file's sha256 and origin recorded; the Hub's absence a one-line error saying where the files come
from; and a `--data-dir` without a benchmark an error for every benchmark alike."""

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import run_cli
from hypothesis import given
from hypothesis import strategies as st

from benchmarks import BENCHMARKS
from benchmarks.base import PACKAGED_DIR
from benchmarks.dapo import DAPO_MATH_17K, INSTRUCTION, REMINDER, bare_problem
from harness import HarnessError
from harness.core.data import read_rows, sha256_file

MATH500 = BENCHMARKS["math500"].hub


def checksums(folder: Path) -> dict:
    return json.loads((folder / "checksums.json").read_text())


def test_offline_the_aime_sets_come_from_the_package_and_are_recorded(tmp_path):
    to = tmp_path / "data"
    done = run_cli("fetch-data", "aime24", "aime25", "--to", str(to))
    recorded = checksums(to)
    assert set(recorded) == {"aime24", "aime25"}
    for name in ("aime24", "aime25"):
        files = recorded[name]["files"]
        assert recorded[name]["origin"] == {"kind": "packaged", **BENCHMARKS[name].packaged}
        for f in files:  # the bytes shipped, and their sha256
            assert (to / f["path"]).read_bytes() == (PACKAGED_DIR / f["path"]).read_bytes()
            assert (
                f["sha256"] == sha256_file(to / f["path"]) and f["bytes"] == (to / f["path"]).stat().st_size
            )
        loaded = BENCHMARKS[name].load(to)
        assert loaded.source["kind"] == "local" and len(loaded.items) == 30
    assert "HF_HUB_OFFLINE is set" in done.stdout and f"use --data-dir {to}" in done.stdout


def test_offline_a_benchmark_without_a_shipped_copy_says_where_its_files_come_from(tmp_path):
    to = tmp_path / "data"
    done = run_cli("fetch-data", "math500", "--to", str(to), check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()  # one line
    assert f"the Hub dataset {MATH500.repo} at revision {MATH500.revision}" in line
    assert "HF_HUB_OFFLINE is set" in line and "docs/install.md" in line and "--from FOLDER" in line
    assert not (to / "math500").exists()


def test_from_a_folder_copies_the_clean_copy_and_records_its_checksums(shared_data, tmp_path):
    to = tmp_path / "data"
    run_cli("fetch-data", "math500", "aime25", "--from", str(shared_data), "--to", str(to))
    recorded = checksums(to)
    assert [f["path"] for f in recorded["aime25"]["files"]] == [
        "aime25/test2025-I.jsonl",
        "aime25/test2025-II.jsonl",
    ]  # not the copy with corrupted escapes beside them
    assert not (to / "aime25" / "test.jsonl").exists()
    assert recorded["math500"]["files"] == [
        {
            "path": "math500/test.jsonl",
            "bytes": 446564,
            "sha256": "35dc41080a3680858b27fa7e0533d2d547825316fc5dafe5d316f4ccc5a06132",
        },
    ]  # fmt: skip (SOURCES.md's sha256)
    assert recorded["math500"]["origin"]["kind"] == "local"
    assert len(BENCHMARKS["math500"].load(to).items) == 500


def test_a_file_with_other_bytes_is_never_overwritten(shared_data, tmp_path):
    to = tmp_path / "data"
    (to / "math500").mkdir(parents=True)
    (to / "math500" / "test.jsonl").write_text('{"mine": 1}\n')
    done = run_cli("fetch-data", "math500", "--from", str(shared_data), "--to", str(to), check=False)
    assert done.returncode == 2 and "exists with other bytes" in done.stderr
    assert (to / "math500" / "test.jsonl").read_text() == '{"mine": 1}\n'
    assert not (to / "checksums.json").exists()


def test_a_benchmark_folder_that_is_a_link_is_refused(shared_data, tmp_path):
    elsewhere, to = tmp_path / "elsewhere", tmp_path / "data"
    elsewhere.mkdir()
    to.mkdir()
    (to / "math500").symlink_to(elsewhere)
    done = run_cli("fetch-data", "math500", "--from", str(shared_data), "--to", str(to), check=False)
    assert done.returncode == 2 and f"{to / 'math500'}: a symbolic link" in done.stderr
    assert not any(elsewhere.iterdir()) and not (to / "checksums.json").exists()


BRANCH_COMMIT = "c0ffee" * 6 + "0123"  # what the fake Hub's branches (main) point at


class FakeHub(BaseHTTPRequestHandler):
    """Answers as the Hub does for what huggingface_hub asks: the probe, and a dataset file's HEAD and
    GET at a revision (X-Repo-Commit, ETag, the bytes). `files` maps the URL path to the bytes."""

    files: dict[str, bytes] = {}
    requests: list[str] = []

    def do_HEAD(self):
        self._answer(body=False)

    def do_GET(self):
        self._answer(body=True)

    def _answer(self, body: bool):
        path = self.path.split("?")[0]
        self.requests.append(f"{self.command} {path}")
        if path == "/api/models":
            data = b"[]"
        elif path in self.files:
            data = self.files[path]
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        revision = path.split("/resolve/")[1].split("/")[0] if "/resolve/" in path else ""
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Repo-Commit", revision if len(revision) == 40 else BRANCH_COMMIT)
        self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def hub():
    FakeHub.files, FakeHub.requests = {}, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def hub_env(endpoint: str, home: Path) -> dict[str, str]:
    return {"HF_ENDPOINT": endpoint, "HF_HUB_OFFLINE": "0", "HF_HOME": str(home), "HF_HUB_DISABLE_XET": "1"}


def test_from_the_hub_the_pinned_revision_is_downloaded_once(hub, shared_data, tmp_path):
    data = (shared_data / "math500" / "test.jsonl").read_bytes()
    url = f"/datasets/{MATH500.repo}/resolve/{MATH500.revision}/test.jsonl"
    FakeHub.files = {url: data}
    to, env = tmp_path / "data", hub_env(hub, tmp_path / "hf")
    run_cli("fetch-data", "math500", "--to", str(to), **env)
    assert (to / "math500" / "test.jsonl").read_bytes() == data
    recorded = checksums(to)["math500"]
    assert recorded["origin"] == {"kind": "hub", "repo": MATH500.repo, "revision": MATH500.revision}
    assert recorded["files"][0]["sha256"] == hashlib.sha256(data).hexdigest()
    assert f"GET {url}" in FakeHub.requests  # the pinned revision, not main
    # offline afterwards: --data-dir reads the folder, with no server at all
    loaded = BENCHMARKS["math500"].load(to)
    assert loaded.source["kind"] == "local" and loaded.source["laid_out_as"].endswith(MATH500.revision)
    gets = FakeHub.requests.count(f"GET {url}")
    run_cli("fetch-data", "math500", "--to", str(to), **env)  # again: the cached copy, the same file
    assert FakeHub.requests.count(f"GET {url}") == gets and checksums(to)["math500"] == recorded


def test_from_a_branch_the_commit_it_pointed_at_is_recorded(hub, shared_data, tmp_path):
    """CRUXEval's Hub source follows `main`: the run's and the folder's records name the commit read."""
    data = (shared_data / "cruxeval" / "cruxeval.jsonl").read_bytes()
    FakeHub.files = {"/datasets/cruxeval-org/cruxeval/resolve/main/test.jsonl": data}
    to, env = tmp_path / "data", hub_env(hub, tmp_path / "hf")
    run_cli("fetch-data", "cruxeval_o", "--to", str(to), **env)
    origin = checksums(to)["cruxeval_o"]["origin"]
    assert origin == {
        "kind": "hub",
        "repo": "cruxeval-org/cruxeval",
        "revision": "main",
        "commit": BRANCH_COMMIT,
    }


def dapo_parquet(path: Path, rows: list[tuple[str, str, str]]) -> None:
    """A parquet laid out as DAPO-Math-17K's: prompt messages with the instruction, the ground truth."""
    wrap = (
        f"{INSTRUCTION} The last line of your response should be of the form Answer: $Answer (without "
        "quotes) where $Answer is the answer to the problem.\n\n{}\n\nRemember to put your answer on its "
        'own line after "Answer:".'
    )
    table = pa.Table.from_pylist(
        [
            {
                "data_source": "math_dapo",
                "prompt": [{"content": wrap.format(problem), "role": "user"}],
                "ability": "MATH",
                "reward_model": {"ground_truth": answer, "style": "rule-lapse"},
                "extra_info": {"index": index},
            }
            for index, problem, answer in rows
        ]
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def test_dapo_math_17k_becomes_the_jsonl_the_spae_config_reads(tmp_path):
    source = tmp_path / "raw"
    (name,) = DAPO_MATH_17K.layout.files
    dapo_parquet(
        source / "dapo-math-17k" / name,
        [("a", "What is $1+1$?", "2"), ("b", "Find $x$.", "5"), ("a2", "What is $1+1$?", "2"),
         ("c", "Two answers?", "1"), ("c2", "Two answers?", "3")],
    )  # fmt: skip
    to = tmp_path / "data"
    done = run_cli("fetch-data", "dapo-math-17k", "--from", str(source), "--to", str(to))
    rows = [row for _, row in read_rows(to / "dapo-math-17k.jsonl")]
    assert rows == [
        {"id": "a", "problem": "What is $1+1$?", "answer": "2"},
        {"id": "b", "problem": "Find $x$.", "answer": "5"},
    ]
    assert "5 rows -> 2 distinct questions (1 with two answers left out)" in done.stdout
    recorded = checksums(to)["dapo-math-17k"]
    assert recorded["origin"]["sha256"] == sha256_file(source / "dapo-math-17k" / name)
    assert recorded["files"] == [
        {"path": "dapo-math-17k.jsonl", "sha256": sha256_file(to / "dapo-math-17k.jsonl"),
         "bytes": (to / "dapo-math-17k.jsonl").stat().st_size},
    ]  # fmt: skip


@given(st.text(min_size=1).filter(lambda t: "\n\nRemember to put your answer" not in t))
def test_the_bare_problem_is_the_one_inside_the_instruction(problem):
    wrapped = f"{INSTRUCTION} The last line is Answer: $Answer.\n\n{problem}{REMINDER}."
    assert bare_problem(wrapped) == problem.strip()
    assert bare_problem(problem) == problem.strip().split(REMINDER)[0].strip()  # no instruction: kept


@pytest.mark.parametrize("name", ["aime24", "aime25", "math500", "amc23", "cruxeval_o"])
def test_a_data_dir_without_the_benchmark_is_the_same_error_for_every_benchmark(name, tmp_path):
    expected = (
        rf"^no data for benchmark '{name}' under {tmp_path} \(`harness fetch-data {name} --to {tmp_path}`"
    )
    with pytest.raises(HarnessError, match=expected):
        BENCHMARKS[name].load(tmp_path)


def manifest(
    tmp_path: Path, files: dict[str, bytes], base: str, served: dict[str, bytes] | None = None
) -> Path:
    """A manifest of `files` (path -> the bytes it pins) at BASE/PATH; `served` what the server answers."""
    listed = {
        path: {"url": f"{base}/{path}", "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        for path, data in files.items()
    }
    FakeHub.files.update({f"/{path}": data for path, data in (served or files).items()})
    path = tmp_path / "data.json"
    path.write_text(json.dumps({"name": "test-data", "files": listed}))
    return path


def test_a_manifest_is_fetched_by_url_and_kept_only_with_its_sha256(tmp_path, hub):
    """`fetch-data --manifest`: each file from its URL (a server on 127.0.0.1), kept with the pinned
    sha256 and recorded; fetched again, nothing is downloaded; a file there with other bytes, a URL that
    answers other bytes or more bytes than pinned, and a path out of the folder are refused in one line."""
    files = {"aime24/test.jsonl": b'{"id": 1}\n', "humaneval/HumanEval.jsonl.gz": bytes(range(256))}
    listed, to = manifest(tmp_path, files, hub), tmp_path / "data"
    run_cli("fetch-data", "--manifest", str(listed), "--to", str(to))
    assert {p: (to / p).read_bytes() for p in files} == files
    assert [f["path"] for f in checksums(to)["test-data"]["files"]] == list(files)
    FakeHub.requests.clear()
    run_cli("fetch-data", "--manifest", str(listed), "--to", str(to))
    assert FakeHub.requests == []

    (to / "aime24" / "test.jsonl").write_bytes(b"changed\n")
    done = run_cli("fetch-data", "--manifest", str(listed), "--to", str(to), check=False)
    assert done.returncode != 0 and "already there: sha256" in done.stderr and "pins" in done.stderr
    assert (to / "aime24" / "test.jsonl").read_bytes() == b"changed\n"

    for served, why in (({"a.txt": b"other"}, "but data.json pins"), ({"a.txt": b"x" * 100}, "more than")):
        other = tmp_path / why.split()[0]
        other.mkdir()
        listed = manifest(other, {"a.txt": b"right"}, hub, served)
        done = run_cli("fetch-data", "--manifest", str(listed), "--to", str(other / "data"), check=False)
        assert done.returncode != 0 and why in done.stderr, done.stderr
        assert not (other / "data" / "a.txt").exists()

    outside = tmp_path / "outside"
    outside.mkdir()
    listed = manifest(outside, {"../escape.txt": b"x"}, hub)
    done = run_cli("fetch-data", "--manifest", str(listed), "--to", str(outside / "data"), check=False)
    assert done.returncode != 0 and "not a manifest" in done.stderr
    assert not (outside / "escape.txt").exists()


def test_the_test_suites_manifest_is_the_data_it_reads(shared_data, tmp_path):
    """tests/data.json pins the files the suite reads: HARNESS_TEST_DATA's folder holds each with its
    sha256 (the session checked it), and `--from` that folder fills another one that passes the same
    check."""
    from helpers import DATA_MANIFEST

    from benchmarks.fetch import manifest_problems

    assert manifest_problems(DATA_MANIFEST, shared_data) == []
    run_cli("fetch-data", "--manifest", str(DATA_MANIFEST), "--from", str(shared_data), "--to", str(tmp_path))
    assert manifest_problems(DATA_MANIFEST, tmp_path) == []
    assert {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()} == {
        *json.loads(DATA_MANIFEST.read_text())["files"],
        "checksums.json",
    }
