"""SPAE solve/check analysis: step accounting on known traces, the probe on the tiny model, the mention proxy,
run directories (resume, N/A benchmarks, settings changes)."""

import json
import math
import shutil
from pathlib import Path

import pytest
from solve_check_runs import write_probe_run, write_run

from harness import HarnessError
from harness.analysis.solve_check import RECORDS, analyze_solve_check, stated_answers
from harness.core.records import generation_record
from harness.core.store import GENERATIONS, RunDir
from harness.probing.probe import Decoding, HFProber, ProbeJob
from harness.probing.steps import (
    Tokens,
    first_step,
    potential,
    reflect_count,
    segment,
    solve_check_fields,
    step_texts,
)

D = ".\n\n"


def tokens_of(pieces: list[str]) -> Tokens:
    """A response whose tokens are exactly `pieces`."""
    spans, at = [], 0
    for piece in pieces:
        spans.append((at, at + len(piece)))
        at += len(piece)
    return Tokens("".join(pieces), list(range(len(pieces))), spans)


# tokens 0 <think> | 1 A 2 D | 3 B 4 b 5 D | 6 C 7 D | 8 X 9 x 10 x 11 D | 12 E 13 D | 14 t 15 t | 16 </think>
# | 17-20 summary, where D is the delimiter ".\n\n" as one token (Qwen's `.ĊĊ`)
FIVE_STEPS = [D if t == "." else t for t in "<think> A . B b . C . X x x . E . t t </think>".split()]
FIVE_STEPS += ["\n\n", "S", D, "T"]


def fields(pieces: list[str], phi: list[float], correct: bool) -> dict:
    seg = segment(tokens_of(pieces))
    return solve_check_fields(seg, len(pieces), first_step([p > 0.9 for p in phi]), correct)


def test_segments_boundaries_inside_think_only():
    seg = segment(tokens_of(FIVE_STEPS))
    assert (seg.t0, seg.t1, seg.summary_start) == (1, 16, 17)
    assert seg.boundaries == [2, 5, 7, 11, 13]  # the delimiter in the summary (19) is not a boundary
    assert not seg.no_think_close
    assert step_texts(tokens_of(FIVE_STEPS), seg) == ["A" + D, "Bb" + D, "C" + D, "Xxx" + D, "E" + D]


def test_solve_check_on_a_known_potential_sequence():
    phi = [0.1, 0.5, 0.95, 0.4, 0.97]  # k* = 3; the dip at step 4 relabels nothing
    right = fields(FIVE_STEPS, phi, correct=True)
    assert right == {
        "think_tokens": 15,
        "n_steps": 5,
        "saturated": True,
        "first_sat_step": 3,
        "first_sat_token": 7,
        "first_sat_relpos": 3 / 5,
        "solve_tokens": 7,  # tokens 1..7
        "check_tokens": 8,  # tokens 8..15: later steps and the unprobed tail
        "summary_tokens": 4,  # len - t1 - 1
        "r2w": False,
        "no_think_close": False,
        "no_boundaries": False,
    }
    assert fields(FIVE_STEPS, phi, correct=False)["r2w"] is True
    assert fields(FIVE_STEPS, [0.9, 0.9, 0.5, 0.2, 0.0], correct=True)["saturated"] is False  # strict >


def test_never_saturated_is_all_solving():
    never = fields(FIVE_STEPS, [0.1, 0.2, 0.3, 0.4, 0.5], correct=False)
    assert (never["solve_tokens"], never["check_tokens"], never["r2w"]) == (15, 0, False)
    assert (never["first_sat_step"], never["first_sat_token"], never["first_sat_relpos"]) == (
        None,
        None,
        None,
    )


def test_split_delimiters_and_unclosed_think():
    # no think tags (the prompt opened the block), never closed; "." + "\n\n" and "." + "\n" + "\n" split
    # the delimiter (boundary: the token with its last character); ".\n\n\n" holds it without ending with it
    pieces = ["A", ".", "\n\n", "B", ".", "\n", "\n", "C", ".\n\n\n", "D", ".", "\n\nE", "F", D]
    seg = segment(tokens_of(pieces))
    assert (seg.t0, seg.t1, seg.summary_start, seg.no_think_close) == (0, 14, 14, True)
    assert seg.boundaries == [2, 6, 11, 13]
    got = solve_check_fields(seg, len(pieces), 2, correct=False)
    assert (got["solve_tokens"], got["check_tokens"], got["summary_tokens"], got["r2w"]) == (7, 7, 0, True)


