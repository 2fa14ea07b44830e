"""Demonstrations never come from an evaluation set: each is checked against the items of every named
benchmark, loaded with the harness's own loaders, by shared word n-grams.

A demonstration is contaminated when its source material (`Demonstration.sources`: the documents,
programs, questions and answers it was built from, never the method's fixed prompt text, which the
evaluation prompts share) holds an n-gram of lower-cased word tokens that some evaluation item's problem
also holds (a text shorter than n counts as one n-gram: an exact copy of a short problem is caught, a
short answer such as "12" alone is no evidence). n = 13 is the size GPT-3's decontamination used;
shorter shared phrases (a company's name, `for i in range len`) are not evidence of a copy.
Contaminated demonstrations are dropped and counted per benchmark, as the corpus builder drops
contaminated documents.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness import HarnessError

NGRAM = 13
_WORD = re.compile(r"\w+")


def ngrams(text: str, n: int = NGRAM) -> set[tuple[str, ...]]:
    """The n-grams of `text`'s lower-cased word tokens (a text shorter than n gives one, itself)."""
    words = _WORD.findall(text.lower())
    if not words:
        return set()
    if len(words) < n:
        return {tuple(words)}
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


@dataclass
class Report:
    """What the check read and what it dropped."""

    checked: list[dict] = field(default_factory=list)  # per benchmark: name, items
    dropped: dict[str, int] = field(default_factory=dict)  # benchmark -> demonstrations dropped
    examples: list[dict] = field(default_factory=list)  # a few dropped demonstrations' shared n-grams

    def record(self) -> dict:
        return {"ngram": NGRAM, "checked": self.checked, "dropped": self.dropped, "examples": self.examples}


def evaluation_ngrams(benchmarks: Sequence[str], data_dir: str | None) -> dict[str, set[tuple[str, ...]]]:
    """Per benchmark, the n-grams of its items' problems. A benchmark that cannot be loaded
    (offline without its files) is an error naming it: an unchecked set must not pass silently."""
    from benchmarks import get_benchmark

    out = {}
    for spec in benchmarks:
        try:
            loaded = get_benchmark(spec).load(Path(data_dir) if data_dir else None)
        except (HarnessError, OSError, ValueError) as e:
            raise HarnessError(
                f"cold start: cannot load evaluation set {spec!r} to check the demonstrations against it "
                f"({e}); give --data-dir, or leave it out of cold_start.decontaminate"
            ) from None
        out[spec] = set().union(*(ngrams(item.problem) for item in loaded.items))
    return out


def decontaminate(demos: Iterable, against: dict[str, set[tuple[str, ...]]], keep_examples: int = 3):
    """The demonstrations that share no n-gram of their sources with any evaluation set, and the report."""
    report = Report(
        checked=[{"name": name, "ngrams": len(grams)} for name, grams in against.items()],
        dropped=dict.fromkeys(against, 0),
    )
    kept = []
    for demo in demos:
        mine = set().union(*(ngrams(s) for s in demo.sources)) if demo.sources else set()
        hit = next(((name, mine & grams) for name, grams in against.items() if mine & grams), None)
        if hit is None:
            kept.append(demo)
            continue
        report.dropped[hit[0]] += 1
        if len(report.examples) < keep_examples:
            report.examples.append({"benchmark": hit[0], "role": demo.role, "shared": " ".join(min(hit[1]))})
    return kept, report
