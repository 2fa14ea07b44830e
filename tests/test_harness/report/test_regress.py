"""The regression gate: paired statistics against scipy and hand-computed values, and `harness regress` /
`harness compare` exit codes and reports on hand-made runs."""

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import answered_run, run_cli
from scipy import stats

from harness.core.metrics import holm, mcnemar_exact, min_detectable_effect, sign_flip_p
from harness.core.store import RESULTS
from harness.scoring.rules import gold_text


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 5), (3, 9), (10, 10), (1, 30), (25, 7)])
def test_mcnemar_equals_scipys_binomial_test(b, c):
    expected = 1.0 if b + c == 0 else stats.binomtest(min(b, c), b + c, 0.5).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-12)


def test_sign_flip_exact_equals_scipys_paired_permutation_test():
    rng = np.random.default_rng(3)
    for size in (5, 9, 14):
        d = np.round(rng.normal(0.1, 0.3, size), 2)
        reference = stats.permutation_test(
            (d,), np.mean, permutation_type="samples", alternative="two-sided", n_resamples=np.inf
        ).pvalue
        assert sign_flip_p(d) == pytest.approx(reference, rel=1e-9)


def test_sign_flip_monte_carlo_is_close_and_zero_differences_give_one():
    d = np.array([0.25] * 30 + [-0.25] * 18)
    exact = 2 * stats.binom.sf(29, 48, 0.5)  # equal magnitudes: a sign test
    assert sign_flip_p(d) == pytest.approx(exact, abs=0.01)
    assert sign_flip_p(np.zeros(7)) == 1.0


def test_holm_by_hand():
    assert holm([0.01, 0.04, 0.03, 0.2]) == pytest.approx([0.04, 0.09, 0.09, 0.2])
    assert holm([0.5, 0.5]) == [1.0, 1.0]


def test_min_detectable_effect_by_hand():
    d = np.array([1.0, -1.0, 0.0, 0.0] * 25)  # sd = sqrt(50/99)
    expected = (1.959963984540054 + 0.8416212335729143) * (50 / 99) ** 0.5 / 10
    assert min_detectable_effect(d, 0.5, 0.05) == pytest.approx(expected)
    same = min_detectable_effect(np.zeros(100), 0.5, 0.05)  # identical runs: independent-error bound
    assert same == pytest.approx((1.959963984540054 + 0.8416212335729143) * 0.5**0.5 / 10)


