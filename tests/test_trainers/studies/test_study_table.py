"""The study table from recorded runs: per-step means, paired differences over seeds with t-intervals,
verdicts, the idle-step filter, and refusals of folders that are not studies."""

import json
import math

import pytest
from scipy.stats import t

from harness import HarnessError
from trainers.studies.catalog import STUDIES
from trainers.studies.table import Interval, accuracy, figure, load, markdown, rows, verdict

SUMMARY = {
    "warm_start_accuracy": 0.5, "constant_baseline": 0.05, "mode_answer_share": 0.1, "distinct_answers": 40,
    "collapse": False,
}  # fmt: skip


def record(folder, arm, seed, steps, accuracy=0.5):
    run = folder / "record" / f"{arm}-seed{seed}"
    run.mkdir(parents=True)
    (run / "metrics.jsonl").write_text(
        "".join(json.dumps({"step": i + 1, **m}) + "\n" for i, m in enumerate(steps))
    )
    (run / "summary.json").write_text(json.dumps({**SUMMARY, "arm": arm, "seed": seed, "accuracy": accuracy}))


def study(folder, seeds=3, name="ulorl"):
    folder.mkdir(exist_ok=True)
    (folder / "study.json").write_text(json.dumps({"settings": {"study": name, "seeds": seeds, "steps": 2}}))
    return folder


def test_a_metric_grpo_does_not_log_is_read_against_the_ablation(tmp_path):
    """AZR's proposer metrics: GRPO proposes nothing, so the constant-reward control is the comparison."""
    folder = study(tmp_path / "azr", name="azr")
    for seed, gap in enumerate([0.2, 0.3, 0.25]):
        regime = {"azr/induction/propose/valid_rate": 0.5, "advantages/nonzero_fraction": 0.5}
        record(folder, "method", seed, [{"azr/propose/learnable_rate": 0.4 + gap, **regime}])
        record(folder, "ablation", seed, [{"azr/propose/learnable_rate": 0.4}])
        record(folder, "grpo", seed, [{"loss": 1.0}])
    first = rows(load(folder))[0]
    assert first["method_minus_grpo"].n == 0 and first["method_minus_ablation"].mean == pytest.approx(0.25)
    assert first["verdict"] == "shown (against the ablation)" and first["verdict_vs_ablation"] == "shown"


def test_the_plot_names_every_arm_once_in_its_own_colour_on_every_panel(tmp_path):
    """GRPO logs no proposer metric: it is drawn on the last panel only, and still named and coloured."""
    folder = study(tmp_path / "azr", name="azr")
    for seed in range(2):
        proposer = {"azr/propose/learnable_rate": 0.3, "advantages/nonzero_fraction": 0.5}
        record(folder, "method", seed, [proposer, proposer])
        record(folder, "ablation", seed, [proposer, proposer])
        record(folder, "grpo", seed, [{"advantages/nonzero_fraction": 0.0}] * 2)
    fig = figure(load(folder))
    first, *_, last = fig.axes
    assert [t.get_text() for t in first.get_legend().get_texts()] == [a.label for a in STUDIES["azr"].arms]
    assert [line.get_color() for line in last.get_lines()] == ["C0", "C1", "C2"]
    assert [line.get_color() for line in first.get_lines()] == ["C0", "C1"]


@pytest.mark.parametrize(
    ("valid", "expected"),
    [
        ((0.0, 0.0, 0.0), "not engaged"),
        ((0.0, 0.5, 0.0), "engaged in 1 of 3 seeds"),
        ((0.5, 0.5, 1.0), "engaged"),
    ],
)
def test_the_azr_regime_is_valid_induction_proposals_in_every_seed(tmp_path, valid, expected):
    """AZR's regime: its method arm proposes a valid induction task in some step of each seed."""
    folder = study(tmp_path / "azr", name="azr")
    for seed, rate in enumerate(valid):
        record(
            folder,
            "method",
            seed,
            [{"azr/induction/propose/valid_rate": 0.0}, {"azr/induction/propose/valid_rate": rate}],
        )
        record(folder, "ablation", seed, [{"azr/induction/propose/valid_rate": 0.5}])
    by_key = {r["key"]: r for r in rows(load(folder))}
    assert by_key["azr/induction/propose/valid_rate"]["verdict"] == expected


@pytest.mark.parametrize("idle_key", ["azr/induction/propose/valid_rate", "advantages/nonzero_fraction"])
def test_a_regime_not_reached_makes_the_study_verdict_not_engaged(tmp_path, idle_key):
    """The first AZR study: every advantage 0 (one row per TRR++ slice). A learnable-share gap over the
    control would then be noise, not the mechanism: the first row says "not engaged", not "shown"."""
    folder = study(tmp_path / "azr", name="azr")
    for seed, gap in enumerate([0.2, 0.3, 0.25]):
        regime = {"azr/induction/propose/valid_rate": 0.5, "advantages/nonzero_fraction": 0.5, idle_key: 0.0}
        record(folder, "method", seed, [{"azr/propose/learnable_rate": 0.4 + gap, **regime}])
        record(folder, "ablation", seed, [{"azr/propose/learnable_rate": 0.4, **regime}])
    table = rows(load(folder))
    assert (table[0]["verdict"], table[0]["verdict_vs_ablation"]) == ("not engaged", "not engaged")
    assert table[0]["method_minus_ablation"].mean == pytest.approx(0.25)  # still reported
    assert {r["key"]: r["verdict"] for r in table}[idle_key] == "not engaged"


