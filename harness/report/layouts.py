"""Each seed paper's main table: its columns, column groups and averages, exactly as the paper defines
them (the papers' tables; results/paper/README.md names the average columns)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    """A table column. `parts` are benchmark names, or earlier columns' keys in the same group; a
    column with several parts is their mean. `metric`: "score" (avg@N, or pass@1, with its CI),
    "pass@K", or "len" (mean completion tokens)."""

    key: str  # the benchmark name in results/paper/*.csv
    label: str
    parts: tuple[str, ...]
    metric: str = "score"
    paper_metric: str = ""  # the metric as the paper CSV names it

    @property
    def is_average(self) -> bool:
        return self.parts != (self.key,)


@dataclass(frozen=True)
class Layout:
    paper: str
    table: str
    columns: tuple[Column, ...]
    groups: tuple[str, ...] = ("",)  # column groups: settings (SPELL's 16K / 100K input)
    digits: int = 1  # decimals the paper prints


def single(key: str, label: str, paper_metric: str, metric: str = "score") -> Column:
    return Column(key, label, (key,), metric, paper_metric)


def _spell() -> Layout:
    m = "avg@8"
    columns = (
        single("docmath", "DocMath", m),
        single("frames", "Frames", m),
        Column("lb_mqa", "LB-MQA", ("hotpotqa", "2wikimqa", "musique"), paper_metric=m),
        single("longbench_v2", "LB-V2", m),
        Column("avg", "Avg.", ("docmath", "frames", "lb_mqa", "longbench_v2"), paper_metric=m),
    )
    return Layout("spell", "Table 1", columns, groups=("16K", "100K"))


def _azr() -> Layout:
    m = "pass@1"
    code = ("humaneval_plus", "mbpp_plus", "livecodebench:release_v5")
    math = ("aime24", "aime25", "amc23", "math500", "minerva", "olympiadbench")
    labels = ["HEval+", "MBPP+", "LCB v1-5", "AIME24", "AIME25", "AMC23", "MATH500", "Minerva", "Olympiad"]
    columns = (
        *(single(b, label, m) for b, label in zip(code, labels[:3], strict=True)),
        Column("code_avg", "CAvg", code, paper_metric=m),
        *(single(b, label, m) for b, label in zip(math, labels[3:], strict=True)),
        Column("math_avg", "MAvg", math, paper_metric=m),
        Column("avg", "AVG", ("code_avg", "math_avg"), paper_metric=m),
    )
    return Layout("absolute_zero", "Table 1", columns)


def _arena() -> Layout:
    m = "avg@16"
    names = ("aime24", "aime25", "aime26", "beyondaime", "gpqa_diamond")
    labels = ("AIME24", "AIME25", "AIME26", "BeyondAIME", "GPQA-D")
    columns = (
        *(single(b, label, m) for b, label in zip(names, labels, strict=True)),
        single("livecodebench:release_v6", "LCB v6 (pass@5)", "pass@5", metric="pass@5"),
        Column("avg", "Avg.", (*names, "livecodebench:release_v6"), paper_metric="mean"),
    )
    return Layout("reasoning_arena", "Table 1", columns)


def _ulorl() -> Layout:
    m = "avg@32"
    columns = (
        single("aime25", "AIME-2025", m),
        single("beyondaime", "BeyondAIME", m),
        Column("avg", "AVG", ("aime25", "beyondaime"), paper_metric=m),
    )
    return Layout("ulorl", "Table 2", columns)


def _spae() -> Layout:
    names = ("aime24", "aime25", "amc23", "minerva", "olympiadbench", "gpqa_main")
    labels = ("AIME24", "AIME25", "AMC23", "Minerva", "Olympiad", "GPQA")
    columns = []
    for b, label in zip(names, labels, strict=True):
        columns += [single(b, f"{label} Acc", "avg@16"), single(b, f"{label} Len", "len@16", metric="len")]
    columns += [
        Column("avg", "Avg Acc", names, paper_metric="avg@16"),
        Column("avg", "Avg Len", names, metric="len", paper_metric="len@16"),
    ]
    return Layout("spae", "Table 1", tuple(columns), digits=2)


LAYOUTS = {"spell": _spell(), "azr": _azr(), "arena": _arena(), "ulorl": _ulorl(), "spae": _spae()}
