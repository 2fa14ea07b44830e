"""Bad input gets a clear error naming the file, line, item or flag."""

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import own_names, run_cli

from benchmarks import BENCHMARKS, get_benchmark
from harness import HarnessError


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def eval_cli(tmp_path: Path, *args: str, model: str = "unused-model"):
    return run_cli("eval", "--model", model, "--out", str(tmp_path / "run"), *args, check=False)


def test_malformed_jsonl_line_names_file_and_line(tmp_path):
    bad = write_jsonl(
        tmp_path / "bad.jsonl", ['{"id": "a", "problem": "1+1?", "answer": "2"}', '{"id": "b", "prob']
    )
    done = eval_cli(tmp_path, "--benchmarks", f"jsonl:{bad}", "--scorer", "math")
    assert done.returncode == 2
    assert f"{bad}:2: malformed JSON line" in done.stderr.replace("\n", "")
    assert not (tmp_path / "run").exists()  # nothing was started


def test_missing_answer_field_names_file_line_and_field(tmp_path):
    bad = write_jsonl(tmp_path / "noanswer.jsonl", ['{"id": "a", "problem": "1+1?"}'])
    with pytest.raises(HarnessError, match=r"noanswer.jsonl:1: missing field 'answer'"):
        get_benchmark(f"jsonl:{bad}", "math").load()


def test_unknown_benchmark_lists_valid_ones(tmp_path):
    done = eval_cli(tmp_path, "--benchmarks", "aime23")
    assert done.returncode == 2
    assert "unknown benchmark 'aime23'" in done.stderr
    for name in BENCHMARKS:
        assert name in done.stderr


def test_unknown_scorer_for_custom_file(tmp_path):
    good = write_jsonl(tmp_path / "g.jsonl", ['{"id": "a", "problem": "1+1?", "answer": "2"}'])
    with pytest.raises(HarnessError, match="--scorer 'fuzzy' is not available"):
        get_benchmark(f"jsonl:{good}", "fuzzy")


