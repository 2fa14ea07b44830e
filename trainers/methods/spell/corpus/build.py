"""SPELL's training corpus (its paper's App. C.1), built in stages; `build()` runs them, writes the dataset.

Web documents (Ultra-FineWeb) -> `quality_filter` (quality score and length) -> `deduplicate` (MinHash-LSH
near-duplicates inside the corpus) -> `decontaminate` (MinHash-LSH near-duplicates of evaluation
texts) -> `embed` (sentence-transformers) -> `hierarchical_kmeans` (scikit-learn) -> clusters of about
`cluster_size` documents, shuffled with the seed and split half `doc_general_qa`, half `doc_mc`.
DocMath-Eval reports -> token budget -> the same deduplication and decontamination (a report is one
document) -> one `docmath_qa` cluster per report, whose documents are its paragraph and table chunks.
Each task is then capped at `tasks.per_task` clusters (the paper: 2,150).

The stages live in their own modules: `config` (settings), `sources` (reading), `clean` (filters,
deduplication, decontamination), `cluster` (embedding and k-means), `tasks` (the split into tasks);
`dataset` writes the result.

Memory: the documents that pass the filter, their MinHash signatures (about 0.6 KB each) and the
embeddings of those left (N x d float32) are held at once; the paper's scale (4M filtered documents,
4096 dimensions) needs a machine with tens of GB.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.data import sha256_file
from harness.core.progress import console
from trainers.methods.spell.corpus.clean import (
    MINHASH_SCHEME,
    MINHASH_SEED,
    decontaminate,
    deduplicate,
    load_benchmark_passages,
    quality_filter,
    signatures,
    token_budget,
    token_counter,
)
from trainers.methods.spell.corpus.cluster import cluster_documents, embedder_location, package_version
from trainers.methods.spell.corpus.config import check_config, load_config
from trainers.methods.spell.corpus.dataset import write_dataset
from trainers.methods.spell.corpus.sources import read_docmath, read_web
from trainers.methods.spell.corpus.tasks import assemble, split_tasks

__all__ = ["build", "build_synthetic", "load_config"]  # load_config: the settings `build` takes


def build(
    config: dict[str, Any], out_dir: str | Path, base: Path | None = None, extra_inputs: dict | None = None
) -> Path:
    """Run every stage on `config` (relative paths from `base`, default the working folder) and write the
    dataset to OUT_DIR; returns OUT_DIR."""
    check_config(config)
    base = Path(base or ".")
    seed, dedup, decon = config["seed"], config["dedup"], config["decontaminate"]
    threshold, num_perm, n = dedup["threshold"], dedup["num_perm"], dedup["shingle_words"]
    count_tokens = token_counter(config["tokenizer"])
    web_cfg, docmath_cfg = config["web"], config["docmath"]

    stream, web_inputs = read_web(web_cfg, base)
    web, web_failed = quality_filter(stream, web_cfg["min_score"], web_cfg["min_chars"], web_cfg["max_chars"])
    web_read = web_failed.pop("read")
    console.print(f"web: read {web_read}, {len(web)} pass the quality and length filter")
    reports, docmath_inputs = read_docmath(docmath_cfg, base)
    docmath_read = len(reports)
    reports, docmath_failed = token_budget(reports, docmath_cfg["max_tokens"], count_tokens)
    console.print(f"docmath: read {docmath_read} reports, {len(reports)} within the token budget")
    filtered = {"web": len(web), "docmath": len(reports)}

    web_sigs = signatures([d.text for d in web], num_perm, n, "minhash web")
    kept, _ = deduplicate(web_sigs, threshold, num_perm)
    web, web_sigs = [web[i] for i in kept], [web_sigs[i] for i in kept]
    report_sigs = signatures([r.text for r in reports], num_perm, n, "minhash docmath")
    kept, _ = deduplicate(report_sigs, threshold, num_perm)
    reports, report_sigs = [reports[i] for i in kept], [report_sigs[i] for i in kept]
    deduplicated = {"web": len(web), "docmath": len(reports)}
    console.print(f"deduplicated: {len(web)} web documents, {len(reports)} reports")

    named, benchmark_inputs = load_benchmark_passages(
        decon["benchmarks"], decon["data_dir"], base, decon["chunk_words"], decon["min_words"]
    )
    passage_sigs = signatures([p for _, p in named], num_perm, n, "minhash passages")
    passage_names = [name for name, _ in named]
    kept, web_hits = decontaminate(web_sigs, passage_sigs, passage_names, threshold, num_perm)
    web = [web[i] for i in kept]
    kept, report_hits = decontaminate(report_sigs, passage_sigs, passage_names, threshold, num_perm)
    reports = [reports[i] for i in kept]
    console.print(
        f"decontaminated against {len(named)} passages: {len(web)} web documents, {len(reports)} reports"
    )
    if not web:
        raise HarnessError("no web documents are left after filtering, deduplication and decontamination")

    texts = [d.text for d in web]
    web_groups, cluster_counts, dimension = cluster_documents(
        texts, config["clusters"], config["embedder"], seed, count_tokens
    )
    console.print(f"clustered: {cluster_counts['formed']} clusters, {cluster_counts['kept']} kept")
    order = split_tasks(len(web_groups), len(reports), seed)
    documents = [tuple(texts[i] for i in group) for group in web_groups]
    sources = (web_cfg["name"], docmath_cfg["name"])
    clusters = assemble(order, documents, reports, config["tasks"]["per_task"], sources)

    def contaminated(hits: dict[int, str]) -> dict[str, int]:
        return {b: list(hits.values()).count(b) for b in decon["benchmarks"]}

    counts = {
        "web": {
            "read": web_read,
            "filtered": filtered["web"],
            "deduplicated": deduplicated["web"],
            "decontaminated": len(web),
            "clustered": sum(map(len, web_groups)),
            "removed": web_failed
            | {
                "near_duplicates": filtered["web"] - deduplicated["web"],
                "contaminated": contaminated(web_hits),
            },
            "clusters": cluster_counts,
        },
        "docmath": {
            "read": docmath_read,
            "filtered": filtered["docmath"],
            "deduplicated": deduplicated["docmath"],
            "decontaminated": len(reports),
            "clustered": len(reports),
            "removed": docmath_failed
            | {
                "near_duplicates": filtered["docmath"] - deduplicated["docmath"],
                "contaminated": contaminated(report_hits),
            },
        },
        "tasks_available": {task: len(order[task]) for task in order},
    }
    manifest = {
        "builder": "harness corpus spell (trainers/methods/spell/corpus/build.py)",
        "seed": seed,
        "counts": counts,
        "embedder": {
            "model": config["embedder"]["model"],
            "loaded_from": embedder_location(config["embedder"]["model"])[1],
            "dimension": dimension,
        },
        "tokenizer": config["tokenizer"] or "approximation: ceil(characters / 4)",
        "minhash": {"seed": MINHASH_SEED, "scheme": MINHASH_SCHEME, "shingles": f"word {n}-grams"},
        "clustering": "two-level sklearn.cluster.KMeans (build.hierarchical_kmeans)",
        "inputs": {"web": web_inputs, "docmath": docmath_inputs, "benchmarks": benchmark_inputs}
        | (extra_inputs or {}),
        "parameters": config,
        "libraries": {name: package_version(name) for name in LIBRARIES},
    }
    out = write_dataset(out_dir, clusters, manifest)
    console.print(f"wrote {len(clusters)} clusters to {out}")
    return out


LIBRARIES = (
    "datasketch",
    "scikit-learn",
    "sentence-transformers",
    "torch",
    "transformers",
    "numpy",
    "harness",
)


def build_synthetic(out_dir: str | Path, config: dict[str, Any]) -> Path:
    """Generate the synthetic corpus (synthetic.py) with the config's seed in a temporary folder and
    build from it; the manifest names the generated files by their place in that folder and sha256."""
    from trainers.methods.spell.corpus import synthetic

    with tempfile.TemporaryDirectory(prefix="spell-synthetic-") as folder:
        synthetic.write_synthetic(folder, config["seed"])
        files = sorted(p for p in Path(folder).rglob("*") if p.is_file())
        generated = {
            "generator": "trainers/methods/spell/corpus/synthetic.py",
            "seed": config["seed"],
            "text_sha256": synthetic.fingerprint(),
            "files": [{"name": str(p.relative_to(folder)), "sha256": sha256_file(p)} for p in files],
        }
        return build(config, out_dir, base=Path(folder), extra_inputs={"synthetic": generated})
