"""The `azr_deduction` benchmark asks a CRUXEval item as the AZR method asks a buffered deduction task (the
method's own `_solver_items` on the trainer's engine), its scorer reads and checks replies as training
does, and `harness eval`, `score --generations` and `table` run it on real CRUXEval rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import run_cli

from benchmarks import get_benchmark
from harness.backends.chat import ChatPrompt
from harness.core.types import messages_for
from harness.scoring import get_scorer, timeless
from trainers.integration.engines import HFEngine
from trainers.methods.azr import prompts
from trainers.methods.azr.buffers import Task
from trainers.methods.azr.executor import Run
from trainers.methods.azr.heldout import AZR_DEDUCTION, check, to_item
from trainers.methods.azr.method import AzrMethod, AzrOptions

ROW = {  # CRUXEval's sample_3
    "id": "sample_3",
    "code": (
        "def f(text, value):\n    text_list = list(text)\n    text_list.append(value)\n"
        "    return ''.join(text_list)"
    ),
    "input": "'bcksrut', 'q'",
    "output": "'bcksrutq'",
}
ITEM = to_item(ROW, Path("cruxeval.jsonl"), 4)
RIGHT = "<think>f appends value to text.</think> <answer>```output\n'bcksrutq'\n```</answer>"


def reply(answer: str) -> str:
    return f"<think>f appends value to text.</think> <answer>```output\n{answer}\n```</answer>"


class GoldOnly:
    """The executor's validation as the method calls it, returning the item's gold without running it."""

    def validate_many(self, pairs):
        return [Run(given, "", ([], {}), "bcksrutq", ROW["output"]) for _, given in pairs]


@pytest.mark.parametrize("template", ["chat", "r1"])
def test_the_prompt_is_the_methods_deduction_solve_prompt(plain_model, template):
    """chat: the benchmark's system message and prompt under the tokenizer's chat template, as eval renders
    them; r1: --raw-prompt, no system message, the R1 wrapper as --prompt-template."""
    chat = ChatPrompt(str(plain_model), raw=template == "r1")
    tokenizer = chat.tokenizer
    trainer = SimpleNamespace(
        processing_class=tokenizer,
        eos_token_ids=[tokenizer.eos_token_id],
        chat_template=None,
        chat_template_kwargs={},
    )
    engine = HFEngine(trainer)
    method = AzrMethod(None, AzrOptions(template=template), 1, executor=GoldOnly())
    [solve] = method._solver_items(engine, [("deduction", Task(ROW["code"], ROW["input"], ROW["output"]))])
    if template == "chat":
        messages = messages_for(ITEM, AZR_DEDUCTION.prompt, AZR_DEDUCTION.system_prompt)
    else:
        messages = messages_for(ITEM, prompts.R1_TEMPLATE.replace("{prompt}", "{problem}"), None)
    ids = chat.encode(chat.render(messages))
    assert ids == solve.prompt_ids
    assert "# Input:\n```input\n'bcksrut', 'q'\n```" in tokenizer.decode(ids)


def test_a_reply_is_read_and_scored_as_azr_does():
    assert (ITEM.id, ITEM.answer) == ("sample_3", "'bcksrutq'")
    assert ITEM.problem == prompts.solve_prompt(prompts.DEDUCTION, ROW["code"], input=ROW["input"])
    right = check(RIGHT, ITEM.answer)
    assert (right.value, right.extracted, right.details) == (1.0, "'bcksrutq'", {"verdict": "pass"})
    wrong = check(reply("'bcksrut'"), ITEM.answer)
    assert (wrong.value, wrong.extracted, wrong.details["reason"]) == (0.0, "'bcksrut'", "wrong value")
    computed = check(reply("'bcksrut' + 'q'"), ITEM.answer)  # not a literal: evaluated in the sandbox
    assert (computed.value, computed.details["verdict"]) == (1.0, "pass")
    malformed = check(reply("['bcksrutq'"), ITEM.answer)
    assert (malformed.value, malformed.details["reason"]) == (0.0, "malformed answer")
    bare = check("<think>f appends value to text.</think> 'bcksrutq'", ITEM.answer)
    assert (bare.value, bare.extracted, bare.details["reason"]) == (0.0, None, "no <answer> block")
    unclosed = check(None, ITEM.answer)
    assert (unclosed.value, unclosed.details["reason"]) == (0.0, "no answer (unclosed think block)")


def test_hostile_answers_are_refused_or_contained(tmp_path):
    target = tmp_path / "written"
    scorer = get_scorer("azr_deduction", timeout=2.0, workers=2)
    assert scorer.version.startswith("azr_deduction-1+sandbox-") and not timeless("azr_deduction")
    hostile = [
        f"__import__('os').system('touch {target}')",  # a forbidden name: refused before anything runs
        f"open({str(target)!r}, 'w').write('x')",  # the audit hook refuses files
        "[0 for _ in iter(int, 1)]",  # runs until the limit
    ]
    scores = dict(scorer.score([reply(h) for h in hostile], [ITEM.answer] * len(hostile)))
    assert [scores[i].value for i in range(3)] == [0.0, 0.0, 0.0]
    assert scores[0].details["reason"].startswith("outside the subset")
    assert scores[1].details["verdict"] == "fail"
    assert scores[2].details["verdict"] == "timeout"
    assert not target.exists()


def test_harness_eval_score_and_table_run_it_on_cruxeval_rows(tiny_model, shared_data, tmp_path):
    """Eval on the first three CRUXEval rows (the tiny model writes no answer), then hand-written replies
    to the same rows scored through `score --generations` and shown by `table`."""
    out = tmp_path / "eval"
    run_cli(
        "eval", "--benchmarks", "azr_deduction", "--model", str(tiny_model), "--backend", "hf",
        "--limit", "3", "--max-tokens", "8", "--data-dir", str(shared_data), "--out", str(out),
    )  # fmt: skip
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert sorted(r["item_id"] for r in rows) == ["sample_0", "sample_1", "sample_2"]
    assert {(r["value"], r["details"]["verdict"]) for r in rows} == {(0.0, "fail")}
    assert all(r["scorer"].startswith("azr_deduction-1+sandbox-") for r in rows)
    run = json.loads((out / "run.json").read_text())
    assert run["prompts"]["azr_deduction"] == {"template": "{problem}", "system": prompts.R1_INSTRUCTION}
    assert run["config"]["scorers"] == {"azr_deduction": "azr_deduction"}
    assert run["sandbox"]["isolation"] == "bwrap"  # its scorer runs programs: run.json says how

    golds = [get_benchmark("azr_deduction").load(shared_data).items[i].answer for i in range(3)]
    texts = [reply(golds[0]), reply(golds[2]), reply("__import__('os').getcwd()")]
    generations = tmp_path / "generations.jsonl"
    generations.write_text(
        "".join(json.dumps({"item_id": f"sample_{i}", "text": t}) + "\n" for i, t in enumerate(texts))
    )
    scored = tmp_path / "scored"
    run_cli(
        "score", "--generations", str(generations), "--benchmark", "azr_deduction",
        "--data-dir", str(shared_data), "--out", str(scored),
    )  # fmt: skip
    rows = {r["item_id"]: r for r in map(json.loads, (scored / "scores.jsonl").read_text().splitlines())}
    assert {k: r["value"] for k, r in rows.items()} == {"sample_0": 1.0, "sample_1": 0.0, "sample_2": 0.0}
    assert rows["sample_1"]["details"]["reason"] == "wrong value"
    assert rows["sample_2"]["details"]["reason"].startswith("outside the subset")
    table = run_cli("table", str(scored), "--format", "csv").stdout
    assert "azr_deduction" in table and "33.3" in table


def test_benchmark_and_scorer_load_without_torch_or_the_train_extra():
    blocked = ("torch", "transformers", "trl", "tensorboard", "complexipy", "apted", "scipy")
    code = (
        f"import sys\nfor n in {blocked!r}:\n    sys.modules[n] = None\n"
        "from benchmarks import get_benchmark\nfrom harness.scoring import get_scorer\n"
        "print(get_benchmark('azr_deduction').scorer, get_scorer('azr_deduction').name)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["azr_deduction", "azr_deduction"]


def test_the_registered_scorer_runs_programs_and_its_golds_are_answers():
    """Timed (a busy machine can time a check out), and a constant answer can match a gold: regress
    prices the most common output."""
    from harness.scoring import exact_golds, timeless

    assert exact_golds("azr_deduction") and not timeless("azr_deduction")
