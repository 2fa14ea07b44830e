"""SPAE (its Table 1): accuracy (avg@16) and mean length on five math benchmarks and GPQA main, and
their averages, to two decimals."""

from harness.papers import MATH, Column, Layout, PaperProfile, Preset, single

_NAMES = ("aime24", "aime25", "amc23", "minerva", "olympiadbench", "gpqa_main")
_LABELS = ("AIME24", "AIME25", "AMC23", "Minerva", "Olympiad", "GPQA")
_COLUMNS = []
for _b, _label in zip(_NAMES, _LABELS, strict=True):
    _COLUMNS += [single(_b, f"{_label} Acc", "avg@16"), single(_b, f"{_label} Len", "len@16", metric="len")]
_COLUMNS += [
    Column("avg", "Avg Acc", _NAMES, paper_metric="avg@16"),
    Column("avg", "Avg Len", _NAMES, metric="len", paper_metric="len@16"),
]
PROFILE = PaperProfile(
    method="spae",
    paper="spae",
    layout=Layout("Table 1", tuple(_COLUMNS), digits=2),
    presets={
        "spae": Preset(
            description="SPAE: Acc@16 (avg@16), T=0.6, top-k 50, top-p 1.0, 32,768 tokens; GPQA main (448)",
            benchmarks=(*MATH[:3], "minerva", "olympiadbench", "gpqa_main"),
            sampling={"n": 16, "temperature": 0.6, "top_p": 1.0, "top_k": 50, "max_tokens": 32768},
        )
    },
)
