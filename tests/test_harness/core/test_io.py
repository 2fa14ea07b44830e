"""The one reader and the one writer (harness/core/io, issue 44): hostile files of every class either give a
value or one line naming the file, within a time bound; nothing is read or written through a link."""

import json
import os
import signal
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import HarnessError
from harness.core.io.read import MAX_DEPTH, load_yaml, read_json, read_yaml
from harness.core.io.write import OutDir, safe_name, write_file
from harness.core.store import GENERATIONS, RUN, SCORES, RunDir

BOUND_S = 2.0  # each example, parse included
PROPERTY = settings(
    max_examples=40, deadline=int(BOUND_S * 1000), suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@contextmanager
def within(seconds: float):
    """Fail (instead of hanging) when the block takes longer than `seconds`."""

    def late(*_):
        raise AssertionError(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - started < seconds


def alias_bomb(levels: int, width: int) -> str:
    lines = ["a0: &a0 [x]"]
    for k in range(1, levels):
        lines.append(f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def nested(depth: int, open_: str = "[", close: str = "]") -> str:
    return open_ * depth + close * depth


# hostile text of every class the issue names
hostile_text = st.one_of(
    st.integers(1, 200_000).map(nested),
    st.integers(1, 5000).map(lambda n: '{"seed": ' + "9" * n + "}"),
    st.integers(1, 5000).map(lambda n: "seed: " + "9" * n + "\n"),
    st.tuples(st.integers(2, 12), st.integers(2, 12)).map(lambda t: alias_bomb(*t)),
    st.sampled_from(["{1: a, b: c}\n", "{[1]: a}\n", "? [a]\n: b\n", '{"a": "\\u0000"}', "a: b\x00\n"]),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    st.text(max_size=200),
    st.integers(0, 60).map(lambda n: json.dumps({"config": {"benchmarks": ["b"]}, "x": [1] * 3})[:n]),
)


def refused_in_one_line(error: HarnessError, path: Path) -> None:
    message = str(error)
    assert "\n" not in message and message.startswith(str(path)), message


@PROPERTY
@given(text=hostile_text, nul=st.booleans(), bad_utf8=st.booleans())
def test_the_json_and_yaml_readers_return_a_value_or_one_line(tmp_path, text, nul, bad_utf8):
    data = (
        text.encode("utf-8", "surrogatepass") + (b"\x00" if nul else b"") + (b"\xff\xfe" if bad_utf8 else b"")
    )
    path = tmp_path / "file"
    path.write_bytes(data)
    for reader in (read_json, read_yaml):
        with within(BOUND_S):
            try:
                value = reader(path)
            except HarnessError as e:
                refused_in_one_line(e, path)
            else:
                json.dumps(value)  # plain data: JSON's kinds, string or same-kind keys


def test_an_alias_bomb_is_refused_at_its_first_alias():
    with within(0.2), pytest.raises(ValueError, match="YAML anchor"):
        load_yaml(alias_bomb(9, 9))  # 9**8 strings once expanded
    with pytest.raises(ValueError, match="YAML alias"):
        load_yaml("a: *x\n")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{1: a, b: c}", "keys are of mixed kinds (int, str)"),
        ("? [a, b]\n: c\n", "a key that is a list or a mapping"),
        ("seed: " + "1" * 41, "an integer of more than 40 digits"),
        ("day: 2001-01-01", "a value of kind date"),
        (nested(MAX_DEPTH + 1), f"nested deeper than {MAX_DEPTH} levels"),
    ],
)
def test_yaml_that_json_could_not_hold_is_refused(text, problem):
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        load_yaml(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [("1e-4", 1e-4), ("5E-5", 5e-5), ("-2e3", -2000.0), ("+3e+2", 300.0), ("1.0e-5", 1e-5), ("7", 7)]
    + [(text, text) for text in ("1e", "e5", "1e-", "1e-4x", "1e4.5", "1-e4")],
)
def test_yaml_reads_a_float_without_a_point_as_yaml_1_2_does(text, value):
    """PyYAML alone reads `1e-4` as a string; a config's `learning_rate: 1e-4` must be the number."""
    assert load_yaml(f"lr: {text}") == {"lr": value}
    assert type(load_yaml(text)) is type(value)


@PROPERTY
@given(
    sign=st.sampled_from(["", "-", "+"]),
    mantissa=st.integers(0, 10**6),
    e=st.sampled_from("eE"),
    exponent=st.integers(-300, 300),
)
def test_any_float_without_a_point_reads_as_python_reads_it(sign, mantissa, e, exponent):
    text = f"{sign}{mantissa}{e}{exponent}"
    assert load_yaml(f"x: {text}") == {"x": float(text)}


def test_json_bounds(tmp_path):
    path = tmp_path / "x.json"
    for text, problem in [
        (nested(MAX_DEPTH + 1), "nested deeper than 64 levels"),
        (nested(100_000), "nested deeper than 64 levels"),
        ("[" + "7" * 400 + "]", "an integer of 400 digits (at most 40)"),
        ('{"a": 1', "invalid JSON at line 1"),
    ]:
        path.write_text(text)
        with pytest.raises(HarnessError) as refused:
            read_json(path)
        assert str(refused.value).startswith(f"{path}: {problem}")
    path.write_text(nested(MAX_DEPTH))
    assert read_json(path) is not None


def test_links_fifos_and_folders_are_never_read(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text('{"secret": 1}')
    root = tmp_path / "run"
    (root / "evals").mkdir(parents=True)
    (root / "file.json").symlink_to(outside)
    (root / "linked").symlink_to(root / "evals")
    (root / "evals" / "x.json").write_text("{}")
    os.mkfifo(root / "fifo.json")
    (root / "folder.json").mkdir()
    with within(2):
        for name, problem in [
            ("file.json", "a symbolic link"),
            ("linked/x.json", "a symbolic link"),
            ("fifo.json", "a FIFO, not a regular file"),
            ("folder.json", "a folder, not a regular file"),
            ("missing.json", "not found"),
        ]:
            with pytest.raises(HarnessError) as refused:
                read_json(root / name, root)
            message = str(refused.value)
            assert message.startswith(str(root / name.split("/")[0])) and problem in message
    assert read_json(root / "evals" / "x.json", root) == {}


@PROPERTY
@given(
    name=st.sampled_from([RUN, GENERATIONS, SCORES]),
    kind=st.sampled_from(["link", "fifo", "folder", "text"]),
    text=hostile_text,
)
def test_a_run_folder_of_hostile_files_is_read_or_refused_in_one_line(tmp_path_factory, name, kind, text):
    root = tmp_path_factory.mktemp("run")
    outside = root.parent / f"{root.name}-outside"
    outside.write_text('{"config": {"benchmarks": []}}\n')
    path = root / name
    if kind == "link":
        path.symlink_to(outside)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_text(text, errors="surrogatepass")
    run = RunDir(root)
    with within(BOUND_S):
        try:
            run.read_json(name) if name == RUN else run.records(name)
        except HarnessError as e:
            refused_in_one_line(e, path)
        else:
            assert kind == "text"


def test_the_writer_never_follows_a_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    (out / "data").symlink_to(outside)
    (out / "file.txt").symlink_to(outside / "victim.txt")
    with OutDir.open(out) as folder:
        with pytest.raises(HarnessError, match="a symbolic link"):
            folder.write("data/x.js", "x")
        with pytest.raises(HarnessError, match="a symbolic link"):
            folder.append("file.txt", "x")
        folder.write("file.txt", "mine")  # replaces the link itself
        with pytest.raises(HarnessError, match="cannot name a file"):
            folder.write("../escape.txt", "x")
        folder.remove("data")  # the link goes, not what it points to
    assert (out / "file.txt").read_text() == "mine" and not (out / "file.txt").is_symlink()
    assert not (out / "data").exists() and sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert (outside / "victim.txt").read_text() == "keep" and not (tmp_path / "escape.txt").exists()
    write_file(out / "plain.txt", "a")
    assert (out / "plain.txt").read_text() == "a"


@PROPERTY
@given(
    parts=st.lists(
        st.sampled_from(["a", "..", ".", "", "link", "file", "x\0y", "%2E%2E", "/"]), min_size=1, max_size=4
    ),
    append=st.booleans(),
)
def test_whatever_the_name_the_writer_stays_in_its_folder(tmp_path_factory, parts, append):
    base = tmp_path_factory.mktemp("writer")
    out, outside = base / "out", base / "outside"
    outside.mkdir()
    out.mkdir()
    (out / "link").symlink_to(outside)
    (out / "file").symlink_to(outside / "target")
    relative = "/".join(parts)
    with within(BOUND_S), OutDir.open(out) as folder:
        try:
            folder.append(relative, "x") if append else folder.write(relative, "x")
        except HarnessError as e:
            assert "\n" not in str(e)
        else:
            written = out / relative
            assert written.is_file() and not written.is_symlink()
            assert written.resolve().is_relative_to(out.resolve())
    assert list(outside.iterdir()) == []


def test_a_folder_not_made_by_the_command_is_refused(tmp_path):
    mine = tmp_path / "mine"
    with OutDir.open(mine, mark="MARK"):
        pass
    with OutDir.open(mine, mark="MARK"):  # its own folder again: fine
        pass
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("keep")
    with pytest.raises(HarnessError, match="was not made by this command"):
        OutDir.open(theirs, mark="MARK")
    (theirs / "MARK").symlink_to(mine / "MARK")  # a linked mark is no mark
    with pytest.raises(HarnessError, match="was not made by this command"):
        OutDir.open(theirs, mark="MARK")


@given(name=st.text(min_size=1, max_size=300))
def test_a_name_from_a_benchmark_or_item_is_one_plain_file_name(name):
    safe = safe_name(name)
    assert "/" not in safe and "\0" not in safe and not safe.startswith(".")
    assert 0 < len(safe.encode()) <= 200
    assert safe == safe_name(name)  # stable


# A train checkpoint: TRL's files and the method state, as resume reads them


def checkpoint(out: Path) -> Path:
    """OUT/checkpoint-1 as a finished save leaves it: trainer_state.json, the method state, TRL's
    random state (real, from this process)."""
    import random

    import numpy as np
    import torch

    folder = out / "checkpoint-1"
    folder.mkdir(parents=True)
    (folder / "trainer_state.json").write_text(
        json.dumps({"global_step": 1, "max_steps": 2, "log_history": []})
    )
    (folder / "method_state.json").write_text('{"seen": [1, 2]}\n')
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "cpu": torch.get_rng_state()}
    torch.save(state, folder / "rng_state.pth")
    return folder


def test_a_whole_checkpoint_resumes(tmp_path):
    from trainers.integration.checkpoints import read_method_state, resume_point

    folder = checkpoint(tmp_path)
    assert resume_point(tmp_path, 1) == (str(folder), [])
    assert read_method_state(folder, 0) == {"seen": [1, 2]}


def plant_link(folder: Path) -> None:
    outside = folder.parent.parent / "outside.json"
    outside.write_text('{"seen": [9]}')
    (folder / "method_state.json").unlink()
    (folder / "method_state.json").symlink_to(outside)


def plant_pickled_weights(folder: Path) -> None:
    import torch

    torch.save({"w": torch.zeros(1)}, folder / "pytorch_model.bin")


def plant_rng_state(folder: Path) -> None:
    import torch

    torch.save({"python": 1, "numpy": "x", "cpu": torch.zeros(2)}, folder / "rng_state.pth")


def plant_torch_file(name: str, value):
    def plant(folder: Path) -> None:
        import torch

        torch.save(value, folder / name)

    return plant


def plant_trainer_state(text: str):
    return lambda folder: (folder / "trainer_state.json").write_text(text)


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (plant_link, "method_state.json: a symbolic link"),
        (lambda folder: (folder / "config.json").symlink_to("/etc/hostname"), "config.json: a symbolic link"),
        (plant_pickled_weights, "pytorch_model.bin: weights saved as a pickle"),
        (plant_rng_state, "rng_state.pth is not TRL's (TypeError"),
        (plant_torch_file("scheduler.pt", {"base_lrs": "x", "last_epoch": 0}), "scheduler.pt is not TRL's"),
        (plant_torch_file("optimizer.pt", {"state": [], "param_groups": []}), "optimizer.pt is not TRL's"),
        (plant_torch_file("optimizer.pt", [1, 2]), "optimizer.pt is not TRL's (a list, not a mapping)"),
        (plant_trainer_state('{"global_step": "1"}'), "trainer_state.json: field global_step: "),
        (plant_trainer_state('{"global_step": 1, "planted": 1}'), "trainer_state.json: field planted: "),
        (plant_trainer_state('{"log_history": ' + "[" * 200 + "]" * 200 + "}"), "nested deeper than 64"),
        (plant_trainer_state('{"global_step": ' + "9" * 5000 + "}"), "an integer of 5000 digits"),
    ],
)
def test_a_checkpoint_of_the_wrong_structure_is_refused_before_the_run_starts(tmp_path, damage, problem):
    from trainers.integration.checkpoints import read_method_state, resume_point

    folder = checkpoint(tmp_path)
    damage(folder)
    with pytest.raises(HarnessError) as refused:
        resume_point(tmp_path, 1)
        read_method_state(folder, 0)  # resume_point checks TRL's files; the state is read next
    assert problem in str(refused.value) and "\n" not in str(refused.value)


