"""Nonsense numbers and broken files get one line on stderr naming what is wrong: never a traceback,
never a silently wrong result (issue 16, points 4 to 6)."""

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from inprocess import harness, one_line_error

from harness import HarnessError
from harness.core.store import GENERATIONS, RESULTS, RUN, SCORES, RunDir
from harness.stages.score import score_run

CUSTOM = '{"id": "a", "problem": "1+1?", "answer": "2"}\n{"id": "b", "problem": "2+2?", "answer": "4"}\n'


@pytest.fixture(autouse=True)
def no_data_dir(monkeypatch):
    monkeypatch.delenv("HARNESS_DATA_DIR", raising=False)


@pytest.fixture
def custom(tmp_path) -> Path:
    path = tmp_path / "custom.jsonl"
    path.write_text(CUSTOM)
    return path


@pytest.fixture(scope="module")
def external(tmp_path_factory) -> Path:
    """A scored run made from a generations file (no model): two items, two samples each."""
    tmp = tmp_path_factory.mktemp("external")
    data = tmp / "custom.jsonl"
    data.write_text(CUSTOM)
    generations = tmp / "gens.jsonl"
    rows = [
        {"item_id": i, "sample_idx": k, "text": f"\\boxed{{{a}}}"}
        for i, a in (("a", 2), ("b", 5))
        for k in (0, 1)
    ]
    generations.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = harness("score", "--generations", str(generations), "--benchmark", f"jsonl:{data}",
                   "--scorer", "math", "--out", str(tmp / "run"))  # fmt: skip
    assert done.code == 0, done.stderr
    return tmp / "run"


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory, tiny_model) -> Path:
    """A run of `harness eval` on the tiny model: two items, one sample each."""
    tmp = tmp_path_factory.mktemp("evaluated")
    data = tmp / "custom.jsonl"
    data.write_text(CUSTOM)
    done = harness("eval", "--model", str(tiny_model), "--benchmarks", f"jsonl:{data}", "--scorer", "math",
                   "--n", "1", "--max-tokens", "4", "--out", str(tmp / "run"))  # fmt: skip
    assert done.code == 0, done.stderr
    return tmp / "run"


def copy_run(run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run, tmp_path / "copy"))


@pytest.mark.parametrize(
    "option, message",
    [
        (["--batch-size", "-4"], "--batch-size must be at least 1, got -4"),
        (["--score-timeout", "0"], "--score-timeout must be greater than 0, got 0.0"),
        (["--score-timeout", "-1"], "--score-timeout must be greater than 0, got -1.0"),
        (["--max-input-tokens", "-5"], "--max-input-tokens must be at least 0, got -5"),
        (["--limit", "-1"], "--limit must be at least 1, got -1"),
        (["--limit", "0"], "--limit must be at least 1, got 0"),
        (["--n", "0"], "--n must be at least 1, got 0"),
        (["--temperature", "-0.1"], "--temperature must be at least 0, got -0.1"),
        (["--temperature", "nan"], "--temperature must be a finite number, got nan"),
        (["--top-p", "0"], "--top-p must be greater than 0 and at most 1, got 0.0"),
        (["--top-p", "1.5"], "--top-p must be greater than 0 and at most 1, got 1.5"),
        (["--top-k", "0"], "--top-k must be at least 1 (or -1), got 0"),
        (["--max-tokens", "0"], "--max-tokens must be at least 1, got 0"),
        (["--score-workers", "0"], "--score-workers must be at least 1, got 0"),
        (["--numeric-rtol", "-1"], "--numeric-rtol must be at least 0, got -1.0"),
        (["--seed", "-3"], "--seed must be at least 0, got -3"),
        (
            ["--gpu-memory-utilization", "1.5"],
            "--gpu-memory-utilization must be greater than 0 and at most 1",
        ),
        (["--request-timeout", "0"], "--request-timeout must be greater than 0, got 0.0"),
        (["--judge-model", "j", "--judge-repeats", "0"], "--judge-repeats must be at least 1, got 0"),
        (["--judge-model", "j", "--judge-max-tokens", "-1"], "--judge-max-tokens must be at least 1, got -1"),
        (["--judge-model", "j", "--judge-concurrency", "0"], "--judge-concurrency must be at least 1, got 0"),
    ],
)
def test_eval_refuses_nonsense_numbers_naming_the_option(tmp_path, custom, option, message):
    out = tmp_path / "run"
    done = harness("eval", "--model", "unused", "--benchmarks", f"jsonl:{custom}", "--scorer", "math",
                   "--out", str(out), *option)  # fmt: skip
    assert done.code == 2
    assert one_line_error(done).startswith(message)
    assert not out.exists()


