"""The score and aggregate stages, shared by `eval`, `score RUN_DIR` and `score --generations`.

`ScoreStream` scores generations while the engine makes more; `score_run` scores whatever is left
(everything, when rescoring) and `finalize` writes the canonical files and results.json.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.metrics import Outcome, aggregate, answer_of
from harness.core.progress import progress_bar
from harness.core.store import GENERATIONS, RESULTS, RUN, SCORES, RunDir, read_file, record_key
from harness.core.types import Score
from harness.scoring import Scorer, exact_golds, get_scorer, kind, timeless, trusted_include_path
from harness.scoring.judge import JudgeConfig
from harness.scoring.rules import accepted_answers, gold_text

SCORE_FLUSH_EVERY = 64
ENGINE_PROCESSES = 2  # an engine's own busy processes (vLLM: its API and engine-core processes)


def make_scorers(
    info: dict,
    *,
    timeout: float | None = None,
    workers: int | None = None,
    judge_settings: dict[str, Any] | None = None,
    include_path: str | Path | None = None,
    cache: bool = True,
) -> dict[str, Scorer]:
    """Each benchmark's scorer as the run's config declares it.

    The judge is the run's own: `judge_settings` (flat, as `JudgeConfig.from_settings` takes them) may
    say where and how its engine runs (server, parallelism...), not change who judges or how.
    `include_path`: the lm-eval task folder the caller trusts (`scoring_options`). `cache`: reuse the
    ground truth kept in the harness cache (`--no-cache`: compute it again)."""
    config = info["config"]
    judge = None
    if "judge" in config:
        recorded = config["judge"]
        settings = {k: v for k, v in recorded.items() if k != "prompt_sha256"}
        judge = JudgeConfig.from_settings(
            {**settings, "base_url": info.get("judge_base_url"), **(judge_settings or {})}
        )
        identity = judge.identity()
        changed = sorted(k for k in identity.keys() | recorded.keys() if identity.get(k) != recorded.get(k))
        if changed == ["prompt_sha256"]:
            raise HarnessError(f"the judge prompt {judge.prompt!r} changed since this run was made")
        if changed:
            raise HarnessError(
                f"this run's judge differs in {', '.join(changed)} (see run.json); a rescore keeps the run's "
                "judge: score --generations into a new directory to judge with another"
            )
    elif judge_settings:
        raise HarnessError("--judge-* options: no benchmark of this run is judged")
    options = {"timeout": timeout, "workers": workers, "judge": judge, "cache": cache}
    options |= scoring_options(info, include_path)
    return {b: get_scorer(name, **options, **benchmark_options(b)) for b, name in config["scorers"].items()}


def scoring_options(info: dict, include_path: str | Path | None) -> dict[str, Any]:
    """run.json's scoring options, with its lm-eval task folder only where the caller names it too."""
    options = dict(info["config"].get("scoring", {}))
    options["lm_eval_include_path"] = trusted_include_path(info["config"], include_path)
    return options


def benchmark_options(benchmark: str) -> dict[str, Any]:
    """What a scorer is told of its benchmark: whether its golds are measured quantities (Minerva)."""
    from benchmarks import BENCHMARKS

    known = BENCHMARKS.get(benchmark)
    return {"measured": bool(known is not None and known.measured)}


def scoring_golds(info: dict, benchmark: str) -> dict[str, str]:
    """Each item's gold as its scorer gets it: with the item's question (`rules.gold_text`) where
    run.json records questions (math benchmarks, since math rules 3), else the answer alone."""
    answers = info["answers"][benchmark]
    questions = info.get("questions", {}).get(benchmark)
    if not questions:
        return answers
    return {i: gold_text(a, questions[i]) if i in questions else a for i, a in answers.items()}


def score_into(
    run: RunDir,
    scorer: Scorer,
    generations: Sequence[dict],
    golds: dict[str, str],
    previous: Sequence[dict | None] | None = None,
    on_scored: Callable[[int], None] = lambda n: None,
    keep: Callable[[Score], bool] = lambda score: True,
) -> None:
    """Score one benchmark's generations and append the score records it `keep`s as they come (64 at a
    time). A scorer that fails half-way (a dead judge) keeps what it finished."""
    answers = [g["answer"] for g in generations]
    buffer = []
    try:
        for i, score in scorer.score(answers, [golds[g["item_id"]] for g in generations], previous):
            if not keep(score):
                continue
            g = generations[i]
            buffer.append(
                {
                    "benchmark": g["benchmark"],
                    "item_id": g["item_id"],
                    "sample_idx": g["sample_idx"],
                    "value": score.value,
                    "extracted": score.extracted,
                    "canonical": score.canonical,
                    "scorer": scorer.version,
                    "details": score.details,
                }
            )
            on_scored(1)
            if len(buffer) >= SCORE_FLUSH_EVERY:
                run.append(SCORES, buffer)
                buffer = []
    finally:
        run.append(SCORES, buffer)


