"""The cold start (trainers/coldstart/): SPELL's and Absolute Zero's demonstrations read back by the
methods' own parsers and scorers, the contamination check, the config, and a real SFT on the tiny model
that the self-play run then starts from."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest
import yaml
from helpers import REPO
from trainer_helpers import invoke

from harness import HarnessError
from harness.sandbox import isolated
from harness.sandbox.limits import Limits
from trainers.coldstart.contamination import decontaminate, evaluation_ngrams, ngrams
from trainers.coldstart.demos import Demonstration
from trainers.coldstart.options import ColdStartOptions
from trainers.integration.sft import tokenized
from trainers.methods.azr.buffers import SEED_PROGRAM
from trainers.methods.azr.coldstart import AzrDemonstrations, library_seed, library_tasks
from trainers.methods.azr.executor import Check, Executor
from trainers.methods.azr.library import PROGRAMS
from trainers.methods.azr.method import AzrOptions
from trainers.methods.azr.parsing import Proposal as ParsedProposal
from trainers.methods.azr.parsing import extract_solution, format_ok
from trainers.methods.azr.parsing import parse_proposal as parse_task
from trainers.methods.azr.rewards import TASKS
from trainers.methods.spell import prompts
from trainers.methods.spell.coldstart import SpellDemonstrations, number_facts, tables
from trainers.methods.spell.corpus.dataset import load_clusters
from trainers.methods.spell.method import RULES, SpellOptions
from trainers.methods.spell.parsing import NO, YES, Proposal, parse_judgment, parse_proposal
from trainers.rewards import ScorerReward

SPELL_CPU = yaml.safe_load((REPO / "configs/train/spell-cpu.yaml").read_text())
CORPUS = REPO / "configs/train/spell-cpu-corpus"


def spell_demos(examples: int = 6, **options) -> list[Demonstration]:
    merged = SpellOptions.from_mapping({**SPELL_CPU["options"], **options})
    return SpellDemonstrations(load_clusters(CORPUS), merged, seed=0).build(examples)


def test_spell_demonstrations_cover_every_role_and_task():
    demos = spell_demos(6)
    counts = Counter((d.role, d.task) for d in demos)
    assert counts == {(r, t): 6 for r in ("questioner", "responder", "verifier") for t in prompts.TASKS}
    judged = [parse_judgment(d.completion) for d in demos if d.role == "verifier"]
    assert Counter(judged) == {YES: 9, NO: 9}  # agreeing and disagreeing judgments in equal numbers


def test_spell_questioner_replies_parse_to_their_facts_and_the_responders_are_right():
    """Each questioner reply, after the CPU config's prefill, is a usable proposal; the responder's answer
    to it scores 1 under the task's own rule (cem, numeric, choice) against the proposal's reference."""
    demos = spell_demos(6)
    questions = [d for d in demos if d.role == "questioner"]
    answers = [d for d in demos if d.role == "responder"]
    assert all(d.prefill == SPELL_CPU["options"]["questioner_prefill"] for d in questions)
    for asked, answered in zip(questions, answers, strict=True):
        proposal = parse_proposal(asked.prefill + asked.completion, asked.task, lambda s: len(s.split()))
        assert isinstance(proposal, Proposal), (asked.completion, proposal)
        assert proposal.question in answered.prompt[0]["content"]
        (score,) = ScorerReward(RULES[asked.task]).scores([answered.completion], [proposal.answer], [False])
        assert score.value == 1.0, (answered.completion, proposal.answer)


def test_spell_prompts_are_the_methods_own_and_hold_only_corpus_documents():
    """Questioner and responder prompts show documents of one training cluster, in its order; the prompt
    text is the method's own (spell/prompts.py)."""
    clusters = load_clusters(CORPUS)
    for demo in spell_demos(4):
        text = demo.prompt[0]["content"]
        if demo.role == "verifier":
            assert text.startswith(prompts.VERIFIER[:80]) and demo.sources[0] in text
            continue
        context = text.split("<text>\n", 1)[1].split("\n</text>", 1)[0]
        assert any(context == "\n".join(d for d in c.documents if d in context) for c in clusters)
        if demo.role == "questioner":
            assert text.startswith(prompts.INTRODUCTIONS[(demo.task, "Previous Examples" in text)])
        else:
            assert text.endswith(
                prompts.responder_prompt(demo.task, context, "Q", {k: k for k in "ABCD"})[-40:]
            )


