"""The score and aggregate stages, shared by `eval`, `score RUN_DIR` and `score --generations`."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from harness import HarnessError
from harness.metrics import Outcome, aggregate
from harness.progress import console, progress_bar
from harness.scoring import JudgeConfig, get_scorer, takes_previous
from harness.store import GENERATIONS, RESULTS, RUN, SCORES, RunDir, record_key
from harness.thinking import split_thinking
from harness.types import Completion

SCORE_FLUSH_EVERY = 64


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


def make_scorers(info: dict, timeout=None, workers=None, judge_base_url: str | None = None) -> dict:
    """Each benchmark's scorer as the run's config declares it (judge settings included)."""
    config = info["config"]
    judge = None
    if "judge" in config:
        settings = {k: v for k, v in config["judge"].items() if k != "prompt_sha256"}
        judge = JudgeConfig(**settings, base_url=judge_base_url or info.get("judge_base_url"))
        if judge.prompt_sha != config["judge"]["prompt_sha256"]:
            raise HarnessError(f"the judge prompt {judge.prompt!r} changed since this run was made")
    options = {"timeout": timeout, "workers": workers, "judge": judge, **config.get("scoring", {})}
    return {b: get_scorer(name, **options) for b, name in config["scorers"].items()}


def score_run(
    run: RunDir,
    *,
    force: bool = False,
    timeout: float | None = None,
    workers: int | None = None,
    judge_base_url: str | None = None,
) -> dict:
    """Score what is not scored yet (everything with `force`), then write canonical files and results.

    Scorers that reuse earlier work (judge verdicts) get each sample's previous score details."""
    info = run.read_json(RUN)
    scorers = make_scorers(info, timeout, workers, judge_base_url)
    versions = {b: s.version for b, s in scorers.items()}
    generations = _unique(run.records(GENERATIONS))
    earlier = {record_key(r): r["details"] for r in run.records(SCORES)}
    done = (
        set()
        if force
        else {record_key(r) for r in run.records(SCORES) if r["scorer"] == versions[r["benchmark"]]}
    )
    todo: dict[str, list[dict]] = defaultdict(list)
    for g in generations:
        if record_key(g) not in done:
            todo[g["benchmark"]].append(g)
    total = sum(map(len, todo.values()))
    if total:
        with progress_bar() as bar:
            task = bar.add_task("scoring", total=total)
            for benchmark, gens in todo.items():
                golds = info["answers"][benchmark]
                scorer = scorers[benchmark]
                args = [[g["answer"] for g in gens], [golds[g["item_id"]] for g in gens]]
                if takes_previous(scorer):
                    args.append([earlier.get(record_key(g)) for g in gens])
                buffer = []
                try:
                    for i, score in scorer.score(*args):
                        g = gens[i]
                        buffer.append(
                            {
                                "benchmark": benchmark,
                                "item_id": g["item_id"],
                                "sample_idx": g["sample_idx"],
                                "value": score.value,
                                "extracted": score.extracted,
                                "canonical": score.canonical,
                                "scorer": versions[benchmark],
                                "details": score.details,
                            }
                        )
                        bar.advance(task)
                        if len(buffer) >= SCORE_FLUSH_EVERY:
                            run.append(SCORES, buffer)
                            buffer = []
                finally:  # a scorer that fails half-way (a dead judge) keeps what it finished
                    run.append(SCORES, buffer)
    return finalize(run, info, versions)


def finalize(run: RunDir, info: dict, versions: dict[str, str]) -> dict:
    """Rewrite generations and scores in canonical order, aggregate, and write results.json."""
    order = {
        (b, item_id, 0): (bi, ii)
        for bi, b in enumerate(info["config"]["benchmarks"])
        for ii, item_id in enumerate(info["answers"][b])
    }

    def canonical(record: dict) -> tuple:
        return (*order[(record["benchmark"], record["item_id"], 0)], record["sample_idx"])

    generations = sorted(_unique(run.records(GENERATIONS)), key=canonical)
    latest = {record_key(s): s for s in run.records(SCORES) if s["scorer"] == versions[s["benchmark"]]}
    scores = [latest[record_key(g)] for g in generations if record_key(g) in latest]
    run.rewrite(GENERATIONS, generations)
    run.rewrite(SCORES, scores)

    outcomes: dict[str, list[Outcome]] = {b: [] for b in info["config"]["benchmarks"]}
    kept = zip(generations, scores, strict=True)
    if info["config"].get("upstream_compat"):
        kept = upstream_samples(list(kept))
    for g, s in kept:
        outcomes[g["benchmark"]].append(
            Outcome(
                item_id=g["item_id"],
                sample_idx=g["sample_idx"],
                value=s["value"],
                answer_key=s["canonical"] if s["extracted"] is not None else None,
                truncated=g["truncated"],
                completion_tokens=g["completion_tokens"],
            )
        )
    pass_k = info["config"].get("pass_k", {})
    results = {b: aggregate(o, pass_k.get(b, ())) for b, o in outcomes.items()}
    for b, fields in info.get("groups", {}).items():
        results[b]["breakdown"] = {}
        for field, values in fields.items():
            by_group: dict[str, list[Outcome]] = defaultdict(list)
            for o in outcomes[b]:
                by_group[values[o.item_id]].append(o)
            results[b]["breakdown"][field] = {
                name: aggregate(o, pass_k.get(b, ())) for name, o in sorted(by_group.items())
            }
    run.write_json(RESULTS, results)
    if info.get("scorer_versions") != versions:
        run.write_json(RUN, {**info, "scorer_versions": versions})
    return results


def upstream_samples(pairs: list[tuple[dict, dict]]) -> list[tuple[dict, dict]]:
    """CRUXEval's upstream rule: an item's invalid answers leave n, unless none of its answers is
    right (then all stay, as failures). It inflates pass@k; used only with upstream_compat."""
    solved = {record_key(g)[:2] for g, s in pairs if s["value"] >= 1.0}
    return [(g, s) for g, s in pairs if not (s["details"].get("invalid") and record_key(g)[:2] in solved)]


def _unique(records: list[dict]) -> list[dict]:
    """First record per (benchmark, item_id, sample_idx)."""
    seen: dict[tuple, dict] = {}
    for r in records:
        seen.setdefault(record_key(r), r)
    return list(seen.values())


def print_summary(results: dict, title: str) -> None:
    """Percentages per benchmark: avg@N with its 95% CI, pass@N, maj@N, and the sample-level rates."""
    from rich.table import Table

    table = Table(title=title)
    for column in (
        "benchmark",
        "items",
        "n",
        "avg@n [95% CI]",
        "pass@n",
        "maj@n",
        "trunc",
        "unextr",
        "tokens",
    ):
        table.add_column(column, no_wrap=True)
    for benchmark, m in results.items():
        avg = next((k for k in m if k.startswith("avg@")), None)
        if avg is None:
            continue
        n = avg.split("@")[1]
        low, high = m["ci95"]
        table.add_row(
            benchmark,
            str(m["n_items"]),
            n,
            f"{100 * m[avg]:.1f} [{100 * low:.1f}, {100 * high:.1f}]",
            _pct(m.get(f"pass@{n}")),
            _pct(m[f"maj@{n}"]),
            _pct(m["truncated_rate"]),
            _pct(m["unextracted_rate"]),
            "-" if m["mean_completion_tokens"] is None else f"{m['mean_completion_tokens']:.0f}",
        )
    console.print(table)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"
