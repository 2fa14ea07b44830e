"""Cleaning the corpus: the quality and length filter (web), the token budget (DocMath), MinHash-LSH
deduplication inside the corpus and decontamination against the evaluation sets.

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
* DocMath token length: the report's paragraphs joined by newlines, counted with `tokenizer` (the paper
  uses the Qwen tokenizer; `null` approximates ceil(characters / 4)). The paper keeps reports below 16K
  tokens; here a report of more than `docmath.max_tokens` tokens is dropped.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from harness import HarnessError
from harness.core.data import sha256_file
from harness.core.progress import progress_bar
from trainers.methods.spell.corpus.sources import Report, WebDoc

MINHASH_SEED, MINHASH_SCHEME = 1, "affine32"
WHOLE_CONTEXT_CHARS = 50_000  # a longer document cannot be a near-duplicate of a corpus page (<= 32,768)


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
