"""`harness study run` and `harness study table` end to end at each study's smallest setting (the tiny
model, 2 steps, 1 seed): the folder's layout, a recorded run's checkpoint without its resume state,
resume, refusals, the table regenerated from the kept copy, and the GPU profile's configs resolving in a
dry run."""

import json
import subprocess
import sys

import pytest
import yaml
from helpers import REPO

from harness import HarnessError
from trainers.studies.catalog import STUDIES
from trainers.studies.run import RESUME_STATE, Settings, arm_config, drop_resume_state

SMALL = ["--seeds", "1", "--steps", "2", "--warm-examples", "8", "--warm-epochs", "1", "--train-size", "16",
         "--heldout-size", "6", "--eval-n", "2", "--parallel", "1"]  # fmt: skip


def harness(*args, check=True):
    done = subprocess.run([sys.executable, "-m", "harness", *map(str, args)], capture_output=True, text=True)
    if check:
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_each_study_runs_resumes_and_tabulates_from_its_kept_copy(name, tiny_model, tmp_path):
    study = tmp_path / name
    bf16 = name == "azr"  # one study trains its warm start and arms in bf16 autocast
    precision = ["--bf16"] if bf16 else []
    harness("study", "run", name, "--model", tiny_model, *SMALL, *precision, "--out", study)
    s = STUDIES[name]
    for arm in s.arms:
        config = yaml.safe_load((study / "configs" / f"{arm.name}.yaml").read_text())
        assert config["method"] == arm.method and config["model"] == str(study / "warm-start")
        assert config["trl"].get("bf16", False) is bf16
        questions = f"jsonl:{study / 'data' / 'train.jsonl'}"
        training_set = {"sums": questions, "programs": "azr_deduction", "documents": questions}[s.task]
        if s.task == "documents" and arm.method == "spell":  # SPELL reads the training clusters
            training_set = str(study / "data" / "train" / "clusters.jsonl")
        assert config["max_steps"] == 2 and config["dataset"] == arm.settings.get("dataset", training_set)
        summary = json.loads((study / "record" / f"{arm.name}-seed0" / "summary.json").read_text())
        assert summary["arm"] == arm.name and summary["items"] == 6 and 0 <= summary["accuracy"] <= 1
        steps = [
            json.loads(line)["step"]
            for line in (study / "record" / f"{arm.name}-seed0" / "metrics.jsonl").open()
        ]
        assert max(steps) == 2
        checkpoint = study / "runs" / f"{arm.name}-seed0" / "checkpoint-2"
        kept = {path.name for path in checkpoint.iterdir()}
        assert "model.safetensors" in kept and not kept & {"optimizer.pt", "scheduler.pt", "rng_state.pth"}
    report = json.loads((study / "warm-start" / "report.json").read_text())
    assert report["style"] == s.style and report["contamination"]["dropped"] == {"heldout": 0}
    if s.task == "programs":  # the cold start, and a traced deduction of each warm-start program
        warm = [json.loads(line) for line in (study / "data" / "warm-start.jsonl").open()]
        heldout = (study / "data" / "heldout" / "cruxeval" / "cruxeval.jsonl").read_text()
        assert len(warm) == 8 and not any(f'"{row["id"]}"' in heldout for row in warm)
        assert report["demonstrations"] > len(warm)
    assert report["bf16"] is bf16
    again = harness("study", "run", name, "--model", tiny_model, *SMALL, *precision, "--out", study)
    assert "harness train" not in again.stdout  # everything recorded: nothing reruns
    other = harness(
        "study",
        "run",
        name,
        "--model",
        tiny_model,
        *SMALL[:-2],
        *precision,
        "--parallel",
        "2",
        "--out",
        study,
        check=False,
    )
    assert other.returncode == 2 and "other settings" in other.stderr

    tables = tmp_path / "tables"
    first = harness("study", "table", study, "--out", tables, "--keep")
    assert (tables / f"{name}.png").stat().st_size > 0 and (tables / name / "study.json").is_file()
    assert not (tables / name / "runs").exists() and not (tables / name / "warm-start").exists()
    again = harness("study", "table", tables / name, "--out", tmp_path / "regenerated")
    assert again.stdout == first.stdout
    assert (tmp_path / "regenerated" / "table.md").read_text() == (tables / "table.md").read_text()
    rows = json.loads((tables / "table.json").read_text())[name]
    assert [r["key"] for r in rows] == [m.key for m in s.metrics]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(STUDIES))
