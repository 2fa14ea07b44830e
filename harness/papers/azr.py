"""Absolute Zero (AZR paper, Table 1): greedy pass@1 on three code and six math benchmarks, with the
code, math and overall averages."""

from harness.papers import MATH, Column, Layout, PaperProfile, Preset, single

_CODE = ("humaneval_plus", "mbpp_plus", "livecodebench:release_v5")
_LABELS = ["HEval+", "MBPP+", "LCB v1-5", "AIME24", "AIME25", "AMC23", "MATH500", "Minerva", "Olympiad"]
_M = "pass@1"
PROFILE = PaperProfile(
    method="azr",
    paper="absolute_zero",
    layout=Layout(
        "Table 1",
        (
            *(single(b, label, _M) for b, label in zip(_CODE, _LABELS[:3], strict=True)),
            Column("code_avg", "CAvg", _CODE, paper_metric=_M),
            *(single(b, label, _M) for b, label in zip(MATH, _LABELS[3:], strict=True)),
            Column("math_avg", "MAvg", MATH, paper_metric=_M),
            Column("avg", "AVG", ("code_avg", "math_avg"), paper_metric=_M),
        ),
    ),
    presets={
        "azr": Preset(
            description="Absolute Zero: greedy pass@1; math 16,000 tokens, "
            "LiveCodeBench v1-5 (all 880) 8,096",
            benchmarks=(*_CODE, *MATH),
            sampling={"n": 1, "temperature": 0.0, "top_p": 1.0, "max_tokens": 16000},
            per_benchmark={"livecodebench": {"max_tokens": 8096}},
        )
    },
)
