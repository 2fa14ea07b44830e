"""Backend benchmark on the tiny model: ours against a baseline in the same process, as ratios.

(a) `harness eval` end to end (plan, generate and write records while scoring them, aggregate)
    against a bare `LLM.generate` of exactly the same requests, on the same engine. Goal: at most 1.05.
    Also timed: a full rescore of the run, the scoring that overlaps generation.
(b) all `n` samples of an item in one vLLM request against `n` duplicated requests (lm-eval's way).
(c) the openai backend against vLLM's own benchmark client (`vllm bench serve`'s request function),
    same requests, same concurrency, same `vllm serve`.

    python tests/perf/bench_backends.py [--short] [--model DIR] [--data-dir ../shared/data]

Needs vLLM (`tox -e vllm` runs the short mode).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[2]
ENGINE = {"dtype": "float32", "enforce_eager": True, "gpu_memory_utilization": 0.2}


def workload(short: bool) -> dict:
    if short:
        return {"benchmarks": ("aime24",), "limit": 10, "n": 4, "max_tokens": 96, "repeats": 1}
    return {"benchmarks": ("aime24", "aime25"), "limit": None, "n": 8, "max_tokens": 384, "repeats": 3}


def timed(fn, *args, **kwargs) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def bare_generate(llm, runs, prompts, duplicated: bool = False) -> int:
    """LLM.generate on the same prompts and seeds: one request per item, or one per sample."""
    from vllm import SamplingParams

    def params(first, n):
        return SamplingParams(
            n=n,
            seed=first.seed,
            temperature=first.temperature,
            top_p=first.top_p,
            max_tokens=first.max_tokens,
        )

    if duplicated:
        pairs = [(p, params(r, 1)) for run, p in zip(runs, prompts, strict=True) for r in run]
    else:
        pairs = [(p, params(run[0], len(run))) for run, p in zip(runs, prompts, strict=True)]
    outputs = llm.generate([p for p, _ in pairs], [s for _, s in pairs], use_tqdm=False)
    return sum(len(o.outputs) for o in outputs)


def overhead(backend, cfg, repeats: int, scratch: Path) -> dict:
    """(a): harness eval end to end against LLM.generate of the same requests on the same engine."""
    from harness.backends.vllm import sample_runs
    from harness.core.store import RunDir
    from harness.runs.evaluate import run_eval
    from harness.stages.plan import plan
    from harness.stages.score import score_run

    runs = sample_runs(plan(cfg).requests)
    prompts = [backend.chat.render(run[0].messages) for run in runs]
    bare_generate(backend.llm, runs[:2], prompts[:2])  # warm up
    bare, ours, scoring = [], [], []
    for k in range(repeats):
        bare.append(timed(lambda: bare_generate(backend.llm, runs, prompts)))
        out = scratch / f"run-{k}"
        ours.append(timed(run_eval, replace(cfg, out=out), backend=backend))
        scoring.append(timed(score_run, RunDir(out), force=True))
    return {
        "bare": statistics.median(bare),
        "ours": statistics.median(ours),
        "score": statistics.median(scoring),
    }


def samples_per_request(backend, cfg, repeats: int) -> dict:
    """(b): n samples in one request against n duplicated requests."""
    from harness.backends.vllm import sample_runs
    from harness.stages.plan import plan

    runs = sample_runs(plan(cfg).requests)
    prompts = [backend.chat.render(run[0].messages) for run in runs]
    samples = sum(len(run) for run in runs)
    one, dup = [], []
    for _ in range(repeats):
        one.append(timed(lambda: bare_generate(backend.llm, runs, prompts)))
        dup.append(timed(lambda: bare_generate(backend.llm, runs, prompts, duplicated=True)))
    return {"samples": samples, "one": statistics.median(one), "dup": statistics.median(dup)}


def start_server(model: Path, log: Path) -> tuple[subprocess.Popen, str]:
    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model),
               "--host", "127.0.0.1", "--port", str(port), "--dtype", "float32", "--enforce-eager",
               "--gpu-memory-utilization", "0.2", "--no-enable-chunked-prefill"]  # fmt: skip
    proc = subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                return proc, base_url
        except httpx.TransportError:
            pass
        time.sleep(1)
    proc.kill()
    raise SystemExit(f"vllm serve did not start; see {log}")


async def vllm_client(base_url: str, model: str, requests, concurrency: int) -> int:
    """vLLM's benchmark request function (streaming chat completions) at a fixed concurrency."""
    import aiohttp
    from vllm.benchmarks.lib.endpoint_request_func import (
        RequestFuncInput,
        async_request_openai_chat_completions,
    )

    gate = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency, keepalive_timeout=60)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=3600)
    ) as session:

        async def one(r):
            async with gate:
                inputs = RequestFuncInput(
                    prompt="", api_url=f"{base_url}/chat/completions", prompt_len=0, output_len=r.max_tokens,
                    model=model, chat_messages=list(r.messages),
                    extra_body={"seed": r.seed, "temperature": r.temperature, "top_p": r.top_p},
                )  # fmt: skip
                return await async_request_openai_chat_completions(inputs, session)

        outputs = await asyncio.gather(*(one(r) for r in requests))
    failed = [o.error for o in outputs if not o.success]
    if failed:
        raise SystemExit(f"vLLM's client failed: {failed[0]}")
    return len(outputs)