@pytest.mark.parametrize("kind", ["missing", "garbage"])
def test_unreadable_model_path(tmp_path, shared_data, kind):
    model = tmp_path / "model"
    if kind == "garbage":
        model.mkdir()
        (model / "config.json").write_text("{not json")
    done = eval_cli(
        tmp_path, "--benchmarks", "aime24", "--limit", "1", "--data-dir", str(shared_data), model=str(model)
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    if kind == "missing":  # one line naming the path, and nothing written
        assert done.stderr.strip() == f"error: --model {model}: no such folder"
        return
    assert f"cannot load model '{model}'" in done.stderr.replace("\n", "")
    assert "--model" in done.stderr and "--data-dir" in done.stderr


def test_offline_without_data_dir_names_the_flag(tmp_path):
    done = eval_cli(tmp_path, "--benchmarks", "amc23")  # AIME would load the copy in the package
    assert done.returncode == 2
    assert "math-ai/amc23" in done.stderr
    assert "--data-dir" in done.stderr and "--model" in done.stderr


def test_data_dir_without_the_benchmark_lists_expected_files(tmp_path):
    with pytest.raises(
        HarnessError, match=r"(?s)no data for benchmark 'amc23'.*amc23/test-00000-of-00001.parquet"
    ):
        BENCHMARKS["amc23"].load(tmp_path)


AIME25_CORRUPTED = ["II-1", "II-3", "II-4", "II-5", "II-6", "II-7", "II-8", "II-9", "II-12", "II-13", "II-14"]


def test_corrupted_aime25_copy_alone_loads_naming_its_suspect_items(tmp_path, shared_data, capsys):
    (tmp_path / "aime25").mkdir()
    shutil.copy(shared_data / "aime25" / "test.jsonl", tmp_path / "aime25" / "test.jsonl")
    loaded = BENCHMARKS["aime25"].load(tmp_path)
    assert len(loaded.items) == 30  # the other 19 rows are not lost
    suspects = loaded.source["corrupted_escapes"]
    assert [s["item"] for s in suspects] == AIME25_CORRUPTED  # SOURCES.md's list
    assert suspects[0] == {"item": "II-1", "at": "test.jsonl:16", "fields": ["problem"]}
    warning = " ".join(capsys.readouterr().err.split())
    assert (
        "warning: aime25: 11 of 30 items have a control character where JSON decoding ate a LaTeX" in warning
    )
    assert "II-1 (test.jsonl:16, problem), II-3 (test.jsonl:18, problem)" in warning
    assert "and 6 more" in warning and "corrupted_escapes" in warning


def test_corrupted_copy_is_skipped_for_a_clean_one(shared_data, capsys):
    loaded = BENCHMARKS["aime25"].load(shared_data)
    assert [f["path"] for f in loaded.source["files"]] == ["test2025-I.jsonl", "test2025-II.jsonl"]
    assert "corrupted_escapes" not in loaded.source
    assert "test.jsonl: 11 items have a control character" in loaded.source["skipped"][0]
    assert "first: item II-1 at test.jsonl:16" in loaded.source["skipped"][0]
    assert "\\triangle" in next(i.problem for i in loaded.items if i.id == "II-1")
    assert "warning" not in capsys.readouterr().err


def test_a_math_row_with_a_corrupted_escape_is_reported_not_fatal(tmp_path, capsys):
    rows = [
        {"id": "a", "problem": "Compute $2 \\times 3$.", "answer": "6"},
        {"id": "b", "problem": "In \triangle ABC, find $AB$.", "answer": "5"},  # TAB + "riangle"
        {"id": "c", "problem": "Half of one?", "answer": "\frac{1}{2}"},  # FF + "rac", then stripped
        {"id": "d", "problem": "A table:\tx\ty", "answer": "7"},  # a real tab between words
    ]
    data = write_jsonl(tmp_path / "m.jsonl", [json.dumps(r) for r in rows])
    plan = plan_of(f"jsonl:{data}", "math")
    source = plan.run_info["datasets"]["m"]
    assert source["corrupted_escapes"] == [
        {"item": "b", "at": "m.jsonl:2", "fields": ["problem"]},
        {"item": "c", "at": "m.jsonl:3", "fields": ["answer"]},
    ]
    assert list(plan.run_info["answers"]["m"]) == ["a", "b", "c", "d"]  # every row is evaluated
    warning = " ".join(capsys.readouterr().err.split())
    assert "warning: m: 2 of 4 items have a control character" in warning
    assert "b (m.jsonl:2, problem), c (m.jsonl:3, answer)" in warning


def plan_of(benchmark: str, scorer: str):
    from harness.backends import EngineConfig
    from harness.config import EvalConfig, ScoringConfig
    from harness.stages.plan import plan

    cfg = EvalConfig(benchmarks=(benchmark,), engine=EngineConfig("m"), scoring=ScoringConfig(scorer=scorer))
    return plan(cfg)


@pytest.mark.parametrize("answer", ['"  "', '[""]', '[" ", "\\n"]'])
@pytest.mark.parametrize("scorer", ["math", "cem"])
def test_a_blank_answer_is_called_empty_not_missing(tmp_path, answer, scorer):
    data = write_jsonl(tmp_path / "blank.jsonl", [f'{{"id": "a", "problem": "1+1?", "answer": {answer}}}'])
    with pytest.raises(HarnessError, match=r"^.*blank.jsonl:1: empty field 'answer'$"):
        get_benchmark(f"jsonl:{data}", scorer).load()


def test_hub_layout_in_a_local_folder(tmp_path):
    """The Hub code path's parsing, on a folder laid out like the pinned Hub repo."""
    path = tmp_path / "aime24" / "data" / "train-00000-of-00001.parquet"
    path.parent.mkdir(parents=True)
    rows = [
        {"id": 60, "problem": "Find $x$.", "solution": "...", "answer": "204", "url": "u", "year": "2024"},
        {"id": 61, "problem": "Find $y$.", "solution": "...", "answer": "025", "url": "u", "year": "2024"},
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)
    loaded = BENCHMARKS["aime24"].load(tmp_path)
    assert [(i.id, i.answer) for i in loaded.items] == [("60", "204"), ("61", "025")]
    # a local copy, named as such: its folder and the hash of each file read, not the Hub repo
    assert loaded.source["kind"] == "local"
    assert "repo" not in loaded.source and "revision" not in loaded.source
    assert loaded.source["laid_out_as"] == "HuggingFaceH4/aime_2024@2fe88a2f1091d5048c0f36abc874fb997b3dd99a"
    assert loaded.source["dir"] == str(tmp_path / "aime24")
    assert loaded.source["files"] == [
        {"path": "data/train-00000-of-00001.parquet", "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    ]


def test_every_shared_copy_loads_with_expected_sizes(shared_data):
    not_shared = {"humaneval_plus", "gpqa_diamond", "gpqa_main", "longbench_v2", "hotpotqa", "2wikimqa"}
    not_shared |= {"musique", "frames", "docmath"}  # tests/test_benchmarks/test_long_context.py copies them
    offline = {name: BENCHMARKS[name] for name in own_names("harness.benchmarks") if name not in not_shared}
    sizes = {name: len(b.load(shared_data).items) for name, b in offline.items()}
    assert sizes == {
        "aime24": 30,
        "aime25": 30,
        "math500": 500,
        "amc23": 40,
        "minerva": 272,
        "olympiadbench": 675,
        "livecodebench": 279,
        "cruxeval_i": 800,
        "cruxeval_i_cot": 800,
        "cruxeval_o": 800,
        "cruxeval_o_cot": 800,
        "azr_deduction": 800,  # CRUXEval-O asked as Absolute Zero asks a deduction task
        "humaneval": 164,
        "mbpp_plus": 378,
    }
    minerva = BENCHMARKS["minerva"].load(shared_data).items[0]
    assert minerva.answer == "1.6"  # the last \boxed{} of the solution
    amc = BENCHMARKS["amc23"].load(shared_data).items[0]
    assert amc.answer == "27"  # stored as the float 27.0
    olympiad = {i.id: i.answer for i in BENCHMARKS["olympiadbench"].load(shared_data).items}
    assert all("$" not in answer for answer in olympiad.values())


def test_prompt_and_max_tokens_beyond_context_fail_fast(tmp_path, tiny_model, shared_data):
    done = eval_cli(
        tmp_path, "--benchmarks", "aime24", "--limit", "1", "--data-dir", str(shared_data),
        "--max-tokens", "40000", "--n", "1", model=str(tiny_model),
    )  # fmt: skip
    assert done.returncode == 2
    assert "exceeds the model's context of 32768 tokens" in done.stderr.replace("\n", " ")
    assert not (tmp_path / "run" / "generations.jsonl").exists()


def test_list_shows_benchmarks():
    out = run_cli("list").stdout
    for name in BENCHMARKS:
        assert name in out
    assert "HuggingFaceH4/MATH-500@6e4ed1a" in out


def test_half_written_record_is_dropped_and_corrupt_middle_line_is_reported(tmp_path):
    from harness.core.store import RunDir

    run = RunDir(tmp_path)
    run.append("x.jsonl", [{"a": 1}, {"a": 2}])
    with open(tmp_path / "x.jsonl", "a") as f:
        f.write('{"a": 3')
    assert run.records("x.jsonl") == [{"a": 1}, {"a": 2}]
    assert (tmp_path / "x.jsonl").read_text() == '{"a": 1}\n{"a": 2}\n'
    (tmp_path / "x.jsonl").write_text('{"a": 1}\n{oops\n{"a": 2}\n')
    with pytest.raises(HarnessError, match=r"x.jsonl:2: corrupt record"):
        run.records("x.jsonl")


def test_prompt_template_without_placeholder_is_refused(tmp_path, shared_data):
    done = eval_cli(
        tmp_path, "--benchmarks", "aime24", "--data-dir", str(shared_data), "--prompt-template", "Solve."
    )
    assert done.returncode == 2
    assert "--prompt-template must contain {problem}" in done.stderr
