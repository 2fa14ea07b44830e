"""SPELL's zero-shot responder prompts for document tasks (paper, App. E) and their shared defaults.

Each long-context item's problem is the whole filled prompt (documents, then the question), so the
benchmark prompt is just "{problem}". Inputs longer than `MAX_INPUT` tokens are cut in the middle
(first and last halves of the chat-formatted prompt kept); `--max-input-tokens` changes it.
"""

import re

from harness.core.types import Sampling

GENERAL_QA = (
    "Please read the following text and answer the question below.\n<text>\n{content}\n</text>\n"
    "Question: {question}\n"
    'Format your answer as follows: "The correct answer is (insert answer here)."'
)
FINANCIAL_MATH = (
    "You are an expert in document analysis and numeric reasoning, you are supposed to answer the given "
    "question based on the provided context. You need to first think through the problem step by step, "
    "documenting each necessary step. Then you are required to conclude your response with the final "
    'answer in your last sentence as "Therefore, the answer is (insert answer here)". The final answer '
    "should be a numeric value.\n<text>\n{content}\n</text>\nQuestion: {question}\n"
    'Please reason step by step, and format your answer as follows: "Therefore, the answer is (insert '
    'answer here)."'
)
MULTIPLE_CHOICE = (
    "Please read the following text and answer the question below.\n<text>\n{content}\n</text>\n"
    "Question: What is the correct answer to this question: {question}\n"
    "Choices:\n(A) {choice_A}\n(B) {choice_B}\n(C) {choice_C}\n(D) {choice_D}\n"
    'Format your answer as follows: "The correct answer is (insert answer here)."'
)

MAX_INPUT = 16384  # SPELL's 16K setting; its 100K setting is 100000
SAMPLING = Sampling(n=8, temperature=0.7, top_p=0.95, max_tokens=20000)  # 4096 for non-reasoning models


def fill(template: str, **fields: str) -> str:
    """The template with its {field}s replaced in one pass (documents may hold braces of their own)."""
    return re.sub(r"\{(\w+)\}", lambda m: fields.get(m.group(1), m.group(0)), template)
