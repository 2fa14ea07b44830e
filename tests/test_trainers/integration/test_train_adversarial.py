"""Hostile input to `harness train` and its run folder (issue 37, points 1 and 5 to 8): every config and
file error is one line on stderr with exit 2 (no traceback, no dependency warning before it) and writes
nothing to OUT; a pickled method state is never loaded; half-written checkpoints are skipped; a
finished run is not trained again; a second trainer on the same OUT is refused; prompts longer than
the model's context are refused; a malformed server reply is a one-line error."""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import pytest
import torch
from fake_openai import MODEL, FakeOpenAI, answer
from inprocess import TWO_ITEMS, harness, one_line_error

from harness import HarnessError
from harness.backends import EngineConfig
from harness.core.store import RunDir
from trainers.methods.arena.judge import ArenaJudge, PairAsk, ServedJudge

pytestmark = pytest.mark.usefixtures("no_data_dir")


@pytest.fixture
def data(tmp_path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text(TWO_ITEMS)
    return path


def train(model: Path, data: Path, out: Path, *extra: str):
    return harness("train", "grpo", "--model", str(model), "--dataset", str(data), "--scorer", "math",
                   "--out", str(out), "--num-generations", "2", "--prompts-per-step", "1",
                   "--max-completion-length", "4", "--save-steps", "1", *extra)  # fmt: skip


def refused(done) -> str:
    """The one line of a refused `harness train`: exit 2, and no warning or traceback before it."""
    assert done.code == 2, done
    return one_line_error(done)


BAD_SETTINGS = [
    (["--set", "trl.not_a_field=1"], "unknown trl settings ['not_a_field']"),
    (["--set", "options=5"], "options must be a mapping of names to values, got 5"),
    (["--set", "trl=[1, 2]"], "trl must be a mapping of names to values, got [1, 2]"),
    (["--set", "judge=5"], "judge must be a mapping of names to values, got 5"),
    (["--set", "report_to=5"], "report_to must be a list of names"),
    (["--set", "eval_benchmarks=[1, 2]"], "eval_benchmarks must be a list of names"),
    (["--set", "chat_template_kwargs=[1]"], "chat_template_kwargs must be a mapping"),
    (["--set", "use_vllm=maybe"], "use_vllm must be true or false, got 'maybe'"),
    (["--set", "system_prompt=[1]"], "system_prompt must be a string, got [1]"),
    (["--set", "x=["], "--set 'x=[': VALUE is not YAML"),
    (["--set", "loss_type=bogus"], "loss_type must be one of grpo, dr_grpo, dapo"),
    (["--set", "scale_rewards=bogus"], "scale_rewards must be one of group, batch, none, got 'bogus'"),
    (["--set", "trl.lr_scheduler_type=bogus"], "TRL refuses these settings: "),
    (["--set", "trl.gradient_accumulation_steps=abc"], "TRL refuses these settings: "),
]


@pytest.mark.parametrize(("extra", "message"), BAD_SETTINGS)
def test_a_bad_setting_is_one_line_and_writes_nothing(tiny_model, data, tmp_path, extra, message):
    out = tmp_path / "out"
    assert message in refused(train(tiny_model, data, out, *extra))
    assert not out.exists()
    if "x=[" not in extra[1]:  # --dry-run refuses the same, without a traceback either
        assert message in refused(train(tiny_model, data, out, "--dry-run", *extra))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"trl: [1, 2]\n", "trl must be a mapping of names to values"),
        (b"options: 5\n", "options must be a mapping of names to values"),
        (b"method: grpo\n\xff\xfe: 1\n", "not UTF-8 text (byte 13)"),
        (b"trl: {a: [\n", "cannot read config"),
        (b"- 1\n- 2\n", "must be a mapping of keys to values"),
    ],
)
def test_a_bad_config_file_is_one_line(tiny_model, data, tmp_path, text, message):
    config, out = tmp_path / "config.yaml", tmp_path / "out"
    config.write_bytes(text)
    assert message in refused(train(tiny_model, data, out, "--config", str(config), "--set", "trl.x=1"))
    assert not out.exists()


def test_a_missing_model_is_refused_before_out_is_written(data, tmp_path):
    out = tmp_path / "out"
    message = refused(train(tmp_path / "no-such-model", data, out, "--max-steps", "1"))
    assert message.startswith(f"--model {tmp_path / 'no-such-model'}: no such folder")
    assert not out.exists()


def test_a_dataset_line_too_long_is_refused_without_reading_it_whole(tiny_model, tmp_path):
    data, out = tmp_path / "huge.jsonl", tmp_path / "out"
    data.write_text('{"id": "a", "problem": "' + "x" * (20 << 20) + '", "answer": "2"}\n')
    message = refused(train(tiny_model, data, out, "--max-steps", "1"))
    assert message == f"{data}:1: a line longer than 16 MiB, more than any item"
    assert not out.exists()


