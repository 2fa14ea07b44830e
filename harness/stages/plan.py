"""The plan stage: benchmarks and a config become the run's requests and its recorded configuration."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from rich.markup import escape

from benchmarks import get_benchmark
from harness import HarnessError
from harness.backends import BACKENDS
from harness.backends.chat import chosen_options
from harness.config import EvalConfig, SamplingOverrides, ScoringConfig, parse_shard
from harness.core.progress import console
from harness.core.runinfo import machine, packages, stable_hash
from harness.core.settings import check
from harness.core.types import Item, Request, Sampling, messages_for
from harness.papers import Preset, get_preset
from harness.scoring import THEN_JUDGE, judged, kind
from harness.scoring.judge import JudgeConfig


def derive_seed(run_seed: int, benchmark: str, item_id: str, sample_idx: int) -> int:
    """seed = H(run_seed, benchmark, item_id) + sample_idx: distinct, reproducible and resumable.

    An item's samples get consecutive seeds, which is what vLLM gives the children of one request
    with `n` samples (child i of a request seeded s is seeded s + i). So the `n` samples of an item
    can go out as one request (or any run of them, on resume) and still carry their own seeds.
    The hash keeps 62 bits so seeds stay below 2**63.
    """
    key = f"{run_seed}\x1f{benchmark}\x1f{item_id}".encode()
    return (int.from_bytes(hashlib.sha256(key).digest()[:8], "big") >> 2) + sample_idx


SAMPLE_BLOCK = 16  # with n > 16 an item's samples are sharded in blocks of 16, kept together


def shard_of(benchmark: str, item_id: str, sample_idx: int, count: int) -> int:
    """The shard (0..count-1) that evaluates a sample: a hash of its benchmark, item and block of
    `SAMPLE_BLOCK` samples, so the split depends on nothing but these names and the shard count (not
    on the machine, the item order or what else the run holds)."""
    key = f"{benchmark}\x1f{item_id}\x1f{sample_idx // SAMPLE_BLOCK}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % count


@dataclass(frozen=True)
class Plan:
    requests: list[Request]
    run_info: dict[str, Any]


def scorer_name(bench, judge: JudgeConfig | None) -> str:
    """The benchmark's scorer; free-text rules (cem, numeric: `Kind.judge_given`) become max(rule, judge)
    with a judge."""
    if judge is not None and kind(bench.scorer).judge_given:
        return f"{bench.scorer}{THEN_JUDGE}"
    return bench.scorer


def item_questions(scorer: str, items: list[Item]) -> dict[str, str] | None:
    """Each item's problem, for run.json's `questions`, when the scorer reads questions; else None."""
    return {item.id: item.problem for item in items} if kind(scorer).reads_question else None


def resolve_sampling(bench, cfg: EvalConfig, preset: Preset | None) -> Sampling:
    """Explicit settings, then the preset's (per benchmark, then global), then the benchmark's."""
    chosen = vars(bench.sampling).copy()
    if preset is not None:
        chosen.update(preset.sampling)
        chosen.update(preset.per_benchmark.get(bench.name.split(":")[0], {}))
    for key in chosen:
        if getattr(cfg.sampling, key, None) is not None:
            chosen[key] = getattr(cfg.sampling, key)
    return Sampling(**chosen)


def plan(cfg: EvalConfig) -> Plan:
    """Load the benchmarks and derive every request and the run's recorded configuration."""
    preset = get_preset(cfg.preset) if cfg.preset else None
    specs = cfg.benchmarks or (preset.benchmarks if preset else ())
    if not specs:
        raise HarnessError("no benchmarks: pass --benchmarks (or a --preset)")
    if preset is not None and preset.judge and cfg.judge is None:
        raise HarnessError(
            f"--preset {cfg.preset} scores free-text answers with max(rule, judge): pass --judge-model "
            f"(and --judge-base-url); SPELL's judge was openai/gpt-oss-120b"
        )
    benchmarks = [get_benchmark(spec, cfg.scoring.scorer, cfg.scoring.lm_eval_include_path) for spec in specs]
    names = [b.name for b in benchmarks]
    if len(set(names)) != len(names):
        raise HarnessError(f"benchmark names repeat: {', '.join(names)}")
    requests: list[Request] = []
    sampling, datasets, prompts, answers, groups, max_inputs = {}, {}, {}, {}, {}, {}
    questions = {}
    for bench in benchmarks:
        loaded = bench.load(cfg.data_dir)
        items = loaded.items[: cfg.limit] if cfg.limit else loaded.items
        s = resolve_sampling(bench, cfg, preset)
        check(SamplingOverrides, vars(s), name=lambda field, b=bench.name: f"{b}'s sampling {field}")
        max_input = first_set(
            cfg.max_input_tokens, preset and preset.max_input_tokens, bench.max_input_tokens
        )
        if max_input:
            max_inputs[bench.name] = max_input
        template = cfg.prompt_template or bench.prompt
        if "{problem}" not in template:
            raise HarnessError("--prompt-template must contain {problem}, where the problem text goes")
        sampling[bench.name] = recorded_sampling(s)
        datasets[bench.name] = loaded.source
        system = bench.system_prompt if cfg.system_prompt is None else cfg.system_prompt
        prompts[bench.name] = {"template": template, "system": system}
        answers[bench.name] = {item.id: item.answer for item in items}
        if (asked := item_questions(scorer_name(bench, cfg.judge), items)) is not None:
            questions[bench.name] = asked
        if bench.group_by:
            groups[bench.name] = {
                field: {item.id: str(item.meta.get(field, "unknown")) for item in items}
                for field in bench.group_by
            }
        for item in items:
            messages = messages_for(item, template, system)
            for k in range(s.n):
                seed = derive_seed(cfg.seed, bench.name, item.id, k)
                requests.append(
                    Request(
                        bench.name,
                        item.id,
                        k,
                        messages,
                        seed,
                        s.temperature,
                        s.top_p,
                        s.max_tokens,
                        max_input_tokens=max_input or None,
                        top_k=s.top_k,
                        stop=s.stop,
                    )
                )
    scorers = {b.name: scorer_name(b, cfg.judge) for b in benchmarks}
    config = {
        "benchmarks": names,
        "model": cfg.engine.model,
        "revision": cfg.engine.revision,
        "backend": cfg.engine.backend,
        "dtype": cfg.engine.dtype,
        # the endpoint a server's engine asks (one per run)
        **({"api": cfg.engine.api} if "api" in BACKENDS.require(cfg.engine.backend).ENGINE_FIELDS else {}),
        # --trust-remote-code, --raw-prompt and --model-arg, only when used (older hashes hold)
        **chosen_options(cfg.engine.trust_remote_code, cfg.engine.raw_prompt, dict(cfg.engine.model_args)),
        "seed": cfg.seed,
        "limit": cfg.limit,
        "sampling": sampling,
        "scorers": scorers,
        "prompt_hashes": {b: stable_hash(p) for b, p in prompts.items()},
        "dataset_hashes": {b: d["content_hash"] for b, d in datasets.items()},
        **extra_config(benchmarks, cfg.scoring.upstream_compat),
        **({"preset": cfg.preset} if cfg.preset else {}),
        **({"max_input_tokens": max_inputs} if max_inputs else {}),
        **scoring_config(
            cfg.scoring,
            cfg.judge,
            scorers,
            first_set(*(getattr(b, "include_path", None) for b in benchmarks)),
        ),
    }
    shard: dict[str, Any] = {}
    if cfg.shard is not None:
        requests, shard = _shard(requests, cfg.shard, config, answers, questions, groups)
        config = {**config, "shard": cfg.shard}
    run_info = {
        "config": config,
        "config_hash": stable_hash(config),
        "datasets": datasets,
        "prompts": prompts,
        "packages": packages(),
        "machine": machine(),
        "answers": answers,
        **({"questions": questions} if questions else {}),
        **({"groups": groups} if groups else {}),
        **sandbox_record(benchmarks, cfg.scoring.unsafe_no_sandbox),
        **judge_record(cfg.judge, config),
        **({"shard": shard} if shard else {}),
    }
    return Plan(requests=requests, run_info=run_info)


