"""lm-evaluation-harness tasks: load a `generate_until` task, and score answers with the task's own
filters and `process_results`, exactly as lm-eval's evaluator applies them to one response.

A gold is `{"doc_id": i, "target": "..."}`; the scorer rebuilds the task, finds the document by its
id, and refuses to score when the task's target for it changed since the run was made.
"""

from __future__ import annotations

import difflib
import json
import numbers
from collections.abc import Iterator, Sequence
from functools import cached_property
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from harness import HarnessError
from harness.core.types import Score

PREFIX = "lm-eval:"


def lm_eval_version() -> str:
    try:
        return version("lm_eval")
    except PackageNotFoundError:
        raise HarnessError(
            "lm-eval: tasks need lm-evaluation-harness; install it with pip install 'harness[lm-eval]'"
        ) from None


def load_task(name: str, include_path: str | None = None):
    """The lm-eval task `name` (from its catalogue, or YAML files under `include_path`)."""
    lm_eval_version()
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks import TaskManager

    manager = None
    if include_path:  # a local task needs no index of lm-eval's 14,000 catalogue entries (7 s)
        manager = TaskManager(include_path=include_path, include_defaults=False)
    if manager is None or name not in manager.all_tasks:
        manager = TaskManager(include_path=include_path)
    if name not in manager.all_tasks:
        close = difflib.get_close_matches(name, manager.all_tasks, n=5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise HarnessError(f"lm-eval has no task {name!r}{hint} (local task folders: --lm-eval-include-path)")
    if name not in manager.all_subtasks:
        raise HarnessError(f"lm-eval:{name} is a group or tag; run its tasks one by one (lm-eval:TASK,...)")
    try:
        task = manager.load(name)["tasks"][name]
    except Exception as e:  # a dataset that cannot be loaded (offline, gated) or a broken YAML
        raise HarnessError(f"lm-eval could not load task {name!r}: {type(e).__name__}: {e}") from None
    if not isinstance(task, ConfigurableTask) or task.OUTPUT_TYPE != "generate_until":
        kind = getattr(task, "OUTPUT_TYPE", type(task).__name__)
        raise HarnessError(
            f"lm-eval:{name} is a {kind} task; the bridge runs generate_until tasks (it samples text, "
            f"it does not score given continuations)"
        )
    return task


def docs_by_id(task) -> dict[int, dict]:
    return dict(task.doc_iterator())


def context(task, doc: dict) -> str:
    """The prompt lm-eval builds for `doc`: description, few-shot examples and the question."""
    if task.doc_to_prefix(doc):
        raise HarnessError(
            f"lm-eval:{task.config.task} starts the answer with a prefix (gen_prefix), which chat "
            f"requests cannot carry"
        )
    shots = task.config.num_fewshot or 0
    ctx = task.fewshot_context(doc, num_fewshot=shots)
    if not isinstance(ctx, str):
        raise HarnessError(f"lm-eval:{task.config.task} has several inputs per document; not supported")
    return ctx


def gold(task, doc_id: int, doc: dict) -> str:
    return json.dumps({"doc_id": doc_id, "target": str(task.doc_to_target(doc))}, ensure_ascii=False)


def plain(value: Any) -> Any:
    """A metric value as JSON can store it (numpy numbers, tuples and sets included)."""
    return json.loads(json.dumps(value, default=_plain_default))


def _plain_default(value: Any) -> Any:
    if isinstance(value, numbers.Number):
        return value.item() if hasattr(value, "item") else float(value)
    if isinstance(value, set):
        return sorted(value)
    return str(value)


class LMEvalScorer:
    """Scores with a task's filter ensembles and `process_results`.

    The value is the first filter's first numeric metric; every filter's metrics and filtered
    response are kept in the details (the export writes them back in lm-eval's files)."""

    def __init__(self, task_name: str, include_path: str | None = None):
        self.task_name = task_name
        self.include_path = include_path
        self.name = PREFIX + task_name

    @property
    def version(self) -> str:
        return f"lm-eval-{lm_eval_version()}-{self.task_name}-v{self.task.VERSION}"

    @cached_property
    def task(self):
        return load_task(self.task_name, self.include_path)

    @cached_property
    def docs(self) -> dict[int, dict]:
        return docs_by_id(self.task)

    def doc(self, gold_text: str) -> tuple[int, dict]:
        """The document a gold names, checked against the target recorded with the run."""
        recorded = json.loads(gold_text)
        doc_id = recorded["doc_id"]
        if doc_id not in self.docs:
            raise HarnessError(f"lm-eval:{self.task_name} has no document {doc_id} any more")
        doc = self.docs[doc_id]
        if str(self.task.doc_to_target(doc)) != recorded["target"]:
            raise HarnessError(
                f"lm-eval:{self.task_name} document {doc_id}: its target changed since the run was made "
                f"({recorded['target']!r} -> {str(self.task.doc_to_target(doc))!r}); rerun the evaluation"
            )
        return doc_id, doc

    def filtered(self, responses: Sequence[str], golds: Sequence[str]) -> list[dict[str, Any]]:
        """Each response through every filter ensemble of the task: {filter name: filtered response}."""
        from lm_eval.api.instance import Instance

        instances = []
        for response, gold_text in zip(responses, golds, strict=True):
            doc_id, doc = self.doc(gold_text)
            instance = Instance(
                "generate_until", doc, ("", {}), 0, metadata=(self.task_name, doc_id, 1), resps=[response]
            )
            instances.append(instance)
        for ensemble in self.task._filters:
            ensemble.apply(instances)
        return [instance.filtered_resps for instance in instances]

    def score(
        self,
        answers: Sequence[str | None],
        golds: Sequence[str],
        previous: Sequence[dict | None] | None = None,
    ) -> Iterator[tuple[int, Score]]:
        """A missing answer (an unclosed think block) is scored as the empty response."""
        filtered = self.filtered([a or "" for a in answers], golds)
        for i, (answer, gold_text, by_filter) in enumerate(zip(answers, golds, filtered, strict=True)):
            _, doc = self.doc(gold_text)
            metrics = {key: plain(self.task.process_results(doc, [resp])) for key, resp in by_filter.items()}
            first_filter = next(iter(metrics))
            value = next((v for v in metrics[first_filter].values() if isinstance(v, int | float)), None)
            if value is None:
                raise HarnessError(
                    f"lm-eval:{self.task_name}: no per-response number among {list(metrics[first_filter])}; "
                    f"its metrics are corpus-level (use `harness export --format lm-eval` for them)"
                )
            extracted = None if answer is None else str(plain(by_filter[first_filter]))
            details: dict[str, Any] = {"metrics": metrics, "filtered": plain(by_filter)}
            if answer is None:
                details["reason"] = "no answer (unclosed think block); scored as an empty response"
            yield i, Score(float(value), extracted, extracted, details)

    def close(self) -> None:
        pass
