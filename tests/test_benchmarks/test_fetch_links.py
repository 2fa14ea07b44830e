"""`fetch-data` and the data loader through the one reader and writer (issue 52, part 3): a link at any
depth under the folder the user named (--from, --to, --data-dir) refuses the command and nothing is read
or written through it; checksums.json is read as any file from outside."""

import json
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import get_benchmark
from benchmarks.fetch import CHECKSUMS, fetch, read_checksums
from harness import HarnessError

FILE = ("math500", "test.jsonl")  # the Hub layout: ROOT/math500/test.jsonl


@pytest.fixture
def source(shared_data, tmp_path):
    """A --from folder with a real copy of MATH-500, and a decoy copy elsewhere that a link could reach."""
    folder, decoy = tmp_path / "from", tmp_path / "decoy"
    for root in (folder, decoy):
        (root / FILE[0]).mkdir(parents=True)
        shutil.copyfile(shared_data / "math500" / "test.jsonl", root / FILE[0] / FILE[1])
    return folder, decoy


def plant(root, depth, decoy):
    """Replace the entry at `depth` (1: the benchmark's folder, 2: the file) under `root` by a link into
    `decoy`."""
    entry = root.joinpath(*FILE[:depth])
    shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    entry.symlink_to(decoy.joinpath(*FILE[:depth]))


@pytest.mark.parametrize("depth", [1, 2])
def test_a_link_under_from_refuses_the_fetch(source, tmp_path, depth):
    folder, decoy = source
    plant(folder, depth, decoy)
    with pytest.raises(HarnessError, match="a symbolic link"):
        fetch(["math500"], tmp_path / "to", folder)
    assert not (tmp_path / "to" / FILE[0] / FILE[1]).exists()


@pytest.mark.parametrize("depth", [1, 2])
def test_a_link_under_data_dir_refuses_the_load(source, depth):
    folder, decoy = source
    assert get_benchmark("math500").load(folder).items  # the real copy loads
    plant(folder, depth, decoy)
    with pytest.raises(HarnessError, match="a symbolic link"):
        get_benchmark("math500").load(folder)


@pytest.mark.parametrize("where", ["folder", "file", "checksums"])
def test_a_link_under_to_is_never_written_through(source, tmp_path, where):
    folder, _ = source
    to, victim = tmp_path / "to", tmp_path / "victim"
    victim.mkdir()
    (victim / "secret.json").write_text('{"keep": 1}')
    to.mkdir()
    if where == "folder":
        (to / FILE[0]).symlink_to(victim)
    elif where == "file":
        (to / FILE[0]).mkdir()
        (to / FILE[0] / FILE[1]).symlink_to(victim / "secret.json")
    else:
        (to / CHECKSUMS).symlink_to(victim / "secret.json")
    with pytest.raises(HarnessError, match="a symbolic link"):
        fetch(["math500"], to, folder)
    assert sorted(p.name for p in victim.iterdir()) == ["secret.json"]
    assert (victim / "secret.json").read_text() == '{"keep": 1}'


hostile = st.one_of(
    st.integers(1, 400).map(lambda depth: "[" * depth + "]" * depth),
    st.integers(41, 6000).map(lambda digits: '{"math500": {"n": ' + "9" * digits + "}}"),
    st.sampled_from(["[]", "3", '"x"', '{"math500": 1}', "{", "\xff\xfe", '{"a": NaN}', "", "\x00"]),
)


@settings(max_examples=60, deadline=None)
@given(text=hostile)
def test_a_hostile_checksums_file_is_a_one_line_error_and_stays(tmp_path_factory, text):
    to = tmp_path_factory.mktemp("to")
    (to / CHECKSUMS).write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(HarnessError) as refused:
        read_checksums(to)
    assert "\n" not in str(refused.value) and len(str(refused.value)) < 600
    assert (to / CHECKSUMS).read_bytes() == text.encode("utf-8", "surrogateescape")


def test_checksums_are_recorded_through_the_writer(source, tmp_path):
    folder, _ = source
    to = tmp_path / "to"
    fetch(["math500"], to, folder)
    recorded = json.loads((to / CHECKSUMS).read_text())
    assert recorded["math500"]["files"][0]["path"] == "math500/test.jsonl"
    assert read_checksums(to) == recorded
    fetch(["math500"], to, folder)  # the same bytes again: kept, recorded once
    assert json.loads((to / CHECKSUMS).read_text()) == recorded


def test_a_gzip_of_blank_lines_and_an_oversized_csv_field_are_one_line_errors(tmp_path, monkeypatch):
    import gzip

    from harness.core import data
    from harness.core.data import read_rows

    monkeypatch.setattr(data, "MAX_LINES", 1000)
    bomb = tmp_path / "blank.jsonl.gz"
    with gzip.open(bomb, "wb") as f:
        f.write(b"\n" * 5000)
    with pytest.raises(HarnessError, match="more than 1,000 lines"):
        list(read_rows(bomb))
    wide = tmp_path / "wide.csv"
    wide.write_text('id,problem\n1,"' + "x" * 100_000 + '"\n2,"' + ("y" * 60_000 + "\n") * 3 + '"\n')
    # row 2's field spans three lines: 180,003 characters, over the csv module's own 128 KiB
    assert [len(r["problem"]) for _, r in read_rows(wide)] == [100_000, 180_003]
    monkeypatch.setattr(data, "MAX_LINE_BYTES", 150_000)  # every line fits, row 2's field does not
    with pytest.raises(HarnessError, match=r"wide.csv:\d+: not a CSV row \(field larger than field limit"):
        list(read_rows(wide))
