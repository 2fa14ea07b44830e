"""CRUXEval-I and CRUXEval-O (800 Python functions), direct and chain-of-thought prompts.

`cruxeval_o` asks for the output of `f` on a given input, `cruxeval_i` for an input giving a
given output; the `_cot` variants ask the model to think first. Both report pass@1 and pass@5,
as the paper does (n=10 by default; the paper samples at T=0.2 for pass@1 and T=0.8 for pass@5).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.base import Benchmark, FileLayout, HubSource
from harness import HarnessError
from harness.core.data import require
from harness.core.types import Item, Sampling

OUTPUT_TASK = (
    "You are given a Python function and an assertion containing an input to the function. Complete the "
    "assertion with a literal (no unsimplified expressions, no function calls) containing the output when "
    "executing the provided code on the given input, even if the function is incorrect or incomplete."
)
INPUT_TASK = (
    "You will be given a function f and an output in the form f(??) == output. Find any input such that "
    "executing f on the input leads to the given output. There may be multiple answers, but you should "
    "only output one."
)
DIRECT = (
    " Do NOT output any extra information. Provide the full assertion with the correct {what} in [ANSWER] "
    "and [/ANSWER] tags, following the examples."
)
COT = (
    " Think step by step first, inside [THOUGHT] and [/THOUGHT] tags, then provide the full assertion "
    "with the correct {what} in [ANSWER] and [/ANSWER] tags, following the examples."
)
OUTPUT_EXAMPLE = (
    '[PYTHON]\ndef f(word):\n    return word[::-1] + "!"\nassert f("abc") == ??\n[/PYTHON]\n'
    "{thought}"
    '[ANSWER]\nassert f("abc") == "cba!"\n[/ANSWER]\n\n'
)
OUTPUT_THOUGHT = (
    '[THOUGHT]\nf reverses its argument and appends "!". Reversing "abc" gives "cba", so f returns '
    '"cba!".\n[/THOUGHT]\n'
)
INPUT_EXAMPLE = (
    "[PYTHON]\ndef f(xs):\n    return sum(xs) * 2\nassert f(??) == 10\n[/PYTHON]\n"
    "{thought}"
    "[ANSWER]\nassert f([2, 3]) == 10\n[/ANSWER]\n\n"
)
INPUT_THOUGHT = (
    "[THOUGHT]\nf doubles the sum of a list, so the list must sum to 5, for example [2, 3].\n[/THOUGHT]\n"
)


def _prompt(mode: str, cot: bool) -> str:
    if mode == "output":
        task, example = OUTPUT_TASK, OUTPUT_EXAMPLE.format(thought=OUTPUT_THOUGHT if cot else "")
    else:
        task, example = INPUT_TASK, INPUT_EXAMPLE.format(thought=INPUT_THOUGHT if cot else "")
    what = "output" if mode == "output" else "input"
    instructions = task + (COT if cot else DIRECT).format(what=what)
    return f"{instructions}\n\n{example}{{problem}}" + ("[THOUGHT]\n" if cot else "[ANSWER]\n")


def _mapper(mode: str):
    def to_item(row: dict[str, Any], path: Path, number: int) -> Item:
        code, output = require(row, "code", path, number), require(row, "output", path, number)
        given = row.get("input")  # "" when f takes no arguments
        if not isinstance(given, str):
            raise HarnessError(f"{path}:{number}: missing string field 'input'")
        shown = f"assert f({given}) == ??" if mode == "output" else f"assert f(??) == {output}"
        gold = {"kind": "cruxeval", "mode": mode, "code": code, "input": given, "output": output}
        return Item(
            id=str(require(row, "id", path, number)),
            problem=f"[PYTHON]\n{code}\n{shown}\n[/PYTHON]\n",
            answer=json.dumps(gold),
        )

    return to_item


def cruxeval_files(to_item: Callable[..., Item]) -> dict[str, Any]:
    """Where CRUXEval's 800 functions are read from, as `Benchmark` fields: the Hub's test.jsonl, or
    cruxeval.jsonl in a local `cruxeval/` folder; `to_item` makes each row an item."""
    return {
        "hub": HubSource(
            repo="cruxeval-org/cruxeval",
            revision="main",
            layout=FileLayout(files=("test.jsonl",), to_item=to_item),
        ),
        "local_layouts": (FileLayout(files=("cruxeval.jsonl",), to_item=to_item),),
        "folders": ("cruxeval",),
    }


def cruxeval(mode: str, cot: bool) -> Benchmark:
    return Benchmark(
        name=f"cruxeval_{mode[0]}" + ("_cot" if cot else ""),
        description=f"CRUXEval-{mode[0].upper()} ({'chain of thought' if cot else 'direct'}), 800 functions",
        **cruxeval_files(_mapper(mode)),
        prompt=_prompt(mode, cot),
        scorer="code",
        sampling=Sampling(n=10, temperature=0.2, top_p=0.95, max_tokens=32768 if cot else 1024),
        pass_k=(5,),
    )


CRUXEVAL = [cruxeval(mode, cot) for mode in ("input", "output") for cot in (False, True)]
CRUXEVAL_I, CRUXEVAL_I_COT, CRUXEVAL_O, CRUXEVAL_O_COT = CRUXEVAL  # each registered by name (pyproject.toml)