def _shard(
    requests: list[Request], text: str, whole: dict, answers: dict, questions: dict, groups: dict
) -> tuple[list[Request], dict[str, Any]]:
    """Keep shard K's requests, and of the per-item records only its items (in place); the shard's
    record names the whole run (its config hash and item order) for `harness merge`."""
    index, count = parse_shard(text)
    mine = [r for r in requests if shard_of(r.benchmark, r.item_id, r.sample_idx, count) == index - 1]
    items = {(r.benchmark, r.item_id) for r in mine}
    record = {
        "index": index,
        "count": count,
        "whole_config_hash": stable_hash(whole),
        "samples": len(mine),
        "item_order": {b: list(ids) for b, ids in answers.items()},
    }
    for b, fields in groups.items():
        for field, values in fields.items():
            fields[field] = {i: v for i, v in values.items() if (b, i) in items}
    for per_item in (answers, questions):
        for b, values in per_item.items():
            per_item[b] = {i: v for i, v in values.items() if (b, i) in items}
    return mine, record


def recorded_sampling(s: Sampling) -> dict[str, Any]:
    """Sampling as run.json records it: top-k and stop strings only when set (older hashes hold)."""
    recorded = {k: v for k, v in vars(s).items() if k not in ("top_k", "stop")}
    if s.top_k != -1:
        recorded["top_k"] = s.top_k
    if s.stop:
        recorded["stop"] = list(s.stop)
    return recorded


