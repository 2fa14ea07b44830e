"""A row's group of solver samples: what GRPO and SPAE sample before they score."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.core.thinking import prompt_opens_think
from trainers.engine import Engine
from trainers.rollout import Rollout


def solver_groups(
    rows: Sequence[dict[str, Any]], engine: Engine, n: int, prefix: str = ""
) -> list[list[Rollout]]:
    """`n` sampled completions of each row's prompt, one group a row (keyed `{prefix}{index}:{id}`),
    unscored; each one's meta holds the row's id and answer, its text, and whether the prompt opened a
    think block (so the reward scores it as `harness eval` does)."""
    prompts = [engine.encode(row["prompt"]) for row in rows]
    generations = engine.generate([p for p in prompts for _ in range(n)])
    groups = []
    for i, (row, prompt) in enumerate(zip(rows, prompts, strict=True)):
        meta = {
            "id": row.get("id"),
            "answer": row["answer"],
            "think_opened": prompt_opens_think(engine.tokenizer.decode(prompt)),
        }
        groups.append(
            [
                Rollout(
                    prompt_ids=prompt,
                    completion_ids=gen.ids,
                    role="solver",
                    group=f"{prefix}{i}:{row.get('id', '')}",
                    task=str(row.get("task", "default")),
                    finish_reason=gen.finish_reason,
                    sampling_logprobs=gen.logprobs,
                    meta={**meta, "text": engine.decode(gen.ids)},
                )
                for gen in generations[i * n : (i + 1) * n]
            ]
        )
    return groups
