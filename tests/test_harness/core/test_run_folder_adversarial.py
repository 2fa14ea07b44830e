"""Hostile run folders given to the commands that read them (issue 37, points 3 and 4): non-finite or
out-of-range scores, another run's run.json and planted symbolic links are refused as user errors
(regress's exit 3), never a crash, a pass, or a write outside the folder."""

import json
import os
import shutil
from pathlib import Path

import pytest
from inprocess import TWO_ITEMS, harness, one_line_error

from harness.core.store import GENERATIONS, RESULTS, RUN, SCORES

OTHER = '{"id": "x", "problem": "3+3?", "answer": "6"}\n'


def evaluated(tmp: Path, name: str, data: str, model: Path) -> Path:
    """A run of `harness eval` on the tiny model, one sample per item."""
    source = tmp / f"{name}.jsonl"
    source.write_text(data)
    done = harness("eval", "--model", str(model), "--benchmarks", f"jsonl:{source}", "--scorer", "math",
                   "--n", "1", "--max-tokens", "4", "--out", str(tmp / name))  # fmt: skip
    assert done.code == 0, done.stderr
    return tmp / name


pytestmark = pytest.mark.usefixtures("no_data_dir")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, tiny_model) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("runs")
    return {
        "base": evaluated(tmp, "base", TWO_ITEMS, tiny_model),
        "other": evaluated(tmp, "other", OTHER, tiny_model),
    }


def copy(run: Path, tmp: Path, name: str = "copy") -> Path:
    return Path(shutil.copytree(run, tmp / name))


def set_score_value(run: Path, value: str) -> None:
    """The first score's value replaced by `value`, written as JSON text (NaN and Infinity included)."""
    lines = (run / SCORES).read_text().splitlines()
    record = json.loads(lines[0])
    lines[0] = json.dumps(record).replace(f'"value": {json.dumps(record["value"])}', f'"value": {value}')
    (run / SCORES).write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1.5", "-0.25", "1e308", "2"])
def test_regress_and_export_refuse_scores_that_are_not_numbers_in_0_1(tmp_path, runs, value):
    candidate = copy(runs["base"], tmp_path)
    set_score_value(candidate, value)
    for base, cand in ((runs["base"], candidate), (candidate, runs["base"])):
        done = harness("regress", str(base), str(cand))
        assert done.code == 3, done
        message = one_line_error(done)
        assert message.startswith(f"{candidate / SCORES}:1: corrupt record (field 'value' is "), message
        assert "not a number in [0, 1]" in message
    message = one_line_error(harness("export", str(candidate), "--format", "lm-eval"))
    assert f"{candidate / SCORES}:1: corrupt record" in message
    assert not (candidate / "lm-eval").exists()


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_metric_in_results_json_is_refused(tmp_path, runs, value):
    run = copy(runs["base"], tmp_path)
    results = json.loads((run / RESULTS).read_text())
    benchmark = next(iter(results))
    results[benchmark]["extra"] = {"nested": [0.5, "VALUE"]}
    (run / RESULTS).write_text(json.dumps(results).replace('"VALUE"', value))
    message = one_line_error(harness("export", str(run), "--format", "lm-eval"))
    assert message.startswith(f"{run / RESULTS}: not a harness results.json ({benchmark}.extra.nested.1 is ")


def test_another_runs_run_json_is_a_user_error_not_a_crash(tmp_path, runs):
    mixed = copy(runs["base"], tmp_path)
    shutil.copy(runs["other"] / RUN, mixed / RUN)  # run.json of another benchmark, scores of this one
    for args in ((str(runs["base"]), str(mixed)), (str(mixed), str(runs["base"]))):
        done = harness("regress", *args)
        assert done.code == 3, done
        assert "run.json does not describe benchmark" in one_line_error(done)
        assert "from different runs" in one_line_error(done)
    message = one_line_error(harness("export", str(mixed), "--format", "lm-eval"))
    assert "from different runs" in message


@pytest.mark.parametrize(
    "damage",
    [
        lambda info: info.pop("answers"),
        lambda info: info.update(answers=[1, 2]),
        lambda info: info["config"].update(scorers="math"),
        lambda info: info["config"].update(scorers={}),
        lambda info: info["answers"].update({k: "gold" for k in info["answers"]}),
        lambda info: info.update(engine="hf"),
        lambda info: info.update(scorer_versions=["math"]),
        lambda info: info["config"].update(benchmarks=[{"name": 1}]),
        lambda info: info.update(datasets=5),
    ],
)
def test_every_wrong_shape_of_run_json_is_refused_by_regress_and_export(tmp_path, runs, damage):
    run = copy(runs["base"], tmp_path)
    info = json.loads((run / RUN).read_text())
    damage(info)
    (run / RUN).write_text(json.dumps(info))
    done = harness("regress", str(runs["base"]), str(run))
    assert done.code == 3, done
    one_line_error(done)
    one_line_error(harness("export", str(run), "--format", "lm-eval"))


