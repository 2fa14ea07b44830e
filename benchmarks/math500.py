"""MATH-500: the PRM800K test subset of MATH."""

from benchmarks.base import Benchmark, FileLayout, HubSource, columns
from harness.core.types import Sampling

_fields = columns(id="unique_id", problem="problem", answer="answer", meta=("subject", "level"))

MATH500 = Benchmark(
    name="math500",
    description="MATH-500 (500 problems, PRM800K test split)",
    hub=HubSource(
        repo="HuggingFaceH4/MATH-500",
        revision="6e4ed1a2a79af7d8630a6b768ec859cb5af4d3be",
        layout=FileLayout(files=("test.jsonl",), to_item=_fields),
    ),
    sampling=Sampling(n=4, temperature=0.6, top_p=0.95, max_tokens=32768),
)
