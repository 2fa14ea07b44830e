"""Random bytes and random JSON in any file a command reads: a non-zero exit and one line on stderr,
never a traceback (issue 16, point 5). Bounded: a few examples per command, run in this process."""

import json
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from inprocess import harness, one_line_error

from harness.core.store import GENERATIONS, RESULTS, RUN, SCORES

CUSTOM = '{"id": "a", "problem": "1+1?", "answer": "2"}\n{"id": "b", "problem": "2+2?", "answer": "4"}\n'
FUZZ = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
# a line that is not blank and ends in a newline: random bytes, or random JSON
garbage = (st.binary(min_size=1, max_size=60) | json_values.map(lambda v: json.dumps(v).encode())).filter(
    lambda b: b.strip() and b"\n" not in b
)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """A scored run made from a generations file."""
    tmp = tmp_path_factory.mktemp("fuzz")
    data, generations = tmp / "custom.jsonl", tmp / "gens.jsonl"
    data.write_text(CUSTOM)
    generations.write_text('{"item_id": "a", "text": "\\\\boxed{2}"}\n{"item_id": "b", "text": "5"}\n')
    done = harness("score", "--generations", str(generations), "--benchmark", f"jsonl:{data}",
                   "--scorer", "math", "--out", str(tmp / "run"))  # fmt: skip
    assert done.code == 0, done.stderr
    return tmp / "run"


def refused(*args: str) -> None:
    one_line_error(harness(*args))


def corrupt(run: Path, name: str, line: bytes, folder: Path) -> Path:
    """A copy of the run whose file `name` has `line` in place of its first line (JSONL) or whole (JSON)."""
    copy = Path(shutil.copytree(run, folder / "run"))
    if name.endswith(".jsonl"):
        lines = (copy / name).read_bytes().splitlines(keepends=True)
        (copy / name).write_bytes(line + b"\n" + b"".join(lines[1:]))
    else:
        (copy / name).write_bytes(line)
    return copy


@FUZZ
@given(line=garbage, index=st.integers(0, 2))
@example(line=b"\x1c", index=0)  # str.strip() calls it whitespace; JSON does not
def test_a_dataset_or_generations_file_of_garbage(run, line, index):
    with tempfile.TemporaryDirectory() as tmp:
        lines = CUSTOM.encode().splitlines(keepends=True)
        lines.insert(index, line + b"\n")
        data = Path(tmp) / "data.jsonl"
        data.write_bytes(b"".join(lines))
        refused("eval", "--model", "unused", "--benchmarks", f"jsonl:{data}", "--scorer", "math",
                "--out", f"{tmp}/out")  # fmt: skip
        generations = Path(tmp) / "gens.jsonl"
        generations.write_bytes(line + b"\n")
        (Path(tmp) / "custom.jsonl").write_text(CUSTOM)
        refused("score", "--generations", str(generations), "--benchmark", f"jsonl:{tmp}/custom.jsonl",
                "--scorer", "math", "--out", f"{tmp}/out")  # fmt: skip


@FUZZ
@given(name=st.sampled_from([RUN, GENERATIONS, SCORES]), line=garbage)
def test_rescoring_a_corrupted_run(run, name, line):
    with tempfile.TemporaryDirectory() as tmp:
        refused("score", str(corrupt(run, name, line, Path(tmp))))


@FUZZ
@given(name=st.sampled_from([RUN, RESULTS, SCORES]), line=garbage)
def test_reading_a_corrupted_run(run, name, line):
    with tempfile.TemporaryDirectory() as tmp:
        bad = corrupt(run, name, line, Path(tmp))
        if name != SCORES:
            refused("table", str(bad))
            refused("export", str(bad), "--format", "lm-eval", "--out", f"{tmp}/export")
        if name != RESULTS:
            done = harness("regress", str(run), str(bad))
            assert done.code == 3 and one_line_error(done)
            refused("plot", "pass-at-k", str(bad), "--out", f"{tmp}/plot")


def alias_bomb(levels: int, width: int) -> str:
    anchors = [f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * width)}]" for k in range(1, levels)]
    return "\n".join(["a0: &a0 [x]", *anchors]) + "\n"


hostile_yaml = st.one_of(
    st.tuples(st.integers(2, 10), st.integers(2, 10)).map(lambda t: alias_bomb(*t)),
    st.integers(1, 50_000).map(lambda n: "trl: " + "[" * n + "]" * n + "\n"),
    st.integers(1, 5000).map(lambda n: "seed: " + "9" * n + "\n"),
    st.integers(60, 80).map(lambda n: f"seed: {2**n}\n"),
    st.sampled_from(["trl: {1: a, b: c}\n", "? [a]\n: b\n", "seed: 2001-01-01\n", "trl: !!binary aGk=\n"]),
    st.binary(max_size=80).map(lambda b: b.decode("latin-1")),
)


@pytest.fixture(scope="module")
def warm(tmp_path_factory) -> None:
    """One dry run first, so that the time bound below measures the config, not the first imports."""
    config = tmp_path_factory.mktemp("warm") / "config.yaml"
    config.write_text("method: grpo\nmodel: m\ndataset: d\n")
    harness("train", "grpo", "--config", str(config), "--dry-run")


@FUZZ
@given(text=hostile_yaml, nul=st.booleans())
def test_a_hostile_train_config_is_one_line_in_a_dry_run_at_once(warm, text, nul):
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.yaml"
        config.write_bytes(
            b"method: grpo\nmodel: m\ndataset: d\n" + text.encode("utf-8", "replace") + b"\0" * nul
        )
        started = time.monotonic()
        done = harness("train", "grpo", "--config", str(config), "--dry-run", "--out", f"{tmp}/out")
        assert time.monotonic() - started < 2
        assert done.code in (0, 2), done
        if done.code:
            one_line_error(done)
        assert not (Path(tmp) / "out").exists()
