"""Absolute Zero's prompts and parsing (AZR paper, Figs. 33-39)."""

from __future__ import annotations

import pytest

from harness.core.thinking import prompt_opens_think
from trainers.methods.azr.parsing import (
    Invalid,
    Proposal,
    answer_text,
    extract_solution,
    fences,
    format_ok,
    parse_proposal,
)
from trainers.methods.azr.prompts import (
    ABDUCTION,
    DEDUCTION,
    INDUCTION,
    R1_INSTRUCTION,
    TASKS,
    Triplet,
    chat_messages,
    propose_prompt,
    r1_prompt,
    solve_prompt,
)

FORBIDDEN = ["logging", "random", "os.sys", "sys.exit"]


def completion(answer: str, thinking: str = "Let me think.") -> str:
    """A completion after the raw R1 template: it starts inside the prefilled <think>."""
    return f"{thinking}</think>\n<answer>\n{answer}\n</answer>"


def code_answer(program: str, argument: str = "3") -> str:
    return f"```python\n{program}\n```\n```input\n{argument}\n```"


def proposed(program: str, argument: str = "3", **options) -> Proposal | Invalid:
    return parse_proposal(completion(code_answer(program, argument)), DEDUCTION, **options)


# --- format regex ---------------------------------------------------------------------------------------


def test_format_accepts_think_then_answer_at_the_start():
    assert format_ok("<think>a</think>\n<answer>b</answer>", think_opened=False)
    assert format_ok("a</think>\n<answer>b</answer>")  # the prompt prefilled <think>
    assert format_ok("a</think><answer>b</answer> trailing text")  # re.match anchors only the start


def test_format_rejects_a_missing_close_reversed_order_and_text_before_think():
    assert not format_ok("<think>a\n<answer>b</answer>", think_opened=False)
    assert not format_ok("a\n<answer>b</answer>")
    assert not format_ok("<answer>b</answer><think>a</think>", think_opened=False)
    assert not format_ok("Sure! <think>a</think><answer>b</answer>", think_opened=False)
    assert not format_ok("a</think><answer>b")
    # without the prefill put back, a completion from the R1 template has no <think> of its own
    assert not format_ok("a</think>\n<answer>b</answer>", think_opened=False)


def test_format_is_multiline_safe():
    text = "step 1\nstep 2\n\n</think>\n\n<answer>\n```output\n[1,\n 2]\n```\n</answer>"
    assert format_ok(text)
    assert format_ok("\n  <think>\nx\n</think>\n<answer>\ny\n</answer>", think_opened=False)


def test_answer_text_is_the_last_answer_block():
    assert answer_text("<think>x</think><answer> 42 </answer>") == "42"
    assert answer_text("x</think><answer>draft</answer> then <answer>final</answer>") == "final"
    assert answer_text("x</think><answer>cut off") == "cut off"
    assert answer_text("no tags at all") is None


def test_fences_pair_in_one_pass_and_match_labels_exactly():
    text = "```python\nA\n```\nprose\n```\nB\n```\n```input_0\nC\n```\n```Input\nD\n```"
    assert fences(text, "python") == ["A"]
    assert fences(text, "") == ["B"]  # the python block's closing ``` did not open one
    assert fences(text, "input") == ["D"]  # ```input_0 is another label


# --- deduction / abduction proposals --------------------------------------------------------------------


@pytest.mark.parametrize("task", [DEDUCTION, ABDUCTION])
def test_a_python_fence_and_an_input_fence_parse(task):
    program = "def f(x):\n    return x * 2"
    got = parse_proposal(completion(code_answer(program, "'ab', [1, 2]")), task)
    assert got == Proposal(program, ("'ab', [1, 2]",), "", ())


def test_the_first_python_and_first_input_fences_are_taken():
    answer = (
        "```python\ndef f(x):\n    return x + 1\n```\n```input\n1\n```\n"
        "```python\ndef f(x):\n    return x - 1\n```\n```input\n2\n```"
    )
    assert parse_proposal(completion(answer), ABDUCTION) == Proposal("def f(x):\n    return x + 1", ("1",))


