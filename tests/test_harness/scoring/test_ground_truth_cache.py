"""The harness cache (harness/core/cache.py) and evalplus's ground truth kept in it: an entry is read back
only with its key and its HMAC under the cache's own secret, so a damaged, edited or copied-in entry is
recomputed, never trusted; a run with the cache reads the expected outputs instead of running the
canonical solution, and gives the same verdicts."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import get_benchmark
from harness.core.cache import SECRET, Cache
from harness.sandbox import isolated
from harness.scoring import evalplus
from harness.scoring.code import TRUTHS, CodeScorer

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


def test_an_entry_comes_back_only_from_this_cache_under_its_own_key(tmp_path):
    cache = Cache("kind", tmp_path)
    assert cache.get("k1") is None
    cache.put("k1", {"outputs": [1, "two", None]})
    assert cache.get("k1") == {"outputs": [1, "two", None]}
    entry = tmp_path / "kind" / "k1.json"

    (tmp_path / "kind" / "k2.json").write_bytes(entry.read_bytes())  # another key's file name
    assert cache.get("k2") is None
    whole = entry.read_bytes()
    for cut in (1, len(whole) // 2, len(whole) - 1):  # truncated
        entry.write_bytes(whole[:cut])
        assert cache.get("k1") is None
    entry.write_bytes(whole)
    assert cache.get("k1") == {"outputs": [1, "two", None]}
    other = Cache("kind", tmp_path / "elsewhere")  # the same entry in a cache with another secret
    other.put("k1", {"outputs": [1, "two", None]})
    entry.write_bytes((tmp_path / "elsewhere" / "kind" / "k1.json").read_bytes())
    assert cache.get("k1") is None
    cache.put("k1", [3])
    (tmp_path / "kind" / SECRET).unlink()  # a lost secret: nothing stored before can be checked
    assert cache.get("k1") is None
    cache.put("k1", [4])  # a new secret is made
    assert cache.get("k1") == [4]
    entry.unlink()
    os.symlink(tmp_path / "elsewhere" / "kind" / "k1.json", entry)  # a link is not followed
    assert cache.get("k1") is None


@settings(max_examples=60, deadline=None)
@given(value=VALUES, at=st.integers(min_value=0), byte=st.integers(min_value=0, max_value=255))
def test_a_changed_byte_never_gives_another_value(tmp_path_factory, value, at, byte):
    """Any byte of an entry changed: the same value comes back (the byte was not significant, as a
    space) or None; never a different value."""
    root = tmp_path_factory.mktemp("cache")
    cache = Cache("kind", root)
    cache.put("k", value)
    path = root / "kind" / "k.json"
    data = bytearray(path.read_bytes())
    data[at % len(data)] = byte
    path.write_bytes(bytes(data))
    assert cache.get("k") in (None, value) if value is not None else cache.get("k") is None


sandboxed = pytest.mark.skipif(not isolated(), reason="bubblewrap isolation unavailable: not running code")


@sandboxed
def test_a_second_run_reads_the_ground_truth_and_gives_the_same_verdicts(shared_data, tmp_path, monkeypatch):
    """MBPP+ tasks scored twice with the cache: the second time (this process's memory emptied) no
    canonical solution runs and every verdict is the same; an entry damaged, a changed dataset and
    `cache=False` run it again."""
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    items = get_benchmark("mbpp_plus").load(shared_data).items[:3]
    golds = [item.answer for item in items]
    answers = [f"```python\n{json.loads(g)['solution']}\n```" for g in golds]
    answers[1] = "```python\ndef nothing():\n    return None\n```"
    runs = []
    real = evalplus._run_solution

    def counted(gold):
        runs.append(gold["entry_point"])
        return real(gold)

    monkeypatch.setattr(evalplus, "_run_solution", counted)

    def verdicts(cache: bool = True) -> list:
        evalplus._truth.clear()
        scores = dict(CodeScorer(workers=2, cache=cache).score(answers, golds))
        return [(scores[i].value, scores[i].details["verdict"]) for i in range(len(golds))]

    first = verdicts()
    assert [v for v, _ in first] == [1.0, 0.0, 1.0] and len(runs) == 3
    assert len(list((tmp_path / TRUTHS).glob("*.json"))) == 3
    runs.clear()
    assert verdicts() == first and runs == []

    gold = json.loads(golds[0])
    entry = tmp_path / TRUTHS / f"{evalplus.truth_key(gold)}.json"
    stored = json.loads(entry.read_text())
    stored["value"]["base_input"]["outputs"][0] = {"value": "forged"}  # the MAC no longer holds
    entry.write_text(json.dumps(stored))
    assert verdicts() == first and runs == [gold["entry_point"]]
    assert json.loads(entry.read_text())["value"]["base_input"]["outputs"][0] != {"value": "forged"}

    runs.clear()
    assert verdicts(cache=False) == first and len(runs) == 3
    changed = dict(gold, solution=gold["solution"] + "\n# another revision\n")
    assert evalplus.truth_key(changed) != evalplus.truth_key(gold)