def test_paired_interval_and_verdict_over_seeds(tmp_path):
    folder = study(tmp_path / "s")
    gaps = [0.10, 0.20, 0.15]
    for seed, gap in enumerate(gaps):
        active = {
            "ulorl/trained_tokens": 10.0,
            "ulorl/dmmpt/trigger_rate": 0.5,
            "ulorl/dmmpt/masked_fraction": 0.3,
        }
        idle = {"ulorl/trained_tokens": 0.0, "entropy": 0.0}  # a step that trained nothing: not counted
        record(
            folder,
            "method",
            seed,
            [{**active, "entropy": 0.3 + gap}, idle, {**active, "entropy": 0.3 + gap}],
            0.6,
        )
        record(folder, "ablation", seed, [{"ulorl/trained_tokens": 5.0, "entropy": 0.3}, idle], 0.55)
        record(folder, "grpo", seed, [{"entropy": 0.3}, {"entropy": 0.3}], 0.5)
    runs = load(folder)
    first = rows(runs)[0]
    assert first["method"].mean == pytest.approx(0.3 + sum(gaps) / 3)
    half = t.ppf(0.975, 2) * 0.05 / math.sqrt(3)  # the gaps' sample standard deviation is 0.05
    diff = first["method_minus_grpo"]
    assert (diff.mean, diff.low, diff.high) == pytest.approx((0.15, 0.15 - half, 0.15 + half))
    assert first["verdict"] == "shown" and first["verdict_vs_ablation"] == "shown"
    assert rows(runs)[1]["verdict"] == "engaged"  # the trigger rate, logged by the method only
    acc = accuracy(runs)
    assert acc["method_minus_grpo"].mean == pytest.approx(0.1) and acc["constant_baseline"] == 0.05
    table = markdown([runs])
    assert "| ulorl | mean token entropy of the trained samples (higher) |" in table and "**shown**" in table
    assert f"0.150 [{0.15 - half:.3f}, {0.15 + half:.3f}] (0.100, 0.200, 0.150)" in table  # each seed's gap


def test_a_mechanism_that_never_fired_is_not_engaged(tmp_path):
    folder = study(tmp_path / "s", seeds=3)
    for seed in range(3):
        zero = {"ulorl/trained_tokens": 1.0, "ulorl/dmmpt/trigger_rate": 0.0, "entropy": 1.0 + seed / 100}
        record(folder, "method", seed, [zero, zero])
        record(folder, "grpo", seed, [{"entropy": 0.5}])
    by_key = {r["key"]: r for r in rows(load(folder))}
    # the entropy gap over GRPO excludes 0, but DMMPT never fired: it is not DMMPT's doing
    assert by_key["entropy"]["verdict"] == "not engaged" and by_key["entropy"]["method_minus_grpo"].low > 0
    assert by_key["ulorl/dmmpt/trigger_rate"]["verdict"] == "not engaged"


def test_verdicts_and_one_seed():
    assert verdict(Interval(-0.2, -0.3, -0.1, 3), +1) == "reversed"
    assert verdict(Interval(-0.2, -0.3, -0.1, 3), -1) == "shown"
    assert verdict(Interval(0.1, -0.1, 0.3, 3), +1) == "not shown"
    one = Interval.of([0.4])
    assert one.n == 1 and math.isnan(one.low) and verdict(one, +1) == "not shown" and one.text() == "0.400"
    assert Interval.of([math.nan]).text() == "-"


def test_folders_that_are_not_studies_are_refused(tmp_path):
    with pytest.raises(HarnessError, match="not a study folder"):
        load(tmp_path)
    (tmp_path / "study.json").write_text(json.dumps({"settings": {"study": "nope", "seeds": 1}}))
    with pytest.raises(HarnessError, match="no study 'nope'"):
        load(tmp_path)
    study(tmp_path, seeds=1)
    with pytest.raises(HarnessError, match="no recorded runs"):
        load(tmp_path)
    (tmp_path / "study.json").unlink()
    (tmp_path / "study.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(HarnessError):
        load(tmp_path)


def test_a_scorer_without_a_constant_answer_shows_none(tmp_path):
    folder = study(tmp_path / "s", seeds=1)
    for arm in ("method", "ablation", "grpo"):
        record(folder, arm, 0, [{"entropy": 0.3}])
    summary = folder / "record" / "method-seed0" / "summary.json"
    summary.write_text(json.dumps({**json.loads(summary.read_text()), "constant_baseline": None}))
    assert "best constant -)" in markdown([load(folder)])