def served(model: Path, cfg, concurrency: int, repeats: int, scratch: Path) -> dict:
    """(c): the openai backend against vLLM's benchmark client on one `vllm serve`."""
    from harness.backends.openai import OpenAIBackend
    from harness.stages.plan import plan

    requests = plan(cfg).requests
    proc, base_url = start_server(model, scratch / "serve.log")
    try:
        ours_backend = OpenAIBackend(str(model), base_url, concurrency=concurrency)
        list(ours_backend.generate(requests[:concurrency]))  # warm up
        ours, theirs = [], []
        for _ in range(repeats):
            ours.append(timed(lambda: list(ours_backend.generate(requests))))
            theirs.append(
                timed(lambda: asyncio.run(vllm_client(base_url, str(model), requests, concurrency)))
            )
        return {
            "samples": len(requests),
            "ours": statistics.median(ours),
            "theirs": statistics.median(theirs),
        }
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--short", action="store_true", help="small workload, one repeat (CI)")
    parser.add_argument("--model", type=Path, help="model folder [default: a fresh tiny model]")
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    from harness.backends import EngineConfig
    from harness.backends.vllm import VLLMBackend
    from harness.config import EvalConfig, SamplingOverrides
    from harness.core.tiny_model import build_tiny_model

    w = workload(args.short)
    scratch = Path(tempfile.mkdtemp(prefix="bench-backends-"))
    model = args.model or build_tiny_model(scratch / "tiny")
    cfg = EvalConfig(
        benchmarks=w["benchmarks"],
        engine=EngineConfig(str(model), backend="vllm", **ENGINE),
        sampling=SamplingOverrides(n=w["n"], max_tokens=w["max_tokens"]),
        limit=w["limit"],
        data_dir=args.data_dir,
    )
    backend = VLLMBackend(str(model), **ENGINE)
    try:
        a = overhead(backend, cfg, w["repeats"], scratch)
        b = samples_per_request(backend, cfg, w["repeats"])
    finally:
        backend.close()
    c = served(model, cfg, args.concurrency, w["repeats"], scratch)

    samples = b["samples"]
    print(f"\nworkload: {', '.join(w['benchmarks'])}, {samples} samples (n={w['n']}), "
          f"{w['max_tokens']} max tokens, median of {w['repeats']}; {scratch}")  # fmt: skip
    print("| measurement | ours | baseline | ratio | goal |")
    print("|---|---|---|---|---|")
    print(f"| (a) harness eval vs bare LLM.generate (s) | {a['ours']:.2f} | {a['bare']:.2f} "
          f"| {a['ours'] / a['bare']:.3f} | <= 1.05 |")  # fmt: skip
    print(f"| (a) a full rescore of the run, overlapped in eval (s) | {a['score']:.2f} | | | |")
    print(f"| (b) n per request vs duplicated requests (samples/s) | {samples / b['one']:.1f} "
          f"| {samples / b['dup']:.1f} | {b['dup'] / b['one']:.3f} | >= 1 |")  # fmt: skip
    print(f"| (c) openai backend vs vLLM bench client, concurrency {args.concurrency} (samples/s) "
          f"| {c['samples'] / c['ours']:.1f} | {c['samples'] / c['theirs']:.1f} "
          f"| {c['theirs'] / c['ours']:.3f} | >= 1 |")  # fmt: skip


if __name__ == "__main__":
    main()
