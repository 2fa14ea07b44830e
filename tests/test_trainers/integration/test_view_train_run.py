"""`harness view` on a folder `harness train` wrote: AZR on the tiny model for one step, evaluated before
and after, read (curves, samples by role, evaluations, their comparison) and bundled, left unchanged."""

from __future__ import annotations

import hashlib

import pytest
from helpers import REPO
from trainer_helpers import invoke

from benchmarks.arithmetic import arithmetic_rows, write_jsonl
from harness.report.plotdata import training_series
from harness.sandbox import isolated
from harness.view.bundle import write_bundle
from harness.view.site import Site


def snapshot(folder):
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.mark.slow
@pytest.mark.skipif(not isolated(), reason="bubblewrap isolation unavailable: AZR runs proposals in it")
def test_view_reads_a_training_folder_with_its_evaluations(plain_model, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    sums = write_jsonl(tmp_path / "sums.jsonl", arithmetic_rows(4, seed=0))
    out = tmp_path / "run"
    result = invoke(
        "train", "azr", "--model", plain_model, "--config", "configs/train/azr-cpu.yaml", "--out", out,
        "--max-steps", "1", "--save-steps", "1", "--eval-every", "1", "--eval-benchmarks", f"jsonl:{sums}",
        "--set", "eval_n=1", "--set", "eval_max_tokens=8",
        "--set", "options.propose_max_tokens=16", "--set", "options.solve_max_tokens=8",
        "--set", "options.mc_samples=2", "--set", "cold_start=null",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    before = snapshot(out)

    site = Site([out])
    runs = site.get("index")["runs"]
    assert [(r["name"], r["kind"], r["step"]) for r in runs] == [
        ("run", "train", None),
        ("run/evals/step-0", "eval", 0),
        ("run/evals/step-1", "eval", 1),
    ]
    summary = site.get("run/0")
    assert summary["method"] == "azr" and [e["step"] for e in summary["evals"]] == [0, 1]
    curves = site.get("run/0/curves")
    loss = training_series(out, "loss")
    assert curves["loss"] == [[float(x), float(y)] for x, y in zip(loss.x, loss.y, strict=True)]
    assert [s["step"] for s in summary["steps"]] == [1]
    records = site.get("run/0/step/1")["records"]
    assert {r["role"] for r in records} == {"propose", "solve"}
    assert all(r["record"]["completion"] is not None for r in records)
    rows = site.get("run/1/bench/0/rows")
    assert rows["benchmark"] == "sums" and len(rows["items"]) == 4
    sample = site.get("run/2/bench/0/sample/0")
    first = arithmetic_rows(4, seed=0)[0]
    assert sample["item_id"] == first["id"] and first["problem"] in sample["messages"][-1]["content"]
    assert site.get("compare/1/2")["comparisons"][0]["benchmark"] == "sums"
    write_bundle(site, tmp_path / "bundle")
    assert snapshot(out) == before