@PROPERTY
@given(text=hostile_text, name=st.sampled_from(["method_state.json", "trainer_state.json"]))
def test_a_checkpoint_of_hostile_text_is_read_or_refused_in_one_line(tmp_path_factory, text, name):
    from trainers.integration.checkpoints import read_method_state, resume_point

    out = tmp_path_factory.mktemp("out")
    folder = checkpoint(out)
    (folder / name).write_text(text, errors="surrogatepass")
    with within(BOUND_S):
        try:
            resume_point(out, 1)
            read_method_state(folder, 0)
        except HarnessError as e:
            assert str(e).startswith(str(folder)) and "\n" not in str(e), str(e)


def test_a_training_curve_never_waits_on_a_fifo_nor_takes_a_bad_line(tmp_path):
    from harness.report.plotdata import training_series

    os.mkfifo(tmp_path / "metrics.jsonl")
    with within(2), pytest.raises(HarnessError, match="a FIFO, not a regular file"):
        training_series(tmp_path, "reward")
    (tmp_path / "metrics.jsonl").unlink()
    (tmp_path / "metrics.jsonl").write_text(
        '{"step": 1, "reward": 0.5}\n{"step": 2, "reward": 1' + "0" * 400 + "}\n"
    )
    with pytest.raises(HarnessError, match="metrics.jsonl:2: not a record of a step"):
        training_series(tmp_path, "reward")
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "reward": 0.5}\n{"step": 2, "rew')  # torn
    assert list(training_series(tmp_path, "reward").y) == [0.5]


def test_a_method_state_is_saved_through_no_link(tmp_path):
    import torch

    from trainers.integration.checkpoints import read_method_state, save_method_state

    folder, outside = tmp_path / "checkpoint-1", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    for name in ("method_state.json", "method_state.safetensors"):
        (folder / name).symlink_to(outside / name)
    save_method_state(folder, 0, {"pool": torch.ones(2), "n": 3})
    assert list(outside.iterdir()) == [] and not (folder / "method_state.json").is_symlink()
    state = read_method_state(folder, 0)
    assert state["n"] == 3 and state["pool"].tolist() == [1.0, 1.0]


def test_sizes_devices_and_benchmark_numbers_are_bounded(tmp_path):
    from harness.core.data import read_rows
    from harness.core.io.read import read_bytes

    path = tmp_path / "big.json"
    path.write_text("[" + "1," * 10 + "1]")
    with pytest.raises(HarnessError, match="larger than 16 bytes"):
        read_bytes(path, limit=16)
    with pytest.raises(HarnessError, match="/dev/null: a device or socket, not a regular file"):
        read_json(Path("/dev/null"))
    data = tmp_path / "items.jsonl"
    data.write_text('{"id": "a", "n": ' + "7" * 1000 + "}\n")
    assert len(str(next(read_rows(data))[1]["n"])) == 1000
    data.write_text('{"id": "a", "n": ' + "7" * 1001 + "}\n")
    with pytest.raises(HarnessError, match="items.jsonl:1: malformed JSON line .an integer of 1001 digits"):
        list(read_rows(data))


def test_names_from_benchmarks_are_encoded_as_the_docs_say():
    assert safe_name("../x") == "%2E.%2Fx" and safe_name("a/b") == "a%2Fb" and safe_name("aime24") == "aime24"


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("train.json", '{"config": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper than 64 levels"),
        ("train.json", '{"config": {"seed": ' + "9" * 400 + "}}", "an integer of 400 digits"),
        (
            "metrics.jsonl",
            '{"step": 1, "loss": ' + "9" * 5000 + "}\n",
            "metrics.jsonl:1: not a record of a step",
        ),
        ("samples.jsonl", None, "samples.jsonl: a FIFO, not a regular file"),
    ],
)
def test_a_hostile_train_out_is_one_line_before_anything_is_written(tmp_path, name, text, problem):
    from trainers.config import load_config
    from trainers.integration.run import check_out_dir

    out = tmp_path / "out"
    out.mkdir()
    if text is None:
        os.mkfifo(out / name)
    else:
        (out / name).write_text(text)
    config = load_config(None, {"method": "grpo", "model": "m", "dataset": "d", "out": str(out)})
    with within(BOUND_S), pytest.raises(HarnessError) as refused:
        check_out_dir(config)
    assert problem in str(refused.value) and "\n" not in str(refused.value)
    assert sorted(p.name for p in out.iterdir()) == [name]