def test_a_prompt_longer_than_the_context_is_refused(tiny_model, tmp_path):
    """The tiny model's context is 32,768 tokens; `harness eval` refuses the same file in one line."""
    data, out = tmp_path / "long.jsonl", tmp_path / "out"
    data.write_text(json.dumps({"id": "long", "problem": "ab " * 40_000, "answer": "2"}) + "\n")
    message = refused(train(tiny_model, data, out, "--max-steps", "1"))
    assert message.startswith(f"{data} item long: prompt (")
    assert "exceeds the model's context of 32768 tokens" in message and "prompts are not cut" in message
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b'{"program": "def f(x):\\n    return x", "input": "1", "output": "1"}\n{"progr', "malformed JSON"),
        (b'{"program": "def f(x): return x"}\n\xff\n', "not UTF-8 text"),
        (b'{"input": "1"}\n', "not an Absolute Zero task"),
        (b'{"program": "def f(x): return x", "inputs": 5}\n', "not an Absolute Zero task"),
        (b"[1, 2]\n", "not a JSON object"),
    ],
)
def test_a_broken_azr_seed_file_is_one_line(tiny_model, tmp_path, text, message):
    seeds, out = tmp_path / "seeds.jsonl", tmp_path / "out"
    seeds.write_bytes(text)
    done = harness("train", "azr", "--model", str(tiny_model), "--dataset", str(seeds), "--out", str(out))
    assert message in refused(done)
    assert not out.exists()


@pytest.fixture(scope="module")
def finished(tiny_model, tmp_path_factory) -> tuple[Path, Path]:
    """A run trained to its last step (2 steps, a checkpoint at each), and its dataset."""
    tmp = tmp_path_factory.mktemp("finished")
    data = tmp / "items.jsonl"
    data.write_text(TWO_ITEMS)
    done = train(tiny_model, data, tmp / "out", "--max-steps", "2")
    assert done.code == 0, done.stderr
    return tmp / "out", data


def copy(run: Path, tmp: Path) -> Path:
    return Path(shutil.copytree(run, tmp / "run"))


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_method_state_is_plain_data(finished):
    out, _ = finished
    checkpoint = out / "checkpoint-2"
    assert (checkpoint / "method_state.json").is_file() and not list(checkpoint.glob("method_state*.pt"))


def test_rerunning_a_finished_run_is_a_no_op_that_says_so(tiny_model, finished, tmp_path):
    run = copy(finished[0], tmp_path)
    before = snapshot(run)
    for _ in range(2):
        done = train(tiny_model, finished[1], run, "--max-steps", "2")
        assert done.code == 0, done.stderr
        assert f"{run} is already trained to step 2 of 2: nothing to do" in done.stdout
        assert "step 3" not in done.stdout and snapshot(run) == before
    assert not (run / "checkpoint-3").exists()


def test_a_pickled_method_state_is_refused_and_never_unpickled(tiny_model, finished, tmp_path):
    run = copy(finished[0], tmp_path)
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    for checkpoint in ("checkpoint-1", "checkpoint-2"):
        (run / checkpoint / "method_state.json").unlink()
        (run / checkpoint / "method_state.pt").write_bytes(pickle.dumps({"state": Payload()}))
    message = refused(train(tiny_model, finished[1], run, "--max-steps", "2"))
    assert message.startswith(f"{run / 'checkpoint-2'} holds its method state as a pickle (method_state.pt)")
    assert "does not load (a pickle can run code)" in message
    assert not marker.exists()


@pytest.mark.parametrize("name", ["optimizer.pt", "scheduler.pt", "rng_state.pth"])
def test_a_crafted_trainer_file_is_refused_and_never_unpickled(tiny_model, finished, tmp_path, name):
    """TRL's own checkpoint files (transformers reads them with weights_only=True): a payload is refused."""
    run = copy(finished[0], tmp_path)
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    shutil.rmtree(run / "checkpoint-2")  # so the run has a step left to train from checkpoint-1
    torch.save({"state": Payload()}, run / "checkpoint-1" / name)
    message = refused(train(tiny_model, finished[1], run, "--max-steps", "2"))
    assert message.startswith(f"{run / 'checkpoint-1'}: {name} does not load")
    assert not marker.exists()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda c: (c / "method_state.json").write_text('{"torn'), "not a method state of this run"),
        (lambda c: (c / "method_state.json").write_text('{"x": 1}\n'), "not a method state of this run"),
        (lambda c: (c / "method_state.json").write_bytes(b"\xff\xfe"), "not a method state of this run"),
        (
            lambda c: (c / "model.safetensors").write_bytes((c / "model.safetensors").read_bytes()[:1000]),
            "damaged",
        ),
        (lambda c: (c / "model.safetensors").write_bytes(b"garbage"), "damaged"),
    ],
)
def test_a_damaged_checkpoint_is_one_line(tiny_model, finished, tmp_path, damage, message):
    run = copy(finished[0], tmp_path)
    (run / "checkpoint-2").rename(run / "checkpoint-9")  # the last checkpoint of a run of 10 steps
    damage(run / "checkpoint-1")
    shutil.rmtree(run / "checkpoint-9")
    assert message in refused(train(tiny_model, finished[1], run, "--max-steps", "2", "--set", "seed=0"))


