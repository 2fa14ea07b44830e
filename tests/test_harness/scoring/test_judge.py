"""The LLM judge against a scripted OpenAI-compatible server: verdict parsing, the cascade, repeats,
retries, reuse of stored verdicts, and a dead judge."""

import json
import re
from collections import Counter

import pytest
from fake_openai import FakeOpenAI

from harness import HarnessError
from harness.backends import EngineConfig
from harness.scoring import JudgeConfig, get_scorer
from harness.scoring.judge import decide, parse_verdict
from harness.scoring.rules import gold_text


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Explanation: same person.\nDecision: [[YES]]", "yes"),
        ("Decision: [[NO]]", "no"),
        ("[[YES]] or [[NO]]", "invalid"),
        ("I cannot tell.", "invalid"),
        ("Decision: YES", "yes"),
        ("NO", "no"),
        ("YES and NO", "invalid"),
        ("<think>maybe [[NO]]</think>Decision: [[YES]]", "yes"),  # only after the last </think>
        ("<think>[[YES]]</think>", "invalid"),
        ("", "invalid"),
    ],
)
def test_parse_verdict(text, verdict):
    assert parse_verdict(text) == verdict


def test_decide_majority():
    assert decide(["yes", "no", "yes"]) == "yes"
    assert decide(["yes", "no"]) == "no"  # a tie is no
    assert decide(["invalid", "yes"]) == "yes"
    assert decide(["invalid", "invalid"]) == "unparsable"


def chat(text: str) -> dict:
    return {"choices": [{"message": {"content": text}, "finish_reason": "stop"}], "usage": {}}


def prediction_of(body: dict) -> str:
    found = re.search(r"Predicted Answer: (.*)", body["messages"][0]["content"])
    return found.group(1) if found else ""


VERDICTS = {"Lyon": "Decision: [[YES]]", "Nice": "Decision: [[NO]]", "Metz": "I am not sure."}


def scripted(body: dict, count: int):
    return 200, chat(VERDICTS.get(prediction_of(body), "Decision: [[NO]]")), {}


def judge_for(fake: FakeOpenAI, **options) -> JudgeConfig:
    return JudgeConfig(EngineConfig("fake/model", backend="openai", base_url=fake.base_url), **options)


def test_cascade_calls_the_judge_only_where_the_rule_fails():
    gold = gold_text(["Paris"], "Capital of France?")
    answers = [
        "The answer is Paris.",  # the rule says 1: no judge call
        "The answer is Lyon.",  # the judge says yes
        "The answer is Nice.",  # the judge says no
        "The answer is Metz.",  # the judge says nothing parsable
        "no marker at all",  # shown to the judge as "None"
        None,  # unclosed think: 0 without a call
    ]
    with FakeOpenAI(scripted) as fake:
        scorer = get_scorer("cem+judge", judge=judge_for(fake))
        scores = dict(scorer.score(answers, [gold] * len(answers)))
    assert [scores[i].value for i in range(6)] == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert sorted(prediction_of(b) for b in fake.bodies) == ["Lyon", "Metz", "Nice", "None"]
    assert all(b["temperature"] == 0.0 for b in fake.bodies)
    prompt = fake.bodies[0]["messages"][0]["content"]
    assert "- Question: Capital of France?" in prompt and "- Ground Truth Answer: Paris" in prompt
    assert "judge" not in scores[0].details and scores[0].details["rule"] == 1.0
    assert scores[1].details["judge"]["decision"] == "yes" and scores[1].details["rule"] == 0.0
    assert scores[1].extracted == "Lyon"
    assert scores[3].details["judge"]["decision"] == "unparsable"
    assert scores[3].details["judge"]["raw"] == ["I am not sure."]
    assert scorer.version.startswith("max(cem-1,judge-spell-v1-")


