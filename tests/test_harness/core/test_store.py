"""The run directory's JSONL files hold any text a model can produce."""

from harness.core.records import generation_record
from harness.core.store import GENERATIONS, RunDir


def test_unicode_line_separators_inside_texts_stay_in_their_record(tmp_path):
    texts = ["a\u2028b", "c\x85d", "e\u2029f\x0bg\x0ch\x1ci", "plain"]
    run = RunDir(tmp_path)
    run.append(GENERATIONS, [generation_record("b", "i", k, t) for k, t in enumerate(texts)])
    assert [r["text"] for r in run.records(GENERATIONS)] == texts
