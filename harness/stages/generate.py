"""The generate stage: one engine turns requests into generation records, appended as they finish."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness import HarnessError
from harness.core.records import completion_record
from harness.core.store import GENERATIONS, RUN, RunDir
from harness.core.types import Request

OnEngine = Callable[[dict[str, Any]], None]  # the engine's description, once it has started
OnRecords = Callable[[list[dict[str, Any]]], None]  # each batch of records, once written


def check_context(backend, requests: list[Request]) -> None:
    """Fail before generating if any prompt plus --max-tokens exceeds the model's context."""
    limit = backend.context_length()
    if limit is None:
        return
    checked = set()
    for r in requests:
        if (r.benchmark, r.item_id) in checked:  # all samples of an item share its prompt
            continue
        checked.add((r.benchmark, r.item_id))
        prompt = backend.prompt_tokens(r.messages)
        if prompt is not None and r.max_input_tokens is not None:
            prompt = min(prompt, r.max_input_tokens)
        if prompt is not None and prompt >= limit:
            raise HarnessError(
                f"{r.benchmark} item {r.item_id}: the prompt alone ({prompt} tokens) fills the model's "
                f"context of {limit} tokens; cut prompts with --max-input-tokens (below {limit}, leaving "
                "room for --max-tokens) or use a model with a longer context"
            )
        if prompt is not None and prompt + r.max_tokens > limit:
            raise HarnessError(
                f"{r.benchmark} item {r.item_id}: prompt ({prompt} tokens) + --max-tokens ({r.max_tokens}) "
                f"= {prompt + r.max_tokens} exceeds the model's context of {limit} tokens; "
                f"lower --max-tokens to at most {limit - prompt}"
            )


def generate_into(
    run: RunDir, backend, requests: list[Request], *, on_engine: OnEngine, on_records: OnRecords
) -> None:
    """Check the context, then append each batch of completions to the run as it arrives."""
    check_context(backend, requests)
    on_engine(backend.describe())
    for batch in backend.generate(requests):
        records = [completion_record(c) for c in batch]
        run.append(GENERATIONS, records)
        on_records(records)


def record_engine(run: RunDir, engine: dict[str, Any]) -> None:
    """Keep the engine that started the run in run.json; later sessions add theirs if it differs."""
    info = run.read_json(RUN)
    if "engine" not in info:
        run.write_json(RUN, {**info, "engine": engine})
    elif engine != info["engine"] and engine not in info.get("resumed_with", []):
        run.write_json(RUN, {**info, "resumed_with": [*info.get("resumed_with", []), engine]})