def test_no_boundaries_and_empty_thinking():
    seg = segment(tokens_of(["<think>", "abc", "</think>", "x", D]))
    assert seg.boundaries == [] and (seg.t0, seg.t1) == (1, 2)
    got = solve_check_fields(seg, 5, None, correct=True)
    assert (got["n_steps"], got["no_boundaries"], got["solve_tokens"], got["check_tokens"]) == (0, True, 1, 0)
    assert got["summary_tokens"] == 2
    empty = solve_check_fields(segment(tokens_of(["<think>", "</think>", "x"])), 3, None, correct=True)
    assert (empty["think_tokens"], empty["solve_tokens"], empty["summary_tokens"]) == (0, 0, 1)


def test_potential_algebra():
    assert [potential(a, c) for a, c in [(1, 1), (0, 1), (0, 0), (1, 0)]] == [1, -1, 0, 0.5]
    grid = [i / 100 for i in range(101)]
    for acc in grid:
        for conf in grid:
            phi = potential(acc, conf)
            assert phi == pytest.approx(conf * (2 * acc - 1) + (1 - conf) * acc / 2)
            if phi > 0.9 + 1e-12:  # (1, 0.8) gives 0.9 up to rounding
                assert acc > 0.95 and conf > 0.8


def test_reflect_markers_in_thinking_only():
    text = (
        "<think>Wait, hmm. Hmmm... waiting. Alternatively let me check; Let me verify it. "
        "double-check, re-examine.</think> Wait"
    )
    tokens = Tokens(text, [0], [(0, len(text))])
    assert reflect_count(tokens, segment(tokens)) == 8  # not "waiting", not the Wait after </think>


def test_stated_answers():
    assert stated_answers("So $x = 204$.\n\n") == ["204"]
    assert stated_answers("Thus \\boxed{12}, and y = 3\\].\n\n") == ["12", "3"]
    assert stated_answers("a = b = \\frac{1}{2}\nso on.\n\n") == ["\\frac{1}{2}"]
    assert stated_answers("No answer yet.\n\n") == []


# --- run directories ---------------------------------------------------------------------------------------

S1, S2, S3, TAIL = "\nWe try x = 2.\n\n", "So x = 204.\n\n", "Wait, check it again.\n\n", "Done"
SUMMARY = "\n\nThe answer is \\boxed{204}."
SOLVED = "<think>" + S1 + S2 + S3 + TAIL + "</think>" + SUMMARY  # states the gold 204 in step 2


def records(path: Path, mode: str) -> list[dict]:
    return [r for r in RunDir(path / "analysis").records(RECORDS) if r["mode"] == mode]


@pytest.fixture(scope="module")
def mention_run(tiny_model, tmp_path_factory) -> Path:
    info = {
        "config": {
            "benchmarks": ["aime24", "humaneval"],
            "scorers": {"aime24": "math", "humaneval": "code"},
            "model": str(tiny_model),
        },
        "answers": {"aime24": {"60": "204", "61": "113"}, "humaneval": {"HumanEval/0": "def f(): pass"}},
    }
    samples = [
        ("aime24", "60", 0, SOLVED, True, "stop", False, None),
        ("aime24", "60", 1, SOLVED.replace("{204}", "{205}"), False, "stop", False, None),  # right to wrong
        ("aime24", "60", 2, "<think>" + S1 + S2 + S3 + TAIL, False, "length", False, None),  # truncated
        ("aime24", "61", 0, "\nhmm, x is 113</think>" + SUMMARY, True, "stop", True, None),  # no boundary
        ("aime24", "61", 1, S1 + S3 + "</think>\\boxed{2}", False, "stop", True, None),  # never states 113
        ("humaneval", "HumanEval/0", 0, "```python\ndef f(): pass\n```", True, "stop", False, None),
    ]
    return write_run(tmp_path_factory.mktemp("mention") / "run", info, samples)


