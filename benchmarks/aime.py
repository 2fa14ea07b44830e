"""AIME 2024 and 2025: 30 integer-answer problems per year."""

from benchmarks.base import Benchmark, FileLayout, HubSource, columns

_fields = columns(id="id", problem="problem", answer="answer")

AIME24 = Benchmark(
    name="aime24",
    description="AIME 2024 I+II (30 problems)",
    hub=HubSource(
        repo="HuggingFaceH4/aime_2024",
        revision="2fe88a2f1091d5048c0f36abc874fb997b3dd99a",
        layout=FileLayout(files=("data/train-00000-of-00001.parquet",), to_item=_fields),
    ),
    # Qwen2.5-Math copy: same problems and ids (60..89).
    local_layouts=(FileLayout(files=("test.jsonl",), to_item=_fields),),
    packaged={
        "repo": "QwenLM/Qwen2.5-Math",
        "revision": "a45202bd16f1ec06f433442dc1152d0074773465",
        "path": "evaluation/data/aime24/test.jsonl",
    },
)

AIME25 = Benchmark(
    name="aime25",
    description="AIME 2025 I+II (30 problems)",
    hub=HubSource(
        repo="math-ai/aime25",
        revision="563bb8404243c5f09de6ec262f2db674fe5bce9b",
        layout=FileLayout(files=("test.jsonl",), to_item=_fields),
    ),
    # AIME-Preview copies (ids I-1..II-15). The combined test.jsonl found beside them in some
    # harnesses has corrupted LaTeX escapes; loading refuses it if it is the only copy.
    local_layouts=(FileLayout(files=("test2025-I.jsonl", "test2025-II.jsonl"), to_item=_fields),),
    packaged={
        "repo": "GAIR-NLP/AIME-Preview",
        "revision": "7011a9eae7c4b78071f27b6f77f618d65608cfb0",
        "path": "eval/data/aime/test2025-I.jsonl, eval/data/aime/test2025-II.jsonl",
    },
)
