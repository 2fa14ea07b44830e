"""Lone surrogates are refused at the reader (issue 52, part 4): JSON's `\\ud800` escape decodes to a
code point no UTF-8 file can hold, so a run folder carrying one used to pass the reader and break the
writer after it had rewritten the scores. Now `score` and `export` refuse it in one line and leave every
file as it was."""

import pytest
from helpers import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from view_runs import base_run

from harness.core.io.read import Unfit, load_yaml, loads

lone = st.integers(0xD800, 0xDFFF).map(lambda c: f"\\u{c:04x}")


@settings(max_examples=200, deadline=None)
@given(
    before=st.text(max_size=8),
    escape=lone,
    after=st.text(max_size=8),
    where=st.sampled_from(["value", "key"]),
)
def test_a_lone_surrogate_anywhere_in_json_is_unfit(before, escape, after, where):
    import json

    text = json.dumps(before)[:-1] + escape + json.dumps(after)[1:]
    document = f'{{"a": [1, {{"b": {text}}}]}}' if where == "value" else f'{{"a": {{{text}: 1}}}}'
    if escape[2:4] in ("d8", "d9", "da", "db") and json.dumps(after)[1:].startswith(
        ("\\udc", "\\udd", "\\ude", "\\udf")
    ):
        return  # a high surrogate that Hypothesis followed with a low one: a real character
    with pytest.raises(Unfit, match="lone surrogate"):
        loads(document)


def test_pairs_and_escaped_backslashes_are_text():
    assert loads('["\\ud83d\\ude00", "\\\\ud800"]') == ["\U0001f600", "\\ud800"]
    with pytest.raises(Unfit, match="lone surrogate"):
        load_yaml('note: "\\ud800"')


@pytest.mark.parametrize("file", ["generations.jsonl", "scores.jsonl", "run.json"])
def test_score_and_export_refuse_a_planted_surrogate_and_change_nothing(tmp_path, file):
    run = base_run(tmp_path / "run")
    path = run / file
    text = path.read_text()
    planted = (
        text.replace('"scripted/base"', '"scripted/\\udc80"', 1)
        if file == "run.json"
        else (
            text.replace('"text": "', '"text": "\\ud800', 1)
            if file == "generations.jsonl"
            else text.replace('"item_id": "', '"item_id": "\\udfff', 1)
        )
    )
    assert planted != text
    path.write_text(planted)

    def files():  # all but the lock, which holds the pid of the command that last locked the run
        return {p.name: p.read_bytes() for p in run.iterdir() if p.is_file() and p.name != ".lock"}

    before = files()
    for args in (
        ["score", str(run)],
        ["export", str(run), "--format", "lm-eval", "--out", str(tmp_path / "export")],
    ):
        done = run_cli(*args, check=False)
        assert done.returncode == 2 and "lone surrogate" in done.stderr and done.stderr.count("\n") == 1, (
            done.stderr
        )
        assert files() == before