def test_the_gpu_profile_resolves_for_every_arm(name, tmp_path):
    done = harness(
        "study", "run", name, "--model", "Qwen/Qwen2.5-0.5B-Instruct", "--profile", "gpu", "--steps", "100",
        "--out", tmp_path / "gpu", "--dry-run",
    )  # fmt: skip
    for arm in STUDIES[name].arms:
        config = yaml.safe_load((tmp_path / "gpu" / "configs" / f"{arm.name}.yaml").read_text())
        assert config["use_vllm"] and config["vllm_mode"] == "colocate" and config["max_steps"] == 100
        assert config["model"] == "Qwen/Qwen2.5-0.5B-Instruct"
        assert f"{arm.name}: harness train {arm.method}" in done.stdout
    assert not (tmp_path / "gpu" / "warm-start").exists()


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_bf16_sets_every_arms_training_precision_and_nothing_else(name, tmp_path):
    s = STUDIES[name]
    for arm in s.arms:
        plain = arm_config(s, arm.name, Settings(study=name, model="m"), tmp_path / "w", tmp_path)
        mixed = arm_config(s, arm.name, Settings(study=name, model="m", bf16=True), tmp_path / "w", tmp_path)
        assert "bf16" not in plain["trl"] and mixed["trl"].pop("bf16") is True
        assert mixed == plain


def test_bad_settings_are_one_line_errors(tmp_path):
    for args, message in (
        (["nope", "--model", "m"], "no study 'nope'"),
        (["ulorl", "--model", "m", "--profile", "tpu"], "--profile must be one of cpu, gpu"),
        (["ulorl", "--model", "m", "--seeds", "0"], "--seeds"),
    ):
        done = harness("study", "run", *args, "--out", tmp_path / "x", check=False)
        assert done.returncode == 2 and message in done.stderr, done.stderr
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("not a study")
    done = harness("study", "run", "ulorl", "--model", "m", "--out", tmp_path / "taken", check=False)
    assert done.returncode == 2 and "not a study folder" in done.stderr
    assert (tmp_path / "taken" / "mine.txt").read_text() == "not a study"


STUDIES_RESULTS = REPO / "results" / "studies"


def test_the_committed_table_regenerates_from_the_committed_runs_and_is_on_the_results_page(tmp_path):
    """results/studies/ holds what the table reads; the table made from it now is the committed one, and
    docs/studies.md shows it."""
    kept = sorted(p.parent for p in STUDIES_RESULTS.glob("*/study.json"))
    assert kept, "no study results committed under results/studies/"
    done = harness("study", "table", *kept, "--out", tmp_path)
    committed = (STUDIES_RESULTS / "table.md").read_text()
    assert (tmp_path / "table.md").read_text() == committed and done.stdout.strip() == committed.strip()
    assert committed in (REPO / "docs" / "studies.md").read_text()
    for folder in kept:
        assert (REPO / "docs" / "img" / f"study-{folder.name}.png").is_file()


@pytest.mark.parametrize("link", ["runs", "runs/method-seed0", "runs/method-seed0/checkpoint-2"])
def test_dropping_a_checkpoints_resume_state_follows_no_link(link, tmp_path):
    files = (*RESUME_STATE, "model.safetensors")
    elsewhere = tmp_path / "elsewhere" / "runs" / "method-seed0" / "checkpoint-2"
    elsewhere.mkdir(parents=True)
    for name in files:
        (elsewhere / name).write_text(name)
    study = tmp_path / "study"
    (study / link).parent.mkdir(parents=True, exist_ok=True)
    (study / link).symlink_to(tmp_path / "elsewhere" / link)
    with pytest.raises(HarnessError, match="link"):
        drop_resume_state(study, "runs/method-seed0/checkpoint-2")
    assert sorted(p.name for p in elsewhere.iterdir()) == sorted(files)

    checkpoint = tmp_path / "own" / "runs" / "method-seed0" / "checkpoint-2"
    checkpoint.mkdir(parents=True)
    for name in files:
        (checkpoint / name).write_text(name)
    drop_resume_state(tmp_path / "own", "runs/method-seed0/checkpoint-2")
    assert [p.name for p in checkpoint.iterdir()] == ["model.safetensors"]
