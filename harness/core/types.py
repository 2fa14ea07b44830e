"""Plain data passed between benchmarks, backends, scorers and the store."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Item:
    """One benchmark problem. `id` is a string everywhere."""

    id: str
    problem: str
    answer: str
    meta: dict[str, Any] = field(default_factory=dict)


def messages_for(item: Item, template: str, system_prompt: str | None) -> tuple[dict[str, str], ...]:
    """The chat messages prompting for `item`: any system prompt, then the template, `{problem}` filled."""
    user = {"role": "user", "content": template.replace("{problem}", item.problem)}
    return ({"role": "system", "content": system_prompt}, user) if system_prompt else (user,)


@dataclass(frozen=True)
class Sampling:
    """Sampling settings shared by all samples of a run."""

    n: int
    temperature: float
    top_p: float
    max_tokens: int
    top_k: int = -1  # -1: no top-k cut
    stop: tuple[str, ...] = ()  # the text ends before the first of these strings


@dataclass(frozen=True)
class Request:
    """One sample to generate: an item's prompt with its own derived seed."""

    benchmark: str
    item_id: str
    sample_idx: int
    messages: tuple[dict[str, str], ...]
    seed: int
    temperature: float
    top_p: float
    max_tokens: int
    max_input_tokens: int | None = None  # longer prompts are cut in the middle, in tokens
    top_k: int = -1
    stop: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.benchmark, self.item_id, self.sample_idx)


@dataclass(frozen=True)
class Completion:
    """What a backend returns for one request."""

    request: Request
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None  # "stop" or "length"
    prompt_hash: str
    think_opened: bool = False  # the rendered prompt ends inside an open <think> block
    prompt_cut_from: int | None = None  # the prompt's token count before a middle truncation


@dataclass(frozen=True)
class Score:
    """A scorer's verdict on one answer."""

    value: float
    extracted: str | None
    canonical: str | None = None  # answer key used for majority voting
    details: dict[str, Any] = field(default_factory=dict)