def n_tokens(tiny_model: Path, *pieces: str) -> list[int]:
    """Token counts of pieces, checked to tokenise the same alone and joined."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in pieces]
    assert sum(ids, []) == tokenizer("".join(pieces), add_special_tokens=False)["input_ids"]
    return [len(i) for i in ids]


def test_mention_mode_counts_exactly(mention_run, tiny_model):
    result = analyze_solve_check(mention_run, mode="mention")
    got = {(r["item_id"], r["sample_idx"]): r for r in records(mention_run, "mention")}
    assert len(got) == 5 and all(r["proxy"] and r["mode"] == "mention" for r in got.values())
    n_open, n1, n2, n3, n_tail, _, n_summary = n_tokens(
        tiny_model, "<think>", S1, S2, S3, TAIL, "</think>", SUMMARY
    )
    solved = got[("60", 0)]
    assert solved["mention"] == [False, True, False]
    assert {k: solved[k] for k in ("think_tokens", "n_steps", "first_sat_step", "first_sat_token")} == {
        "think_tokens": n1 + n2 + n3 + n_tail,
        "n_steps": 3,
        "first_sat_step": 2,
        "first_sat_token": n_open + n1 + n2 - 1,
    }
    assert (solved["solve_tokens"], solved["check_tokens"]) == (n1 + n2, n3 + n_tail)
    assert (solved["summary_tokens"], solved["reflect_count"], solved["r2w"]) == (n_summary, 1, False)
    assert got[("60", 1)]["r2w"] and got[("60", 1)]["solve_tokens"] == n1 + n2
    truncated = got[("60", 2)]
    assert truncated["r2w"] and truncated["no_think_close"] and truncated["truncated"]
    assert (truncated["check_tokens"], truncated["summary_tokens"]) == (n3 + n_tail, 0)
    flat = got[("61", 0)]
    n_flat, _, _ = n_tokens(tiny_model, "\nhmm, x is 113", "</think>", SUMMARY)
    assert (flat["n_steps"], flat["saturated"], flat["reflect_count"]) == (0, False, 1)
    assert (flat["solve_tokens"], flat["check_tokens"], flat["summary_tokens"]) == (n_flat, 0, n_summary)
    never = got[("61", 1)]
    m1, m3, _ = n_tokens(tiny_model, S1, S3, "</think>\\boxed{2}")
    assert (never["mention"], never["r2w"], never["solve_tokens"]) == ([False, False], False, m1 + m3)

    aime = result["benchmarks"]["aime24"]
    assert result["proxy"] and "PROXY" in result["method"] and aime["mode"] == "mention" and aime["proxy"]
    solve, check = n1 + n2, n3 + n_tail
    assert aime["mean_solve"] == (solve + n_flat) / 2 and aime["mean_check"] == check / 2
    assert aime["check_fraction"] == check / (solve + check + n_flat)
    assert (aime["n_samples"], aime["n_correct"], aime["n_incorrect"], aime["n_r2w"]) == (5, 2, 3, 2)
    assert aime["r2w_rate"] == pytest.approx(200 / 3) and aime["r2w_rate_all"] == 40
    assert (aime["frac_saturated"], aime["frac_correct_saturated"], aime["mean_reflect"]) == (3 / 5, 1 / 2, 1)
    assert (aime["mean_solve_saturated"], aime["mean_check_saturated"]) == (solve, check)
    assert (aime["n_no_think_close"], aime["n_no_boundaries"], aime["n_truncated"]) == (1, 1, 1)
    assert result["benchmarks"]["humaneval"] == {
        "mode": "mention",
        "status": "n/a",
        "scorer": "code",
        "reason": "code generation has no short answer to probe (SPAE paper §3.1)",
    }
    saved = json.loads((mention_run / "analysis" / "solve_check.json").read_text())
    assert saved["mention"] == result


def test_mention_mode_resumes(mention_run):
    first = analyze_solve_check(mention_run, mode="mention")
    path = mention_run / "analysis" / RECORDS
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][:20])  # the last record lost, half written
    assert analyze_solve_check(mention_run, mode="mention") == first
    assert path.read_text() == "".join(lines)


def test_other_settings_are_refused(mention_run, answering_model):
    analyze_solve_check(mention_run, mode="mention")
    with pytest.raises(HarnessError, match="other settings:\n  model: "):
        analyze_solve_check(mention_run, mode="mention", model=str(answering_model))


def test_unscored_samples_and_bad_options(tmp_path, tiny_model):
    info = {"config": {"benchmarks": ["aime24"], "scorers": {"aime24": "math"}, "model": str(tiny_model)}}
    run = write_run(tmp_path / "run", {**info, "answers": {"aime24": {"60": "204"}}}, [])
    RunDir(run).append(GENERATIONS, [generation_record("aime24", "60", 0, SOLVED)])
    with pytest.raises(HarnessError, match="has no score: run `harness score"):
        analyze_solve_check(run, mode="mention")
    with pytest.raises(HarnessError, match="unknown --mode"):
        analyze_solve_check(run, mode="oracle")


# --- the probe on the tiny model ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def prober(tiny_model) -> HFProber:
    from harness.backends.hf import HFBackend

    return HFProber(HFBackend(str(tiny_model)))


def reference(model, job: ProbeJob, eos: list[int], max_tokens: int = 10) -> tuple[float, float]:
    """Acc by a softmax over one unpadded pass; greedy Conf by full passes without a cache."""
    import torch

    with torch.inference_mode():
        logits = model(torch.tensor([job.context + job.gold])).logits[0].float()
        start = len(job.context) - 1
        probs = [logits[start + m].softmax(-1)[g].item() for m, g in enumerate(job.gold)]
        sequence, entropies = list(job.context), []
        for _ in range(max_tokens):
            p = model(torch.tensor([sequence])).logits[0, -1].float().softmax(-1)
            entropies.append(-(p * p.log()).sum().item())
            sequence.append(int(p.argmax()))
            if sequence[-1] in eos:
                break
    return sum(probs) / len(probs), math.exp(-sum(entropies) / len(entropies))


def test_probe_matches_a_manual_computation(prober):
    tokenizer = prober.backend.tokenizer
    encode = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    jobs = [
        ProbeJob(encode("Find x.\n\nSo x = 2.\n\n**Final Answer**\n\\boxed{"), encode("204"), seed=1),
        ProbeJob(encode("<|im_start|>user\nHi<|im_end|>\n\\boxed{"), encode("7"), seed=2),
        ProbeJob(
            encode("Let $a + b = 3$. Then we have a long context here.\n\n\\boxed{"), encode("1/2"), seed=3
        ),
    ]
    got = prober.probe(jobs, Decoding(temperature=0.0, top_p=1.0))
    for job, result in zip(jobs, got, strict=True):
        acc, conf = reference(prober.backend.model, job, prober.backend.eos_ids)
        assert result.acc == pytest.approx(acc, abs=1e-5) and result.conf == pytest.approx(conf, abs=1e-5)


@pytest.fixture(scope="module")
def probe_run(tiny_model, shared_data, tmp_path_factory) -> Path:
    return write_probe_run(tiny_model, shared_data, tmp_path_factory.mktemp("probe"))


def assert_same(got: list[dict], expected: list[dict]) -> None:
    """Equal records, the probe's numbers within 1e-5."""
    numbers = ("acc", "conf", "phi")
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert {k: v for k, v in a.items() if k not in numbers} == {
            k: v for k, v in b.items() if k not in numbers
        }
        for key in numbers:
            assert a[key] == pytest.approx(b[key], abs=1e-5)