def write_run(path: Path, values: dict[str, list[list[float]]], **changes) -> Path:
    """A scored run by hand: benchmark -> per item, its samples' values."""
    path.mkdir(parents=True)
    config = {
        "benchmarks": list(values),
        "model": str(path),
        "scorers": dict.fromkeys(values, "math"),
        "sampling": {b: {"n": len(v[0]), "temperature": 0.6} for b, v in values.items()},
        "dataset_hashes": dict.fromkeys(values, "d" * 64),
        "prompt_hashes": dict.fromkeys(values, "p" * 64),
    }
    config.update(changes)
    info = {
        "config": config,
        "answers": {b: {str(i): "1" for i in range(len(v))} for b, v in values.items()},
        "scorer_versions": dict.fromkeys(values, "math-1"),
    }
    (path / "run.json").write_text(json.dumps(info))
    scores = [
        {"benchmark": b, "item_id": str(i), "sample_idx": k, "value": x, "extracted": None, "details": {}}
        for b, items in values.items()
        for i, samples in enumerate(items)
        for k, x in enumerate(samples)
    ]
    (path / "scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores))
    return path


def regress(base: Path, candidate: Path, *extra: str, tmp: Path) -> tuple[int, dict, str]:
    report = tmp / f"report-{candidate.name}.json"
    done = run_cli("regress", str(base), str(candidate), "--json", str(report), *extra, check=False)
    assert done.returncode in (0, 1, 2, 4), done.stderr
    return done.returncode, json.loads(report.read_text()), done.stdout


def test_a_clear_drop_is_a_regression_and_noise_is_not(tmp_path):
    good = [[1.0]] * 30 + [[0.0]] * 10
    base = write_run(tmp_path / "base", {"aime": good, "math": good})
    worse = [[1.0]] * 15 + [[0.0]] * 25  # 15 items lost, none gained
    candidate = write_run(tmp_path / "cand", {"aime": worse, "math": good})
    code, report, out = regress(base, candidate, tmp=tmp_path)
    assert code == 1
    aime, math = report["comparisons"]
    assert aime["test"] == "McNemar exact" and aime["delta"] == pytest.approx(-15 / 40)
    assert aime["p"] == pytest.approx(stats.binomtest(0, 15, 0.5).pvalue)
    assert aime["p_holm"] == pytest.approx(2 * aime["p"]) and aime["verdict"] == "regression"
    assert math["p"] == 1.0 and math["verdict"] == "no significant change"
    assert "| aime | 40 | 75.0 | 37.5 | -37.5 [" in out

    same = write_run(tmp_path / "same", {"aime": good, "math": good})
    assert regress(base, same, tmp=tmp_path)[0] == 0
    assert regress(base, candidate, "--min-effect", "0.5", tmp=tmp_path)[0] == 0  # a 37.5-point drop < 50


def test_several_samples_use_the_paired_permutation_test(tmp_path):
    base = write_run(tmp_path / "base", {"aime": [[1.0, 1.0, 0.0, 1.0]] * 12})
    candidate = write_run(
        tmp_path / "cand", {"aime": [[1.0, 0.0, 0.0, 1.0]] * 6 + [[1.0, 1.0, 0.0, 1.0]] * 6}
    )
    code, report, _ = regress(base, candidate, tmp=tmp_path)
    [c] = report["comparisons"]
    assert c["test"] == "paired sign-flip" and c["delta"] == pytest.approx(-0.125)
    assert c["p"] == pytest.approx(
        2 / 2**6
    )  # six equal drops: only the all-negative patterns and their mirror
    assert code == 1


def test_harness_drift_is_not_comparable_unless_allowed(tmp_path):
    values = {"aime": [[1.0]] * 5 + [[0.0]] * 5}
    base = write_run(tmp_path / "base", values)
    candidate = write_run(tmp_path / "cand", values, prompt_hashes={"aime": "q" * 64})
    code, report, out = regress(base, candidate, tmp=tmp_path)
    assert code == 2
    assert "harness drift in aime: prompt: base pppppppppppp, candidate qqqqqqqqqqqq" in out
    assert report["comparisons"][0]["drift"]
    assert regress(base, candidate, "--allow-drift", tmp=tmp_path)[0] == 0


def test_runs_without_a_shared_benchmark_or_item_are_not_comparable(tmp_path):
    base = write_run(tmp_path / "base", {"aime": [[1.0]]})
    other = write_run(tmp_path / "other", {"math": [[1.0]]})
    code, _, out = regress(base, other, tmp=tmp_path)
    assert code == 2 and "no benchmark scored in both" in out


def test_compare_prints_each_run_against_the_first_without_gating(tmp_path):
    base = write_run(tmp_path / "base", {"aime": [[1.0]] * 20})
    worse = write_run(tmp_path / "worse", {"aime": [[0.0]] * 20})
    done = run_cli("compare", str(base), str(worse), str(base))
    assert done.returncode == 0
    assert done.stdout.count("| aime | 20 |") == 2 and "regression" in done.stdout


# ---------------------------------------------------------------------------------------------
# answer collapse: the demo's "+11 points" that was a model answering 5 to every sum
# ---------------------------------------------------------------------------------------------

GOLDS = [str(i % 6 + i // 6 % 6) for i in range(200)]  # 200 sums of two digits 0-5: 33 are 5


def sums(path: Path, answers: list[str | None], scorer: str = "math") -> Path:
    return answered_run(path, answers, GOLDS, scorer)


def off_by_one(right: set[int]) -> list[str | None]:
    """The gold on the items in `right`, the gold + 1 elsewhere, nothing extracted on items 5, 15, 25..."""
    return [None if i % 10 == 5 else g if i in right else str(int(g) + 1) for i, g in enumerate(GOLDS)]


def results(run: Path) -> dict:
    return json.loads((run / RESULTS).read_text())["sums"]


def test_a_gain_from_answering_5_everywhere_is_a_collapse_not_an_improvement(tmp_path):
    base = sums(tmp_path / "base", off_by_one({0, 50, 100, 150}))  # 4 right, none a 5
    fives = sums(tmp_path / "fives", ["5"] * 200)
    assert results(base)["avg@1"] == 0.02 and results(base)["unextracted_rate"] == 0.1
    assert (results(base)["distinct_answers"], results(base)["mode_answer_share"]) == (12, 28 / 200)
    assert results(fives)["avg@1"] == results(fives)["constant_baseline"] == 33 / 200
    assert (results(fives)["distinct_answers"], results(fives)["mode_answer"]) == (1, "5")
    assert results(fives)["mode_answer_share"] == 1.0

    code, report, out = regress(base, fives, tmp=tmp_path)
    assert code == 4
    [c] = report["comparisons"]
    assert c["delta"] == pytest.approx(29 / 200) and c["p"] == pytest.approx(mcnemar_exact(4, 33))
    assert c["p"] < 1e-5 and c["verdict"] == "collapse" and c["collapse"]
    assert "| sums | 200 | 2.0 | 16.5 | +14.5 [" in out and "| 16.5 | 14.0 → 100.0 | collapse |" in out
    assert (
        "warning: answer collapse in sums: 100.0% of the candidate's samples answer '5' (base's most common "
        "answer: 14.0%); distinct answers 12 -> 1; its 16.5 does not beat the constant-answer baseline 16.5"
    ) in out.splitlines()


def test_the_constant_baseline_reads_golds_stored_with_their_question(tmp_path):
    """integer, numeric and choice golds are stored as {"answers": [...], "question": ...}: the
    constant answer is still the most common accepted answer, not one gold text per item."""
    stored = {"stored": lambda g: gold_text(g, f"Add to {g}.")}
    base = answered_run(tmp_path / "base", off_by_one({0, 50, 100, 150}), GOLDS, "integer", **stored)
    fives = answered_run(tmp_path / "fives", ["5"] * 200, GOLDS, "integer", **stored)
    assert results(fives)["constant_baseline"] == 33 / 200
    code, report, _ = regress(base, fives, tmp=tmp_path)
    assert code == 4 and report["comparisons"][0]["constant_baseline"] == 33 / 200


def test_a_healthy_gain_is_an_improvement(tmp_path):
    base = sums(tmp_path / "base", off_by_one({0, 50, 100, 150}))
    better = sums(tmp_path / "better", off_by_one({i for i in range(200) if i % 3}))
    code, report, out = regress(base, better, tmp=tmp_path)
    [c] = report["comparisons"]
    assert code == 0 and c["verdict"] == "improvement" and not c["collapse"]
    assert c["candidate_answers"]["mode_answer_share"] < 0.2 and "warning" not in out


def test_a_collapse_without_a_gain_is_flagged_and_a_regression_stays_a_regression(tmp_path):
    base = sums(tmp_path / "base", off_by_one(set(range(0, 200, 6))))  # 34 right: 17.0
    fives = sums(tmp_path / "fives", ["5"] * 200)
    code, report, out = regress(base, fives, tmp=tmp_path)
    assert code == 4 and report["comparisons"][0]["verdict"] == "collapse"
    strong = sums(tmp_path / "strong", off_by_one({i for i in range(200) if i % 10 != 5}))  # 90.0
    code, report, out = regress(strong, fives, tmp=tmp_path)
    assert code == 1 and report["comparisons"][0]["verdict"] == "regression"
    assert "warning: answer collapse in sums: 100.0%" in out


def test_without_verbatim_golds_collapse_is_judged_on_the_answers_alone(tmp_path):
    base = sums(tmp_path / "base", off_by_one({0, 50, 100, 150}), scorer="cem")
    fives = sums(tmp_path / "fives", ["5"] * 200, scorer="cem")
    assert "constant_baseline" not in results(fives) and results(fives)["mode_answer_share"] == 1.0
    code, report, out = regress(base, fives, tmp=tmp_path)
    assert code == 4 and report["comparisons"][0]["constant_baseline"] is None
    assert "| 8.0 | – | 14.0 → 100.0 | collapse |" in out
    assert out.splitlines()[-1] == (
        "warning: answer collapse in sums: 100.0% of the candidate's samples answer '5' (base's most common "
        "answer: 14.0%); distinct answers 12 -> 1"
    )
