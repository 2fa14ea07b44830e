"""AMC 2023: the 40-question evaluation set (answers are stored as floats, e.g. 27.0)."""

from benchmarks.base import Benchmark, FileLayout, HubSource, columns

AMC23 = Benchmark(
    name="amc23",
    description="AMC 2023 (40 problems)",
    hub=HubSource(
        repo="math-ai/amc23",
        revision="80815d37005feb82cd7f8fbc6901d5d3eff43057",
        layout=FileLayout(
            files=("test-00000-of-00001.parquet",),
            to_item=columns(id="id", problem="question", answer="answer"),
        ),
    ),
    # Qwen2.5-Math copy.
    local_layouts=(
        FileLayout(files=("test.jsonl",), to_item=columns(id="id", problem="problem", answer="answer")),
    ),
)