def kept(run: RunDir, planned: int | None = None) -> str:
    """What a run folder holds so far, in whole records, for the line that ends an interrupted command
    (`harness.core.terminate`): "runs/x keeps 16/60 generations and 12 scores"."""
    lines = {}
    for name in (GENERATIONS, SCORES):
        path = run.file(name)
        lines[name] = read_file(path).count(b"\n") if path.exists() else 0
    generations = lines[GENERATIONS] if planned is None else f"{lines[GENERATIONS]}/{planned}"
    return f"{run.path} keeps {generations} generations and {lines[SCORES]} scores"


def spare_cores() -> int:
    """Scorer workers beside a running engine: the cores its own processes leave (up to 4, at least 1)."""
    return max(1, min(4, len(os.sched_getaffinity(0)) - ENGINE_PROCESSES))


def streamed(record: dict) -> dict:
    """What the stream needs of a generation record (a shard sends only this to its parent)."""
    return {k: record[k] for k in ("benchmark", "item_id", "sample_idx", "answer")}


class ScoreStream:
    """Scores each batch of generations while the engine generates the next, in a thread of its own.

    Only scorers whose verdicts cannot depend on the busy machine stream (`scoring.timeless`); the
    others, and any verdict that ends in an error (a math-verify call past its time limit), wait for
    `score_run`. A benchmark whose scorer fails stops streaming; `score_run` scores its rest again
    and reports the error.

    A signal can interrupt the main thread between any two bytecodes (`harness.core.terminate`), also
    inside a lock's notify, which then loses the wake-up: a `queue.Queue` left its thread waiting
    forever after a SIGTERM. So the main thread hands batches over by one deque append, a single C
    call that a signal cannot split, and the thread polls the deque."""

    POLL = 0.05  # seconds between the thread's looks at an empty deque

    def __init__(
        self, run: RunDir, *, timeout=None, workers=None, include_path=None, on_scored: Callable[[int], None]
    ):
        info = run.read_json(RUN)
        self.run, self.on_scored = run, on_scored
        self.golds = {b: scoring_golds(info, b) for b in info["answers"]}
        options = {
            "timeout": timeout,
            "workers": workers or spare_cores(),
            **scoring_options(info, include_path),
        }
        self.scorers = {
            b: get_scorer(name, persistent=True, **options, **benchmark_options(b))
            for b, name in info["config"]["scorers"].items()
            if timeless(name)
        }
        self.batches: deque[list[dict] | None] = deque()
        self.failed: set[str] = set()
        self.stopping = False
        self.thread = threading.Thread(target=self._work, name="score-stream", daemon=True)
        self.thread.start()

    def streams(self, benchmark: str) -> bool:
        return benchmark in self.scorers

    def submit(self, records: list[dict]) -> None:
        self.batches.append(records)

    def close(self, finish: bool = True) -> None:
        """Score what was submitted (or, with `finish=False`, only the batch in hand), then stop the
        thread and the scorers' workers."""
        self.stopping = not finish
        self.batches.append(None)
        self.thread.join()
        for scorer in self.scorers.values():
            scorer.close()

    def _next(self) -> list[dict] | None:
        while not self.batches:
            time.sleep(self.POLL)
        return self.batches.popleft()

    def _work(self) -> None:
        while (records := self._next()) is not None and not self.stopping:
            by_benchmark: dict[str, list[dict]] = defaultdict(list)
            for r in records:
                if r["benchmark"] in self.scorers and r["benchmark"] not in self.failed:
                    by_benchmark[r["benchmark"]].append(r)
            for benchmark, generations in by_benchmark.items():
                try:
                    score_into(
                        self.run,
                        self.scorers[benchmark],
                        generations,
                        self.golds[benchmark],
                        on_scored=self.on_scored,
                        keep=lambda score: "error" not in score.details,
                    )
                except Exception:  # score_run scores the rest again and reports the error
                    self.failed.add(benchmark)


