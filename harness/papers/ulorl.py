"""UloRL (its Table 2): avg@32 on AIME 2025 and BeyondAIME, and their mean."""

from harness.papers import Column, Layout, PaperProfile, Preset, single

_M = "avg@32"
PROFILE = PaperProfile(
    method="ulorl",
    paper="ulorl",
    layout=Layout(
        "Table 2",
        (
            single("aime25", "AIME-2025", _M),
            single("beyondaime", "BeyondAIME", _M),
            Column("avg", "AVG", ("aime25", "beyondaime"), paper_metric=_M),
        ),
    ),
    presets={
        "ulorl": Preset(
            description="UloRL: avg@32, T=0.85, top-p 0.95, top-k 20, 131,072 output tokens",
            benchmarks=("aime25",),
            sampling={"n": 32, "temperature": 0.85, "top_p": 0.95, "top_k": 20, "max_tokens": 131072},
        )
    },
)
