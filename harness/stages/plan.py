"""`harness eval`: benchmarks -> requests -> backend -> generations.jsonl, then score and aggregate."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import get_benchmark
from harness import HarnessError
from harness.parallel import generate_sharded
from harness.pipeline import completion_record, score_run
from harness.presets import Preset, get_preset
from harness.progress import console, progress_bar
from harness.runinfo import machine, packages, stable_hash
from harness.scoring import JudgeConfig
from harness.store import GENERATIONS, RUN, RunDir, record_key
from harness.types import Item, Request, Sampling


@dataclass(frozen=True)
class EvalConfig:
    benchmarks: tuple[str, ...]
    model: str
    out: Path | None = None  # None: runs/<model>-<config hash>
    backend: str = "hf"
    n: int | None = None  # None: each benchmark's default
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int = 0
    limit: int | None = None
    data_dir: Path | None = None
    scorer: str | None = None  # for jsonl: benchmarks
    prompt_template: str | None = None  # "{problem}" is replaced by the problem text
    system_prompt: str | None = None
    revision: str | None = None
    batch_size: int | None = None  # hf
    dtype: str = "auto"  # hf, vllm
    tensor_parallel_size: int = 1  # vllm: GPUs per engine
    data_parallel_size: int = 1  # hf, vllm: engines, each on its own share of the items
    max_model_len: int | None = None  # vllm
    gpu_memory_utilization: float | None = None  # vllm
    prefix_caching: bool = True  # vllm
    enforce_eager: bool = False  # vllm: skip graph compilation (faster start, slower decoding)
    max_num_seqs: int | None = None  # vllm: sequences decoded at once
    base_url: str | None = None  # openai
    api: str = "chat"  # openai: chat or completions endpoint
    concurrency: int = 32  # openai: requests in flight
    max_retries: int = 5  # openai
    request_timeout: float = 600.0  # openai: seconds per request
    score_timeout: float | None = None
    score_workers: int | None = None
    upstream_compat: bool = False  # CRUXEval: drop invalid answers from n, as the upstream scorer does
    preset: str | None = None  # a paper's protocol (harness/presets.py); explicit settings win
    top_k: int | None = None
    max_input_tokens: int | None = None  # None: the benchmark's (or preset's); 0: never cut
    numeric_rtol: float | None = None  # None: the numeric scorer's default (0.0015)
    judge_model: str | None = None  # judges free-text answers: max(rule, judge)
    judge_backend: str = "openai"
    judge_base_url: str | None = None
    judge_prompt: str = "spell-v1"
    judge_repeats: int = 1
    judge_temperature: float = 0.0
    judge_max_tokens: int = 8192
    lm_eval_include_path: str | None = None  # a folder of lm-eval task YAML files (lm-eval:TASK)


def derive_seed(run_seed: int, benchmark: str, item_id: str, sample_idx: int) -> int:
    """seed = H(run_seed, benchmark, item_id) + sample_idx: distinct, reproducible and resumable.

    An item's samples get consecutive seeds, which is what vLLM gives the children of one request
    with `n` samples (child i of a request seeded s is seeded s + i). So the `n` samples of an item
    can go out as one request (or any run of them, on resume) and still carry their own seeds.
    The hash keeps 62 bits so seeds stay below 2**63.
    """
    key = f"{run_seed}\x1f{benchmark}\x1f{item_id}".encode()
    return (int.from_bytes(hashlib.sha256(key).digest()[:8], "big") >> 2) + sample_idx


def messages_for(item: Item, template: str, system_prompt: str | None) -> tuple[dict[str, str], ...]:
    user = {"role": "user", "content": template.replace("{problem}", item.problem)}
    return ({"role": "system", "content": system_prompt}, user) if system_prompt else (user,)


@dataclass(frozen=True)
class Plan:
    requests: list[Request]
    run_info: dict[str, Any]


def judge_config(cfg: EvalConfig) -> JudgeConfig | None:
    if cfg.judge_model is None:
        return None
    return JudgeConfig(
        model=cfg.judge_model,
        backend=cfg.judge_backend,
        base_url=cfg.judge_base_url,
        prompt=cfg.judge_prompt,
        repeats=cfg.judge_repeats,
        temperature=cfg.judge_temperature,
        max_tokens=cfg.judge_max_tokens,
    )


JUDGED_RULES = ("cem", "numeric")


def scorer_name(bench, cfg: EvalConfig) -> str:
    """The benchmark's scorer; free-text rules (cem, numeric) become max(rule, judge) with a judge."""
    if cfg.judge_model and bench.scorer in JUDGED_RULES:
        return f"{bench.scorer}+judge"
    return bench.scorer


