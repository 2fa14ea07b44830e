"""The regression gate: paired statistics against scipy and hand-computed values, and `harness regress` /
`harness compare` exit codes and reports on hand-made runs."""

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import run_cli
from scipy import stats

from harness.metrics import holm, mcnemar_exact, min_detectable_effect, sign_flip_p


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
    assert done.returncode in (0, 1, 2), done.stderr
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
