"""The generation record: what generations.jsonl keeps of one sample, however it was generated."""

from __future__ import annotations

from typing import Any

from harness.core.thinking import split_thinking
from harness.core.types import Completion


def generation_record(
    benchmark: str,
    item_id: str,
    sample_idx: int,
    text: str,
    *,
    seed: int | None = None,
    prompt_hash: str | None = None,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    finish_reason: str | None = None,
    think_opened: bool = False,
) -> dict[str, Any]:
    split = split_thinking(text, think_opened)
    return {
        "benchmark": benchmark,
        "item_id": item_id,
        "sample_idx": sample_idx,
        "seed": seed,
        "prompt_hash": prompt_hash,
        "text": text,
        "reasoning": split.reasoning,
        "answer": split.answer,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "finish_reason": finish_reason,
        "truncated": None if finish_reason is None else finish_reason == "length",
        "unclosed_think": split.unclosed_think,
    }


def completion_record(c: Completion) -> dict[str, Any]:
    r = c.request
    record = generation_record(
        r.benchmark,
        r.item_id,
        r.sample_idx,
        c.text,
        seed=r.seed,
        prompt_hash=c.prompt_hash,
        prompt_tokens=c.prompt_tokens,
        completion_tokens=c.completion_tokens,
        finish_reason=c.finish_reason,
        think_opened=c.think_opened,
    )
    if c.prompt_cut_from is not None:
        record["prompt_cut_from"] = c.prompt_cut_from  # the prompt was cut in the middle to prompt_tokens
    return record