def resolve_sampling(bench, cfg: EvalConfig, preset: Preset | None) -> Sampling:
    """Explicit settings, then the preset's (per benchmark, then global), then the benchmark's."""
    chosen = vars(bench.sampling).copy()
    if preset is not None:
        chosen.update(preset.sampling)
        chosen.update(preset.per_benchmark.get(bench.name.split(":")[0], {}))
    for key in chosen:
        if getattr(cfg, key, None) is not None:
            chosen[key] = getattr(cfg, key)
    return Sampling(**chosen)


def plan(cfg: EvalConfig) -> Plan:
    """Load the benchmarks and derive every request and the run's recorded configuration."""
    preset = get_preset(cfg.preset) if cfg.preset else None
    specs = cfg.benchmarks or (preset.benchmarks if preset else ())
    if not specs:
        raise HarnessError("no benchmarks: pass --benchmarks (or a --preset)")
    if preset is not None and preset.judge and cfg.judge_model is None:
        raise HarnessError(
            f"--preset {cfg.preset} scores free-text answers with max(rule, judge): pass --judge-model "
            f"(and --judge-base-url); SPELL's judge was openai/gpt-oss-120b"
        )
    benchmarks = [get_benchmark(spec, cfg.scorer, cfg.lm_eval_include_path) for spec in specs]
    names = [b.name for b in benchmarks]
    if len(set(names)) != len(names):
        raise HarnessError(f"benchmark names repeat: {', '.join(names)}")
    requests: list[Request] = []
    sampling, datasets, prompts, answers, groups, max_inputs = {}, {}, {}, {}, {}, {}
    for bench in benchmarks:
        loaded = bench.load(cfg.data_dir)
        items = loaded.items[: cfg.limit] if cfg.limit else loaded.items
        s = resolve_sampling(bench, cfg, preset)
        if s.n < 1 or s.max_tokens < 1 or s.temperature < 0 or not 0 < s.top_p <= 1 or s.top_k == 0:
            raise HarnessError(f"invalid sampling for {bench.name}: {s}")
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
        prompts[bench.name] = {"template": template, "system": cfg.system_prompt}
        answers[bench.name] = {item.id: item.answer for item in items}
        if bench.group_by:
            groups[bench.name] = {
                field: {item.id: str(item.meta.get(field, "unknown")) for item in items}
                for field in bench.group_by
            }
        for item in items:
            messages = messages_for(item, template, cfg.system_prompt)
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
    scorers = {b.name: scorer_name(b, cfg) for b in benchmarks}
    config = {
        "benchmarks": names,
        "model": cfg.model,
        "revision": cfg.revision,
        "backend": cfg.backend,
        "dtype": cfg.dtype,
        "seed": cfg.seed,
        "limit": cfg.limit,
        "sampling": sampling,
        "scorers": scorers,
        "prompt_hashes": {b: stable_hash(p) for b, p in prompts.items()},
        "dataset_hashes": {b: d["content_hash"] for b, d in datasets.items()},
        **extra_config(benchmarks, cfg.upstream_compat),
        **scoring_config(
            cfg, scorers, max_inputs, first_set(*(getattr(b, "include_path", None) for b in benchmarks))
        ),
    }
    run_info = {
        "config": config,
        "config_hash": stable_hash(config),
        "datasets": datasets,
        "prompts": prompts,
        "packages": packages(),
        "machine": machine(),
        "answers": answers,
        **({"groups": groups} if groups else {}),
        **sandbox_record(benchmarks),
        **({"judge_base_url": cfg.judge_base_url} if "judge" in config else {}),
    }
    return Plan(requests=requests, run_info=run_info)


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
    cfg: EvalConfig, scorers: dict[str, str], max_inputs: dict[str, int], lm_eval_include_path: str | None
) -> dict[str, Any]:
    """Preset, input cuts, numeric tolerance, lm-eval task folder and judge: recorded only when used."""
    extra: dict[str, Any] = {}
    if cfg.preset:
        extra["preset"] = cfg.preset
    if max_inputs:
        extra["max_input_tokens"] = max_inputs
    scoring = {"rtol": cfg.numeric_rtol, "lm_eval_include_path": lm_eval_include_path}
    scoring = {k: v for k, v in scoring.items() if v is not None}
    if scoring:
        extra["scoring"] = scoring
    judged = [b for b, name in scorers.items() if name.endswith("judge")]
    if judged:
        judge = judge_config(cfg)
        if judge is None:
            raise HarnessError(f"scorer {scorers[judged[0]]!r} needs a judge: pass --judge-model")
        extra["judge"] = judge.identity()
    elif cfg.judge_model:
        console.print(
            f"[yellow]--judge-model: no benchmark of this run is judged ({', '.join(scorers)})[/yellow]"
        )
    return extra