def test_a_crash_in_regress_exits_5_never_a_verdict(tmp_path, runs, monkeypatch):
    """A bug (here: an exception planted in the comparison) is not read as "regression" (exit 1)."""
    import harness.report.regress as regress

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(regress, "compare_benchmark", broken)
    done = harness("regress", str(runs["base"]), str(runs["base"]))
    assert done.code == 5
    assert "ZeroDivisionError: a bug" in done.stderr and "Traceback" in done.stderr


@pytest.mark.parametrize("name", [SCORES, GENERATIONS, RUN])
def test_score_never_writes_through_a_planted_symlink(tmp_path, runs, name):
    run = copy(runs["base"], tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    (run / name).unlink()
    os.symlink(outside, run / name)
    done = harness("score", str(run))
    assert one_line_error(done) == (
        f"{run / name}: a symbolic link; files from outside are read only as regular files, never through "
        "a link (replace the link with what it points to)"
    )
    assert outside.read_text() == "precious\n"
    assert (run / name).is_symlink()


def test_score_replaces_a_symlinked_results_json_without_writing_through_it(tmp_path, runs):
    run = copy(runs["base"], tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    (run / RESULTS).unlink()
    os.symlink(outside, run / RESULTS)
    assert harness("score", str(run)).code == 0
    assert outside.read_text() == "precious\n"
    assert not (run / RESULTS).is_symlink() and json.loads((run / RESULTS).read_text())


@pytest.mark.parametrize("name", [SCORES, GENERATIONS, RUN, RESULTS])
def test_readers_refuse_a_symlinked_run_file(tmp_path, runs, name):
    run = copy(runs["base"], tmp_path)
    (run / name).rename(tmp_path / "moved")
    os.symlink(tmp_path / "moved", run / name)
    commands = [("export", str(run), "--format", "lm-eval")]
    if name in (SCORES, RUN):
        commands.append(("regress", str(runs["base"]), str(run)))
    for args in commands:
        done = harness(*args)
        assert "a symbolic link" in one_line_error(done), args
        assert done.code == (3 if args[0] == "regress" else 2)


def test_a_torn_line_is_not_cut_through_a_symlink(tmp_path, runs):
    run = copy(runs["base"], tmp_path)
    outside = tmp_path / "outside.jsonl"
    outside.write_text((run / SCORES).read_text() + '{"torn')
    (run / SCORES).unlink()
    os.symlink(outside, run / SCORES)
    one_line_error(harness("regress", str(runs["base"]), str(run)))
    assert outside.read_text().endswith('{"torn')


def test_a_symlinked_lock_is_refused(tmp_path, runs):
    run = copy(runs["base"], tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    (run / ".lock").unlink(missing_ok=True)
    os.symlink(outside, run / ".lock")
    assert "a symbolic link" in one_line_error(harness("score", str(run)))
    assert outside.read_text() == "precious\n"


@pytest.mark.parametrize(
    ("metrics", "problem"),
    [
        ({"n_items": "2"}, "not a harness results.json (field 'n_items' is '2')"),
        ({"n_items": 2, "avg@1": "high"}, "field {b}: Value error, avg@1 is 'high', not a number"),
        ({"n_items": 2, "ci95": 0.5}, "field {b}.ci95: Input should be a valid list"),
    ],
)
def test_wrong_typed_results_json_is_one_line_for_every_reader(tmp_path, runs, metrics, problem):
    run = copy(runs["base"], tmp_path)
    benchmark = next(iter(json.loads((run / RESULTS).read_text())))
    (run / RESULTS).write_text(json.dumps({benchmark: metrics}))
    expected = f"{run / RESULTS}: " + problem.format(b=benchmark)
    assert one_line_error(harness("table", str(run))).startswith(expected)
    assert one_line_error(harness("export", str(run), "--format", "lm-eval")).startswith(expected)
    if "not a harness" not in problem:  # the view reads results.json by its schema alone
        assert expected in one_line_error(harness("view", "--bundle", str(tmp_path / "bundle"), str(run)))
