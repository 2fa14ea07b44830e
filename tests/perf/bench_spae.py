"""SPAE benchmark: what the probes cost (docs/methods/spae.md), in one process.

Part 1, training (`--steps` > 0): the same model, prompts, seed and settings through `harness train spae`
with the SPAE advantage and its probes at every m-th boundary (`probe_every_m` for each `--every`), and
with the RF-B advantage, which probes nothing: step time (TRL's `step_time`: generation, probes and the
update, after the first step, which warms up), the probes' seconds and their share of the step, probes
per step, and the ratio of each probed step to the unprobed one. Dynamic sampling is off so every variant
samples the same number of groups.

Part 2, the probe engines (`--probe-traces` > 0): the probes of synthetic reasoning traces (each probe's
context extends the previous one's, as a response's boundaries do) through the transformers prober (it
shares each context's KV cache between its N samples) and, where vLLM is installed (`tox -e vllm`), vLLM's
prober (top-20 entropy, as in training) with prefix caching on and off: seconds per probe, ratio off / on.

    python tests/perf/bench_spae.py [--model DIR] [--steps 3] [--every 1,4] [--probe-traces 8]
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
import time
from pathlib import Path

from trainers.config import TrainConfig
from trainers.integration.callbacks import read_jsonl
from trainers.integration.run import train

REPO = Path(__file__).resolve().parents[2]
PROBLEMS = REPO / "configs/train/ulorl-cpu-problems.jsonl"
STEP = "We work on part {k} of the sum and write down what we have so far, which is {v}.\n\n"


def run(model: str, out: Path, options: dict, args: argparse.Namespace) -> dict[str, float]:
    """`args.steps` steps of SPAE with `options`; per-step means from OUT/metrics.jsonl."""
    config = TrainConfig(
        method="spae",
        model=model,
        dataset=f"jsonl:{PROBLEMS}",
        out=str(out),
        scorer="integer",
        prompt_template="{problem}",
        prompts_per_step=args.groups,
        num_generations=args.group_size,
        max_completion_length=args.max_tokens,
        temperature=0.7,
        learning_rate=1e-6,
        loss_type="dapo",
        max_steps=args.steps,
        save_steps=args.steps,
        report_to=(),
        seed=args.seed,
        options={"dynamic_sampling": False, "delimiter": "\n\n", "logged_groups": 0, **options},
    )
    train(config)
    steps = [m for m in read_jsonl(out / "metrics.jsonl") if "step_time" in m]
    steps = steps[1:] or steps  # the first step warms the engine up
    mean = lambda key: sum(m.get(key, 0.0) for m in steps) / len(steps)  # noqa: E731
    return {
        "step": mean("step_time"),
        "probe": mean("spae/seconds/probe"),
        "generate": mean("spae/seconds/generate"),
        "probes": mean("spae/probes"),
        "found": mean("spae/boundaries/found"),
    }


def training(args: argparse.Namespace) -> None:
    variants = [(f"SPAE, every {m}", {"probe_every_m": m}) for m in args.every]
    variants.append(("RF-B (no probes)", {"advantage": "rfb"}))
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, options) in enumerate(variants):
            results[name] = run(args.model, Path(tmp) / str(k), options, args)
    base = results["RF-B (no probes)"]["step"]
    print(
        f"training: {args.steps} steps, {args.groups} prompts x {args.group_size} samples, "
        f"{args.max_tokens} tokens, N = 5 probes of <= 10 tokens"
    )
    header = ("step s", "gen s", "probe s", "share", "probes", "found", "ratio")
    print(f"{'variant':<20}" + "".join(f"{h:>9}" for h in header))
    for name, r in results.items():
        share = r["probe"] / r["step"]
        print(
            f"{name:<20}{r['step']:>9.1f}{r['generate']:>9.1f}{r['probe']:>9.2f}{share:>9.1%}"
            f"{r['probes']:>9.1f}{r['found']:>9.1f}{r['step'] / base:>8.2f}x"
        )


def probe_jobs(tokenizer, traces: int, steps: int):
    """Every boundary of `traces` synthetic traces of `steps` steps: contexts sharing their prefixes."""
    from harness.probing.probe import PROBE_TEXT, ProbeJob

    encode = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    probe = encode(PROBE_TEXT)
    jobs = []
    for t in range(traces):
        prompt = encode(f"Problem {t}: what is {t + 12} + {3 * t + 7}? Work it out step by step.\n\n")
        trace: list[int] = []
        for k in range(steps):
            trace += encode(STEP.format(k=k + 1, v=(k + 1) * (t + 3)))
            jobs.append(ProbeJob(prompt + trace + probe, encode(str(4 * t + 19)), seed=1000 * t + 5 * k))
    return jobs


def engines(args: argparse.Namespace) -> None:
    from harness.backends.hf import HFBackend
    from harness.probing.probe import Decoding, HFProber, VLLMProber

    hf = HFBackend(args.model, dtype="float32")
    jobs = probe_jobs(hf.tokenizer, args.probe_traces, args.trace_steps)
    decoding = Decoding(temperature=0.7, top_p=1.0)
    timings = {}

    def timed(name: str, prober, batch: int) -> None:
        prober.probe(jobs[:1], decoding)  # warm-up, untimed
        start = time.perf_counter()
        for i in range(0, len(jobs), batch):
            prober.probe(jobs[i : i + batch], decoding)
        timings[name] = (time.perf_counter() - start) / len(jobs)

    timed("transformers", HFProber(hf), 16)
    del hf
    if importlib.util.find_spec("vllm") is None:
        print("vLLM is not installed here: run in the vllm environment (`tox -e vllm`) for vLLM's numbers")
    else:
        from harness.backends.vllm import VLLMBackend

        for caching in (True, False):
            backend = VLLMBackend(
                args.model,
                dtype="float32",
                enforce_eager=True,
                max_logprobs=20,
                enable_prefix_caching=caching,
            )
            try:  # the top-20 entropy, as training probes on TRL's engine (all 49K: too slow here)
                prober = VLLMProber(backend, "topk=20")
                timed(f"vLLM, prefix caching {'on' if caching else 'off'}", prober, len(jobs))
            finally:
                backend.close()
    print(f"probe engines: {len(jobs)} probes ({args.probe_traces} traces x {args.trace_steps} boundaries)")
    for name, seconds in timings.items():
        print(f"{name:<28}{1000 * seconds:>8.1f} ms per probe")
    on, off = timings.get("vLLM, prefix caching on"), timings.get("vLLM, prefix caching off")
    if on and off:
        print(f"ratio prefix caching off / on: {off / on:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="models/smollm2", help="a local model folder (SmolLM2 by default)")
    parser.add_argument("--steps", type=int, default=3, help="training steps per variant (0: skip part 1)")
    parser.add_argument("--every", default="1,4", help="probe_every_m values to time")
    parser.add_argument("--groups", type=int, default=2)
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--probe-traces", type=int, default=8, help="synthetic traces (0: skip part 2)")
    parser.add_argument("--trace-steps", type=int, default=8, help="boundaries per synthetic trace")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    args.every = [int(m) for m in args.every.split(",") if m]
    if args.steps:
        training(args)
    if args.probe_traces:
        engines(args)


if __name__ == "__main__":
    main()