def test_a_save_cut_short_is_skipped_with_a_note(tiny_model, finished, tmp_path):
    """A kill during checkpoint-2's save (before its method state) leaves a folder that resume skips."""
    run = copy(finished[0], tmp_path)
    (run / "checkpoint-2" / "method_state.json").unlink()
    (run / "checkpoint-2" / "trainer_state.json").unlink()
    done = train(tiny_model, finished[1], run, "--max-steps", "2")
    assert done.code == 0, done.stderr
    lines = done.stdout.splitlines()
    note = "note: skipping checkpoint-2: its save did not finish (no trainer_state.json); resuming before it"
    assert lines[0] == note and done.stdout.count(note) == 1, lines[:3]  # once, before the steps
    assert done.stderr.startswith("harness train grpo: 1 process")  # the launch line stays the first
    assert "step 2/2" in done.stdout and "step 1/2" not in done.stdout  # resumed from checkpoint-1
    assert (run / "checkpoint-2" / "method_state.json").is_file()
    steps = [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert steps == sorted(steps) and 2 in steps


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("train.json", b"garbage", "train.json: not a train.json this trainer wrote"),
        ("train.json", b"[1, 2]", "train.json: not a train.json this trainer wrote"),
        ("metrics.jsonl", b'{"step": 1}\nnot json\n{"step": 2}\n', "metrics.jsonl:2: not a record of a step"),
        ("samples.jsonl", b'{"step": "x"}\n', "samples.jsonl:1: not a record of a step"),
    ],
)
def test_a_garbage_run_file_is_one_line(tiny_model, finished, tmp_path, name, text, message):
    run = copy(finished[0], tmp_path)
    (run / name).write_bytes(text)
    before = snapshot(run)
    assert message in refused(train(tiny_model, finished[1], run, "--max-steps", "2"))
    assert snapshot(run) == before


@pytest.mark.parametrize("name", ["metrics.jsonl", "samples.jsonl"])
def test_a_torn_last_line_is_dropped(tiny_model, finished, tmp_path, name):
    run = copy(finished[0], tmp_path)
    with open(run / name, "ab") as f:
        f.write(b'{"step": 2, "tor')
    done = train(tiny_model, finished[1], run, "--max-steps", "2")
    assert done.code == 0, done.stderr


@pytest.mark.parametrize("name", ["train.json", "metrics.jsonl", "checkpoint-2"])
def test_a_symlink_in_out_is_refused_and_not_followed(tiny_model, finished, tmp_path, name):
    run = copy(finished[0], tmp_path)
    target = tmp_path / "elsewhere"
    (run / name).rename(target)
    os.symlink(target, run / name)
    before = snapshot(target) if target.is_dir() else target.read_bytes()
    assert "link" in refused(train(tiny_model, finished[1], run, "--max-steps", "2"))
    assert (snapshot(target) if target.is_dir() else target.read_bytes()) == before


def test_a_second_trainer_on_the_same_out_is_refused(tiny_model, finished, tmp_path):
    run = copy(finished[0], tmp_path)
    shutil.rmtree(run / "checkpoint-2")  # so the run has a step left to train
    with RunDir(run).locked():
        message = refused(train(tiny_model, finished[1], run, "--max-steps", "2"))
    assert message.startswith(f"{run} is in use by another harness process (pid {os.getpid()})")


WRONG_SHAPES = [
    {"choices": "oops"},
    {"choices": []},
    {"choices": [5]},
    {"choices": [{"message": "text"}]},
    {"choices": [{"message": {"content": 5}}]},
    {"choices": [{"message": {"content": "ok"}, "finish_reason": 3}]},
    {"choices": [{"message": {"content": "ok"}}], "usage": "lots"},
    {"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": "7"}},
]


@pytest.mark.parametrize("payload", WRONG_SHAPES)
def test_a_malformed_server_reply_is_one_line_in_eval(tmp_path, payload):
    data = tmp_path / "items.jsonl"
    data.write_text(TWO_ITEMS)
    with FakeOpenAI(lambda body, count: (200, payload, {})) as fake:
        done = harness("eval", "--model", MODEL, "--backend", "openai", "--base-url", fake.base_url,
                       "--benchmarks", f"jsonl:{data}", "--scorer", "math", "--n", "1", "--max-tokens", "8",
                       "--out", str(tmp_path / "run"))  # fmt: skip
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]  # under progress bars
    assert done.code == 2 and "Traceback" not in done.stderr and len(errors) == 1, done.stderr
    assert errors[0].startswith(f"error: {fake.base_url}/chat/completions answered ")


class Chars:
    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return list(range(len(text)))


@pytest.mark.parametrize("payload", WRONG_SHAPES)
def test_a_malformed_server_reply_is_a_user_error_in_arenas_judge(payload):
    replies = iter([payload])

    def reply(body, count):
        return 200, next(replies, answer(body)), {}

    with FakeOpenAI(reply) as fake:
        judge = ArenaJudge(
            ServedJudge(EngineConfig(MODEL, backend="openai", base_url=fake.base_url), max_tokens=8),
            tokenizer=Chars(),
        )
        with pytest.raises(HarnessError, match="answered "):
            judge.compare([PairAsk("1+1?", "2", "A says 2", "B says 3")])
