"""Absolute Zero's prompts (AZR paper, Figs. 33-39): the DeepSeek-R1 wrapper, the proposers' (Figs. 34-36)
and the solvers' (Figs. 37-39) prompts for deduction, abduction and induction.

The texts are the paper's, laid out as the released code renders them (its `.format` has already turned
`{{` into `{`); the solver bodies the seed lost (Figs. 37, 38) and the wrapper (Fig. 33) follow the
released code's `code_output_predictor_prompt`, `code_input_predictor_prompt` and
`instruction_following`. Prompts are returned without the code's leading and trailing newlines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.doc_prompts import fill

DEDUCTION, ABDUCTION, INDUCTION = "deduction", "abduction", "induction"  # the code's code_o, code_i, code_f
TASKS = (DEDUCTION, ABDUCTION, INDUCTION)
PROPOSE, SOLVE = "propose", "solve"
ROLES = (PROPOSE, SOLVE)
NUM_INPUTS = 10  # N, the induction proposer's inputs; the solver sees the first N // 2 pairs


@dataclass(frozen=True)
class Triplet:
    """A task (p, i, o): the program defining `f`, the argument list as written in an input fence, and
    the repr of f(input)."""

    program: str
    input: str
    output: str


R1_INSTRUCTION = (
    "A conversation between User and Assistant. The user asks a question, and the Assistant solves it. The "
    "assistant first thinks about the reasoning process in the mind and then provides the user with the "
    "answer. The reasoning process and answer are enclosed within <think> </think> and <answer> </answer> "
    "tags, respectively, i.e., <think> reasoning process here </think> <answer> answer here </answer>."
)
R1_TEMPLATE = R1_INSTRUCTION + " User: {prompt}\nAssistant: <think>"


def r1_prompt(prompt: str) -> str:
    """The raw R1 string for base models (no chat template). It ends with the prefilled `<think>`, so the
    completion starts inside the think block: check it with `format_ok(text, think_opened=True)`."""
    return fill(R1_TEMPLATE, prompt=prompt)


def chat_messages(prompt: str) -> list[dict[str, str]]:
    """The same prompt for a chat template: the R1 instruction as the system message (without it nothing
    asks for the tags) and the task prompt as the user message. Nothing is prefilled: the completion opens
    its own `<think>` unless the template does (`harness.core.thinking.prompt_opens_think`)."""
    return [{"role": "system", "content": R1_INSTRUCTION}, {"role": "user", "content": prompt}]


_AVOID = (
    "- AVOID THE FOLLOWING:\n  * Random functions or variables\n  * Date/time operations\n  * I/O operations "
    "(reading files, network requests)\n  * Printing or logging\n  * Any external state\n- Ensure "
    "execution completes within 10 seconds on a modern CPU\n- All imports and class definitions should be "
    "at the very top of the code snippet\n- The snippet should end with a return statement from the main "
    "function `{entry}`, anything after will be removed"
)
_CODE_REQUIREMENTS = (
    "- Name the entry function `f` (e.g., `def f(...): ...`), you can have nested definitions inside `f`\n"
    "- Ensure the function returns a value\n- Include at least one input parameter\n- Make the function "
    "deterministic\n"
)
_STATE_TRACKING = (
    "- Make the snippet require state tracking across multiple data transformations, ensuring the task "
    "requires long multi step reasoning\n"
)
PROPOSER_CODE_REQUIREMENTS = _CODE_REQUIREMENTS + _STATE_TRACKING + fill(_AVOID, entry="f")
SOLVER_CODE_REQUIREMENTS = _CODE_REQUIREMENTS + fill(_AVOID, entry="f()")

_INPUT_REQUIREMENTS = (
    "### Input Requirements:\n- Provide exactly one test input for your function\n- Format multiple "
    "arguments with commas between them\n- Remember to add quotes around string arguments"
)
_EXAMPLE_INPUT = "'John', {'age': 20, 'city': 'New York'}"
_EXAMPLE_FORMAT = (
    "### Example Format:\n```python\ndef f(name: str, info: dict):\n    # code logic here\n    return result"
    f"\n```\n\n```input\n{_EXAMPLE_INPUT}\n```"
)
_DIFFICULTY = (
    " Focus on either algorithmic reasoning or logic complexity. For example, you can define complex data "
    "structure classes and operate on them like trees, heaps, stacks, queues, graphs, etc, or use complex "
    "control flow, dynamic programming, recursions, divide and conquer, greedy, backtracking, etc"
)
_FORBIDDEN = (
    "- Restricted usage of certain keywords and packages, you are not allowed to use the following words in "
    "any form, even in comments: {LIST_OF_FORBIDDEN_PACKAGES}"
)
_PLAN = (
    "First, carefully devise a clear plan: e.g., identify how your snippet will be challenging, distinct "
    "from reference snippets, and creative. Then, write the final code snippet and its inputs."
)

# Per task: the title, the goal paragraph, the formatting bullets (laid out differently in the code's two
# templates) and the difficulty criterion.
# Quirk kept: the difficulty bullets are swapped between Figs. 34 and 35,
# as in the official code. The abduction proposer (the solver will infer the input) is told the difficulty
# is predicting the output from the input, the deduction proposer that it is predicting the input from
# the output.
_PROPOSERS = {
    ABDUCTION: (
        "Create a Python Code Snippet",
        "deduce one possible input from a given output. Your submission should include both a code snippet "
        "and test input pair, where the input will be plugged into the code snippet to produce the output, "
        "which that function output be given to a test subject to come up with any input that will produce "
        "the same function output. This is meant to be an I.Q. test.",
        "- Format your code with: ```python\n  def f(...):\n      # your code here\n      return ...\n  ```\n"
        "- Format your input with: ```input\n  arg1, arg2, ...\n  ```",
        "- Difficulty in predicting the output from your provided input and code snippet.",
    ),
    DEDUCTION: (
        "Create a New Python Code Snippet",
        "deduce the output from the input. Your submission should include a code snippet and a test input "
        "pair, where the input will be plugged into the code snippet to produce the output. The input will "
        "be given to a test subject to deduce the output, which is meant to be an I.Q. test.",
        "- Format your code with:\n```python\ndef f(...):\n    # your code here\n    return ...\n```\n"
        "- Format your input with:\n```input\narg1, arg2, ...\n```",
        "- Difficulty in predicting your ```input``` from 1) your ```python``` code and 2) the deterministic "
        "```output``` that will be obtained from your ```input```.",
    ),
}

INDUCTION_PROPOSER = (
    "## Task: Output {NUM_INPUTS} Inputs that can be plugged into the following Code Snippet to produce "
    "diverse Outputs, and give a message related to the given snippet.\n\nUsing the code snippet provided "
    "below, design {NUM_INPUTS} inputs that can be plugged into the code snippet to produce a diverse set of "
    "outputs. A subset of your given input and its deterministically produced outputs will be given to a "
    "test subject to deduce the function, which is meant to be an I.Q. test. You can also leave a message to "
    "the test subject to help them deduce the code snippet.\n\n### Input Requirements:\n- Provide "
    "{NUM_INPUTS} valid inputs for the code snippet\n- For each input, format multiple arguments with commas "
    "between them\n- Remember to add quotes around string arguments\n- Each input should be individually "
    "wrapped in ```input``` tags\n\n### Message Requirements:\n- Leave a message to the test subject to help "
    "them deduce the code snippet\n- The message should be wrapped in ```message``` tags\n- The message can "
    "be in any form, can even be formed into a coding question, or a natural language instruction what the "
    "code snippet does\n- You cannot provide the code snippet in the message\n\n### Formatting:\n- Format "
    "your input with:\n```input\narg1, arg2, ...\n```\n\n### Example Format:\n```input\n"
    + _EXAMPLE_INPUT
    + "\n```\n```input\n'Sammy', {'age': 37, 'city': 'Los Angeles'}\n```\n\n### Evaluation Criteria:\n- "
    "Executability, your code should be executable given your inputs\n- Coverage, the inputs and outputs "
    "should cover the whole input space of the code snippet, able to deduce the code snippet from the inputs "
    "and outputs\n- Creativity, the inputs need to be sufficiently different from each other\n- The overall "
    "selection of inputs and message combined should be challenging for the test subject, but not impossible "
    "for them to solve\nFirst, carefully devise a clear plan: e.g., understand the code snippet, then "
    "identify how your proposed inputs have high coverage, and why the inputs will be challenging and "
    "creative. Then, write the inputs and message. Remember to wrap your inputs in ```input``` tags, and "
    "your message in ```message``` tags.\n\n### Code Snippet:\n```python\n{SNIPPET_FROM_BUFFER}\n```"
)
CALL_PLACEHOLDER = "\nf(<|YOUR INPUT WILL BE PLUGGED HERE|>)"  # the code appends it to the shown program

ABDUCTION_SOLVER = (
    "# Task: Provide One Possible Input of a Python Code Snippet Given the Code and Output\nGiven the "
    "following Code Snippet and the Output, think step by step then provide one possible input that "
    "produced the output. The input needs to be wrapped in ```input``` tags. Remember if an argument is a "
    "string, wrap it in quotes. If the function requires multiple arguments, separate them with commas.\n\n"
    "# Code Snippet:\n```python\n{SNIPPET}\n```\n\n# Output:\n```output\n{OUTPUT}\n```\n\n# Output Format:\n"
    "```input\narg1, arg2, ...\n```\n# Example Output:\n```input\n" + _EXAMPLE_INPUT + "\n```"
)
DEDUCTION_SOLVER = (
    "# Task: Deduce the Output of a Python Code Snippet Given the Code and Input\nGiven the following Code "
    "Snippet and the Input, think step by step then deduce the output that will be produced from plugging "
    "the Input into the Code Snippet. Put your output in ```output``` tags. Remember if the output is a "
    "string, wrap it in quotes. If the function returns multiple values, remember to use a tuple to wrap "
    "them.\n\n# Code Snippet:\n```python\n{SNIPPET}\n```\n\n# Input:\n```input\n{INPUT}\n```\n\n# Example "
    "Output:\n```output\n{'age': 20, 'city': 'New York'}\n```"
)
INDUCTION_SOLVER = (
    "# Task: Deduce the Function that Produced the Outputs from the Inputs\nGiven a set of input/output "
    "pairs and a message that describes the function, think through the problem step by step to deduce a "
    "general code snippet. This code should produce the hidden outputs from the hidden inputs, matching the "
    "original data-generating code that created the input/output pairs. Place your final answer inside "
    "python tags! It may be helpful to work through each input/output pair individually to test your "
    "function. If your function doesn\u2019t work as expected, revise it until it does. The final code "
    "snippet will be used to evaluate your response, which is wrapped in ```python``` tags.\n\n# Code "
    "Requirements:\n" + SOLVER_CODE_REQUIREMENTS + "\n\n# Input and Output Pairs:\n{INPUT_OUTPUT_PAIRS}\n\n"
    "# Message:\n```message\n{MESSAGE}\n```\n\n# Example Output:\n```python\ndef f(a):\n    return a\n```\n\n"
    "Name your entry function `f()`!!!"
)


def proposer_template(task: str) -> str:
    """The deduction or abduction proposer's prompt with its {LIST_OF_FORBIDDEN_PACKAGES} and
    {CODE_REFERENCES_FROM_BUFFER} slots."""
    if task not in _PROPOSERS:
        raise ValueError(f"no code proposer for task {task!r}")
    title, goal, formatting, difficulty = _PROPOSERS[task]
    return (
        f"## Task: {title} (where custom classes are allowed, which should be defined at the top of the code "
        "snippet) with one Matching Input\n\nUsing the reference code snippets provided below as examples, "
        f"design a new and unique Python code snippet that demands deep algorithmic reasoning to {goal}\n\n"
        f"### Code Requirements:\n{PROPOSER_CODE_REQUIREMENTS}\n\n{_INPUT_REQUIREMENTS}\n\n### Formatting:\n"
        f"{formatting}\n\n{_EXAMPLE_FORMAT}\n\n### Evaluation Criteria:\n- Executability, your code should "
        f"be executable given your input\n{difficulty}{_DIFFICULTY}\n- Creativity, the code needs to be "
        f"sufficiently different from the provided reference snippets\n{_FORBIDDEN}\n\n{_PLAN}\n\n"
        "### Reference Code Snippets:\n{CODE_REFERENCES_FROM_BUFFER}"
    )


def reference_block(references: Sequence[Triplet]) -> str:
    """The K references as the code lists them: `<snippet_i>` blocks (from 0) of python/input/output
    fences."""
    return "".join(
        f"<snippet_{i}>\n```python\n{t.program}\n```\n```input\n{t.input}\n```\n```output\n{t.output}\n```\n"
        f"</snippet_{i}>\n"
        for i, t in enumerate(references)
    ).rstrip("\n")


def propose_prompt(
    task: str, references: Sequence[Triplet], forbidden: Sequence[str] = (), num_inputs: int = NUM_INPUTS
) -> str:
    """The proposer's prompt. Deduction and abduction show the K `references` and the `forbidden` words;
    induction shows the program of its one reference (with the code's call placeholder) and asks for
    `num_inputs` inputs."""
    if task == INDUCTION:
        if len(references) != 1:
            raise ValueError(f"the induction proposer shows one program, got {len(references)}")
        snippet = references[0].program + CALL_PLACEHOLDER
        return fill(INDUCTION_PROPOSER, NUM_INPUTS=str(num_inputs), SNIPPET_FROM_BUFFER=snippet)
    return fill(
        proposer_template(task),
        LIST_OF_FORBIDDEN_PACKAGES=", ".join(forbidden),
        CODE_REFERENCES_FROM_BUFFER=reference_block(references),
    )


def io_pairs(pairs: Sequence[tuple[str, str]]) -> str:
    """Input/output pairs as the code renders them: `input_k` / `output_k` fences, from 0."""
    return "\n".join(f"```input_{k}\n{i}\n```\n```output_{k}\n{o}\n```" for k, (i, o) in enumerate(pairs))


def solve_prompt(
    task: str,
    program: str = "",
    input: str = "",
    output: str = "",
    pairs: Sequence[tuple[str, str]] = (),
    message: str = "",
) -> str:
    """The solver's prompt: deduction shows (program, input), abduction (program, output), induction the
    first len(pairs) // 2 of the task's N (input, output) `pairs` and its message (never the program: the
    other half is hidden for scoring)."""
    if task == DEDUCTION:
        return fill(DEDUCTION_SOLVER, SNIPPET=program, INPUT=input)
    if task == ABDUCTION:
        return fill(ABDUCTION_SOLVER, SNIPPET=program, OUTPUT=output)
    if task == INDUCTION:
        if len(pairs) < 2:
            raise ValueError(f"an induction task needs at least 2 pairs to show half, got {len(pairs)}")
        return fill(INDUCTION_SOLVER, INPUT_OUTPUT_PAIRS=io_pairs(pairs[: len(pairs) // 2]), MESSAGE=message)
    raise ValueError(f"unknown task {task!r}")