def test_math_then_judge_asks_only_where_math_verify_rejects():
    """UloRL's reward (the paper's rule, then its generative verifier): math-verify first, against every
    accepted answer; the judge (shown what math-verify extracted) where it rejects."""

    def units(body, count):
        return 200, chat("Decision: [[YES]]" if "27" in prediction_of(body) else "Decision: [[NO]]"), {}

    answers = ["\\boxed{0.5}", "\\boxed{27\\,\\text{cm}}", "\\boxed{3}", None, "\\boxed{two}"]
    golds = ["1/2", "0.27", gold_text(["0.27"], "How long?"), "1", gold_text(["2", "two"])]
    with FakeOpenAI(units) as fake:
        scorer = get_scorer("math+judge", judge=judge_for(fake))
        scores = dict(scorer.score(answers, golds))
        scorer.close()
    assert [scores[i].value for i in range(5)] == [1.0, 1.0, 0.0, 0.0, 1.0]
    assert len(fake.bodies) == 2  # 27 cm and 3; 0.5 = 1/2 and "two" by the rule, None without a call
    assert scores[1].details["rule"] == 0.0 and scores[1].details["judge"]["decision"] == "yes"
    assert any("- Question: How long?" in b["messages"][0]["content"] for b in fake.bodies)
    assert scorer.version.startswith("max(math-")


def test_repeats_take_the_majority():
    replies = Counter()

    def two_yes_one_no(body, count):
        with_count = replies[prediction_of(body)]
        replies[prediction_of(body)] += 1
        return 200, chat(["Decision: [[YES]]", "Decision: [[NO]]", "Decision: [[YES]]"][with_count % 3]), {}

    with FakeOpenAI(two_yes_one_no) as fake:
        scorer = get_scorer("judge", judge=judge_for(fake, repeats=3))
        ((index, score),) = scorer.score(["It is Lyon"], [gold_text("Paris", "q")])
    assert len(fake.bodies) == 3
    assert len({b["seed"] for b in fake.bodies}) == 3  # each repeat its own seed
    assert sorted(score.details["judge"]["verdicts"]) == ["no", "yes", "yes"]
    assert score.value == 1.0


def test_server_errors_are_retried():
    def flaky(body, count):
        if count <= 2:
            return 503, {"error": "busy"}, {"Retry-After": "0"}
        return 200, chat("Decision: [[YES]]"), {}

    with FakeOpenAI(flaky) as fake:
        scorer = get_scorer("judge", judge=judge_for(fake))
        ((_, score),) = scorer.score(["Lyon"], [gold_text("Paris", "q")])
    assert len(fake.bodies) == 3
    assert score.value == 1.0


def test_stored_verdicts_are_reused():
    gold = gold_text("Paris", "q")
    with FakeOpenAI(scripted) as fake:
        scorer = get_scorer("cem+judge", judge=judge_for(fake))
        first = dict(scorer.score(["The answer is Lyon"], [gold]))[0]
        again = dict(scorer.score(["The answer is Lyon"], [gold], [first.details]))[0]
        changed = dict(scorer.score(["The answer is Nice"], [gold], [first.details]))[0]
    assert len(fake.bodies) == 2  # the first call and the changed answer; not the rescoring
    assert again.value == first.value == 1.0 and again.details == first.details
    assert changed.value == 0.0


def test_a_dead_judge_is_a_clear_error_after_rule_scores():
    with FakeOpenAI(scripted) as fake:
        url = fake.base_url
    engine = EngineConfig("fake/model", backend="openai", base_url=url, server_wait=0)
    scorer = get_scorer("cem+judge", judge=JudgeConfig(engine))
    results = scorer.score(["The answer is Paris", "The answer is Lyon"], [gold_text("Paris", "q")] * 2)
    assert next(results)[1].value == 1.0  # rule-decided scores come first
    with pytest.raises(HarnessError, match="127.0.0.1"):
        next(results)


def test_custom_judge_prompt_file(tmp_path):
    template = tmp_path / "judge.txt"
    template.write_text("Q {question} | P {prediction} | G {gold} | {not_a_field}")
    with FakeOpenAI(scripted) as fake:
        scorer = get_scorer("judge", judge=judge_for(fake, prompt=str(template)))
        dict(scorer.score(["Lyon"], [gold_text("Paris", "Where?")]))
    assert fake.bodies[0]["messages"][0]["content"] == "Q Where? | P Lyon | G Paris | {not_a_field}"
    assert "judge.txt" in scorer.version
    (tmp_path / "bad.txt").write_text("no fields")
    with pytest.raises(HarnessError, match="lacks"):
        get_scorer("judge", judge=JudgeConfig(EngineConfig("m"), prompt=str(tmp_path / "bad.txt")))