def test_score_and_train_refuse_nonsense_numbers(tmp_path, external):
    run = copy_run(external, tmp_path)
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    done = harness("score", str(run), "--score-timeout", "-1")
    assert one_line_error(done) == "--score-timeout must be greater than 0, got -1.0"
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before
    train = [
        "train",
        "grpo",
        "--model",
        "m",
        "--dataset",
        "aime24",
        "--out",
        str(tmp_path / "t"),
        "--dry-run",
    ]
    assert one_line_error(harness(*train, "--max-steps", "0")) == "max_steps must be at least 1, got 0"
    assert one_line_error(harness(*train, "--set", "learning_rate=-1")) == (
        "learning_rate must be greater than 0, got -1"
    )
    assert one_line_error(harness(*train, "--set", "top_p=abc")) == "top_p must be a number, got 'abc'"


@pytest.mark.parametrize("sample_idx", [-5, "abc", 1.5, True, None])
def test_external_generations_need_a_whole_sample_index(tmp_path, custom, sample_idx):
    generations = tmp_path / "gens.jsonl"
    generations.write_text(json.dumps({"item_id": "a", "sample_idx": sample_idx, "text": "2"}) + "\n")
    done = harness("score", "--generations", str(generations), "--benchmark", f"jsonl:{custom}", "--scorer",
                   "math", "--out", str(tmp_path / "out"))  # fmt: skip
    message = f"sample_idx must be a whole number from 0, got {sample_idx!r}"
    assert one_line_error(done) == f"{generations}:1: {message}"
    assert not (tmp_path / "out").exists()


def test_files_that_are_not_utf8_name_their_line(tmp_path, custom):
    data = tmp_path / "latin1.jsonl"
    data.write_bytes(CUSTOM.encode() + '{"id": "c", "problem": "café?", "answer": "1"}\n'.encode("latin-1"))
    done = harness("eval", "--model", "unused", "--benchmarks", f"jsonl:{data}", "--scorer", "math",
                   "--out", str(tmp_path / "run"))  # fmt: skip
    assert one_line_error(done) == f"{data}:3: not UTF-8 text; save the file as UTF-8"
    generations = tmp_path / "gens.jsonl"
    generations.write_bytes(b'{"item_id": "a", "text": "2"}\n{"item_id": "b", "text": "\xff"}\n')
    done = harness("score", "--generations", str(generations), "--benchmark", f"jsonl:{custom}", "--scorer",
                   "math", "--out", str(tmp_path / "out"))  # fmt: skip
    assert one_line_error(done) == f"{generations}:2: not UTF-8 text; save the file as UTF-8"


def test_an_out_that_is_a_file_or_under_one_is_refused(tmp_path, custom, evaluated, tiny_model):
    a_file = tmp_path / "file"
    a_file.write_text("keep me")
    generations = tmp_path / "gens.jsonl"
    generations.write_text('{"item_id": "a", "text": "2"}\n')
    for out in (a_file, a_file / "run"):
        done = harness("eval", "--model", str(tiny_model), "--benchmarks", f"jsonl:{custom}",
                       "--scorer", "math", "--out", str(out))  # fmt: skip
        assert one_line_error(done).startswith(f"{out}: cannot write a run directory there (")
        done = harness("score", "--generations", str(generations), "--benchmark", f"jsonl:{custom}",
                       "--scorer", "math", "--out", str(out))  # fmt: skip
        assert one_line_error(done).startswith(f"{out}: cannot write a run directory there (")
        done = harness("export", str(evaluated), "--format", "lm-eval", "--out", str(out))
        assert one_line_error(done).startswith(f"{out}: cannot write there (")
    assert a_file.read_text() == "keep me"