def test_fences_in_the_thinking_are_ignored():
    thinking = "Draft:\n```python\ndef f(x):\n    return 0\n```\n```input\n0\n```"
    text = completion(code_answer("def f(x):\n    return x", "7"), thinking=thinking)
    assert parse_proposal(text, DEDUCTION) == Proposal("def f(x):\n    return x", ("7",))


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("```input\n3\n```", "no python fence"),
        ("```python\ndef f(x):\n    return x\n```", "no input fence"),
        ("```py\ndef f(x):\n    return x\n```\n```input\n3\n```", "no python fence"),
        ("```python\nx = 1\n```\n```input\n3\n```", "the program defines no function"),
    ],
)
def test_a_missing_fence_or_function_is_invalid(answer, reason):
    got = parse_proposal(completion(answer), DEDUCTION)
    assert isinstance(got, Invalid)
    assert got.reason == reason


def test_no_answer_block_and_unparsable_programs_are_invalid():
    assert parse_proposal("thinking forever", ABDUCTION) == Invalid("no <answer> block")
    got = proposed("def f(x)\n    return x")
    assert isinstance(got, Invalid)
    assert got.reason.startswith("the program does not parse")


def test_an_input_heading_stands_in_for_the_input_fence():
    answer = "```python\ndef f(a, b):\n    return a + b\n```\n# Input: 1, 2"
    got = parse_proposal(completion(answer), DEDUCTION)
    assert got == Proposal("def f(a, b):\n    return a + b", ("1, 2",))


def test_the_python_label_is_case_insensitive_and_may_share_the_line():
    answer = "```Python def_marker = 1\ndef f(x):\n    return x\n```\n```INPUT\n4\n```"
    got = parse_proposal(completion(answer), DEDUCTION)
    assert got == Proposal("def_marker = 1\ndef f(x):\n    return x", ("4",))


def test_a_function_named_g_is_renamed_to_f_with_its_recursive_calls():
    program = "def g(n):\n    return 1 if n < 2 else n * g(n - 1)"
    got = proposed(program, "5")
    assert got == Proposal("def f(n):\n    return 1 if n < 2 else n * f(n - 1)", ("5",))


def test_the_rename_leaves_substrings_strings_and_attributes_alone():
    program = (
        "def g(s, obj):\n"
        '    gg = "g"  # g stays in comments\n'
        "    total = s.count('g') + len(gg) + obj.g\n"
        "    return total if not s else g(s[1:], obj) + len(g.__name__)"
    )
    expected = (
        "def f(s, obj):\n"
        '    gg = "g"  # g stays in comments\n'
        "    total = s.count('g') + len(gg) + obj.g\n"
        "    return total if not s else f(s[1:], obj) + len(f.__name__)"
    )
    assert proposed(program).program == expected


def test_the_rename_counts_characters_not_utf8_bytes():
    program = 'def solve(s):\n    t = "é€"; return solve(s[1:]) if s else t'
    assert proposed(program).program == 'def f(s):\n    t = "é€"; return f(s[1:]) if s else t'


def test_the_rename_handles_decorators_async_and_map_references():
    program = "@cache\nasync  def walk(xs):\n    return list(map(walk, xs))"
    assert proposed(program).program == "@cache\nasync  def f(xs):\n    return list(map(f, xs))"


def test_a_program_with_f_is_not_renamed_and_keeps_what_follows_the_return():
    program = "import math\n\ndef f(x):\n    return math.floor(x)\n\nresult = f(2.5)\nprint(result)"
    got = proposed(program, "2.5")
    assert got == Proposal(program, ("2.5",), "", ("math",))


def test_imports_are_extracted_once_in_order():
    program = (
        "import math, heapq\n"
        "from collections import deque, Counter\n"
        "import os.path as osp\n"
        "from . import sibling\n"
        "def f(x):\n"
        "    import math\n"
        "    from functools import reduce\n"
        "    return x"
    )
    got = proposed(program)
    assert got.imports == ("math", "heapq", "collections", "os.path", ".", "functools")


