"""The LLM judge on real engines: through the openai backend against a real `vllm serve` of the tiny
model, and on its own offline vLLM engine (plumbing: the tiny model's verdicts are noise, and are
recorded as whatever they parse to)."""

from harness.backends import EngineConfig
from harness.scoring import JudgeConfig, get_scorer
from harness.scoring.judge import JudgeScorer, parse_verdict
from harness.scoring.rules import gold_text


def test_judge_against_vllm_serve(server, tiny_model):
    judge = JudgeConfig(
        EngineConfig(str(tiny_model), backend="openai", base_url=server), repeats=2, max_tokens=16
    )
    scorer = get_scorer("cem+judge", judge=judge)
    golds = [gold_text("Paris", "Capital of France?")] * 3
    answers = ["The answer is Paris.", "The answer is Lyon.", "The answer is Nice."]
    scores = dict(scorer.score(answers, golds))
    assert scores[0].value == 1.0 and "judge" not in scores[0].details
    for i in (1, 2):
        judged = scores[i].details["judge"]
        assert len(judged["raw"]) == 2 and all(isinstance(t, str) for t in judged["raw"])
        assert judged["verdicts"] == [parse_verdict(t) for t in judged["raw"]]
        assert scores[i].value == (1.0 if judged["decision"] == "yes" else 0.0)
    again = dict(scorer.score(answers, golds))  # temperature 0 on a real engine: the same verdicts
    assert [again[i].details.get("judge") for i in (1, 2)] == [scores[i].details.get("judge") for i in (1, 2)]


def test_vllm_judge_runs_on_its_own_engine_settings(tiny_model, monkeypatch):
    """A judge with backend vllm starts its own offline engine with the judge's settings, not the run's."""
    engine = EngineConfig(
        str(tiny_model),
        backend="vllm",
        dtype="float32",
        max_model_len=2048,
        enforce_eager=True,
        prefix_caching=False,
        max_num_seqs=4,
        gpu_memory_utilization=0.1,
    )
    started = []
    build = JudgeScorer._backend

    def recorded(self):
        backend = build(self)
        started.append(backend.describe())
        return backend

    monkeypatch.setattr(JudgeScorer, "_backend", recorded)
    scorer = get_scorer("judge", judge=JudgeConfig(engine, max_tokens=8))
    scores = dict(scorer.score(["Lyon", "Paris", None], [gold_text("Paris", "Capital of France?")] * 3))
    (facts,) = started  # one engine for the whole batch
    assert facts["backend"] == "vllm" and facts["model"] == str(tiny_model)
    assert (facts["dtype"], facts["max_model_len"], facts["max_num_seqs"]) == ("float32", 2048, 4)
    assert (facts["enforce_eager"], facts["enable_prefix_caching"]) == (True, False)
    assert facts["gpu_memory_utilization"] == 0.1
    assert scores[2].value == 0.0 and "judge" not in scores[2].details  # no answer: no verdict
    for i in (0, 1):
        judged = scores[i].details["judge"]
        assert judged["verdicts"] == [parse_verdict(t) for t in judged["raw"]] and len(judged["raw"]) == 1
        assert scores[i].value == (1.0 if judged["decision"] == "yes" else 0.0)
