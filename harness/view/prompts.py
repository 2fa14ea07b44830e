"""The prompt a sample was generated from, rebuilt: run.json keeps the template and system prompt, the
benchmark's data keeps the problem. The data is read from where the run read it (a local folder or
file, or the Hub's offline cache), and only if its content hash still equals the run's."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import Any


class PromptSource:
    """Per benchmark, its problems by item id (loaded once, on first use) and the recorded template."""

    def __init__(self, info: dict[str, Any]):
        self.info = info
        self._loaded: dict[str, tuple[dict[str, str], str | None]] = {}

    def problems(self, benchmark: str) -> dict[str, str]:
        return self._load(benchmark)[0]

    def messages(self, benchmark: str, item_id: str) -> tuple[list[dict[str, str]] | None, str | None]:
        """The chat turns as the model saw them (before its chat template), or None and why not."""
        from harness.core.types import Item, messages_for

        prompt = self.info.get("prompts", {}).get(benchmark)
        if not isinstance(prompt, dict) or not isinstance(prompt.get("template"), str):
            return None, "this run did not generate its samples (score --generations): no prompt recorded"
        problems, note = self._load(benchmark)
        if item_id not in problems:
            return None, note or f"item {item_id} is not in the benchmark's data"
        item = Item(item_id, problems[item_id], "")
        return [dict(m) for m in messages_for(item, prompt["template"], prompt.get("system"))], None

    def _load(self, benchmark: str) -> tuple[dict[str, str], str | None]:
        if benchmark not in self._loaded:
            self._loaded[benchmark] = self._read(benchmark)
        return self._loaded[benchmark]

    def _read(self, benchmark: str) -> tuple[dict[str, str], str | None]:
        from benchmarks import get_benchmark
        from harness.scoring import trusted_include_path

        source = self.info.get("datasets", {}).get(benchmark)
        if not isinstance(source, dict):
            return {}, "run.json records no dataset for this benchmark"
        config = self.info.get("config", {})
        kind, data_dir, spec = source.get("kind"), None, benchmark
        if kind == "local":
            data_dir = Path(str(source.get("dir", ""))).parent
        elif kind == "file":  # a custom benchmark: jsonl:PATH, named after its file
            spec = f"jsonl:{source.get('path')}"
            if not Path(str(source.get("path", ""))).is_file():
                return {}, f"the benchmark file {source.get('path')} is gone"
        try:
            with (
                _offline(),
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                bench = get_benchmark(
                    spec,
                    config.get("scorers", {}).get(benchmark),
                    trusted_include_path(config, None),  # a run folder names no code to run
                )
                loaded = bench.load(data_dir)
        except Exception as e:  # missing data, no network, a changed layout: the view goes on without it
            return {}, f"the benchmark's data could not be read here ({type(e).__name__}: {e})"[:300]
        if loaded.source.get("content_hash") != source.get("content_hash"):
            return {}, "the benchmark's data changed since the run: prompt not rebuilt"
        return {item.id: item.problem for item in loaded.items}, None


@contextlib.contextmanager
def _offline():
    """The Hub's cache only: the view never downloads."""
    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
