"""Reasoning Arena benchmark: the live tournament against the round robin, and the judge client's throughput.

(a) The same routed groups (N = 8 traces of known strength) through Arena-Live's tournament and the round
    robin, each followed by its Bradley-Terry fit, on one judge whose verdict on a pair is fixed: the
    stronger trace wins (noiseless), or wins with probability sigma(beta_i - beta_j) (noisy). Printed: judge
    calls per routed group (goal <= 18 at N = 8, against 28) and the rank agreement (Kendall tau) of the
    two BT orderings, and of each with the true order.
(b) The judge client against a real local `vllm serve`: comparisons per second asked one at a time, in one
    batch (the method's way), and the batch asked again in the same presentation order with the verdict
    cache on and off (only parsed verdicts are cached: the hit rate is the first pass's parse rate).

    python tests/perf/bench_arena.py [--groups 200] [--model DIR | --base-url URL --model NAME]

(b) needs vLLM (the `tox -e vllm` environment) or a running server (--base-url).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from scipy.stats import kendalltau

from trainers.methods.arena.judge import ArenaJudge, PairAsk, ServedJudge
from trainers.methods.arena.method import ArenaMethod, ArenaOptions, Group

N = 8


class StrengthJudge:
    """A judge over responses "trace K of group G": verdicts fixed per pair, from the traces' strengths."""

    def __init__(self, strengths: dict[str, list[float]], noisy: bool):
        self.strengths, self.noisy = strengths, noisy

    def __call__(self, prompts, seeds, temperature):
        return [f"\\boxed{{{self.verdict(p)}}}" for p in prompts]

    def verdict(self, prompt: str) -> str:
        a, b = (self._trace(prompt.split(f"[RESPONSE {s}]", 1)[1]) for s in "AB")
        beta = self.strengths[a[0]]
        p = 1 / (1 + math.exp(-(beta[a[1]] - beta[b[1]])))
        if not self.noisy:
            return "A" if p > 0.5 else "B"
        pair = sorted([a, b])  # one draw per unordered pair, whichever way it is shown
        u = int(hashlib.sha256(repr(pair).encode()).hexdigest()[:12], 16) / 16**12
        first_wins = u < (p if pair[0] == a else 1 - p)
        return "A" if first_wins == (pair[0] == a) else "B"

    @staticmethod
    def _trace(section: str) -> tuple[str, int]:
        words = section.split()
        return words[3], int(words[1])  # "trace K of G"


class Tokens:
    """Whitespace tokens: enough for the judge's length budget on these short responses."""

    def encode(self, text, add_special_tokens=False):
        return list(range(len(text.split())))

    def decode(self, ids, skip_special_tokens=True):
        return " ".join("x" for _ in ids)


def tournaments(groups: int, noisy: bool, seed: int) -> dict[str, float]:
    """(a): one judge, the same groups, live then round robin, each with its BT fit."""
    rng = random.Random(seed)
    strengths = {str(g): [rng.gauss(0, 1.5) for _ in range(N)] for g in range(groups)}
    results = {}
    for tournament in ("live", "round_robin"):
        options = ArenaOptions(tournament=tournament, rating="bt", arrival="random", judge_cache=0)
        method = ArenaMethod(None, options, N, StrengthJudge(strengths, noisy), seed=seed)
        method.judge.tokenizer = Tokens()
        routed = [
            Group(g, "problem", "answer", [f"trace {k} of {g}" for k in range(N)], [1] * N, [0.0] * N)
            for g in strengths
        ]
        start = time.perf_counter()
        method.rate_groups(routed)
        results[tournament] = {
            "calls": statistics.fmean(g.calls for g in routed),
            "scores": [g.judged for g in routed],
            "seconds": time.perf_counter() - start,
        }
    live, rr = results["live"], results["round_robin"]
    truth = list(strengths.values())
    return {
        "live_calls": live["calls"],
        "rr_calls": rr["calls"],
        "tau_live_rr": statistics.fmean(tau(a, b) for a, b in zip(live["scores"], rr["scores"], strict=True)),
        "tau_live_true": statistics.fmean(tau(a, b) for a, b in zip(live["scores"], truth, strict=True)),
        "tau_rr_true": statistics.fmean(tau(a, b) for a, b in zip(rr["scores"], truth, strict=True)),
        "live_seconds": live["seconds"],
        "rr_seconds": rr["seconds"],
    }


