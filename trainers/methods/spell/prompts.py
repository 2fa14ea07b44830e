"""SPELL's prompts (paper App. E): the questioner's, per task with and without history memory, the
responder's (the evaluation prompts of `benchmarks.doc_prompts`) and the verifier's.

The six questioner prompts share most of their text, so they are put together from parts: an
introduction, numbered principles (the "Escalate Question Difficulty" principle is inserted only when
the memory holds examples), the output format, the documents and the memory's examples.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.doc_prompts import FINANCIAL_MATH, GENERAL_QA, MULTIPLE_CHOICE, fill

GENERAL, MATH, CHOICE = "doc_general_qa", "docmath_qa", "doc_mc"
TASKS = (GENERAL, MATH, CHOICE)
LETTERS = ("A", "B", "C", "D")
NO_DOCUMENTS = "Empty"  # the grounding check's document slot (SPELL paper, Algorithm 1)

_BENCHMARK = (
    "We are building a benchmark to evaluate the capabilities of large language models (LLMs) on fact "
    "retrieval, reasoning across multiple constraints, and accurate synthesis of information into "
    "coherent responses."
)
_NUMERIC_BENCHMARK = (
    "We are building a benchmark to evaluate the numerical reasoning capabilities of large language "
    "model's (LLMs) when analyzing specialized documents containing both text and tables."
)
_DERIVATION = (
    "You must also provide the correct answer and a detailed step-by-step derivation showing how the "
    "answer is obtained from the document."
)
_EXPLANATION = (
    "You must provide one correct answer and three plausible, distinct distractors. Crucially, you must "
    "also provide a detailed explanation for why the correct answer is correct (including derivation "
    "steps) and why each distractor is incorrect."
)
_NEW_QUESTION = (
    "propose ONE new, significantly more difficult question based on the provided document context and a "
    "set of existing, simpler questions. The new question must be fundamentally different and more "
    "complex than the provided examples, requiring both document comprehension and"
)
INTRODUCTIONS = {
    (GENERAL, False): "You are an expert in document analysis. " + _BENCHMARK + " Your primary task is to "
    "propose a challenging question based on the provided document context enclosed between <text> and "
    "</text>. The question must require both document comprehension and multi-hop reasoning. " + _DERIVATION,
    (GENERAL, True): "You are an expert in document analysis. "
    + _BENCHMARK
    + " Your primary task is to "
    + _NEW_QUESTION
    + " multi-hop reasoning. "
    + _DERIVATION,
    (MATH, False): "You are an expert in document analysis and numeric reasoning. "
    + _NUMERIC_BENCHMARK
    + " Your primary task is to propose a challenging question based on the provided document context "
    "enclosed between <text> and </text>. The question must require both document comprehension and "
    "multi-step mathematical reasoning to arrive at a single, non-zero numerical answer. You must also "
    "provide the correct numerical answer and a detailed step-by-step derivation showing how the answer "
    "is obtained from the document.",
    (MATH, True): "You are an expert in document analysis and numeric reasoning. "
    + _NUMERIC_BENCHMARK
    + " Your primary task is to "
    + _NEW_QUESTION
    + " multi-step mathematical reasoning to arrive at a "
    "single, non-zero numerical answer. You must also provide the correct numerical answer and a detailed "
    "step-by-step derivation showing how the answer is obtained from the document.",
    (CHOICE, False): "You are an expert in document analysis. " + _BENCHMARK + " Your task is to generate "
    "a multiple choice question based on the provided document context enclosed between <text> and "
    "</text>. The question must require document comprehension and multi-hop reasoning. " + _EXPLANATION,
    (CHOICE, True): "You are an expert in document analysis. " + _BENCHMARK + " You will be provided with "
    "a document context and a set of simpler, existing questions. Your primary task is to generate ONE "
    "new, highly challenging multiple-choice question with one correct answer and three plausible, "
    "distinct distractors. The new question must be fundamentally different and more complex than the "
    "provided examples, requiring both document comprehension and multi-hop reasoning. " + _EXPLANATION,
}

_STANDALONE = (
    'Questions should not contain any references to "Article 1", "Article 2", etc. They should be '
    "understandable without any additional context."
)
_CITE = (
    'explicitly cite the specific data point or phrase and its source from the context (e.g., "From Table '
    '3, Row \'Revenue\', Year 2023..." or "As stated in paragraph 2...").'
)
_ESCALATE = (
    "Escalate Question Difficulty: The new question must demonstrate a higher order of reasoning than the "
    "Previous Examples. First, analyze the examples to identify their simple reasoning patterns (e.g., "
)
_ESCALATE_GENERAL = (
    _ESCALATE + "fact retrieval, single-step comparison). Then, create a new question that incorporates "
    "one or more of the following advanced reasoning types:\n"
    "- Quantitative Reasoning & Calculation: Requires performing mathematical operations (e.g., addition, "
    "subtraction, percentage change, averaging) on data from multiple sources.\n"
    "- Comparative & Superlative Analysis: Requires comparing multiple entities based on synthesized "
    "criteria to find the one that is highest, lowest, best, etc.\n"
    '- Conditional or Causal Reasoning: Structured as an "if-then" scenario or asks for the cause/effect '
    'of a situation by linking different documents (e.g., "What would be the total cost if the discount '
    'from Document A were applied to the price listed in Document B?").\n'
    "- Synthesis Across Data Types: Forces connection between qualitative information (e.g., a policy "
    "description) and quantitative data (e.g., a number in a table) to reach a conclusion."
)
_ESCALATE_MATH = (
    _ESCALATE + "direct lookups, single calculations). Then, create a new question that incorporates one or "
    "more of the following advanced reasoning types:\n"
    "- Period-over-Period Calculation: Requires calculating growth, decline, or change between different "
    "time periods.\n"
    "- Ratio or Metric Derivation: Requires calculating a financial metric or ratio not explicitly stated "
    "in the document.\n"
    "- Aggregation and Filtering: Requires aggregating data across multiple rows/columns/sections after "
    "filtering based on a text-based condition.\n"
    '- Projection or Implication: Requires using data from the document to answer a "what if" or '
    "forward-looking question based only on the provided numbers."
)
_NO_EXTERNAL = (
    "- Excessive External Knowledge: Questions should primarily rely on the provided document. Only common "
    "sense or minimal domain-specific knowledge (e.g., basic financial concepts like 'profit = revenue - "
    "cost' if contextually appropriate and derivable) inferable from the document is allowed."
)
# Per task: the principles before the escalation principle, then those after it.
PRINCIPLES = {
    GENERAL: (
        [
            "Language Requirement: Questions, answers, and derivations must be in English.",
            "Standalone & Context-Independent: " + _STANDALONE,
            "Unambiguous Answer: Each question should have a single, clear, and factual answer.",
            "Multi-hop Reasoning: Answering each question should require combining information from ALL "
            "provided documents. The final answer cannot be found in any single document.",
            "Guideline for Question Phrasing: Strive for a natural and seamless integration of information "
            "from each document. A good question often:\n- Starts with a clear question word "
            "(What/How/Where/When).\n- Links constraints from different documents using logical connectors."
            "\n- Example connectors: 'in relation to', 'given the condition of', 'as a result of', 'which "
            "also affects', 'in addition to'.",
        ],
        [
            "Answer & Step-by-Step Derivation:\n- The answer must be a concise phrase or sentence. An answer "
            "with more than 20 tokens is forbidden.\n- The derivation must be a clear, step-by-step logical "
            "chain. Each step must " + _CITE,
        ],
    ),
    MATH: (
        [
            "Language Requirement: Questions, answers, and derivations must be in English.",
            "Complexity and Reasoning Depth:\n- The question must be challenging, requiring the LLM to go "
            "beyond simple retrieval. It should not be solvable trivially or in a few inference steps.\n"
            "- It must involve multi-step mathematical reasoning (e.g., requiring two or more distinct "
            "calculation steps).\n- It should necessitate integration of information from different parts "
            "of the document (e.g., combining data from a table with information from a text paragraph, or "
            "using multiple rows/columns from a table).\n- Aspects like summarization or complex information "
            "extraction can be part of the process.",
            'Avoided Question Types:\n- Simple Counting: Avoid questions like "How many X are there?" if X '
            "is easily countable or directly stated. If counting is involved as an intermediate step for a "
            "larger calculation and the count is small (<=10), it's acceptable.\n- Direct Retrieval: Avoid "
            "questions answerable by looking up a single, isolated piece of information.\n" + _NO_EXTERNAL,
        ],
        [
            "Information Obscurity:\n- Start with a clear question word (What/How/Where/When).\n- Do not "
            "explicitly mention or paraphrase key numerical values from the document within the question "
            "itself. The LLM should identify and extract these values.\n- Phrase questions to require "
            "inference and understanding of relationships between data points rather than just locating "
            "them.",
            "Factual Grounding:\n- All information required to answer the question must be present in or "
            "directly derivable from the provided document.\n- Do not introduce hypothetical scenarios, "
            "fictional data, or assumptions not supported by the document.\n- " + _STANDALONE,
            "Numerical Answer:\n- The final answer must be a single non-zero numerical value.\n- An answer "
            "with more than two numerical values is unacceptable.\n- If the document implies units (e.g., "
            "millions of dollars, percentages), the question should be phrased such that the numerical "
            'answer alone is sufficient (e.g., "What is the value in millions of dollars?" rather than '
            'expecting the answer to include "million dollars").',
            "Step-by-Step Derivation:\n- Provide a clear, step-by-step derivation for your answer.\n- This "
            "derivation must " + _CITE.replace("explicitly cite the", "explicitly reference") + "\n- Detail "
            "all mathematical operations performed in each step. This helps verify the question's "
            "solvability and reasoning path.",
        ],
    ),
    CHOICE: (
        [
            "General Requirements:\n- All questions, options, and explanations must be in English.\n- "
            "Questions should be challenging, requiring more than simple retrieval or a few inference steps.",
            "Cognitive Complexity Requirements for the Question:\n- Must necessitate multi-step reasoning "
            "(e.g., involving three or more distinct logical or calculation steps).\n- Should require the "
            "integration of at least three distinct data points from different parts of the document (e.g., "
            "combining data from a table with text, or using multiple rows/columns/cells).\n- Should demand "
            "the synthesis of quantitative data with qualitative information found in the text.\n- The "
            "problem setup should have the potential for common misinterpretations, which will inform "
            "distractor design.",
            "Content Validity Criteria:\n- The question and all options must be exclusively answerable using "
            "information from the provided document. No external knowledge beyond common sense or very "
            "basic, universally understood concepts (e.g., profit = revenue - cost, if directly applicable "
            "and data is provided) should be required.\n- If applicable to the document type (e.g., "
            "financial reports), prioritize questions with regulatory/compliance implications or those "
            "highlighting significant financial outcomes.\n- Ensure numerical values involved in the "
            "question or options require contextual interpretation within the document, not just direct "
            "look-up.\n- Avoid trivia; focus on questions that address material information or key insights "
            "derivable from the document.",
            "Distractor Development Guidelines:\n- Each of the three distractors must be plausible yet "
            "clearly incorrect upon careful analysis.\n- Distractors should represent distinct error paths "
            "or common misinterpretations.\n- At least one distractor should represent a common conceptual "
            "misunderstanding related to the document's content or how information is presented.",
            'Forbidden Question/Option Patterns:\n- Simple Counting: Avoid questions like "How many X are '
            'there?" if X is easily countable or directly stated. Small counts (<=5) as part of a larger '
            "calculation are acceptable.\n- Direct Retrieval: Avoid questions where the answer (or its "
            "direct components) can be found in a single, obvious location without further processing.\n- "
            "Excessive External Knowledge: Questions must not require significant domain-specific knowledge "
            "not provided or clearly inferable from the document.\n- No Fabricated Information: Strictly "
            "adhere to document content. Do not introduce hypothetical scenarios, data, or assumptions not "
            "explicitly stated or directly inferable.\n- Ambiguous Scenarios: The question must have one "
            "unambiguously correct answer based solely on the provided document.\n- Vague Options: All "
            "options, including distractors, must be precise and unambiguous.",
        ],
        [
            "Answer and Explanation Requirements:\n- The correct answer must be {correct_answer}.\n- A "
            "detailed derivation for the correct answer must be provided, showing step-by-step calculations "
            'and referencing specific parts of the document (e.g., "From Table X, Row Y...", "As stated in '
            'paragraph Z...").\n- For each distractor, provide a brief explanation of why it is incorrect, '
            'ideally linking it to the type of error it represents (e.g., "Option A is incorrect because it '
            'omits the X deduction mentioned in...", "Option B results from incorrectly summing X and Y '
            'instead of finding their difference...").',
        ],
    ),
}
ESCALATION = {GENERAL: _ESCALATE_GENERAL, MATH: _ESCALATE_MATH, CHOICE: _ESCALATE_GENERAL}
_OUTPUT = "## Output Format\nYour response must conclude with a JSON object containing the following keys: "
OUTPUT_FORMATS = {
    GENERAL: _OUTPUT + '"question" and "answer", placed after your reasoning.\n{\n"question": "<A '
    'well-structured English question that adheres to all design principles>",\n"answer": "<A concise '
    'answer, under 20 tokens>"\n}',
    MATH: _OUTPUT + '"question" and "answer", placed after your reasoning.\n{\n"question": "<A '
    'well-structured English question that adheres to all design principles>",\n"answer": "<A single, '
    'non-zero numerical answer>"\n}',
    CHOICE: _OUTPUT + '"question", "options", and "answer", placed after your reasoning.\n{\n"question": '
    '"<A well-structured multiple choice English question, exclude choices and answer>",\n"options": {\n'
    '"A": "<Text for choice A>",\n"B": "<Text for choice B>",\n"C": "<Text for choice C>",\n"D": "<Text '
    'for choice D>"\n},\n"answer": "{correct_answer}"\n}',
}

VERIFIER = (
    "## TASK\nYou are an expert in verifying if two answers are the same. Your input is a problem and two "
    "answers, Answer 1 and Answer 2. You need to check if they are equivalent. Your task is to determine "
    "two answers are equivalent, without attempting to solve the original problem.\n## Instruction\n"
    "1. Carefully compare the Answer 1 and Answer 2.\n2. Compare the answers to verify they represent "
    "identical values or meaning, even when written in different forms or notations.\n3. For numerical "
    'answers, you should allow a ±0.15% tolerance.\n4. Your decision must be one of the "[[YES]]" or '
    '"[[NO]]".\n## Input Data\n- Problem: {problem}\n- Answer 1: {answer_1}\n- Answer 2: {answer_2}\n'
    '## Output Format\nProvide your final evaluation in the following format:\n"Explanation:" Provide an '
    'explanation for why the answers are equivalent or not.\n"Decision:" "[[YES]]" or "[[NO]]"\n'
    "Please proceed with the evaluation."
)


def questioner_prompt(
    task: str, context: str, examples: Sequence[tuple[str, str]] = (), correct_answer: str = ""
) -> str:
    """The questioner's prompt; `examples` (question, answer) from the history memory select the
    with-history variant. `correct_answer` is the letter a multiple-choice question must have."""
    history = bool(examples)
    before, after = PRINCIPLES[task]
    principles = [*before, *([ESCALATION[task]] if history else []), *after]
    heading = "Question and Option Design" if task == CHOICE else "Question Design"
    tail = "answer, options, and derivation" if task == CHOICE else "answer, and derivation"
    parts = [
        INTRODUCTIONS[(task, history)],
        f"## Principles for {heading}\nAdhere strictly to the following principles when crafting your "
        f"question, {tail}:\n" + "\n".join(f"{i}. {p}" for i, p in enumerate(principles, 1)),
        OUTPUT_FORMATS[task],
        "## Document Context\n<text>\n{context}\n</text>",
    ]
    prompt = fill("\n".join(parts), correct_answer=correct_answer, context=context)
    if not history:
        return prompt
    listed = (f"### Example {k}:\nQuestion: {q}\nAnswer: {a}" for k, (q, a) in enumerate(examples, 1))
    return prompt + "\n## Previous Examples\n" + "\n".join(listed)


def responder_prompt(task: str, documents: str, question: str, options: dict[str, str] | None = None) -> str:
    """The responder's prompt (the evaluation prompt of the same task); `documents` is NO_DOCUMENTS for
    the grounding check."""
    if task == CHOICE:
        if options is None:
            raise ValueError("a multiple-choice prompt needs its options")
        choices = {f"choice_{k}": options[k] for k in LETTERS}
        return fill(MULTIPLE_CHOICE, content=documents, question=question, **choices)
    return fill(GENERAL_QA if task == GENERAL else FINANCIAL_MATH, content=documents, question=question)


def verifier_prompt(problem: str, answer: str, reference: str) -> str:
    return fill(VERIFIER, problem=problem, answer_1=answer, answer_2=reference)


def choice_problem(question: str, options: dict[str, str]) -> str:
    """A multiple-choice question as the verifier sees it (LongBench-V2's wording, SPELL paper App. E)."""
    lines = [f"What is the correct answer to this question: {question}", "Choices:"]
    return "\n".join([*lines, *(f"({k}) {options[k]}" for k in LETTERS)])
