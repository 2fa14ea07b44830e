"""Presets: a paper's evaluation protocol in one flag (`--preset NAME`).

A preset names the paper's benchmarks (used when --benchmarks is not given) and its sampling,
input length and scoring. Flags given explicitly still win. `harness presets` prints them all.

SPELL (the SPELL paper's §5.1 and App. C.2), point by point:
- benchmarks: docmath, frames, hotpotqa, 2wikimqa, musique (LB-MQA = their mean), longbench_v2;
- n = 8 samples, temperature 0.7, top-p 0.95, the reported number is avg@8 (the paper's "pass@1");
- input cut in the middle to 16,384 tokens (`spell`) or 100,000 (`spell-100k`) in tokens of the
  chat-formatted prompt; output 4,096 tokens, or 20,000 for reasoning models (`-reasoning`);
- QA sets and DocMath score max(rule, judge): cover exact match or ±0.15% numeric, then the LLM
  judge (SPELL's prompt, temperature 0) where the rule says 0; LongBench-V2 is letter match only.
  The judge is required (`--judge-model`; SPELL used openai/gpt-oss-120b).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness import HarnessError

MATH = ("aime24", "aime25", "amc23", "math500", "minerva", "olympiadbench")
SPELL_BENCHMARKS = ("docmath", "frames", "hotpotqa", "2wikimqa", "musique", "longbench_v2")


@dataclass(frozen=True)
class Preset:
    description: str
    benchmarks: tuple[str, ...]
    sampling: dict = field(default_factory=dict)  # n, temperature, top_p, top_k, max_tokens
    per_benchmark: dict = field(default_factory=dict)  # benchmark -> sampling overrides
    max_input_tokens: int | None = None
    judge: bool = False  # needs --judge-model: free-text benchmarks score max(rule, judge)


def _spell(max_input: int, max_tokens: int, what: str) -> Preset:
    return Preset(
        description=f"SPELL {what}: n=8, T=0.7, top-p 0.95, input {max_input}, output {max_tokens}, "
        "max(rule, judge)",
        benchmarks=SPELL_BENCHMARKS,
        sampling={"n": 8, "temperature": 0.7, "top_p": 0.95, "max_tokens": max_tokens},
        max_input_tokens=max_input,
        judge=True,
    )


PRESETS = {
    "spell": _spell(16384, 4096, "16K"),
    "spell-reasoning": _spell(16384, 20000, "16K, reasoning models"),
    "spell-100k": _spell(100000, 4096, "100K"),
    "spell-100k-reasoning": _spell(100000, 20000, "100K, reasoning models"),
    "azr": Preset(
        description="Absolute Zero: greedy pass@1; math 16,000 tokens, LiveCodeBench v1-5 (all 880) 8,096",
        benchmarks=("humaneval_plus", "mbpp_plus", "livecodebench:release_v5", *MATH),
        sampling={"n": 1, "temperature": 0.0, "top_p": 1.0, "max_tokens": 16000},
        per_benchmark={"livecodebench": {"max_tokens": 8096}},
    ),
    "arena": Preset(
        description="Reasoning Arena: avg@16 on AIME and GPQA-Diamond, pass@5 on LiveCodeBench v6 "
        "(decoding not published: the benchmarks' defaults, T=0.6, top-p 0.95)",
        benchmarks=("aime24", "aime25", "gpqa_diamond", "livecodebench:release_v6"),
        sampling={"n": 16},
    ),
    "ulorl": Preset(
        description="UloRL: avg@32, T=0.85, top-p 0.95, top-k 20, 131,072 output tokens",
        benchmarks=("aime25",),
        sampling={"n": 32, "temperature": 0.85, "top_p": 0.95, "top_k": 20, "max_tokens": 131072},
    ),
    "spae": Preset(
        description="SPAE: Acc@16 (avg@16), T=0.6, top-k 50, top-p 1.0, 32,768 tokens; GPQA main (448)",
        benchmarks=(*MATH[:3], "minerva", "olympiadbench", "gpqa_main"),
        sampling={"n": 16, "temperature": 0.6, "top_p": 1.0, "top_k": 50, "max_tokens": 32768},
    ),
}


def get_preset(name: str) -> Preset:
    if name not in PRESETS:
        raise HarnessError(f"unknown preset {name!r}; available: {', '.join(PRESETS)}")
    return PRESETS[name]