def first_set(*values):
    """The first value that is not None (0 included), else None."""
    return next((v for v in values if v is not None), None)


def scoring_config(
    scoring_cfg: ScoringConfig,
    judge: JudgeConfig | None,
    scorers: dict[str, str],
    lm_eval_include_path: str | None,
) -> dict[str, Any]:
    """Numeric tolerance, lm-eval task folder and judge: recorded only when used."""
    extra: dict[str, Any] = {}
    scoring = {"rtol": scoring_cfg.numeric_rtol, "lm_eval_include_path": lm_eval_include_path}
    scoring = {k: v for k, v in scoring.items() if v is not None}
    if scoring:
        extra["scoring"] = scoring
    with_judge = [b for b, name in scorers.items() if judged(name)]
    if with_judge:
        if judge is None:
            raise HarnessError(f"scorer {scorers[with_judge[0]]!r} needs a judge: pass --judge-model")
        extra["judge"] = judge.identity()
    elif judge is not None:
        console.print(
            f"[yellow]--judge-model: no benchmark of this run is judged "
            f"({escape(', '.join(scorers))})[/yellow]"
        )
    return extra


def reported_pass_k(benchmarks: list) -> dict[str, list[int]]:
    """The pass@k values each benchmark reports besides 1, 2, 4, ..., n (its `pass_k`: CRUXEval's
    pass@5), as a run's config records them for aggregation. The one place they are decided: `eval`
    (and so training's evaluations, which run it), `score --generations` and the rescore of a run
    recorded without them all take them from here, so every path writes the same metrics."""
    return {b.name: list(b.pass_k) for b in benchmarks if b.pass_k}


def extra_config(benchmarks: list, upstream_compat: bool) -> dict[str, Any]:
    """Config entries only some runs have (absent otherwise, so older runs keep their hashes)."""
    extra: dict[str, Any] = {}
    pass_k = reported_pass_k(benchmarks)
    if pass_k:
        extra["pass_k"] = pass_k
    if upstream_compat:
        extra["upstream_compat"] = True
    return extra


def sandbox_record(benchmarks: list, unsafe_no_sandbox: bool = False) -> dict[str, Any]:
    """How code is isolated, for runs that execute model code. Refuses (before any generating) to run
    code without isolation unless `unsafe_no_sandbox`, and then warns loudly."""
    if not any(kind(b.scorer).sandboxed for b in benchmarks):
        return {}
    from harness import sandbox

    if unsafe_no_sandbox:
        sandbox.allow_unisolated()
    sandbox.require()
    facts = sandbox.facts()
    if "warning" in facts:
        console.print(f"[bold red]WARNING: {facts['warning']}[/bold red]")
    return {"sandbox": facts}


def judge_record(judge: JudgeConfig | None, config: dict[str, Any]) -> dict[str, Any]:
    """Where the judge was served, kept beside (not in) the config: a rescore may reach it elsewhere."""
    if judge is None or "judge" not in config:
        return {}
    return {"judge_base_url": judge.engine.base_url}
