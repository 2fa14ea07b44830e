"""Code benchmarks end to end: gold answers pass, wrong ones fail, hostile ones are contained."""

from __future__ import annotations

import gzip
import json

import pytest
from helpers import run_cli

from benchmarks import get_benchmark
from harness.core.metrics import Outcome, aggregate
from harness.scoring.code import CodeScorer
from harness.scoring.lcb import private_tests
from harness.stages.score import upstream_samples


def _score(items, answers):
    scores = dict(CodeScorer().score(answers, [i.answer for i in items]))
    return [scores[i] for i in range(len(items))]


def test_humaneval_canonical_solutions_pass_and_a_wrong_one_fails(shared_data):
    items = get_benchmark("humaneval").load(shared_data).items[:12]
    rows = {
        json.loads(r)["task_id"]: json.loads(r)
        for r in gzip.open(shared_data / "humaneval/HumanEval.jsonl.gz", "rt")
    }
    gold = [f"```python\n{rows[i.id]['prompt']}{rows[i.id]['canonical_solution']}\n```" for i in items]
    assert [s.value for s in _score(items, gold)] == [1.0] * 12
    wrong = _score(
        items[:1], ["```python\ndef has_close_elements(numbers, threshold):\n    return True\n```"]
    )
    assert wrong[0].value == 0.0 and wrong[0].details["verdict"] == "fail"


def test_mbpp_plus_canonical_solutions_pass_base_and_plus(shared_data):
    items = get_benchmark("mbpp_plus").load(shared_data).items[:10]
    gold = ["```python\n" + json.loads(i.answer)["solution"] + "\n```" for i in items]
    scores = _score(items, gold)
    assert all(s.value == 1.0 and s.details["base"] == "pass" for s in scores)
    # a solution right on the base inputs' shapes but wrong on empty inputs fails plus only
    wrong = _score(
        items[:1], ["```python\ndef similar_elements(a, b):\n    return tuple(set(a) & set(b)) or 1\n```"]
    )
    assert wrong[0].value == 0.0 and wrong[0].details["base"] == "pass"


@pytest.mark.parametrize("mode", ["output", "input"])
def test_cruxeval_given_answers_pass_and_invalid_ones_fail(shared_data, mode):
    items = get_benchmark(f"cruxeval_{mode[0]}").load(shared_data).items[:8]
    golds = [json.loads(i.answer) for i in items]
    right = [f"[ANSWER]\nassert f({g['input']}) == {g['output']}\n[/ANSWER]" for g in golds]
    assert [s.value for s in _score(items, right)] == [1.0] * 8
    cheat = (
        "assert f(*'x') == 1 or True"
        if mode == "input"
        else f"assert f({golds[0]['input']}) == f({golds[0]['input']})"
    )
    score = _score(items[:1], [f"[ANSWER]\n{cheat}\n[/ANSWER]"])[0]
    assert score.value == 0.0


def test_cruxeval_input_answer_cannot_patch_f(shared_data):
    item = get_benchmark("cruxeval_i").load(shared_data).items[0]
    output = json.loads(item.answer)["output"]
    patch = f"f(f.__setattr__('__code__', (lambda *a: {output}).__code__))"
    assert _score([item], [f"[ANSWER]\nassert {patch} == {output}\n[/ANSWER]"])[0].value == 0.0


def test_upstream_compat_drops_invalid_samples_only_for_solved_items():
    def pair(item, idx, value, invalid):
        g = {"benchmark": "b", "item_id": item, "sample_idx": idx}
        return g, {"value": value, "details": {"invalid": True} if invalid else {}}

    pairs = [
        pair("a", 0, 1.0, False),
        pair("a", 1, 0.0, True),
        pair("b", 0, 0.0, True),
        pair("b", 1, 0.0, False),
    ]
    kept = upstream_samples(pairs)
    assert [(g["item_id"], g["sample_idx"]) for g, _ in kept] == [("a", 0), ("b", 0), ("b", 1)]


def test_extra_pass_k_is_reported():
    outcomes = [Outcome("x", i, float(i == 0), str(i)) for i in range(10)]
    result = aggregate(outcomes, extra_k=(5,))
    assert result["pass@5"] == pytest.approx(0.5)
    assert "pass@5" not in aggregate(outcomes)


def test_livecodebench_public_tests_run(shared_data):
    items = get_benchmark("livecodebench").load(shared_data).items
    stdin = next(i for i in items if json.loads(i.answer)["tests"][0]["testtype"] == "stdin")
    functional = next(i for i in items if json.loads(i.answer)["tests"][0]["testtype"] == "functional")
    echo = "```python\nimport sys\nprint(sys.stdin.read())\n```"
    scores = _score([stdin, functional], [echo, "```python\nclass Solution:\n    pass\n```"])
    assert all(s.value == 0.0 for s in scores)
    assert scores[0].details["verdict"] == "fail" and scores[0].details["failed_test"] == 0
    assert scores[1].details["verdict"] == "fail"  # no such method
    # the first stdin problem's expected outputs, printed back, pass
    tests = json.loads(stdin.answer)["tests"]
    if len(tests) == 1:
        cheat = f"```python\nprint({tests[0]['output']!r})\n```"
        assert _score([stdin], [cheat])[0].value == 1.0


def test_livecodebench_private_tests_decode_without_running_pickles():
    import base64
    import pickle
    import zlib

    tests = [{"input": "1\n", "output": "2\n", "testtype": "stdin"}]
    field = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()
    assert private_tests(field) == tests
    hostile = base64.b64encode(zlib.compress(pickle.dumps(print))).decode()
    with pytest.raises(pickle.UnpicklingError):
        private_tests(hostile)


def test_custom_code_benchmark_through_the_cli(tmp_path):
    bench = tmp_path / "mine.jsonl"
    rows = [
        {"id": "add", "prompt": "Write add(a, b).", "tests": "assert add(1, 2) == 3\nassert add(-1, 1) == 0"}
    ]
    bench.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    generations = tmp_path / "gens.jsonl"
    answers = [
        "```python\ndef add(a, b):\n    return a + b\n```",
        "```python\nimport os\nos._exit(0)\n```",
        "```python\nclass Yes:\n    def __eq__(self, other):\n        return True\n"
        "def add(a, b):\n    return Yes()\n```",
        "```python\nimport builtins\nbuiltins.AssertionError = type('N', (Exception,), {})\n"
        "def add(a, b):\n    return 0\n```",
    ]
    generations.write_text(
        "".join(
            json.dumps({"item_id": "add", "sample_idx": i, "text": a}) + "\n" for i, a in enumerate(answers)
        )
    )
    done = run_cli(
        "score", "--generations", str(generations), "--benchmark", f"jsonl:{bench}", "--scorer", "code",
        "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    scores = [json.loads(line) for line in (tmp_path / "run" / "scores.jsonl").read_text().splitlines()]
    assert [s["value"] for s in sorted(scores, key=lambda s: s["sample_idx"])] == [1.0, 0.0, 0.0, 0.0]
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["scorer_versions"]["mine"].startswith("code-")
    assert run["sandbox"]["isolation"] in ("bwrap", "none")