def extra_config(benchmarks: list, upstream_compat: bool) -> dict[str, Any]:
    """Config entries only some runs have (absent otherwise, so older runs keep their hashes)."""
    extra: dict[str, Any] = {}
    pass_k = {b.name: list(b.pass_k) for b in benchmarks if b.pass_k}
    if pass_k:
        extra["pass_k"] = pass_k
    if upstream_compat:
        extra["upstream_compat"] = True
    return extra


def sandbox_record(benchmarks: list) -> dict[str, Any]:
    """How code is isolated, for runs that execute model code; warns loudly when it is not."""
    if not any(b.scorer == "code" for b in benchmarks):
        return {}
    from harness import sandbox

    facts = sandbox.facts()
    if "warning" in facts:
        console.print(f"[bold red]WARNING: {facts['warning']}[/bold red]")
    return {"sandbox": facts}


BACKENDS = ("hf", "vllm", "openai")


def check_backend_options(cfg: EvalConfig) -> None:
    """Refuse option combinations that would be silently ignored."""
    if cfg.backend not in BACKENDS:
        raise HarnessError(f"unknown backend {cfg.backend!r}; available: {', '.join(BACKENDS)}")
    if (cfg.backend == "openai") != (cfg.base_url is not None):
        raise HarnessError("--base-url goes with --backend openai, and --backend openai needs --base-url")
    if cfg.backend == "openai" and cfg.data_parallel_size != 1:
        raise HarnessError("--data-parallel-size is for local engines; for a server, raise --concurrency")
    if cfg.backend != "vllm" and cfg.tensor_parallel_size != 1:
        raise HarnessError("--tensor-parallel-size needs --backend vllm")
    if cfg.data_parallel_size < 1 or cfg.tensor_parallel_size < 1 or cfg.concurrency < 1:
        raise HarnessError("parallel sizes and --concurrency must be at least 1")