def score_run(
    run: RunDir,
    *,
    force: bool = False,
    timeout: float | None = None,
    workers: int | None = None,
    judge_settings: dict[str, Any] | None = None,
    planned: Sequence[tuple[str, str, int]] | None = None,
    include_path: str | Path | None = None,
    cache: bool = True,
) -> dict:
    """Score what is not scored yet (everything with `force`), then write canonical files and results.

    Scorers that reuse earlier work (judge verdicts) get each sample's previous score details.
    `planned`: every sample the run must have; a missing one is an error, not a smaller denominator.
    `include_path`: the lm-eval task folder the caller trusts, where run.json names one."""
    info = run.read_json(RUN)
    scorers = make_scorers(
        info,
        timeout=timeout,
        workers=workers,
        judge_settings=judge_settings,
        include_path=include_path,
        cache=cache,
    )
    versions = {b: s.version for b, s in scorers.items()}
    _record_sandbox(run, info, scorers)
    _record_pass_k(run, info)
    generations = _unique(run.records(GENERATIONS))
    _check_items(run, info, generations)
    earlier = {record_key(r): r["details"] for r in run.records(SCORES)}
    done = (
        set()
        if force
        else {record_key(r) for r in run.records(SCORES) if r.get("scorer") == versions.get(r["benchmark"])}
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
                previous = [earlier.get(record_key(g)) for g in gens]
                score_into(
                    run,
                    scorers[benchmark],
                    gens,
                    scoring_golds(info, benchmark),
                    previous,
                    on_scored=lambda n: bar.advance(task, n),
                )
    return finalize(run, info, versions, planned)


def _record_sandbox(run: RunDir, info: dict, scorers: dict[str, Scorer]) -> None:
    """run.json says how this scoring isolated code (a rescore may differ from the run's first one:
    the code scorer's version names the isolation, so every code score is then redone)."""
    if any(kind(s.name).sandboxed for s in scorers.values()):
        from harness import sandbox

        facts = sandbox.facts()
        if info.get("sandbox") != facts:
            info["sandbox"] = facts
            run.write_json(RUN, info)


def _record_pass_k(run: RunDir, info: dict) -> None:
    """A run recorded without its benchmarks' own pass@k values (`score --generations` before they were
    recorded) gets them in its config, so its results have the metrics an eval of them has."""
    from benchmarks import BENCHMARKS
    from harness.core.runinfo import stable_hash
    from harness.stages.plan import reported_pass_k

    config = info["config"]
    recorded = config.get("pass_k", {})
    missing = reported_pass_k(
        [BENCHMARKS[b] for b in config["benchmarks"] if b in BENCHMARKS and b not in recorded]
    )
    if missing:
        config["pass_k"] = {**recorded, **missing}
        info["config_hash"] = stable_hash(config)
        run.write_json(RUN, info)


def _check_items(run: RunDir, info: dict, generations: list[dict]) -> None:
    """Every generation answers an item of the run (run.json's answers), or the files do not belong."""
    answers = info["answers"]
    for g in generations:
        if g["item_id"] not in answers.get(g["benchmark"], {}):
            raise HarnessError(
                f"{run.file(GENERATIONS)}: {g['benchmark']} item {g['item_id']!r} is not an item of this run "
                f"({run.file(RUN)}); remove its records, or score the generations into a new run"
            )


def _check_complete(run: RunDir, planned: Sequence[tuple], generated: set[tuple], scored: set[tuple]) -> None:
    """Refuse to aggregate a run that lacks a planned generation or any generation's score."""
    for what, have, need in (("generated", generated, planned), ("scored", scored, generated)):
        missing = [key for key in need if key not in have]
        if missing:
            b, item, k = missing[0]
            raise HarnessError(
                f"{run.path}: {len(missing)} of {len(need)} samples were not {what} (first: {b} item {item} "
                f"sample {k}); results.json is not written: rerun the command to finish them"
            )


def finalize(
    run: RunDir, info: dict, versions: dict[str, str], planned: Sequence[tuple] | None = None
) -> dict:
    """Rewrite generations and scores in canonical order, aggregate, and write results.json once every
    generation (and every `planned` sample) is scored."""
    order = {
        (b, item_id, 0): (bi, ii)
        for bi, b in enumerate(info["config"]["benchmarks"])
        for ii, item_id in enumerate(info["answers"][b])
    }

    def canonical(record: dict) -> tuple:
        return (*order[(record["benchmark"], record["item_id"], 0)], record["sample_idx"])

    generations = sorted(_unique(run.records(GENERATIONS)), key=canonical)
    latest = {
        record_key(s): s for s in run.records(SCORES) if s.get("scorer") == versions.get(s["benchmark"])
    }
    scores = [latest[record_key(g)] for g in generations if record_key(g) in latest]
    run.rewrite(GENERATIONS, generations)
    run.rewrite(SCORES, scores)
    keys = [record_key(g) for g in generations]
    _check_complete(run, keys if planned is None else planned, set(keys), set(latest))

    outcomes: dict[str, list[Outcome]] = {b: [] for b in info["config"]["benchmarks"]}
    kept = zip(generations, scores, strict=True)
    if info["config"].get("upstream_compat"):
        kept = upstream_samples(list(kept))
    golds = {
        b: info["answers"][b] if exact_golds(name) else {} for b, name in info["config"]["scorers"].items()
    }
    for g, s in kept:
        outcomes[g["benchmark"]].append(
            Outcome(
                item_id=g["item_id"],
                sample_idx=g["sample_idx"],
                value=s["value"],
                answer_key=s.get("canonical") if s["extracted"] is not None else None,
                truncated=g["truncated"],
                completion_tokens=g["completion_tokens"],
                answer=answer_of(s),
                gold=accepted_answers(gold) if (gold := golds[g["benchmark"]].get(g["item_id"])) else None,
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
