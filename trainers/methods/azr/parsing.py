"""Reading Absolute Zero's completions (AZR paper, §3.3.3-3.3.4, Figs. 33-39): the format check, the
proposers' tasks and the solvers' answers. Text and `ast` only: nothing here executes model code.

- Format (the code's `get_format_reward`): `(?s)<think>.*?</think>\\s*<answer>.*?</answer>` matched at the
  start of the completion, with the prompt's prefilled `<think>` put back in front when the prompt opened
  it. Leading whitespace is dropped first, as the code strips the generation.
- Everything else reads the content of the last `<answer>`, up to its `</answer>` (the code's
  `extract_answer`). Fences are read in one left-to-right pass, so a closing ``` never opens a block.
- Deduction/abduction proposals: the first python fence and the first input fence (else a `# Input:`
  heading). The program must parse and define a function; with `reject_multiple_functions` (the code's
  default, the Qwen runs) more than one `def` at any depth, nested helpers and methods included, is
  invalid. A program without a top-level `f` has its first top-level function renamed to `f` with its
  references (recursive calls included), located on the AST so that `gg`, `obj.g` and "g" in a string
  stay. Nothing after `f`'s return is cut: the prompt says it will be, but the released config leaves
  `remove_after_return` off (and that option drops module-level statements, not what follows a return).
- Induction proposals: the last N input fences (fewer is invalid) and the first message fence, else
  `<message>` tags, else a `# Message:` heading (the code's `parse_inputs_message`).
- Solvers' answers (the code's `extract_input_output`): the last input (abduction) or output (deduction)
  fence, else the last `# Input:`/`# Output:` heading, `input(...)`/`output(...)`, `<input>`/`<output>`
  tag, "the input/output is ...", else the whole answer. Induction: the last python fence, else the last
  unlabelled fence, else nothing, which the code scores as a format error.
"""

from __future__ import annotations

import ast
import io
import re
from dataclasses import dataclass

from harness.core.threadsafe_ast import parse
from trainers.methods.azr.prompts import ABDUCTION, DEDUCTION, INDUCTION, NUM_INPUTS

# Every pattern below runs in time linear in the text: possessive quantifiers where a backtrack could only
# re-scan the same characters, and no lazy group that can fail at the end from every start (AZR's answers
# are model-written: a crafted 150 kB one kept the backtracking versions busy for half a minute).
ANSWER_OPEN, ANSWER_CLOSE = "<answer>", "</answer>"
_THINK_THEN_ANSWER = re.compile(r"</think>\s*+<answer>")
_FLAGS = re.DOTALL | re.IGNORECASE
_FENCE = re.compile(r"```([\w-]*+)[ \t]*+\n?+(.*?)```", re.DOTALL)


def _heading(name: str) -> re.Pattern[str]:
    """A `# Name:` heading's text, up to the next fence or the end."""
    return re.compile(rf"# {name}:\s*(.*?)(?=\n```|$)", _FLAGS)


_INPUT_HEADING, _MESSAGE_HEADING = _heading("Input"), _heading("Message")
_MESSAGE_OPEN, _MESSAGE_CLOSE = (
    re.compile("<message>", re.IGNORECASE),
    re.compile("</message>", re.IGNORECASE),
)
_FALLBACKS = {  # (pattern, searched only up to the text's last ")")
    kind: (
        (_heading(kind.capitalize()), False),
        (re.compile(rf"{kind}\s*+\(([^)]*+)\)", _FLAGS), True),  # a call's arguments end at a ")"
        (re.compile(rf"<{kind}>\s*+(.*?)(?:</{kind}>|$)", _FLAGS), False),  # the caller strips the end
        (re.compile(rf"the {kind} is\s*(.*?)\.?$", _FLAGS), False),
    )
    for kind in ("input", "output")
}
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_UNPARSABLE = (SyntaxError, ValueError, RecursionError, MemoryError)
_DEF_HEADER = re.compile(r"(?:async\s+)?def[\s\\]+")  # up to the name, across a line continuation


@dataclass(frozen=True)
class Proposal:
    """A parsed proposal, still to be executed and validated. Deduction/abduction: the program (its entry
    function named `f`), one input and the modules it imports; induction: `num_inputs` inputs and the
    message, with `program` None (the program is the one the prompt showed)."""

    program: str | None
    inputs: tuple[str, ...]
    message: str = ""
    imports: tuple[str, ...] = ()


@dataclass(frozen=True)
class Invalid:
    """A proposal that yields no task: a format error (-1) like a failed validation."""

    reason: str


def format_ok(text: str, think_opened: bool = True) -> bool:
    """Whether the completion is `<think>...</think>` then `<answer>...</answer>` (blank space between);
    `think_opened` when the prompt ended with the prefilled `<think>` (the raw R1 template). One pass: the
    first `</think>` followed by `<answer>` needs a later `</answer>`."""
    text = ("<think>" if think_opened else "") + text.lstrip()
    if not text.startswith("<think>"):
        return False
    found = _THINK_THEN_ANSWER.search(text, len("<think>"))
    return found is not None and text.find(ANSWER_CLOSE, found.end()) != -1


