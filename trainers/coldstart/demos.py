"""One demonstration: a prompt exactly as the method renders it and the completion a role should write."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Demonstration:
    """`prompt` is chat messages (rendered with the run's chat template and its generation header) or a
    raw string (Absolute Zero's R1 template). `prefill` is text the method puts after the prompt (SPELL's
    `questioner_prefill`); the completion continues it and is the only part trained on."""

    role: str  # the method's role: questioner, responder, verifier; propose, solve
    task: str  # the method's task type: doc_general_qa, ...; deduction, abduction, induction
    prompt: tuple[dict[str, str], ...] | str
    completion: str
    prefill: str = ""
    max_prompt_tokens: int | None = None  # the method cuts longer prompts in the middle
    # the material it was built from (documents, programs, questions, answers): what the contamination
    # check compares with the evaluation sets, leaving out the method's own fixed prompt text
    sources: tuple[str, ...] = ()

    def record(self) -> dict[str, Any]:
        prompt = self.prompt if isinstance(self.prompt, str) else list(self.prompt)
        return {
            "role": self.role,
            "task": self.task,
            "prompt": prompt,
            "prefill": self.prefill,
            "completion": self.completion,
        }
