"""OlympiadBench, the English open-ended text-only competition-maths subset (OE_TO_maths_en_COMP)."""

from pathlib import Path
from typing import Any

from benchmarks.base import Benchmark, FileLayout, HubSource, columns
from harness.core.data import require
from harness.core.types import Sampling


def _final_answer(row: dict[str, Any], path: Path, number: int) -> str:
    """`final_answer` is a list of strings like ["$69$,$84$"]: join it and drop the $ delimiters."""
    value = require(row, "final_answer", path, number)
    parts = value if isinstance(value, list) else [value]
    return ", ".join(str(p).replace("$", "").strip() for p in parts)


_fields = columns(
    id="id",
    problem="question",
    answer=_final_answer,
    meta=("unit", "answer_type", "is_multiple_answer", "subfield"),
)

OLYMPIADBENCH = Benchmark(
    name="olympiadbench",
    description="OlympiadBench OE_TO_maths_en_COMP (674-675 problems)",
    hub=HubSource(
        repo="Hothan/OlympiadBench",
        revision="91184b52131e7fc9455fef848035173aea8cc01a",
        layout=FileLayout(
            files=("OlympiadBench/OE_TO_maths_en_COMP/OE_TO_maths_en_COMP.parquet",), to_item=_fields
        ),
    ),
    local_layouts=(FileLayout(files=("test.jsonl",), to_item=_fields),),  # Qwen2.5-Math copy
    sampling=Sampling(n=4, temperature=0.6, top_p=0.95, max_tokens=32768),
)