def test_more_than_one_def_is_invalid_by_default():
    nested = "def f(x):\n    def helper(y):\n        return y + 1\n    return helper(x)"
    method = "class Box:\n    def get(self):\n        return 1\n\ndef f(x):\n    return Box().get() + x"
    two = "def helper(x):\n    return x\n\nasync def f(x):\n    return helper(x)"
    for program in (nested, method, two):
        got = proposed(program)
        assert isinstance(got, Invalid)
        assert got.reason == "the program defines 2 functions"


def test_the_multiple_def_rule_can_be_switched_off():
    nested = "def f(x):\n    def helper(y):\n        return y + 1\n    return helper(x)"
    assert proposed(nested, reject_multiple_functions=False) == Proposal(nested, ("3",))
    with_f = "def helper(x):\n    return x\n\ndef f(x):\n    return helper(x)"
    assert proposed(with_f, reject_multiple_functions=False).program == with_f
    # no f: the first top-level function is the entry, as the code's first `def` is
    without_f = "def helper(x):\n    return x\n\ndef main(x):\n    return helper(x)"
    renamed = "def f(x):\n    return x\n\ndef main(x):\n    return f(x)"
    assert proposed(without_f, reject_multiple_functions=False).program == renamed
    only_methods = "class A:\n    def f(self):\n        return 1"
    got = proposed(only_methods, reject_multiple_functions=False)
    assert got == Invalid("the program has no top-level function")


# --- induction proposals --------------------------------------------------------------------------------


def induction_answer(count: int, message: str = "```message\nIt sorts.\n```") -> str:
    return "\n".join(f"```input\n[{i}, {i + 1}]\n```" for i in range(count)) + "\n" + message


def test_induction_takes_exactly_the_last_n_input_fences():
    got = parse_proposal(completion(induction_answer(12)), INDUCTION)
    assert got == Proposal(None, tuple(f"[{i}, {i + 1}]" for i in range(2, 12)), "It sorts.", ())
    exact = parse_proposal(completion(induction_answer(10)), INDUCTION)
    assert exact.inputs == tuple(f"[{i}, {i + 1}]" for i in range(10))
    assert len(parse_proposal(completion(induction_answer(6)), INDUCTION, num_inputs=4).inputs) == 4


def test_fewer_than_n_inputs_is_invalid():
    got = parse_proposal(completion(induction_answer(9)), INDUCTION)
    assert isinstance(got, Invalid)
    assert got.reason == "9 input fences, 10 needed"
    numbered = "\n".join(f"```input_{i}\n{i}\n```" for i in range(10)) + "\n```message\nm\n```"
    assert parse_proposal(completion(numbered), INDUCTION).reason == "0 input fences, 10 needed"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("```message\nAdds one.\n```\n```message\nsecond\n```", "Adds one."),
        ("<message>\n  Adds one.\n</message>", "Adds one."),
        ("# Message: Adds one.", "Adds one."),
    ],
)
def test_the_induction_message_and_its_fallbacks(message, expected):
    got = parse_proposal(completion(induction_answer(10, message)), INDUCTION)
    assert got.message == expected
    assert got.program is None


def test_an_induction_proposal_without_a_message_is_invalid():
    got = parse_proposal(completion(induction_answer(10, "")), INDUCTION)
    assert isinstance(got, Invalid)
    assert got.reason == "no message"


def test_unknown_tasks_raise():
    with pytest.raises(ValueError):
        parse_proposal(completion("x"), "code_e")
    with pytest.raises(ValueError):
        extract_solution(completion("x"), "code_e")


# --- solvers' answers -----------------------------------------------------------------------------------