@pytest.mark.parametrize("name", [GENERATIONS, SCORES])
def test_a_torn_line_that_ends_in_a_newline_is_reported_as_corrupt(tmp_path, external, name):
    run = copy_run(external, tmp_path)
    lines = (run / name).read_text().splitlines(keepends=True)
    torn = lines[:-1] + [lines[-1][: len(lines[-1]) // 2] + "\n"]
    (run / name).write_text("".join(torn))
    done = harness("score", str(run))
    assert one_line_error(done).startswith(f"{run / name}:{len(lines)}: corrupt record (")
    assert "delete that line and rerun the command" in done.stderr
    assert (run / name).read_text() == "".join(torn)


def test_rescoring_generations_of_an_item_the_run_lacks_is_refused(tmp_path, external):
    run = copy_run(external, tmp_path)
    info = json.loads((run / RUN).read_text())
    benchmark = info["config"]["benchmarks"][0]
    del info["answers"][benchmark]["b"]
    (run / RUN).write_text(json.dumps(info))
    done = harness("score", str(run))
    assert one_line_error(done) == (
        f"{run / GENERATIONS}: {benchmark} item 'b' is not an item of this run ({run / RUN}); "
        "remove its records, or score the generations into a new run"
    )


def test_a_run_missing_a_planned_sample_writes_no_results(tmp_path, external):
    run = copy_run(external, tmp_path)
    (run / RESULTS).unlink()
    benchmark = json.loads((run / RUN).read_text())["config"]["benchmarks"][0]
    planned = [(benchmark, item, k) for item in ("a", "b") for k in range(3)]
    with pytest.raises(
        HarnessError, match=r"2 of 6 samples were not generated \(first: .* item a sample 2\)"
    ):
        score_run(RunDir(run), planned=planned)
    assert not (run / RESULTS).exists()
    assert score_run(RunDir(run), planned=planned[:2] + planned[3:5])[benchmark]["n_samples"] == 4


def test_an_empty_answer_is_called_empty_not_missing(tmp_path):
    from benchmarks import get_benchmark

    data = tmp_path / "empty.jsonl"
    data.write_text('{"id": "a", "problem": "1+1?", "answer": ""}\n')
    with pytest.raises(HarnessError, match=r"^.*empty.jsonl:1: empty field 'answer'$"):
        get_benchmark(f"jsonl:{data}", "math").load()


def test_table_refuses_an_unknown_metric_listing_the_known_ones(external):
    message = one_line_error(harness("table", str(external), "--metric", "bogus"))
    assert message.startswith("unknown --metric 'bogus'; these runs have: avg, avg@2, ")
    assert "pass@2" in message and "maj@2" in message
    assert harness("table", str(external), "--metric", "pass@2").code == 0


def test_regress_keeps_2_for_not_comparable_and_3_for_usage_errors(tmp_path, external):
    missing = tmp_path / "nowhere"
    done = harness("regress", str(missing), str(external))
    assert done.code == 3
    assert one_line_error(done) == f"{missing / RUN}: not found (is {missing} a run directory?)"
    assert harness("regress", str(external), str(external), "--alpha", "2").code == 3
    assert harness("regress", str(external)).code == 3  # click's own usage error: a missing argument
    assert harness("regress", str(external), str(external)).code == 0
    other = copy_run(external, tmp_path)
    info = json.loads((other / RUN).read_text())
    info["config"]["dataset_hashes"] = {b: "0" * 64 for b in info["config"]["benchmarks"]}
    (other / RUN).write_text(json.dumps(info))
    assert harness("regress", str(external), str(other)).code == 2  # the harness drifted
    assert "3 a usage error" in " ".join(harness("regress", "--help").stdout.split())


def test_a_run_that_generated_nothing_does_not_lock_its_folder(tmp_path, custom, tiny_model):
    out = tmp_path / "run"
    common = ["--benchmarks", f"jsonl:{custom}", "--scorer", "math", "--out", str(out), "--max-tokens", "4"]
    weightless = Path(shutil.copytree(tiny_model, tmp_path / "weightless"))
    (weightless / "model.safetensors").unlink()  # its tokenizer loads before run.json; its weights do not
    failed = harness("eval", "--model", str(weightless), *common)
    assert failed.code == 2 and "cannot load model" in failed.stderr and "Traceback" not in failed.stderr
    assert (out / RUN).is_file() and not (out / GENERATIONS).exists()
    done = harness("eval", "--model", str(tiny_model), "--n", "1", *common)
    assert done.code == 0, done.stderr
    assert json.loads((out / RUN).read_text())["config"]["model"] == str(tiny_model)


def test_a_prompt_that_alone_fills_the_context_says_so(tmp_path, tiny_model):
    data = tmp_path / "long.jsonl"
    data.write_text(json.dumps({"id": "a", "problem": "word " * 40000, "answer": "1"}) + "\n")
    done = harness("eval", "--model", str(tiny_model), "--benchmarks", f"jsonl:{data}", "--scorer", "math",
                   "--n", "1", "--max-tokens", "4", "--out", str(tmp_path / "run"))  # fmt: skip
    assert done.code == 2 and "Traceback" not in done.stderr
    message = done.stderr.splitlines()[-1]  # after the engine's start and the progress bars
    assert "item a: the prompt alone (" in message and "fills the model's context of 32768 tokens" in message
    assert "cut prompts with --max-input-tokens (below 32768" in message and "at most -" not in message


ALIAS_BOMB = "".join(f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 9)}]\n" for k in range(1, 10))  # 449 bytes


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path):
    config = tmp_path / "bomb.yaml"
    config.write_text("a0: &a0 [lol]\n" + ALIAS_BOMB)
    started = time.monotonic()
    done = harness("train", "grpo", "--config", str(config), "--dry-run")
    assert time.monotonic() - started < 1
    assert done.code == 2 and "a YAML anchor (&name)" in one_line_error(done)


