"""`harness eval --shard K/N` and `harness merge` (issue 51, part 1): a run split into shards and merged
is the unsplit run, file for file; the split is a stable hash of each sample's benchmark, item and block
of 16 samples; a bad set of shards is refused in one line naming the first problem."""

import json
import shutil

import pytest
from helpers import SHARED_DATA, run_cli
from hypothesis import given
from hypothesis import strategies as st

from harness.stages.plan import SAMPLE_BLOCK, shard_of

FILES = ("generations.jsonl", "scores.jsonl", "results.json", "run.json")


def evaluate(model, out, *extra):
    args = ["--benchmarks", "aime24,amc23", "--model", str(model), "--n", "20", "--max-tokens", "6",
            "--limit", "5", "--data-dir", str(SHARED_DATA), "--seed", "3", "--out", str(out)]  # fmt: skip
    return run_cli("eval", *args, *extra)


@pytest.fixture(scope="module")
def shards(answering_model, tmp_path_factory):
    """The unsplit run and its three shards."""
    root = tmp_path_factory.mktemp("shards")
    evaluate(answering_model, root / "whole")
    for k in (1, 2, 3):
        evaluate(answering_model, root / f"s{k}", "--shard", f"{k}/3")
    return root


def test_three_shards_merged_are_the_unsplit_run_file_for_file(shards, tmp_path):
    run_cli("merge", *(str(shards / f"s{k}") for k in (1, 2, 3)), "--out", str(tmp_path / "merged"))
    for name in FILES:
        assert (tmp_path / "merged" / name).read_bytes() == (shards / "whole" / name).read_bytes(), name
    counts = [len((shards / f"s{k}" / "generations.jsonl").read_text().splitlines()) for k in (1, 2, 3)]
    assert sum(counts) == 2 * 5 * 20 and all(counts)  # 20 samples an item: blocks of 16 and 4
    shard = json.loads((shards / "s1" / "run.json").read_text())["shard"]
    assert (
        shard["count"] == 3
        and shard["whole_config_hash"]
        == json.loads((shards / "whole" / "run.json").read_text())["config_hash"]
    )
    run_cli("table", str(tmp_path / "merged"))
    assert run_cli("regress", str(shards / "whole"), str(tmp_path / "merged"), check=False).returncode == 0


@given(
    benchmark=st.text(max_size=12),
    item=st.text(max_size=12),
    sample=st.integers(0, 10_000),
    count=st.integers(1, 64),
)
def test_the_shard_of_a_sample_is_its_names_hash_and_keeps_blocks_together(benchmark, item, sample, count):
    shard = shard_of(benchmark, item, sample, count)
    assert 0 <= shard < count
    block_start = sample - sample % SAMPLE_BLOCK
    assert shard_of(benchmark, item, block_start, count) == shard


def merge_error(shards, tmp_path, *names):
    done = run_cli("merge", *(str(shards / n) for n in names), "--out", str(tmp_path / "m"), check=False)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "m" / "results.json").exists()
    return done.stderr


def test_a_missing_a_repeated_or_a_foreign_shard_is_refused(shards, tmp_path, answering_model):
    assert "shard 3/3 is missing" in merge_error(shards, tmp_path, "s1", "s2")
    assert "shard 2/3 is given twice" in merge_error(shards, tmp_path, "s1", "s2", "s2", "s3")
    assert "is not a shard" in merge_error(shards, tmp_path, "s1", "s2", "whole")
    other = tmp_path / "other"
    args = ["--benchmarks", "aime24", "--model", str(answering_model), "--n", "2", "--max-tokens", "4",
            "--limit", "2", "--data-dir", str(SHARED_DATA), "--shard", "3/3", "--out", other]  # fmt: skip
    run_cli("eval", *map(str, args))
    shutil.copytree(other, shards / "foreign", dirs_exist_ok=True)
    assert "is a shard of another run" in merge_error(shards, tmp_path, "s1", "s2", "foreign")


def test_an_unfinished_or_tampered_shard_is_refused(shards, tmp_path):
    for k in (1, 2, 3):
        shutil.copytree(shards / f"s{k}", tmp_path / f"t{k}")
    (tmp_path / "t2" / "results.json").unlink()
    assert "shard 2/3 is not finished" in merge_error(tmp_path, tmp_path, "t1", "t2", "t3")
    shutil.copyfile(shards / "s2" / "results.json", tmp_path / "t2" / "results.json")
    lines = (tmp_path / "t3" / "generations.jsonl").read_text().splitlines()
    (tmp_path / "t3" / "generations.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    assert "generated and" in merge_error(tmp_path, tmp_path, "t1", "t2", "t3")
    shutil.copyfile(shards / "s3" / "generations.jsonl", tmp_path / "t3" / "generations.jsonl")
    info = json.loads((tmp_path / "t1" / "run.json").read_text())
    info["config"]["seed"] = (
        4  # a configuration edited after the fact: its recorded whole hash no longer fits
    )
    (tmp_path / "t1" / "run.json").write_text(json.dumps(info))
    assert "does not match its configuration" in merge_error(tmp_path, tmp_path, "t1", "t2", "t3")


def test_a_shard_resumes_like_any_run(shards, answering_model, tmp_path):
    copy = tmp_path / "s1"
    shutil.copytree(shards / "s1", copy)
    lines = (copy / "generations.jsonl").read_text().splitlines()
    (copy / "generations.jsonl").write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    (copy / "results.json").unlink()
    done = evaluate(answering_model, copy, "--shard", "1/3")
    assert "resuming" in done.stdout + done.stderr
    for name in FILES[:3]:
        assert (copy / name).read_bytes() == (shards / "s1" / name).read_bytes(), name


def test_bad_shard_options_are_one_line_errors(tmp_path):
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2"):
        done = run_cli(
            "eval",
            "--benchmarks",
            "aime24",
            "--model",
            "x",
            "--shard",
            bad,
            "--out",
            str(tmp_path / "o"),
            check=False,
        )
        assert done.returncode == 2 and "--shard must be K/N" in done.stderr, (bad, done.stderr)
