"""`scripts/azr_deduction_eval.py` asks a CRUXEval item as the AZR method asks a buffered deduction task
(the method's own `_solver_items` on the trainer's engine) and scores replies with AZR's reading and
comparison. No generation."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

from trainers.engine import HFEngine
from trainers.methods.azr.buffers import Task
from trainers.methods.azr.executor import Run
from trainers.methods.azr.method import AzrMethod, AzrOptions

REPO = Path(__file__).resolve().parents[2]
ITEM = {  # CRUXEval's sample_3
    "code": (
        "def f(text, value):\n    text_list = list(text)\n    text_list.append(value)\n"
        "    return ''.join(text_list)"
    ),
    "input": "'bcksrut', 'q'",
    "output": "'bcksrutq'",
}


def load_script():
    spec = importlib.util.spec_from_file_location(
        "azr_deduction_eval", REPO / "scripts" / "azr_deduction_eval.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GoldOnly:
    """The executor's validation as the method calls it, returning the item's gold without running it."""

    def validate_many(self, pairs):
        return [Run(given, "", ([], {}), "bcksrutq", ITEM["output"]) for _, given in pairs]


@pytest.mark.parametrize("template", ["chat", "r1"])
def test_the_prompt_is_the_methods_deduction_solve_prompt(plain_model, template):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(plain_model)
    trainer = SimpleNamespace(
        processing_class=tokenizer,
        eos_token_ids=[tokenizer.eos_token_id],
        chat_template=None,
        chat_template_kwargs={},
    )
    engine = HFEngine(trainer)
    method = AzrMethod(None, AzrOptions(template=template), 1, executor=GoldOnly())
    [solve] = method._solver_items(engine, [("deduction", Task(ITEM["code"], ITEM["input"], ITEM["output"]))])
    script = load_script()
    ids = script.prompt_ids(tokenizer, ITEM["code"], ITEM["input"], template)
    assert ids == solve.prompt_ids
    assert script.opens_think(tokenizer, ids, template) == method._opens(engine, solve.prompt_ids)
    assert "# Input:\n```input\n'bcksrut', 'q'\n```" in tokenizer.decode(ids)


def test_a_reply_is_read_and_scored_as_azr_does():
    score = load_script().score
    right = "<think>f appends value to text.</think> <answer>```output\n'bcksrutq'\n```</answer>"
    assert score(right, ITEM["output"]) == ("'bcksrutq'", True, "pass")
    assert score(right.replace("rutq", "rut"), ITEM["output"]) == ("'bcksrut'", False, "fail")
    assert score("<think>f appends value to text.</think> 'bcksrutq'", ITEM["output"]) == (
        None,
        False,
        "no answer",
    )
    assert load_script().best_constant(["1", "'a'", "1", "True"]) == ("1", 3)  # True == 1 by value