def test_the_extractor_takes_the_last_fence_of_the_right_kind_inside_the_answer():
    thinking = "```input\n'thinking'\n```"
    answer = "```input\n'first'\n```\n```output\n'out'\n```\n```input\n'last', 2\n```"
    assert extract_solution(completion(answer, thinking), ABDUCTION) == "'last', 2"
    assert extract_solution(completion(answer, thinking), DEDUCTION) == "'out'"
    two_outputs = "```output\n1\n```\nno, rather\n```output\n{2, 1}\n```"
    assert extract_solution(completion(two_outputs), DEDUCTION) == "{2, 1}"


def test_the_induction_extractor_takes_the_last_python_fence():
    answer = "```python\ndef f(a):\n    return a\n```\n```python\ndef f(a):\n    return a[::-1]\n```"
    assert extract_solution(completion(answer), INDUCTION) == "def f(a):\n    return a[::-1]"
    bare = "```\ndef f(a):\n    return 2 * a\n```\n```output\n4\n```"
    assert extract_solution(completion(bare), INDUCTION) == "def f(a):\n    return 2 * a"
    assert extract_solution(completion("def f(a): return a"), INDUCTION) is None


@pytest.mark.parametrize(
    ("task", "answer", "expected"),
    [
        (ABDUCTION, "# Input: 'a', 2", "'a', 2"),
        (DEDUCTION, "# Output: [1, 2]", "[1, 2]"),
        (ABDUCTION, "I would call input('x', 3) here", "'x', 3"),
        (DEDUCTION, "output(7)", "7"),
        (ABDUCTION, "<input> [1, 2] </input>", "[1, 2]"),
        (DEDUCTION, "<output>{'k': 1}</output>", "{'k': 1}"),
        (ABDUCTION, "So the input is 'abc'.", "'abc'"),
        (DEDUCTION, "The output is 42.", "42"),
        (DEDUCTION, "[3, 4]", "[3, 4]"),
        (ABDUCTION, "'hello', 5", "'hello', 5"),
    ],
)
def test_the_extraction_fallbacks(task, answer, expected):
    assert extract_solution(completion(answer), task) == expected


def test_no_answer_block_means_no_solution():
    for task in TASKS:
        assert extract_solution("I ran out of tokens", task) is None


# --- prompts --------------------------------------------------------------------------------------------

REFERENCES = [
    Triplet("def f(a):\n    return a", '"Hello world"', "'Hello world'"),
    Triplet("def f(xs):\n    return {x: 1 for x in xs}", "[3, 4]", "{3: 1, 4: 1}"),
]


@pytest.mark.parametrize("task", [DEDUCTION, ABDUCTION])
def test_the_code_proposers_show_every_reference_and_the_forbidden_words(task):
    prompt = propose_prompt(task, REFERENCES, FORBIDDEN)
    for i, t in enumerate(REFERENCES):
        block = (
            f"<snippet_{i}>\n```python\n{t.program}\n```\n```input\n{t.input}\n```\n"
            f"```output\n{t.output}\n```\n</snippet_{i}>"
        )
        assert block in prompt
    assert prompt.index("<snippet_0>") < prompt.index("<snippet_1>")
    assert "even in comments: logging, random, os.sys, sys.exit\n" in prompt
    assert prompt.startswith("## Task: Create a")
    assert prompt.endswith("</snippet_1>")
    assert "{" + "LIST_OF_FORBIDDEN_PACKAGES}" not in prompt
    assert "{'age': 20, 'city': 'New York'}" in prompt  # the code's {{ }} rendered
    assert "- Make the snippet require state tracking" in prompt


def test_the_code_proposers_keep_the_swapped_difficulty_bullets():
    abduction = propose_prompt(ABDUCTION, REFERENCES, FORBIDDEN)
    deduction = propose_prompt(DEDUCTION, REFERENCES, FORBIDDEN)
    assert "to deduce one possible input from a given output" in abduction
    assert "- Difficulty in predicting the output from your provided input and code snippet." in abduction
    assert "to deduce the output from the input" in deduction
    assert "- Difficulty in predicting your ```input``` from 1) your ```python``` code" in deduction


