"""`harness export RUN_DIR --format lm-eval`: a scored run as lm-evaluation-harness writes its own,
`results_<date>.json` and one `samples_<task>_<date>.jsonl` per benchmark, so lm-eval's tooling
(its table printer, loggers, the Open LLM Leaderboard readers) reads our runs.

lm-eval tasks (`lm-eval:TASK`) are written under their own task name with every filter's metrics,
aggregated by the task's own aggregation functions and standard errors. Other benchmarks are written
with one filter, `none`, and the metric `score` (a document's mean over its samples; its aggregate is
avg@n), plus pass@k and maj@n from results.json. With n samples, a document's metrics are the mean of
its samples' (lm-eval would score its repeats together); `resps` holds all n answers: the text after
any think block, which is what was scored ("" when the block never closed).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from statistics import mean, stdev
from typing import Any

from harness import HarnessError
from harness.core.io.write import OutDir, safe_name
from harness.core.store import (
    GENERATIONS,
    REPAIR_JSON,
    RESULTS,
    RUN,
    SCORES,
    RunDir,
    describes,
    record_key,
)
from harness.scoring import trusted_include_path
from harness.scoring.lmeval import PREFIX, LMEvalScorer, context, lm_eval_version, plain

MARK = "harness-export.txt"  # in a folder `harness export` made, which a later export may write into
BOOTSTRAP_ITERS = 100_000  # lm-eval's default; 100 for its corpus-level metrics
CORPUS_METRICS = ("bleu", "chrf", "chrf++", "ter")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def doc_hash(doc: dict) -> str:
    return sha256(json.dumps(doc, indent=2, default=str, ensure_ascii=False))


def export_lm_eval(run_dir: Path, out: Path | None = None, include_path: Path | None = None) -> list[Path]:
    """Write the run's lm-eval files into `out` (default RUN_DIR/lm-eval); returns their paths.
    `include_path`: the lm-eval task folder run.json names, where the caller trusts it."""
    run = RunDir(run_dir)
    info = run.read_json(RUN)
    if "generations_file" in info:
        raise HarnessError(
            f"{run_dir} was scored from {info['generations_file']}: lm-eval's files need the model and "
            "sampling that made the generations, which such a run does not know"
        )
    if not run.file(RESULTS).is_file():
        raise HarnessError(f"{run_dir} is not scored yet: run `harness score {run_dir}` first")
    ours = run.read_json(RESULTS)
    config = info["config"]
    describes(info, config["benchmarks"], run.path)
    samples = _samples_by_item(run, info)
    missing = [b for b in config["benchmarks"] if b not in ours]
    if missing:
        raise HarnessError(f"{run.path}: results.json has no {', '.join(missing)}; {REPAIR_JSON}")
    tasks = {}
    for benchmark in config["benchmarks"]:
        scorer = config["scorers"][benchmark]
        if scorer.startswith(PREFIX):
            include = trusted_include_path(config, include_path)
            lm_eval = LMEvalScorer(scorer.removeprefix(PREFIX), include)
            tasks[benchmark] = _lm_eval_task(lm_eval, info["answers"][benchmark], samples[benchmark])
        else:
            tasks[benchmark] = _native_task(benchmark, info, ours[benchmark], samples[benchmark])
    date = datetime.now().isoformat().replace(":", "-")
    with _out_folder(run, out) as folder:
        paths = []
        for task in tasks.values():
            text = "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in task["samples"])
            paths.append(folder.write(f"samples_{safe_name(task['name'])}_{date}.jsonl", text))
        results = _results_file(info, tasks)
        path = folder.write(f"results_{date}.json", json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    return [path, *paths]


def _out_folder(run: RunDir, out: Path | None) -> OutDir:
    """The folder the files go to: `out`, or the run folder's `lm-eval` (never through a link); a folder
    that exists must be one an export made (its MARK) or empty."""
    if out is not None:
        return OutDir.open(out, mark=MARK)
    with OutDir.open(run.path) as folder:
        inner = folder.folder("lm-eval")
    inner.claim(MARK)
    return inner


def _samples_by_item(run: RunDir, info: dict) -> dict[str, dict[str, list[tuple[dict, dict]]]]:
    """benchmark -> item id (in the benchmark's order) -> its (generation, score) pairs by sample."""
    scores = {record_key(s): s for s in run.records(SCORES)}
    generations = run.records(GENERATIONS)
    describes(info, {r["benchmark"] for r in [*scores.values(), *generations]}, run.path)
    by_item: dict[str, dict[str, list]] = {b: {i: [] for i in info["answers"][b]} for b in info["answers"]}
    for g in sorted(generations, key=lambda g: g["sample_idx"]):
        score = scores.get(record_key(g))
        if score is None:
            raise HarnessError(
                f"{g['benchmark']} item {g['item_id']} sample {g['sample_idx']} has no score: "
                f"run `harness score {run.path}` first"
            )
        if g["item_id"] not in by_item[g["benchmark"]]:
            raise HarnessError(
                f"{run.path}: {g['benchmark']} item {g['item_id']!r} is not in run.json; the run's files are "
                "from different runs"
            )
        by_item[g["benchmark"]][g["item_id"]].append((g, score))
    return by_item


def _combine(values: list[Any]) -> Any:
    """A document's metric over its samples: the value itself, or the mean of several numbers."""
    if len(values) == 1:
        return values[0]
    return mean(values) if all(isinstance(v, int | float) for v in values) else values


def _lm_eval_task(scorer: LMEvalScorer, golds: dict[str, str], items: dict[str, list]) -> dict[str, Any]:
    """Every filter's line per document and the task's own aggregates, as lm-eval's evaluator writes."""
    from lm_eval.api.metrics import mean as lm_mean
    from lm_eval.api.metrics import stderr_for_metric

    task, name = scorer.task, scorer.task_name
    lines, raw = [], defaultdict(list)
    filters = [ensemble.name for ensemble in task._filters]
    for item_id, pairs in items.items():
        if not pairs:
            continue
        doc_id, doc = scorer.doc(golds[item_id])
        target, ctx = task.doc_to_target(doc), context(task, doc)
        for key in filters:
            per_sample = [s["details"]["metrics"][key] for _, s in pairs]
            metrics = {m: _combine([sample[m] for sample in per_sample]) for m in per_sample[0]}
            lines.append(
                {
                    "doc_id": doc_id,
                    "doc": plain(doc),
                    "target": str(target),
                    "arguments": {"gen_args_0": {"arg_0": ctx, "arg_1": task.config.generation_kwargs}},
                    "resps": [[g["answer"] or "" for g, _ in pairs]],
                    "filtered_resps": [s["details"]["filtered"][key] for _, s in pairs],
                    "filter": key,
                    "metrics": list(metrics),
                    "doc_hash": doc_hash(doc),
                    "prompt_hash": sha256(ctx),
                    "target_hash": sha256(str(target)),
                    **metrics,
                }
            )
            for metric, value in metrics.items():
                raw[(metric, key)].append(value)
    aggregates: dict[str, Any] = {}
    for (metric, key), values in raw.items():
        aggregate = task.aggregation().get(metric, lm_mean)
        aggregates[f"{metric},{key}"] = aggregate(values)
        iters = 100 if metric in CORPUS_METRICS else BOOTSTRAP_ITERS
        stderr = stderr_for_metric(metric=aggregate, bootstrap_iters=iters)
        aggregates[f"{metric}_stderr,{key}"] = stderr(values) if stderr and len(values) > 1 else "N/A"
    config = {**task.dump_config(), "num_fewshot": task.config.num_fewshot or 0}  # lm-eval's default
    n_docs = sum(1 for pairs in items.values() if pairs)
    return {
        "name": name,
        "samples": lines,
        "result": {"name": name, "alias": config.get("task_alias", name), "sample_len": n_docs, **aggregates},
        "config": plain(config),
        "version": task.VERSION,
        "n_shot": config["num_fewshot"],
        "higher_is_better": task.higher_is_better(),
        "n_samples": {"original": len(task.eval_docs), "effective": n_docs},
    }


def _native_task(benchmark: str, info: dict, ours: dict, items: dict[str, list]) -> dict[str, Any]:
    """A benchmark of ours with one filter (`none`) and the metric `score`."""
    golds, sampling = info["answers"][benchmark], info["config"]["sampling"][benchmark]
    lines, item_means = [], []
    for doc_id, (item_id, pairs) in enumerate(items.items()):
        if not pairs:
            continue
        doc, target = {"id": item_id, "answer": golds[item_id]}, golds[item_id]
        value = _combine([s["value"] for _, s in pairs])
        item_means.append(mean([s["value"] for _, s in pairs]))
        lines.append(
            {
                "doc_id": doc_id,
                "doc": doc,
                "target": target,
                "arguments": {"gen_args_0": {"arg_0": None, "arg_1": sampling}},
                "resps": [[g["answer"] or "" for g, _ in pairs]],
                "filtered_resps": [s["extracted"] for _, s in pairs],
                "filter": "none",
                "metrics": ["score"],
                "doc_hash": doc_hash(doc),
                "prompt_hash": pairs[0][0]["prompt_hash"],  # of the chat-formatted prompt
                "target_hash": sha256(target),
                "score": value,
            }
        )
    n = len(item_means)
    metrics = {k: v for k, v in ours.items() if re.fullmatch(r"(pass|maj)@\d+", k)}
    result = {
        "name": benchmark,
        "alias": benchmark,
        "sample_len": n,
        "score,none": mean(item_means),
        "score_stderr,none": stdev(item_means) / n**0.5 if n > 1 else "N/A",
        **{f"{k},none": v for k, v in metrics.items()},
    }
    return {
        "name": benchmark,
        "samples": lines,
        "result": result,
        "config": {
            "task": benchmark,
            "output_type": "generate_until",
            "generation_kwargs": sampling,
            "metadata": {"harness_scorer": info.get("scorer_versions", {}).get(benchmark)},
        },
        "version": info.get("scorer_versions", {}).get(benchmark),
        "n_shot": 0,
        "higher_is_better": dict.fromkeys(["score", *metrics], True),
        "n_samples": {"original": info["datasets"][benchmark].get("n_items", len(golds)), "effective": n},
    }


def _results_file(info: dict, tasks: dict[str, dict]) -> dict[str, Any]:
    """lm-eval's aggregated results, with our run's identity in `config`."""
    config = info["config"]
    names = [t["name"] for t in tasks.values()]
    model = config["model"]
    return {
        "results": {t["name"]: t["result"] for t in tasks.values()},
        "group_subtasks": dict.fromkeys(names, []),
        "configs": {t["name"]: t["config"] for t in tasks.values()},
        "versions": {t["name"]: t["version"] for t in tasks.values()},
        "n-shot": {t["name"]: t["n_shot"] for t in tasks.values()},
        "higher_is_better": {t["name"]: t["higher_is_better"] for t in tasks.values()},
        "n-samples": {t["name"]: t["n_samples"] for t in tasks.values()},
        "config": {
            "model": config["backend"],
            "model_args": f"pretrained={model}"
            + (f",revision={config['revision']}" if config["revision"] else ""),
            "limit": config["limit"],
            "random_seed": config["seed"],
            "gen_kwargs": None,  # each task's own settings are in configs
            "bootstrap_iters": BOOTSTRAP_ITERS,
            "harness": {"config_hash": info["config_hash"], "sampling": config["sampling"]},
        },
        "model_name": model,
        "model_name_sanitized": re.sub(r"[\"<>:/|\\?*\[\]]+", "__", model),
        "date": time.time(),
        "task_hashes": {
            t["name"]: sha256(
                "".join(s["doc_hash"] + s["prompt_hash"] + s["target_hash"] for s in t["samples"])
            )
            for t in tasks.values()
        },
        "lm_eval_version": _installed_lm_eval(),
    }


def _installed_lm_eval() -> str | None:
    try:
        return lm_eval_version()
    except HarnessError:
        return None