def answer_text(text: str) -> str | None:
    """The stripped content of the last `<answer>` (to the end when it never closes), or None."""
    if ANSWER_OPEN not in text:
        return None
    return text.rpartition(ANSWER_OPEN)[2].partition(ANSWER_CLOSE)[0].strip()


def fences(text: str, label: str) -> list[str]:
    """The stripped contents of the ```label fences in `text`, in order ("" for unlabelled fences)."""
    return [m.group(2).strip() for m in _FENCE.finditer(text) if m.group(1).lower() == label]


def parse_proposal(
    text: str, task: str, num_inputs: int = NUM_INPUTS, reject_multiple_functions: bool = True
) -> Proposal | Invalid:
    """The proposer's task from its completion (the text after the prompt)."""
    answer = answer_text(text)
    if answer is None:
        return Invalid("no <answer> block")
    if task == INDUCTION:
        return _inputs_message(answer, num_inputs)
    if task in (DEDUCTION, ABDUCTION):
        return _program_input(answer, reject_multiple_functions)
    raise ValueError(f"unknown task {task!r}")


def _program_input(answer: str, reject_multiple_functions: bool) -> Proposal | Invalid:
    programs = fences(answer, "python")
    if not programs:
        return Invalid("no python fence")
    inputs = fences(answer, "input")
    if not inputs:
        heading = _INPUT_HEADING.search(answer)
        if heading is None:
            return Invalid("no input fence")
        inputs = [heading.group(1).strip()]
    program = programs[0]
    try:
        tree = parse(program)
    except _UNPARSABLE as e:
        return Invalid(f"the program does not parse: {e}")
    defs = [node for node in ast.walk(tree) if isinstance(node, _DEFS)]
    if not defs:
        return Invalid("the program defines no function")
    if reject_multiple_functions and len(defs) > 1:
        return Invalid(f"the program defines {len(defs)} functions")
    top = [node.name for node in tree.body if isinstance(node, _DEFS)]
    if not top:
        return Invalid("the program has no top-level function")
    if "f" not in top:
        program = rename(program, tree, top[0], "f")
    return Proposal(program, (inputs[0],), imports=imported_modules(tree))


def _inputs_message(answer: str, num_inputs: int) -> Proposal | Invalid:
    inputs = fences(answer, "input")
    if len(inputs) < num_inputs:
        return Invalid(f"{len(inputs)} input fences, {num_inputs} needed")
    messages = fences(answer, "message")
    if messages:
        return Proposal(None, tuple(inputs[-num_inputs:]), messages[0])
    message = _message_tag(answer)
    if message is None:
        heading = _MESSAGE_HEADING.search(answer)
        message = heading.group(1).strip() if heading else None
    if message is None:
        return Invalid("no message")
    return Proposal(None, tuple(inputs[-num_inputs:]), message)


def _message_tag(answer: str) -> str | None:
    """The stripped text of the first `<message>` that a `</message>` closes (tags in any case)."""
    opened = _MESSAGE_OPEN.search(answer)
    closed = opened and _MESSAGE_CLOSE.search(answer, opened.end())
    return answer[opened.end() : closed.start()].strip() if closed else None


def rename(code: str, tree: ast.Module, old: str, new: str) -> str:
    """`code` with the top-level function `old` and every name `old` (calls, recursive ones included, and
    other references) replaced by `new`, at the positions the AST gives; attributes, substrings and string
    contents are untouched."""
    lines = io.StringIO(code, newline="").readlines()
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(lineno: int, col: int) -> int:  # ast columns count UTF-8 bytes
        line = lines[lineno - 1]
        return starts[lineno - 1] + len(line.encode()[:col].decode())

    spans = [
        offset(n.lineno, n.col_offset) for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == old
    ]
    for node in tree.body:
        if isinstance(node, _DEFS) and node.name == old:
            header = _DEF_HEADER.match(code, offset(node.lineno, node.col_offset))
            spans.append(header.end())
    for start in sorted(spans, reverse=True):
        code = code[:start] + new + code[start + len(old) :]
    return code


def imported_modules(tree: ast.Module) -> tuple[str, ...]:
    """The modules the program imports, dotted names as written (`os.path`; `.pkg` when relative), each
    once, in order."""
    names: list[str] = []
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append("." * node.level + (node.module or ""))
    return tuple(dict.fromkeys(names))


def extract_solution(text: str, task: str) -> str | None:
    """The solver's answer from its completion: an argument list (abduction), a value (deduction) or a
    program (induction); None without an `<answer>` block, or for induction without a code fence."""
    answer = answer_text(text)
    if answer is None:
        return None
    if task == INDUCTION:
        found = fences(answer, "python") or fences(answer, "")
        return found[-1] if found else None
    if task not in (DEDUCTION, ABDUCTION):
        raise ValueError(f"unknown task {task!r}")
    kind = "input" if task == ABDUCTION else "output"
    found = fences(answer, kind)
    if found:
        return found[-1]
    for pattern, to_last_paren in _FALLBACKS[kind]:
        matches = pattern.findall(answer[: answer.rfind(")") + 1] if to_last_paren else answer)
        if matches:
            return matches[-1].strip()
    return answer
