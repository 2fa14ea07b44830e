"""SPAE's probe through vLLM (prefix caching) against the transformers probe on the tiny model."""

import pytest

from harness.analysis.solve_check import analyze_solve_check
from harness.probing.probe import Decoding, HFProber, ProbeJob, VLLMProber

GREEDY = Decoding(temperature=0.0, top_p=1.0)


@pytest.fixture(scope="module")
def vllm_engine(tiny_model):
    from harness.backends.vllm import VLLMBackend

    backend = VLLMBackend(str(tiny_model), dtype="float32", enforce_eager=True, max_logprobs=-1)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def jobs(tiny_model) -> list[ProbeJob]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model))
    encode = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    trace = "Let me think. x = 3.\n\nSo y = 4.\n\n"
    return [
        ProbeJob(
            encode(f"Question {i}: what is x + y? {trace[: 10 * i]}**Final Answer**\n\\boxed{{"), encode(g), i
        )
        for i, g in enumerate(["7", "204", "12"])
    ]


def test_vllm_probe_equals_the_transformers_probe(vllm_engine, tiny_model, jobs):
    from harness.backends.hf import HFBackend

    reference = HFProber(HFBackend(str(tiny_model), dtype="float32")).probe(jobs, GREEDY)
    got = VLLMProber(vllm_engine).probe(jobs, GREEDY)
    for a, b in zip(got, reference, strict=True):
        assert a.acc == pytest.approx(b.acc, abs=1e-4)
        assert a.conf == pytest.approx(b.conf, abs=1e-4)  # greedy: the same continuations
    assert len({round(r.acc, 6) for r in got}) == len(jobs)


def test_top_k_entropy_leaves_out_the_tail(vllm_engine, jobs):
    full = VLLMProber(vllm_engine).probe(jobs, GREEDY)
    top = VLLMProber(vllm_engine, "topk=5").probe(jobs, GREEDY)
    assert [r.acc for r in top] == pytest.approx([r.acc for r in full])
    assert all(t.conf > f.conf for t, f in zip(top, full, strict=True))  # less entropy counted


def test_solve_check_through_vllm_end_to_end(tiny_model, shared_data, tmp_path):
    """The same run probed through each backend: equal Acc at every step (Conf samples differ)."""
    import json

    from solve_check_runs import write_probe_run

    found = {}
    for backend in ("hf", "vllm"):
        run = write_probe_run(tiny_model, shared_data, tmp_path / backend)
        summary = analyze_solve_check(run, mode="probe", backend=backend, dtype="float32")
        assert summary["settings"]["backend"] == backend and summary["benchmarks"]["aime24"]["n_samples"] == 2
        lines = (run / "analysis" / "solve_check.jsonl").read_text().splitlines()
        found[backend] = [json.loads(line) for line in lines]
    for a, b in zip(found["vllm"], found["hf"], strict=True):
        assert a["n_steps"] == b["n_steps"] == len(a["acc"]) and a["acc"] == pytest.approx(b["acc"], abs=1e-4)
        assert all(0 < c <= 1 for c in a["conf"])