@pytest.mark.parametrize(
    ("engine", "message"),
    [
        (EngineConfig("m", backend="openai"), "--judge-base-url goes with --judge-backend openai"),
        (
            EngineConfig("m", tensor_parallel_size=2),
            "--judge-tensor-parallel-size needs --judge-backend vllm",
        ),
        (
            EngineConfig("m", backend="openai", base_url="http://127.0.0.1:9/v1", data_parallel_size=2),
            "--judge-data-parallel-size is for local engines",
        ),
    ],
)
def test_judge_engine_errors_name_the_judge_flags(engine, message):
    """The judge's own engine is checked when first needed, in the words of its --judge-... flags."""
    scorer = get_scorer("cem+judge", judge=JudgeConfig(engine))
    results = scorer.score(["The answer is Paris", "The answer is Lyon"], [gold_text("Paris", "q")] * 2)
    assert next(results)[1].value == 1.0  # no engine needed for the rule's own decision
    with pytest.raises(HarnessError, match=r"^judge: ") as error:
        next(results)
    assert message in str(error.value)
    assert "--judge-judge" not in str(error.value)
    assert all(flag.startswith("--judge-") for flag in re.findall(r"--[\w-]+", str(error.value)))


def test_judge_identity_excludes_the_server_address():
    a = JudgeConfig.from_settings({"model": "m", "base_url": "http://a/v1"}).identity()
    b = JudgeConfig.from_settings({"model": "m", "base_url": "http://b/v1"}).identity()
    assert a == b and "base_url" not in a
    assert json.dumps(a)  # stored in run.json


def test_external_generations_are_judged(tmp_path):
    """`harness score --generations` on a custom cem file with a judge: max(rule, judge) per answer."""
    from helpers import run_cli

    data = tmp_path / "capitals.jsonl"
    data.write_text(json.dumps({"id": "fr", "problem": "Capital of France?", "answer": "Paris"}) + "\n")
    generations = tmp_path / "generations.jsonl"
    texts = ["The answer is Paris.", "The answer is Lyon.", "The answer is Nice."]
    generations.write_text("".join(json.dumps({"item_id": "fr", "text": t}) + "\n" for t in texts))
    out = tmp_path / "run"
    with FakeOpenAI(scripted) as fake:
        run_cli(
            "score", "--generations", str(generations), "--benchmark", f"jsonl:{data}", "--scorer", "cem",
            "--out", str(out), "--judge-model", "fake/model", "--judge-base-url", fake.base_url,
        )  # fmt: skip
    assert sorted(prediction_of(b) for b in fake.bodies) == ["Lyon", "Nice"]
    scores = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert [s["value"] for s in scores] == [1.0, 1.0, 0.0]
    info = json.loads((out / "run.json").read_text())
    assert info["config"]["scorers"] == {"capitals": "cem+judge"}
    assert info["config"]["judge"]["model"] == "fake/model" and info["judge_base_url"] == fake.base_url


def test_a_real_judge_reads_the_question_it_is_shown(smollm2):
    """SmolLM2-135M-Instruct as the judge, on the hf backend, with SPELL's prompt: its replies are
    about the question each answer was given (the random tiny model's are noise), and what it
    decided is recorded with its words. At 135M it is no reliable judge: the test does not ask
    for right verdicts, only for a judge that was shown the question, the answer and the gold."""
    judge = JudgeConfig(EngineConfig(str(smollm2), backend="hf", dtype="float32"), max_tokens=40)
    cases = {
        "What is the capital of France?": ("Paris", "The capital of France is Berlin.", "France"),
        "How many legs does a spider have?": ("8", "A spider has six legs.", "spider"),
    }
    golds = [gold_text(gold, question) for question, (gold, _, _) in cases.items()]
    scores = dict(get_scorer("judge", judge=judge).score([answer for _, answer, _ in cases.values()], golds))
    for i, (_, _, subject) in enumerate(cases.values()):
        (reply,) = scores[i].details["judge"]["raw"]
        assert subject in reply, reply
        assert scores[i].details["judge"]["verdicts"] == [parse_verdict(reply)]
        assert scores[i].value == (1.0 if scores[i].details["judge"]["decision"] == "yes" else 0.0)
