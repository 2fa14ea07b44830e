"""The main job offline: AIME shipped in the package, the Hub found unreachable in about a second,
`--model auto` falling back to SmolLM2, and CPU caps that name only what they changed."""

import json
import socket
import time
import tomllib

import pytest
import torch
from helpers import REPO, run_cli

from benchmarks import BENCHMARKS
from benchmarks.base import PACKAGED_DIR
from harness import HarnessError
from harness.cli.evaluation import CPU_REASONING_CAP, OFFLINE_CAP, _fit_hardware
from harness.config import SamplingOverrides
from harness.core.data import read_rows
from harness.core.hub import hub_unreachable


@pytest.mark.parametrize(
    ("name", "shared_files", "revision"),
    [
        ("aime24", ["aime24/test.jsonl"], "a45202bd16f1ec06f433442dc1152d0074773465"),
        ("aime25", ["aime25/test2025-I.jsonl", "aime25/test2025-II.jsonl"],
         "7011a9eae7c4b78071f27b6f77f618d65608cfb0"),
    ],
)  # fmt: skip
def test_aime_ships_in_the_package(name, shared_files, revision, shared_data, tmp_path):
    loaded = BENCHMARKS[name].load()  # no data folder, and HF_HUB_OFFLINE (conftest)
    assert loaded.source["kind"] == "packaged" and loaded.source["origin"]["revision"] == revision
    assert loaded.source["why"] == "HF_HUB_OFFLINE is set"
    gold = {str(row["id"]): str(row["answer"]) for f in shared_files for _, row in read_rows(shared_data / f)}
    assert len(loaded.items) == 30 and {i.id: i.answer for i in loaded.items} == gold
    combined = {str(r["id"]): str(r["answer"]) for _, r in read_rows(shared_data / "aime25/test.jsonl")}
    if name == "aime25":  # the answers agree with the other (corrupted-text) copy too
        assert gold == combined
    assert BENCHMARKS[name].load(shared_data).source["kind"] == "local"  # a data folder that has it wins
    with pytest.raises(HarnessError, match=f"no data for benchmark '{name}' under {tmp_path} "):
        BENCHMARKS[name].load(tmp_path)  # one that does not is an error, as for every benchmark


def test_every_packaged_file_is_declared_as_package_data():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    globs = pyproject["tool"]["setuptools"]["package-data"]["benchmarks"]
    files = [p.relative_to(PACKAGED_DIR.parent) for p in PACKAGED_DIR.rglob("*") if p.is_file()]
    assert len(files) == 4 and all(any(f.match(g) for g in globs) for f in files)


def test_a_silent_hub_is_found_out_in_about_a_second(monkeypatch):
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        monkeypatch.delenv("HF_HUB_OFFLINE")
        endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}"
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
        hub_unreachable.cache_clear()
        start = time.monotonic()
        why = hub_unreachable()
        elapsed = time.monotonic() - start
    hub_unreachable.cache_clear()
    assert 1.4 < elapsed < 3
    assert why == f"{endpoint} did not answer within 1.5 s (ReadTimeout)"


@pytest.mark.skipif(torch.cuda.is_available(), reason="caps apply without a GPU")
def test_cpu_caps_name_only_what_they_changed(capsys):
    capped = _fit_hardware(SamplingOverrides(n=16, max_tokens=32768, temperature=0.6), OFFLINE_CAP)
    assert (capped.n, capped.max_tokens, capped.temperature) == (1, 256, 0.6)
    assert "capped n 16 -> 1, max_tokens 32768 -> 256;" in capsys.readouterr().err
    kept = SamplingOverrides(n=2, max_tokens=100)
    assert _fit_hardware(kept, CPU_REASONING_CAP) == kept
    assert capsys.readouterr().err == ""
    capped = _fit_hardware(SamplingOverrides(n=2), CPU_REASONING_CAP)
    assert (capped.n, capped.max_tokens) == (2, 4096)
    assert "capped max_tokens the default -> 4096;" in capsys.readouterr().err


def test_model_auto_offline_evaluates_smollm2_and_says_so(smollm2, tmp_path):
    out = tmp_path / "run"
    done = run_cli("eval", "--benchmarks", "aime24,aime25", "--model", "auto", "--limit", "1", "--n", "1",
                   "--max-tokens", "8", "--fit-hardware", "--out", str(out),
                   HF_HUB_OFFLINE="", HF_ENDPOINT="http://127.0.0.1:9")  # fmt: skip
    assert "Hugging Face Hub unreachable (http://127.0.0.1:9 did not answer" in done.stderr
    assert "evaluating smollm2-135m-instruct from the package registry" in done.stderr
    assert "capped" not in done.stderr  # n=1 and 8 tokens are within the caps
    assert f"{smollm2.name} →" in done.stdout  # the table's title names the model
    info = json.loads((out / "run.json").read_text())
    assert info["config"]["model"] == str(smollm2)
    assert {info["datasets"][b]["kind"] for b in ("aime24", "aime25")} == {"packaged"}
