"""The benchmark registry: every installed package's `harness.benchmarks` entry points (this project's
own in its pyproject.toml, one small module per family), each loaded on first use."""

from typing import Any

from benchmarks.base import Benchmark
from harness import HarnessError
from harness.core.registry import Registry


def _benchmark(name: str, loaded: Any) -> Benchmark:
    """A registered object as a benchmark: a `Benchmark` named as its entry point."""
    if not isinstance(loaded, Benchmark):
        raise HarnessError(f"benchmark {name!r} is registered as a {type(loaded).__name__}, not a Benchmark")
    if loaded.name != name:
        raise HarnessError(f"benchmark {name!r} is registered with an object named {loaded.name!r}")
    return loaded


BENCHMARKS: Registry[Benchmark] = Registry("harness.benchmarks", "benchmark", _benchmark)


def get_benchmark(spec: str, scorer: str | None = None, lm_eval_include_path: str | None = None) -> Benchmark:
    """A registered benchmark by name, a custom one from "jsonl:PATH", or an lm-eval task."""
    if spec.startswith("jsonl:"):
        from benchmarks.custom import custom_benchmark

        return custom_benchmark(spec, scorer)
    if spec.startswith("lm-eval:"):
        from benchmarks.lmeval import lm_eval_benchmark

        return lm_eval_benchmark(spec, lm_eval_include_path)
    if spec.startswith("livecodebench:"):
        from benchmarks.livecodebench import livecodebench

        return livecodebench(spec)
    if spec not in BENCHMARKS:
        raise HarnessError(
            f"unknown benchmark {spec!r}; valid benchmarks: {', '.join(BENCHMARKS)} "
            "(or livecodebench:RELEASE[:START..END], jsonl:PATH, lm-eval:TASK)"
        )
    return BENCHMARKS[spec]


__all__ = ["BENCHMARKS", "Benchmark", "get_benchmark"]
