"""SPELL (the SPELL paper's §5.1 and App. C.2), point by point:
- benchmarks: docmath, frames, hotpotqa, 2wikimqa, musique (LB-MQA = their mean), longbench_v2;
- n = 8 samples, temperature 0.7, top-p 0.95, the reported number is avg@8 (the paper's "pass@1");
- input cut in the middle to 16,384 tokens (`spell`) or 100,000 (`spell-100k`) in tokens of the
  chat-formatted prompt; output 4,096 tokens, or 20,000 for reasoning models (`-reasoning`);
- QA sets and DocMath score max(rule, judge): cover exact match or ±0.15% numeric, then the LLM
  judge (SPELL's prompt, temperature 0) where the rule says 0; LongBench-V2 is letter match only.
  The judge is required (`--judge-model`; SPELL used openai/gpt-oss-120b).
- Table 1: 16K and 100K input, each with DocMath, Frames, LB-MQA, LB-V2 and their average.
"""

from harness.papers import Column, Layout, PaperProfile, Preset, single

BENCHMARKS = ("docmath", "frames", "hotpotqa", "2wikimqa", "musique", "longbench_v2")


def _preset(max_input: int, max_tokens: int, what: str) -> Preset:
    return Preset(
        description=f"SPELL {what}: n=8, T=0.7, top-p 0.95, input {max_input}, output {max_tokens}, "
        "max(rule, judge)",
        benchmarks=BENCHMARKS,
        sampling={"n": 8, "temperature": 0.7, "top_p": 0.95, "max_tokens": max_tokens},
        max_input_tokens=max_input,
        judge=True,
    )


_M = "avg@8"
PROFILE = PaperProfile(
    method="spell",
    paper="spell",
    layout=Layout(
        "Table 1",
        (
            single("docmath", "DocMath", _M),
            single("frames", "Frames", _M),
            Column("lb_mqa", "LB-MQA", ("hotpotqa", "2wikimqa", "musique"), paper_metric=_M),
            single("longbench_v2", "LB-V2", _M),
            Column("avg", "Avg.", ("docmath", "frames", "lb_mqa", "longbench_v2"), paper_metric=_M),
        ),
        groups=("16K", "100K"),
    ),
    presets={
        "spell": _preset(16384, 4096, "16K"),
        "spell-reasoning": _preset(16384, 20000, "16K, reasoning models"),
        "spell-100k": _preset(100000, 4096, "100K"),
        "spell-100k-reasoning": _preset(100000, 20000, "100K, reasoning models"),
    },
    protocols={"16K": ("spell", "spell-reasoning"), "100K": ("spell-100k", "spell-100k-reasoning")},
)
