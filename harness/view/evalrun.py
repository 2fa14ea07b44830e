"""An evaluation run folder as the view reads it: an index of every sample's verdict, and one sample's
records read from disk on demand (generations of 32K tokens stay on disk until opened)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.io.read import validate
from harness.core.store import GENERATIONS, RESULTS, RUN, SCORES, Results, RunInfo
from harness.scoring.rules import accepted_answers
from harness.view.files import inside, read_json, read_line, scan
from harness.view.prompts import PromptSource

# A sample's verdict flags (a bit mask; the page filters on them)
CORRECT, WRONG, TRUNCATED, UNEXTRACTED, SCORER_ERROR, UNSCORED = 1, 2, 4, 8, 16, 32
FLAGS = {
    "correct": CORRECT,
    "wrong": WRONG,
    "truncated": TRUNCATED,
    "unextracted": UNEXTRACTED,
    "error": SCORER_ERROR,
    "unscored": UNSCORED,
}
PREVIEW = 80  # characters of an answer or gold shown in lists


@dataclass
class Sample:
    item_id: str
    sample_idx: int
    generation: tuple[int, int] | None  # offset and length of its line in generations.jsonl
    score: tuple[int, int] | None
    flags: int
    extracted: str | None


def preview(value: Any, size: int = PREVIEW) -> str | None:
    """A short one-line text of an answer or gold (None stays None)."""
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= size else text[: size - 1] + "…"


def gold_text(gold: Any) -> str | None:
    """A gold as people read it: its accepted answers joined by " / " (a code benchmark's tests stay JSON)."""
    if gold is None or not isinstance(gold, str):
        return None if gold is None else json.dumps(gold)
    try:
        return " / ".join(accepted_answers(gold))
    except Exception:  # a gold the rules cannot parse: as recorded
        return gold


def scorer_error(details: Any) -> bool:
    """Whether a score's details record that scoring failed (not that the answer was wrong)."""
    return isinstance(details, dict) and ("error" in details or details.get("verdict") == "error")


def _verdict(score: dict[str, Any]) -> int:
    """A score record's flags: correct (value 1) or wrong, no answer extracted, scorer error."""
    value = score.get("value")
    flags = CORRECT if isinstance(value, int | float) and value >= 1.0 else WRONG
    if score.get("extracted") is None:
        flags |= UNEXTRACTED
    if scorer_error(score.get("details")):
        flags |= SCORER_ERROR
    return flags


def _key(record: dict[str, Any]) -> tuple[str, str, int] | None:
    try:
        return str(record["benchmark"]), str(record["item_id"]), int(record["sample_idx"])
    except (KeyError, TypeError, ValueError):
        return None


class EvalRun:
    """A run folder written by `harness eval` or `harness score` (run.json, generations, scores)."""

    kind = "eval"

    def __init__(self, path: Path):
        self.path = Path(path).resolve()
        info = read_json(self.path, RUN)
        if not isinstance(info, dict) or not isinstance(info.get("config"), dict):
            raise HarnessError(f"{path}: no harness run.json (is it a run folder?)")
        validate(RunInfo, info, str(self.path / RUN))
        self.info, self.config = info, info["config"]
        results = read_json(self.path, RESULTS)
        if results is not None:
            validate(Results, results, str(self.path / RESULTS))
        self.results = results if isinstance(results, dict) else {}
        self.generations, self.scores = inside(self.path, GENERATIONS), inside(self.path, SCORES)
        self.prompts = PromptSource(info)
        self.samples = self._index()
        self.benchmarks = list(self.samples)

    def _index(self) -> dict[str, list[Sample]]:
        """Each benchmark's samples in run.json's item order; of each record only where it lies and its
        verdict flags are kept (a 32K-token text is dropped as soon as its line is parsed)."""
        gens: dict[tuple[str, str, int], tuple[int, int, int]] = {}
        for offset, length, g in scan(self.generations):
            key = _key(g)
            if key is not None and key not in gens:  # the first record of a sample, as reports count
                gens[key] = (offset, length, TRUNCATED if g.get("truncated") is True else 0)
        scores: dict[tuple[str, str, int], tuple[int, int, int, str | None]] = {}
        for offset, length, score in scan(self.scores):
            key = _key(score)
            if key is not None:  # a rescore appends: the last one counts
                scores[key] = (offset, length, _verdict(score), preview(score.get("extracted")))
        order = {
            b: {i: k for k, i in enumerate(self.info.get("answers", {}).get(b, {}))} for b in self._named()
        }
        grouped: dict[str, list[Sample]] = {b: [] for b in order}
        for key in dict.fromkeys([*gens, *scores]):
            g, s = gens.get(key), scores.get(key)
            flags = (g[2] if g else 0) | (s[2] if s else UNSCORED)
            sample = Sample(key[1], key[2], g[:2] if g else None, s[:2] if s else None, flags, s and s[3])
            grouped.setdefault(key[0], []).append(sample)
        for b, samples in grouped.items():
            rank = order.get(b, {})
            samples.sort(key=lambda x: (rank.get(x.item_id, len(rank)), x.item_id, x.sample_idx))
        return grouped

    def _named(self) -> list[str]:
        names = self.config.get("benchmarks")
        return [str(b) for b in names] if isinstance(names, list) else []

    # --- what the page asks for ------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """The run's settings and each benchmark's metrics."""
        return {
            "kind": self.kind,
            "model": self.config.get("model"),
            "settings": self._run_settings(),
            "benchmarks": [
                {
                    "index": k,
                    "name": b,
                    "items": len({s.item_id for s in self.samples[b]}),
                    "samples": len(self.samples[b]),
                    "metrics": self.results.get(b) if isinstance(self.results.get(b), dict) else None,
                    "settings": self._benchmark_settings(b),
                }
                for k, b in enumerate(self.benchmarks)
            ],
        }

    def _run_settings(self) -> dict[str, Any]:
        c = self.config
        keys = ("model", "revision", "backend", "dtype", "seed", "limit", "preset", "judge", "scoring")
        settings = {k: c[k] for k in keys if c.get(k) is not None}
        if "generations_file" in self.info:
            settings["generations file"] = self.info["generations_file"]
        engine = self.info.get("engine")
        if isinstance(engine, dict) and engine.get("chat_template_sha256"):
            settings["chat template"] = str(engine["chat_template_sha256"])[:12]
        return settings

    def _benchmark_settings(self, benchmark: str) -> dict[str, Any]:
        c, info = self.config, self.info
        dataset = info.get("datasets", {}).get(benchmark)
        if isinstance(dataset, dict):
            dataset = {k: v for k, v in dataset.items() if k != "files"}
        settings = {
            "sampling": c.get("sampling", {}).get(benchmark),
            "scorer": info.get("scorer_versions", {}).get(benchmark) or c.get("scorers", {}).get(benchmark),
            "dataset": dataset,
            "prompt": info.get("prompts", {}).get(benchmark),
            "max input tokens": c.get("max_input_tokens", {}).get(benchmark),
        }
        return {k: v for k, v in settings.items() if v is not None}

    def rows(self, index: int) -> dict[str, Any]:
        """One benchmark's items in order, each with its samples' verdict flags (no texts)."""
        benchmark = self.benchmark(index)
        golds = self.info.get("answers", {}).get(benchmark, {})
        groups = self.info.get("groups", {}).get(benchmark, {})
        groups = groups if isinstance(groups, dict) else {}
        problems = self.prompts.problems(benchmark)
        items: dict[str, dict[str, Any]] = {}
        for k, s in enumerate(self.samples[benchmark]):
            item = items.get(s.item_id)
            if item is None:
                item = items[s.item_id] = {
                    "id": s.item_id,
                    "gold": preview(gold_text(golds.get(s.item_id))),
                    "groups": {
                        f: str(v.get(s.item_id, "")) for f, v in groups.items() if isinstance(v, dict)
                    },
                    "problem": preview(problems.get(s.item_id), 300),
                    "samples": [],
                }
            item["samples"].append([k, s.sample_idx, s.flags, s.extracted])
        return {"benchmark": benchmark, "groups": list(groups), "flags": FLAGS, "items": list(items.values())}

    def sample(self, index: int, k: int) -> dict[str, Any]:
        """Everything recorded of one sample, with the prompt as the model saw it where it can be rebuilt."""
        benchmark = self.benchmark(index)
        if not 0 <= k < len(self.samples[benchmark]):
            raise KeyError(k)
        s = self.samples[benchmark][k]
        generation = read_line(self.generations, *s.generation) if s.generation and self.generations else None
        score = read_line(self.scores, *s.score) if s.score and self.scores else None
        messages, prompt_note = self.prompts.messages(benchmark, s.item_id)
        return {
            "benchmark": benchmark,
            "item_id": s.item_id,
            "sample_idx": s.sample_idx,
            "count": len(self.samples[benchmark]),  # samples of this benchmark: the page's last "next"
            "flags": s.flags,
            "gold": gold_text(self.info.get("answers", {}).get(benchmark, {}).get(s.item_id)),
            "generation": generation,
            "score": score,
            "messages": messages,
            "prompt_note": prompt_note,
        }

    def benchmark(self, index: int) -> str:
        if not 0 <= index < len(self.benchmarks):
            raise KeyError(index)
        return self.benchmarks[index]
