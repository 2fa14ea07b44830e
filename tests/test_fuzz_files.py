"""Random bytes and random JSON in any file a command reads: a non-zero exit and one line on stderr,
never a traceback (issue 16, point 5). Bounded: a few examples per command, run in this process."""

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from inprocess import harness, one_line_error

from harness.store import GENERATIONS, RESULTS, RUN, SCORES

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