def test_spell_history_variant_and_choice_letter():
    questions = [d for d in spell_demos(8) if d.role == "questioner"]
    assert 0 < sum("## Previous Examples" in d.prompt[0]["content"] for d in questions) < len(questions)
    for demo in questions:
        if demo.task == prompts.CHOICE:
            letter = json.loads(demo.completion.split('"answer": ')[1].split("}")[0])
            assert f"The correct answer must be {letter}." in demo.prompt[0]["content"]


def test_a_prefill_that_does_not_start_the_replies_is_refused():
    with pytest.raises(HarnessError, match="questioner_prefill"):
        spell_demos(1, questioner_prefill="Question:")


def test_number_facts_and_tables_read_prose_and_markdown():
    docs = ["Founded in 1612, the town has 14,200 people. It lost -3 points.", "| Segment | 2020 | 2019 |\n"
            "| --- | --- | --- |\n| Snacks | 1,000 | 900 |\n| Total revenue | 1,500 | 1,300 |"]  # fmt: skip
    facts = number_facts(docs, [0, 1])
    assert [n for _, _, n in facts] == ["1612", "14,200", "-3"]  # the table is not prose
    assert facts[1][1] == "Founded in 1612, the town has ___ people."
    ((d, header, body),) = tables(docs, [0, 1])
    assert (d, header, body) == (
        1,
        ["Segment", "2020", "2019"],
        {"Snacks": [1000, 900], "Total revenue": [1500, 1300]},
    )


def demo_from(source: str) -> Demonstration:
    return Demonstration("responder", "doc_general_qa", ({"role": "user", "content": source},), "x",
                         sources=(source,))  # fmt: skip


def test_contamination_drops_copies_of_evaluation_items_and_keeps_the_rest(tmp_path):
    copied = (
        "The Quorra Canal was dug between 1791 and 1804 to carry coal from the hills to the sea at Tallis"
    )
    rows = [{"id": "1", "problem": f"Read this: {copied}. When was it finished?", "answer": "1804"},
            {"id": "2", "problem": "What is 12 + 30?", "answer": "42"}]  # fmt: skip
    path = tmp_path / "eval.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    against = evaluation_ngrams([f"jsonl:{path}"], None)
    demos = [
        demo_from("Some other text. " + copied.upper() + "!"),  # a 13-word run, case and punctuation aside
        demo_from("The Quorra Canal was dug between 1791 and 1804."),  # 10 shared words: not a copy
        demo_from("42"),  # a short answer alone is no evidence
        demo_from("What is 12 + 30?"),  # an exact copy of a short problem is
    ]
    kept, report = decontaminate(demos, against)
    assert kept == [demos[1], demos[2]]
    assert report.dropped == {f"jsonl:{path}": 2}
    assert report.record()["examples"][0]["shared"].startswith("quorra canal") or report.record()["examples"]


def test_an_evaluation_set_that_cannot_be_loaded_is_an_error(tmp_path):
    with pytest.raises(HarnessError, match="cannot load evaluation set"):
        evaluation_ngrams([f"jsonl:{tmp_path / 'missing.jsonl'}"], None)


def test_ngrams():
    assert ngrams("A b, C!", 2) == {("a", "b"), ("b", "c")}
    assert ngrams("one two", 13) == {("one", "two")}
    assert ngrams("...", 13) == set()


def test_cold_start_settings_are_checked():
    assert ColdStartOptions.from_mapping({"decontaminate": "aime24,jsonl:x"}).decontaminate == (
        "aime24",
        "jsonl:x",
    )
    with pytest.raises(HarnessError, match=r"unknown cold_start settings \['steps'\]"):
        ColdStartOptions.from_mapping({"steps": 3})
    with pytest.raises(HarnessError, match="cold_start.epochs must be greater than 0"):
        ColdStartOptions.from_mapping({"epochs": 0})
    with pytest.raises(HarnessError, match="cold_start must be a mapping"):
        ColdStartOptions.from_mapping(5)


