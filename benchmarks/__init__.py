"""The benchmark registry: one small module per benchmark family."""

from benchmarks.aime import AIME24, AIME25
from benchmarks.amc23 import AMC23
from benchmarks.base import Benchmark
from benchmarks.cruxeval import CRUXEVAL
from benchmarks.custom import custom_benchmark
from benchmarks.docmath import DOCMATH
from benchmarks.evalplus import HUMANEVAL, HUMANEVAL_PLUS, MBPP_PLUS
from benchmarks.frames import FRAMES
from benchmarks.gpqa import GPQA_DIAMOND, GPQA_MAIN
from benchmarks.livecodebench import livecodebench
from benchmarks.lmeval import lm_eval_benchmark
from benchmarks.longbench import HOTPOTQA, LONGBENCH_V2, MUSIQUE, TWOWIKIMQA
from benchmarks.math500 import MATH500
from benchmarks.minerva import MINERVA
from benchmarks.olympiadbench import OLYMPIADBENCH
from harness import HarnessError

BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        AIME24,
        AIME25,
        MATH500,
        AMC23,
        MINERVA,
        OLYMPIADBENCH,
        livecodebench(),
        *CRUXEVAL,
        HUMANEVAL,
        HUMANEVAL_PLUS,
        MBPP_PLUS,
        GPQA_DIAMOND,
        GPQA_MAIN,
        LONGBENCH_V2,
        HOTPOTQA,
        TWOWIKIMQA,
        MUSIQUE,
        FRAMES,
        DOCMATH,
    )
}


def get_benchmark(spec: str, scorer: str | None = None, lm_eval_include_path: str | None = None) -> Benchmark:
    """A registered benchmark by name, a custom one from "jsonl:PATH", or an lm-eval task."""
    if spec.startswith("jsonl:"):
        return custom_benchmark(spec, scorer)
    if spec.startswith("lm-eval:"):
        return lm_eval_benchmark(spec, lm_eval_include_path)
    if spec.startswith("livecodebench:"):
        return livecodebench(spec)
    if spec not in BENCHMARKS:
        raise HarnessError(
            f"unknown benchmark {spec!r}; valid benchmarks: {', '.join(BENCHMARKS)} "
            "(or livecodebench:RELEASE[:START..END], jsonl:PATH, lm-eval:TASK)"
        )
    return BENCHMARKS[spec]


__all__ = ["BENCHMARKS", "Benchmark", "get_benchmark"]