def make_backend(cfg: EvalConfig):
    if cfg.backend == "hf":
        from harness.backends.hf import HFBackend

        return HFBackend(cfg.model, revision=cfg.revision, dtype=cfg.dtype, batch_size=cfg.batch_size)
    if cfg.backend == "vllm":
        from harness.backends.vllm import VLLMBackend

        return VLLMBackend(
            cfg.model,
            revision=cfg.revision,
            dtype=cfg.dtype,
            tensor_parallel_size=cfg.tensor_parallel_size,
            max_model_len=cfg.max_model_len,
            gpu_memory_utilization=cfg.gpu_memory_utilization,
            enable_prefix_caching=cfg.prefix_caching,
            enforce_eager=cfg.enforce_eager,
            max_num_seqs=cfg.max_num_seqs,
        )
    from harness.backends.openai import OpenAIBackend

    return OpenAIBackend(
        cfg.model,
        cfg.base_url,
        api=cfg.api,
        revision=cfg.revision,
        concurrency=cfg.concurrency,
        timeout=cfg.request_timeout,
        max_retries=cfg.max_retries,
    )


def check_context(backend, requests: list[Request]) -> None:
    """Fail before generating if any prompt plus --max-tokens exceeds the model's context."""
    limit = backend.context_length()
    if limit is None:
        return
    checked = set()
    for r in requests:
        if (r.benchmark, r.item_id) in checked:  # all samples of an item share its prompt
            continue
        checked.add((r.benchmark, r.item_id))
        prompt = backend.prompt_tokens(r.messages)
        if prompt is not None and r.max_input_tokens is not None:
            prompt = min(prompt, r.max_input_tokens)
        if prompt is not None and prompt + r.max_tokens > limit:
            raise HarnessError(
                f"{r.benchmark} item {r.item_id}: prompt ({prompt} tokens) + --max-tokens ({r.max_tokens}) "
                f"= {prompt + r.max_tokens} exceeds the model's context of {limit} tokens; "
                f"lower --max-tokens to at most {limit - prompt}"
            )


def generate_into(
    run: RunDir,
    backend,
    requests: list[Request],
    *,
    on_engine: Callable[[dict[str, Any]], None],
    on_done: Callable[[int], None],
) -> None:
    """Check the context, then append each batch of completions to the run as it arrives."""
    check_context(backend, requests)
    on_engine(backend.describe())
    for batch in backend.generate(requests):
        run.append(GENERATIONS, [completion_record(c) for c in batch])
        on_done(len(batch))


def record_engine(run: RunDir, engine: dict[str, Any]) -> None:
    """Keep the engine that started the run in run.json; later sessions add theirs if it differs."""
    info = run.read_json(RUN)
    if "engine" not in info:
        run.write_json(RUN, {**info, "engine": engine})
    elif engine != info["engine"] and engine not in info.get("resumed_with", []):
        run.write_json(RUN, {**info, "resumed_with": [*info.get("resumed_with", []), engine]})


def default_out(model: str, config_hash: str) -> Path:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(model.rstrip("/")).name) or "model"
    return Path("runs") / f"{name}-{config_hash[:10]}"


def run_eval(cfg: EvalConfig, backend=None) -> tuple[Path, dict]:
    """Generate what is missing in the run directory, then score and aggregate.

    `backend`: an engine already loaded for `cfg` (kept open), instead of starting one.
    Returns the run directory and results.json's content.
    """
    check_backend_options(cfg)
    p = plan(cfg)
    out = cfg.out or default_out(cfg.model, p.run_info["config_hash"])
    run = RunDir(out)
    resuming = run.start(p.run_info)
    done = {record_key(r) for r in run.records(GENERATIONS)}
    pending = [r for r in p.requests if r.key not in done]
    if resuming:
        console.print(
            f"resuming {out}: {len(p.requests) - len(pending)}/{len(p.requests)} samples already generated"
        )
    if pending:
        with progress_bar() as bar:
            task = bar.add_task("generating", total=len(pending))
            callbacks = {
                "on_engine": lambda engine: record_engine(run, engine),
                "on_done": lambda done: bar.advance(task, done),
            }
            if cfg.data_parallel_size > 1:
                generate_sharded(cfg, pending, out, **callbacks)
            else:
                engine = backend or make_backend(cfg)
                try:
                    generate_into(run, engine, pending, **callbacks)
                finally:
                    if backend is None:
                        engine.close()
    return out, score_run(run, timeout=cfg.score_timeout, workers=cfg.score_workers)