def test_a_fifo_given_as_a_config_scores_or_generations_file_never_hangs(tmp_path, external, custom):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    done = harness("train", "grpo", "--config", str(fifo), "--dry-run")
    assert done.code == 2 and one_line_error(done) == f"cannot read config {fifo}: a FIFO, not a regular file"
    run = copy_run(external, tmp_path)
    (run / SCORES).unlink()
    os.mkfifo(run / SCORES)
    done = harness("regress", str(external), str(run))
    assert done.code == 3 and one_line_error(done) == f"{run / SCORES}: a FIFO, not a regular file"
    done = harness("score", "--generations", str(fifo), "--benchmark", f"jsonl:{custom}", "--scorer", "math",
                   "--out", str(tmp_path / "out"))  # fmt: skip
    assert done.code == 2 and "a FIFO, not a regular file" in one_line_error(done)
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("seed: " + "9" * 400 + "\n", "an integer of more than 40 digits"),
        ("seed: 1180591620717411303424\n", "seed must be at least 0 and at most 4294967295"),
        ("trl:\n  {1: a, b: c}\n", "keys are of mixed kinds"),
        ("trl: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 64 levels"),
    ],
)
def test_a_hostile_train_config_is_one_line_before_anything_is_written(tmp_path, text, problem):
    config, out = tmp_path / "config.yaml", tmp_path / "out"
    config.write_text(f"method: grpo\nmodel: m\ndataset: d\nout: {out}\n" + text)
    done = harness("train", "grpo", "--config", str(config), "--dry-run")
    assert done.code == 2 and problem in one_line_error(done)
    assert not out.exists()


def test_export_never_writes_through_a_planted_link_nor_into_a_folder_it_did_not_make(tmp_path, evaluated):
    run, outside = copy_run(evaluated, tmp_path), tmp_path / "outside"
    outside.mkdir()
    (run / "lm-eval").symlink_to(outside)
    done = harness("export", str(run), "--format", "lm-eval")
    assert done.code == 2 and "lm-eval: a symbolic link" in one_line_error(done)
    assert list(outside.iterdir()) == []
    (outside / "notes.txt").write_text("keep")
    done = harness("export", str(run), "--format", "lm-eval", "--out", str(outside))
    assert done.code == 2 and "was not made by this command" in one_line_error(done)
    assert [p.name for p in outside.iterdir()] == ["notes.txt"]
    again = tmp_path / "export"
    for _ in range(2):  # its own folder, again
        assert harness("export", str(run), "--format", "lm-eval", "--out", str(again)).code == 0
    assert sum(p.name.startswith("results_") for p in again.iterdir()) >= 1


def test_a_bundle_into_a_prepared_folder_never_follows_its_links(tmp_path, evaluated):
    out, outside = tmp_path / "bundle", tmp_path / "outside"
    outside.mkdir()
    out.mkdir()
    (out / "harness-view-bundle.txt").write_text("a mark someone planted")
    (out / "data").symlink_to(outside)
    done = harness("view", "--bundle", str(out), str(evaluated))
    assert done.code == 0, done.stderr
    assert list(outside.iterdir()) == []
    assert (
        (out / "data").is_dir() and not (out / "data").is_symlink() and (out / "data" / "index.js").is_file()
    )
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("keep")
    done = harness("view", "--bundle", str(other), str(evaluated))
    assert done.code == 2 and "was not made by this command" in one_line_error(done)
    assert [p.name for p in other.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize("command", ["train", "eval"])
def test_a_model_with_pickled_weights_is_refused_before_out_is_written(tmp_path, custom, tiny_model, command):
    import torch

    model, out = Path(shutil.copytree(tiny_model, tmp_path / "model")), tmp_path / "out"
    torch.save({"w": torch.zeros(1)}, model / "pytorch_model.bin")
    data = ("--dataset", str(custom)) if command == "train" else ("--benchmarks", f"jsonl:{custom}")
    first = ("train", "grpo") if command == "train" else ("eval",)
    done = harness(*first, "--model", str(model), *data, "--scorer", "math", "--out", str(out))
    assert done.code == 2
    assert one_line_error(done).startswith(f"{model / 'pytorch_model.bin'}: weights saved as a pickle")
    assert not out.exists()


@pytest.mark.parametrize("digits", [100, 400])  # 400 do not fit a float either; 5000 are click's usage error
@pytest.mark.parametrize("option", ["--seed", "--limit"])
def test_an_integer_beyond_64_bits_is_refused_before_run_json_is_written(tmp_path, custom, option, digits):
    out = tmp_path / "out"
    done = harness("eval", "--model", "unused", "--benchmarks", f"jsonl:{custom}", "--scorer", "math",
                   option, "1" + "0" * (digits - 1), "--out", str(out))  # fmt: skip
    assert done.code == 2
    assert one_line_error(done).startswith(f"{option} must be an integer that fits in 64 bits, got 1000")
    assert not out.exists()