def tau(a, b) -> float:
    return float(kendalltau(a, b).statistic)


def asks(count: int) -> list[PairAsk]:
    """Pairs of short worked answers to sums, as an all-correct group's traces would be."""
    out = []
    for k in range(count):
        x, y = 3 + k % 17, 5 + k % 13
        first = f"We add {x} and {y}: {x} + {y} = {x + y}. The answer is {x + y}."
        second = f"{x} plus {y} makes {x + y}, so the answer is \\boxed{{{x + y}}}."
        out.append(PairAsk(f"Add {x} and {y}. (item {k})", str(x + y), first, second))
    return out


def served(base_url: str, model: str, count: int, concurrency: int, tokenizer) -> dict[str, float]:
    """(b): comparisons per second one at a time, batched, and batched again with the cache on and off."""
    from harness.backends import EngineConfig

    def judge(cache: int, at_once: int) -> ArenaJudge:
        engine = EngineConfig(model, backend="openai", base_url=base_url, concurrency=at_once)
        return ArenaJudge(ServedJudge(engine, 64), tokenizer=tokenizer, max_tokens=64, cache_size=cache)

    pairs = asks(count)
    judge(0, concurrency).compare(pairs[:concurrency])  # warm up
    out = {}
    one = judge(0, 1)
    start = time.perf_counter()
    for ask in pairs:
        one.compare([ask])
    out["one_at_a_time"] = count / (time.perf_counter() - start)
    for name, cache in (("cache_off", 0), ("cache_on", 100_000)):
        batched = judge(cache, concurrency)
        orders = batched.state_dict()["rng"]
        start = time.perf_counter()
        batched.compare(pairs)
        out["batched"] = count / (time.perf_counter() - start)  # the first pass: no hits either way
        batched.take_counters()
        batched.rng.setstate(orders)  # the same pairs shown the same way: what the cache can serve
        start = time.perf_counter()
        batched.compare(pairs)
        out[name] = count / (time.perf_counter() - start)
        out[f"{name}_hits"] = batched.take_counters().get("cache_hits", 0) / count
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", help="model folder to serve, or the served model's name with --base-url")
    parser.add_argument("--base-url", help="a running OpenAI-compatible server [default: start vllm serve]")
    parser.add_argument("--pairs", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--skip-server", action="store_true", help="(a) only")
    args = parser.parse_args()

    print(f"(a) {args.groups} routed groups of N = {N}, one judge for both tournaments, BT on each")
    print(
        "| judge | calls/group live | round robin | ratio | tau(live, rr) | tau(live, true) | tau(rr, true) |"
    )
    print("|---|---|---|---|---|---|---|")
    for noisy in (False, True):
        r = tournaments(args.groups, noisy, args.seed)
        print(
            f"| {'noisy' if noisy else 'noiseless'} | {r['live_calls']:.2f} | {r['rr_calls']:.2f} "
            f"| {r['live_calls'] / r['rr_calls']:.3f} | {r['tau_live_rr']:.3f} | {r['tau_live_true']:.3f} "
            f"| {r['tau_rr_true']:.3f} |"
        )
    if args.skip_server:
        return

    from transformers import AutoTokenizer

    proc = None
    model = args.model
    if args.base_url is None:
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_backends import start_server

        from harness.core.models import fetch_model

        model = model or str(fetch_model("smollm2-135m-instruct"))
        proc, base_url = start_server(
            Path(model), Path(tempfile.mkdtemp(prefix="bench-arena-")) / "serve.log"
        )
    else:
        base_url = args.base_url
    try:
        r = served(base_url, model, args.pairs, args.concurrency, AutoTokenizer.from_pretrained(model))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=60)
    print(f"\n(b) the judge client against {base_url} ({model}), {args.pairs} pairs, 64-token verdicts")
    print("| mode | comparisons/s | ratio to one at a time | cache hits |")
    print("|---|---|---|---|")
    base = r["one_at_a_time"]
    print(f"| one at a time | {base:.2f} | 1.00 | |")
    print(f"| one batch, concurrency {args.concurrency} | {r['batched']:.2f} | {r['batched'] / base:.2f} | |")
    for name in ("cache_off", "cache_on"):
        label = f"the batch again, cache {name.split('_')[1]}"
        print(f"| {label} | {r[name]:.2f} | {r[name] / base:.2f} | {r[name + '_hits']:.0%} |")


if __name__ == "__main__":
    main()
