"""Parsers of model-written text in linear time (issue 52): Absolute Zero's format check, fences, answer
fallbacks and message tag, and CRUXEval's fence removal. Each agrees with the backtracking regex it
replaced on every text Hypothesis draws from the tokens that matter, and takes a crafted 1 MB answer in
under 2 s (the regexes took 10-30 s on 40-150 kB: quadratic)."""

import json
import re
import subprocess
import sys
import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.scoring import cruxeval
from trainers.methods.azr import parsing

# the replaced patterns: the oracle for what each parser returns
OLD_FORMAT = re.compile(r"(?s)<think>.*?</think>\s*<answer>.*?</answer>")
OLD_FENCE = re.compile(r"```([\w-]*)[ \t]*\n?(.*?)```", re.DOTALL)
FLAGS = re.DOTALL | re.IGNORECASE
OLD_MESSAGE = re.compile(r"<message>\s*(.*?)\s*</message>", FLAGS)


def old_fallbacks(kind):
    return (
        re.compile(rf"# {kind.capitalize()}:\s*(.*?)(?=\n```|$)", FLAGS),
        re.compile(rf"{kind}\s*\((.*?)\)", FLAGS),
        re.compile(rf"<{kind}>\s*(.*?)(?:</{kind}>|\s*$)", FLAGS),
        re.compile(rf"the {kind} is\s*(.*?)\.?$", FLAGS),
    )


TOKENS = [
    "<think>", "</think>", "<answer>", "</answer>", "```", "```python", "```output", "```input\n",
    "```message", "output", "Input", "(", ")", "<output>", "</output>", "<input>", "</INPUT>",
    "the output is", "# Output:", "# Input:", "<message>", "</message>", "<MESSAGE>", " ", "  ", "\n",
    "\t", "x", "1", ".", "f(1)", "==",
]  # fmt: skip
texts = st.lists(st.sampled_from(TOKENS), max_size=24).map("".join)


@settings(max_examples=600, deadline=None)
@given(text=texts, opened=st.booleans())
def test_format_check_agrees_with_the_regex(text, opened):
    old = OLD_FORMAT.match(("<think>" if opened else "") + text.lstrip()) is not None
    assert parsing.format_ok(text, think_opened=opened) == old


@settings(max_examples=600, deadline=None)
@given(text=texts, kind=st.sampled_from(["input", "output"]))
def test_fences_and_answer_fallbacks_agree_with_the_regexes(text, kind):
    old_fences = [m.group(2).strip() for m in OLD_FENCE.finditer(text) if m.group(1).lower() == kind]
    assert parsing.fences(text, kind) == old_fences
    for old, (new, to_last_paren) in zip(old_fallbacks(kind), parsing._FALLBACKS[kind], strict=True):
        searched = text[: text.rfind(")") + 1] if to_last_paren else text
        assert [m.strip() for m in new.findall(searched)] == [m.strip() for m in old.findall(text)]


@settings(max_examples=600, deadline=None)
@given(text=texts)
def test_message_tag_and_cruxeval_fences_agree_with_the_regexes(text):
    found = OLD_MESSAGE.search(text)
    assert parsing._message_tag(text) == (found.group(1).strip() if found else None)
    stripped = text.strip()
    assert cruxeval._unfenced(stripped).strip() == re.sub(r"^```\w*\s*|\s*```$", "", stripped).strip()


CRAFTED = textwrap.dedent(
    """
    import json, sys, time
    from harness.scoring import cruxeval, extract
    from trainers.methods.azr import parsing
    n, blank = 1_000_000, " " * 1_000_000
    solution = parsing.extract_solution
    cases = {  # name: (parser, its arguments)
        "call never closed": (solution, "<answer>" + "output(" * (n // 7), "deduction"),
        "fence label, blank space": (solution, "<answer>```output" + blank + "x", "deduction"),
        "tag, blank space": (solution, "<answer><output>x" + blank + "y", "deduction"),
        "proposal fence": (parsing.parse_proposal, "<think></think><answer>```python" + blank, "deduction"),
        "message tags never closed": (parsing._message_tag, "<message>" * (n // 9)),
        "message, blank space": (parsing._message_tag, "<message>x" + blank + "y"),
        "answer never closed": (parsing.format_ok, "</think><answer>" * (n // 16)),
        "cruxeval blank space": (cruxeval.extract, "x" + blank + "y", "output"),
        "cruxeval answer never closed": (cruxeval.extract, "[ANSWER]" * (n // 8), "input"),
        "code fences never closed": (extract.code_blocks, "```x\\n" * (n // 5)),
    }
    seconds = {}
    for name, (parse, *arguments) in cases.items():
        started = time.perf_counter()
        parse(*arguments)
        seconds[name] = time.perf_counter() - started
    print(json.dumps(seconds))
    """
)


def test_a_crafted_megabyte_answer_takes_under_two_seconds_per_parser():
    done = subprocess.run([sys.executable, "-c", CRAFTED], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    seconds = json.loads(done.stdout)
    assert len(seconds) == 10 and all(s < 2.0 for s in seconds.values()), seconds