def test_the_tokenized_demonstration_trains_on_the_completion_only(plain_model):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(plain_model)
    demo = Demonstration("questioner", "doc_general_qa", ({"role": "user", "content": "Ask."},), '2?"}',
                         prefill='{"q": "1 +')  # fmt: skip
    row = tokenized(demo, tokenizer, {})
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "Ask."}], add_generation_prompt=True,
                                           tokenize=True, return_dict=True)["input_ids"]  # fmt: skip
    prefill = tokenizer.encode('{"q": "1 +', add_special_tokens=False)
    completion = tokenizer.encode('2?"}', add_special_tokens=False) + [tokenizer.eos_token_id]
    assert row["input_ids"] == list(prompt) + prefill + completion
    assert row["completion_mask"] == [0] * (len(prompt) + len(prefill)) + [1] * len(completion)


def test_methods_without_demonstrations_refuse_a_cold_start(tmp_path):
    with pytest.raises(HarnessError, match="method 'grpo' has no cold-start demonstrations"):
        invoke("train", "grpo", "--model", "m", "--dataset", "aime24", "--out", tmp_path / "g",
               "--set", "cold_start.examples=2")  # fmt: skip
    assert not (tmp_path / "g").exists()


def test_dry_run_shows_the_cold_start_and_the_paper_configs_have_none(tmp_path):
    for name, on in (("spell", False), ("azr", False)):
        config = REPO / f"configs/train/{name}.yaml"
        result = invoke("train", name.split("-")[0], "--dry-run", "--config", config, "--model", "m",
                        "--out", tmp_path / name)  # fmt: skip
        assert result.exit_code == 0, result.output
        assert (json.loads(result.stdout)["cold_start"] is not None) == on, name


