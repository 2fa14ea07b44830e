"""`harness study rank`: the live tournament's ranking against the round robin's, per judge call. The taus
are checked on groups whose matches are known; the command end to end with the tiny model judging."""

import json
import math
import subprocess
import sys

import pytest

from trainers.methods.arena.method import Group
from trainers.methods.arena.tournament import Match
from trainers.studies.ranking import Agreement, compare, markdown, tau


def group(order, rule, calls, key="g"):
    """A group of len(order) traces whose matches rank them as `order` (best first), every pair played."""
    n, rank = len(order), {trace: k for k, trace in enumerate(order)}
    matches = [Match(i, j, 1.0 if rank[i] < rank[j] else 0.0) for i in range(n) for j in range(i + 1, n)]
    return Group(key, "p", "1", ["t"] * n, [1] * n, list(rule), "ranked", None, matches, calls)


def test_tau_is_one_for_the_same_ranking_minus_one_reversed_and_undefined_without_an_order():
    assert tau([3, 2, 1], [30, 20, 10]) == pytest.approx(1.0)
    assert tau([3, 2, 1], [1, 2, 3]) == pytest.approx(-1.0)
    assert math.isnan(tau([1, 1, 1], [1, 2, 3]))
    assert Agreement.of([1.0, math.nan, 0.0]) == Agreement(0.5, 0.5, 2)


def test_compare_reads_each_schedule_against_the_round_robin_its_repeat_and_the_rule():
    rule = [1, 1, 0, 0]  # traces 0 and 1 right
    judged = {
        "live": [group([0, 1, 2, 3], rule, 6), group([3, 2, 1, 0], [1, 1, 1, 1], 6, "h")],
        "round_robin": [group([0, 1, 2, 3], rule, 6), group([0, 1, 2, 3], [1, 1, 1, 1], 6, "h")],
        "round_robin_again": [group([1, 0, 2, 3], rule, 6), group([0, 1, 2, 3], [1, 1, 1, 1], 6, "h")],
    }
    result = compare(judged, l2=0.5)
    first, second = result["groups"]
    assert first["live_vs_round_robin"] == pytest.approx(1.0)
    assert second["live_vs_round_robin"] == pytest.approx(-1.0)
    assert first["round_robin_vs_again"] == pytest.approx(2 / 3)  # one discordant pair of six
    assert first["live_vs_rule"] > 0.8 and math.isnan(second["live_vs_rule"])  # all right: no rule order
    summary = result["summary"]
    assert summary["live_vs_round_robin"] == {"mean": 0.0, "std": 1.0, "defined": 2}
    assert summary["live_vs_rule"]["defined"] == 1
    assert summary["tau_per_call"]["live"] == pytest.approx(0.0)
    assert summary["calls_per_group"] == {"live": 6.0, "round_robin": 6.0, "round_robin_again": 6.0}


def run(*args):
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], capture_output=True, text=True)


def test_rank_command_with_the_tiny_model_judging(tiny_model, tmp_path):
    study = tmp_path / "arena"
    args = ("--model", tiny_model, "--heldout-size", 4, "--dry-run", "--out", study)
    made = run("study", "run", "arena", *args)
    assert made.returncode == 0, made.stderr[-2000:]
    done = run(
        "study", "rank", study, "--model", tiny_model, "--groups", "2", "--responses", "4",
        "--out", tmp_path / "rank",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((tmp_path / "rank" / "ranking.json").read_text())
    assert result["settings"]["groups"] == 2 and len(result["groups"]) == 2
    for g in result["groups"]:  # N = 4: the live schedule's 1 + 2 + 3 calls, the round robin's 6
        assert g["calls"] == {"live": 6, "round_robin": 6, "round_robin_again": 6}
        assert g["live_vs_round_robin"] is None or -1 <= g["live_vs_round_robin"] <= 1
    assert len(result["samples"][0]["responses"]) == 4
    table = (tmp_path / "rank" / "ranking.md").read_text()
    assert table == markdown(result) and table.count("\n") == 5


def test_rank_refuses_a_study_of_another_method(tiny_model, tmp_path):
    study = tmp_path / "spae"
    study.mkdir()
    (study / "study.json").write_text(json.dumps({"settings": {"study": "spae"}}))
    done = run("study", "rank", study, "--model", tiny_model, "--out", tmp_path / "rank")
    assert done.returncode == 2 and "no Reasoning Arena study" in done.stderr
    assert not (tmp_path / "rank").exists()