def test_probe_mode_end_to_end(probe_run, tmp_path):
    result = analyze_solve_check(probe_run, mode="probe", batch_size=4)
    got = records(probe_run, "probe")
    assert [r["n_steps"] for r in got] == [3, 4] and not any(r["proxy"] for r in got)
    for r in got:
        assert len(r["acc"]) == len(r["conf"]) == len(r["phi"]) == r["n_steps"]
        assert all(0 <= a <= 1 for a in r["acc"]) and all(0 < c <= 1 for c in r["conf"])
        assert r["phi"] == [potential(a, c) for a, c in zip(r["acc"], r["conf"], strict=True)]
        assert r["first_sat_step"] == first_step([p > 0.9 for p in r["phi"]])
    assert result["mode"] == "probe" and not result["proxy"] and result["settings"]["tau_sat"] == 0.9
    assert result["benchmarks"]["aime24"]["n_samples"] == 2

    single = shutil.copytree(probe_run, tmp_path / "run")
    shutil.rmtree(single / "analysis")
    analyze_solve_check(single, mode="probe", batch_size=1)
    assert_same(records(single, "probe"), got)

    path = probe_run / "analysis" / RECORDS
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0])
    assert analyze_solve_check(probe_run, mode="probe", batch_size=3) == result
    assert_same(records(probe_run, "probe"), got)


def test_probe_needs_the_runs_prompts(mention_run):
    with pytest.raises(HarnessError, match="records no prompt or data for aime24"):
        analyze_solve_check(mention_run, mode="probe")