def test_reference_text_with_braces_is_inserted_verbatim():
    tricky = Triplet("def f(s):\n    return '{CODE_REFERENCES_FROM_BUFFER}' + s", "'{x}'", "'{LIST}'")
    prompt = propose_prompt(DEDUCTION, [tricky], ["time"])
    assert "return '{CODE_REFERENCES_FROM_BUFFER}' + s" in prompt
    assert "```input\n'{x}'\n```" in prompt


def test_the_induction_proposer_shows_one_program_and_asks_for_n_inputs():
    prompt = propose_prompt(INDUCTION, REFERENCES[1:])
    assert prompt.startswith("## Task: Output 10 Inputs")
    assert "- Provide 10 valid inputs for the code snippet" in prompt
    snippet = f"```python\n{REFERENCES[1].program}\nf(<|YOUR INPUT WILL BE PLUGGED HERE|>)\n```"
    assert prompt.endswith(snippet)
    assert REFERENCES[1].output not in prompt
    assert propose_prompt(INDUCTION, REFERENCES[:1], num_inputs=6).startswith("## Task: Output 6 Inputs")
    with pytest.raises(ValueError):
        propose_prompt(INDUCTION, REFERENCES)
    with pytest.raises(ValueError):
        propose_prompt("code_e", REFERENCES, FORBIDDEN)


def test_the_deduction_and_abduction_solvers_see_the_program_and_one_side():
    program, argument, value = "def f(a, b):\n    return a * b", "'ab', 3", "'ababab'"
    deduction = solve_prompt(DEDUCTION, program, input=argument, output=value)
    assert deduction.startswith("# Task: Deduce the Output of a Python Code Snippet Given the Code and Input")
    assert f"```python\n{program}\n```" in deduction
    assert f"# Input:\n```input\n{argument}\n```" in deduction
    assert value not in deduction
    abduction = solve_prompt(ABDUCTION, program, input=argument, output=value)
    assert abduction.startswith("# Task: Provide One Possible Input of a Python Code Snippet")
    assert f"```python\n{program}\n```" in abduction
    assert f"# Output:\n```output\n{value}\n```" in abduction
    assert argument not in abduction


def test_the_induction_solver_sees_only_the_visible_half_and_the_message():
    pairs = [(f"'in{k}'", f"'out{k}'") for k in range(10)]
    prompt = solve_prompt(INDUCTION, "def f(s):\n    return 'secret'", pairs=pairs, message="It renames.")
    for k in range(5):
        assert f"```input_{k}\n'in{k}'\n```\n```output_{k}\n'out{k}'\n```" in prompt
    for k in range(5, 10):
        assert f"'in{k}'" not in prompt
        assert f"'out{k}'" not in prompt
    assert "secret" not in prompt
    assert "# Message:\n```message\nIt renames.\n```" in prompt
    assert prompt.endswith("Name your entry function `f()`!!!")
    assert "main function `f()`, anything after will be removed" in prompt
    with pytest.raises(ValueError):
        solve_prompt("code_e", "def f(a):\n    return a")


def test_the_r1_template_prefills_think_and_chat_messages_do_not():
    prompt = r1_prompt("Say {hi}")
    assert prompt == R1_INSTRUCTION + " User: Say {hi}\nAssistant: <think>"
    assert prompt.startswith("A conversation between User and Assistant. The user asks a question")
    assert prompt_opens_think(prompt)
    messages = chat_messages("Say {hi}")
    assert messages == [
        {"role": "system", "content": R1_INSTRUCTION},
        {"role": "user", "content": "Say {hi}"},
    ]
    assert "<think> </think> and <answer> </answer>" in R1_INSTRUCTION


def test_a_completion_in_the_prompted_format_round_trips():
    program = "def f(a):\n    return a[::-1]"
    answer = code_answer(program, "'abc'")
    text = completion(answer)
    assert format_ok(text)
    assert parse_proposal(text, ABDUCTION) == Proposal(program, ("'abc'",))
    solved = completion("```output\n'cba'\n```")
    assert format_ok(solved)
    assert extract_solution(solved, DEDUCTION) == "'cba'"