@pytest.mark.slow
def test_spell_cold_start_on_the_tiny_model_then_self_play_from_it(plain_model, tmp_path, monkeypatch):
    """A real SFTTrainer run: OUT/cold-start is a model folder with its demonstrations and report, self-play
    starts from it (train.json says so), and a rerun reuses it instead of training again."""
    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    args = (
        "train", "spell", "--model", plain_model, "--config", "configs/train/spell-cpu.yaml", "--out", out,
        "--max-steps", "1", "--save-steps", "1", "--set", "options.questioner_max_tokens=8",
        "--set", "options.questions_per_round=2",
        "--set", "cold_start.examples=1", "--set", "cold_start.epochs=1",
    )  # fmt: skip
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    folder = out / "cold-start"
    report = json.loads((folder / "report.json").read_text())
    assert report["demonstrations"] == 9 and report["sft_steps"] >= 1 and report["final_loss"] > 0
    assert report["per_role_task"] == {f"{r}/{t}": 1 for r in ("questioner", "responder", "verifier")
                                       for t in sorted(prompts.TASKS)}  # fmt: skip
    assert len((folder / "demonstrations.jsonl").read_text().splitlines()) == 9
    assert (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()
    assert not list(folder.glob("*.bin"))  # no pickle in the folder
    assert json.loads((out / "train.json").read_text())["cold_start"] == "cold-start"
    assert "cold start: 9 demonstrations (0 dropped as contaminated)" in result.output
    started = (folder / "report.json").stat().st_mtime_ns
    shutil.rmtree(out / "checkpoint-1")
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert "cold start:" not in result.output  # reused, not trained again
    assert (folder / "report.json").stat().st_mtime_ns == started


# --- Absolute Zero ---------------------------------------------------------------------------------------

sandboxed = pytest.mark.skipif(not isolated(), reason="bubblewrap isolation unavailable: not running code")
AZR_CPU = yaml.safe_load((REPO / "configs/train/azr-cpu.yaml").read_text())


def patient_executor() -> Executor:
    """The method's executor with a 60 s wall: a loaded machine, not the library, times out at 10 s."""
    return Executor(Limits(wall=60.0, cpu=60.0), workers=2)


@pytest.fixture(scope="module")
def library():
    return library_tasks(patient_executor())


@pytest.mark.slow  # seconds each: `tox -e unit` leaves it to the full tier
@sandboxed
def test_every_library_program_validates_and_none_is_the_seed(library):
    assert len(library) == len(PROGRAMS) >= 30
    assert all(len(triplets) == len(p.inputs) for p, triplets in library)
    assert SEED_PROGRAM not in {p.code for p, _ in library}
    seed = library_seed(patient_executor())
    assert len(seed) == sum(len(t) + 1 for _, t in library)
    assert sum(t.induction for t in seed) == len(PROGRAMS)


@pytest.mark.slow  # seconds each: `tox -e unit` leaves it to the full tier
@sandboxed
@pytest.mark.parametrize("template", ["chat", "r1"])
def test_azr_demonstrations_parse_and_their_answers_pass_the_executor(library, template):
    """Proposals parse into the task they demonstrate and pass the format check; every solver answer is
    checked right by the sandboxed executor, as the method checks its solvers."""
    options = AzrOptions.from_mapping({**AZR_CPU["options"], "template": template})
    demos = AzrDemonstrations(library, options, seed=0).build(len(library))
    counts = Counter((d.role, d.task) for d in demos)
    assert counts == {(r, t): len(library) for r in ("propose", "solve") for t in TASKS}
    triplets = {p.code: ts for p, ts in library}
    executor, checks = patient_executor(), []
    for demo in demos:
        opened = template == "r1"
        assert format_ok(demo.completion, opened), demo.completion
        assert isinstance(demo.prompt, str) == opened
        if demo.role == "propose":
            proposal = parse_task(demo.completion, demo.task, options.num_inputs)
            assert isinstance(proposal, ParsedProposal), (demo.completion, proposal)
            assert proposal.program in (None, demo.sources[0])
            continue
        program, answer = demo.sources[0], extract_solution(demo.completion, demo.task)
        runs = executor.validate_many([(program, t.input) for t in triplets[program]])
        if demo.task == "deduction":
            (run,) = [r for r in runs if r.input == demo.sources[1]]
            checks.append(Check("deduction", answer, gold=run.value))
        elif demo.task == "abduction":
            run = next(r for r in runs if r.output == demo.sources[1])  # several inputs may give it
            checks.append(Check("abduction", answer, program, run.value))
        else:
            checks.append(Check("induction", answer, cases=tuple(runs)))
    assert [v.status for v in executor.check_many(checks)] == ["pass"] * len(checks)


@pytest.mark.slow
@sandboxed
def test_azr_cpu_config_as_shipped_cold_starts_and_seeds_its_buffers_from_the_library(
    plain_model, tmp_path, monkeypatch, library
):
    """The shipped CPU config's two options for a small model: a cold start (here 1 example per role and
    task) and `dataset: library`, whose buffers start with every library triplet and program."""
    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    result = invoke(
        "train", "azr", "--model", plain_model, "--config", "configs/train/azr-cpu.yaml", "--out", out,
        "--max-steps", "1", "--save-steps", "1", "--set", "options.propose_max_tokens=16",
        "--set", "options.solve_max_tokens=8", "--set", "options.mc_samples=2",
        "--set", "cold_start.examples=1", "--set", "cold_start.epochs=1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((out / "cold-start" / "report.json").read_text())
    assert report["per_role_task"] == {f"{r}/{t}": 1 for r in ("propose", "solve") for t in TASKS}
    train = json.loads((out / "train.json").read_text())
    assert train["cold_start"] == "cold-start" and train["config"]["dataset"] == "library"
    (step,) = [json.loads(line) for line in (out / "metrics.jsonl").open() if '"loss"' in line]
    triplets = sum(len(t) for _, t in library)
    assert step["azr/buffer/deduction"] >= triplets and step["azr/buffer/abduction"] >= triplets
    assert step["azr/buffer/induction"] >= len(PROGRAMS)
