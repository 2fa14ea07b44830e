"""The README's results example on the tiny model: two checkpoints evaluated, a paper-layout table with
CIs, a pass@k plot, the solve/check analysis and a regression verdict, all through the CLI."""

import json

import pytest
from helpers import run_cli

pytestmark = pytest.mark.slow


def test_two_checkpoints_from_eval_to_verdict(tmp_path, tiny_model, shared_data):
    runs = []
    for seed in (1, 2):
        out = tmp_path / f"ck{seed}"
        run_cli(
            "eval", "--benchmarks", "aime24,aime25", "--model", str(tiny_model), "--n", "2",
            "--max-tokens", "16", "--seed", str(seed), "--limit", "3", "--data-dir", str(shared_data),
            "--out", str(out),
        )  # fmt: skip
        runs.append(str(out))

    table = run_cli("table", *runs, "--layout", "spae", "--base", runs[0]).stdout
    assert "| ck1 | " in table and "| ck2 | " in table and " ± " in table
    assert "n=2, T=0.6, top-p=0.95, max tokens=16 (aime24, aime25)." in table

    written = run_cli("plot", "pass-at-k", *runs, "--out", str(tmp_path / "passk")).stdout.split()
    assert [p.rsplit(".", 1)[1] for p in written] == ["png", "pdf"]

    summary = json.loads(run_cli("analyze", runs[0], "--solve-check", "--batch-size", "16").stdout)
    assert summary["mode"] == "probe" and summary["benchmarks"]["aime24"]["n_samples"] == 6

    verdict = run_cli("regress", *runs, "--json", str(tmp_path / "verdict.json"), check=False)
    report = json.loads((tmp_path / "verdict.json").read_text())
    assert verdict.returncode == report["exit_code"] == 0  # random tiny models: no significant change
    assert [c["benchmark"] for c in report["comparisons"]] == ["aime24", "aime25"]
