"""Reasoning Arena (its Table 1): avg@16 on AIME 24/25/26, BeyondAIME and GPQA-Diamond, pass@5 on
LiveCodeBench v6, and their mean. Its decoding is not published: the benchmarks' defaults."""

from harness.papers import Column, Layout, PaperProfile, Preset, single

_NAMES = ("aime24", "aime25", "aime26", "beyondaime", "gpqa_diamond")
_LABELS = ("AIME24", "AIME25", "AIME26", "BeyondAIME", "GPQA-D")
PROFILE = PaperProfile(
    method="arena",
    paper="reasoning_arena",
    layout=Layout(
        "Table 1",
        (
            *(single(b, label, "avg@16") for b, label in zip(_NAMES, _LABELS, strict=True)),
            single("livecodebench:release_v6", "LCB v6 (pass@5)", "pass@5", metric="pass@5"),
            Column("avg", "Avg.", (*_NAMES, "livecodebench:release_v6"), paper_metric="mean"),
        ),
    ),
    presets={
        "arena": Preset(
            description="Reasoning Arena: avg@16 on AIME and GPQA-Diamond, pass@5 on LiveCodeBench v6 "
            "(decoding not published: the benchmarks' defaults, T=0.6, top-p 0.95)",
            benchmarks=("aime24", "aime25", "gpqa_diamond", "livecodebench:release_v6"),
            sampling={"n": 16},
        )
    },
)
