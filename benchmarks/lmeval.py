"""`--benchmarks lm-eval:TASK`: an lm-evaluation-harness `generate_until` task as a benchmark.

Its documents, its prompt (description, few-shot examples and question, as lm-eval renders them,
sent as one user message in the model's chat template), its generation settings (`until` as stop
strings, `max_gen_toks`, temperature, `repeats` as n) and its own filters and `process_results` as
the scorer. Our sampling flags, seeds, resume and statistics apply as for any benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.base import Benchmark, Loaded, content_hash
from harness.core.progress import console
from harness.core.types import Item, Sampling
from harness.scoring import lmeval

SUPPORTED_KWARGS = {"until", "max_gen_toks", "temperature", "do_sample", "top_p", "top_k"}


@dataclass(frozen=True)
class LMEvalBenchmark(Benchmark):
    include_path: str | None = None  # a folder of local task YAML files
    task: Any = field(default=None, compare=False, repr=False)  # the lm-eval task, once loaded

    @property
    def task_name(self) -> str:
        return self.name.removeprefix(lmeval.PREFIX)

    def load(self, data_dir: Path | None = None) -> Loaded:
        """The task's evaluation documents (lm-eval loads them, from its cache when offline)."""
        task = self.task or lmeval.load_task(self.task_name, self.include_path)
        items = [
            Item(id=str(doc_id), problem=lmeval.context(task, doc), answer=lmeval.gold(task, doc_id, doc))
            for doc_id, doc in lmeval.docs_by_id(task).items()
        ]
        config = task.config
        source = {
            "kind": "lm-eval",
            "task": self.task_name,
            "task_version": task.VERSION,
            "lm_eval": lmeval.lm_eval_version(),
            "dataset_path": config.dataset_path,
            "dataset_name": config.dataset_name,
            "split": config.test_split or config.validation_split,
            "num_fewshot": config.num_fewshot or 0,
            **({"include_path": self.include_path} if self.include_path else {}),
            "content_hash": content_hash(items),
            "n_items": len(items),
        }
        return Loaded(items=items, source=source)


def lm_eval_benchmark(spec: str, include_path: str | Path | None = None) -> LMEvalBenchmark:
    """The benchmark for "lm-eval:TASK"; its sampling is the task's generation_kwargs."""
    name = spec.removeprefix(lmeval.PREFIX)
    include = str(Path(include_path).expanduser().resolve()) if include_path else None
    task = lmeval.load_task(name, include)
    return LMEvalBenchmark(
        name=lmeval.PREFIX + name,
        hub=None,
        prompt="{problem}",
        scorer=lmeval.PREFIX + name,
        sampling=task_sampling(name, task.config.generation_kwargs or {}, task.config.repeats or 1),
        description=f"lm-evaluation-harness task {name}",
        include_path=include,
        task=task,
    )


def task_sampling(name: str, kwargs: dict, repeats: int) -> Sampling:
    """lm-eval's generation_kwargs as our sampling (greedy unless do_sample; 256 tokens by default)."""
    from lm_eval.defaults import DEFAULT_MAX_GEN_TOKS

    ignored = sorted(set(kwargs) - SUPPORTED_KWARGS)
    if ignored:
        console.print(
            f"[yellow]lm-eval:{name}: generation settings not applied: {', '.join(ignored)}[/yellow]"
        )
    until = kwargs.get("until") or []
    greedy = kwargs.get("do_sample") is False
    return Sampling(
        n=repeats,
        temperature=0.0 if greedy else float(kwargs.get("temperature", 0.0)),
        top_p=float(kwargs.get("top_p", 1.0)),
        max_tokens=int(kwargs.get("max_gen_toks", DEFAULT_MAX_GEN_TOKS)),
        top_k=int(kwargs.get("top_k", -1)),
        stop=tuple([until] if isinstance(until, str) else until),
    )
