"""Options shared by commands are one definition: same names, defaults and help in eval, score and train."""

from __future__ import annotations

import pytest
import typer

from harness import HarnessError
from harness.backends import EngineConfig
from harness.cli import app
from harness.cli.options import JUDGE, judge_config
from harness.scoring.judge import JudgeConfig
from harness.stages.score import make_scorers


def options(command: str) -> dict[str, tuple]:
    """--flag -> (default, help) of one command."""
    group = typer.main.get_command(app)
    return {
        p.opts[0]: (p.default, p.help)
        for p in group.commands[command].params  # type: ignore[attr-defined]
        if p.opts[0].startswith("--")
    }


def test_score_and_train_offer_every_judge_option_of_eval_identically():
    judged = {flag: spec for flag, spec in options("eval").items() if flag.startswith("--judge-")}
    assert {"--judge-model", "--judge-temperature", "--judge-max-tokens", "--judge-dtype"} <= set(judged)
    assert "--judge-tensor-parallel-size" in judged and "--judge-data-parallel-size" not in judged
    for command in ("score", "train"):
        theirs = {flag: spec for flag, spec in options(command).items() if flag.startswith("--judge-")}
        assert theirs == judged, command


def test_eval_and_score_share_their_scoring_options():
    ours, theirs = options("eval"), options("score")
    for flag in ("--data-dir", "--scorer", "--numeric-rtol", "--lm-eval-include-path", "--score-timeout"):
        assert ours[flag] == theirs[flag], flag
    assert options("train")["--data-dir"] == ours["--data-dir"]


def test_the_judge_options_keep_only_what_was_chosen():
    defaults = {p.name: p.default for p in JUDGE.parameters()}
    assert defaults["judge_backend"] == "openai" and defaults["judge_max_tokens"] == 8192
    assert JUDGE.build(dict(defaults)) == {} and judge_config({}) is None
    moved = JUDGE.build({**defaults, "judge_base_url": "http://127.0.0.1:8/v1"})
    assert moved == {"base_url": "http://127.0.0.1:8/v1"}  # enough for a rescore, not for a new judge
    with pytest.raises(HarnessError, match="--judge-base-url: the judge's settings need --judge-model"):
        judge_config(moved)
    chosen = {**defaults, "judge_model": "j", "judge_backend": "vllm", "judge_dtype": "float32"}
    settings = JUDGE.build(chosen)
    assert settings == {"model": "j", "backend": "vllm", "dtype": "float32"}
    judge = JudgeConfig.from_settings(settings)
    assert judge.engine == EngineConfig("j", backend="vllm", dtype="float32") and judge.max_tokens == 8192


def run_info(judge: JudgeConfig) -> dict:
    return {
        "config": {"scorers": {"qa": "cem+judge"}, "judge": judge.identity()},
        "judge_base_url": "http://127.0.0.1:9/v1",
    }


def test_a_rescore_moves_the_runs_judge_but_never_changes_it():
    info = run_info(JudgeConfig(EngineConfig("j", backend="openai", base_url="http://127.0.0.1:9/v1")))
    moved = make_scorers(info, judge_settings={"base_url": "http://127.0.0.1:8/v1", "concurrency": 4})
    judge = moved["qa"].judge.config
    assert judge.engine.base_url == "http://127.0.0.1:8/v1" and judge.engine.concurrency == 4
    assert moved["qa"].version == make_scorers(info)["qa"].version
    for changed in ({"model": "other"}, {"repeats": 3}, {"dtype": "bfloat16"}):
        with pytest.raises(HarnessError, match=f"differs in {next(iter(changed))}"):
            make_scorers(info, judge_settings=changed)
    with pytest.raises(HarnessError, match="no benchmark of this run is judged"):
        make_scorers({"config": {"scorers": {"m": "math"}}}, judge_settings={"base_url": "http://x"})


def test_train_judge_settings_amend_the_file_and_only_who_judges_is_identity(tmp_path):
    from trainers.config import load_config

    config = tmp_path / "train.yaml"
    config.write_text("judge: {model: j, base_url: 'http://127.0.0.1:9/v1', repeats: 3}\n")
    base = {"method": "grpo", "model": "m", "dataset": "aime24", "out": str(tmp_path / "o")}
    moved = load_config(config, {**base, "judge": {"base_url": "http://127.0.0.1:8/v1", "concurrency": 4}})
    assert moved.judge == {"model": "j", "base_url": "http://127.0.0.1:8/v1", "repeats": 3, "concurrency": 4}
    assert moved.hash == load_config(config, base).hash  # served elsewhere: the same run, resumable
    assert moved.hash != load_config(config, {**base, "judge": {"repeats": 5}}).hash
    with pytest.raises(HarnessError, match="need a model"):
        load_config(None, {**base, "judge": {"base_url": "http://127.0.0.1:8/v1"}})
