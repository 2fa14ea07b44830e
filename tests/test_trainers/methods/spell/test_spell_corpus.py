"""SPELL's corpus (trainers/methods/spell/corpus): the whole pipeline on the synthetic corpus with the real
embedder, the on-disk format and its reader, the source row mappings and the command."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from helpers import REPO
from typer.testing import CliRunner

from harness import HarnessError
from harness.cli import app
from trainers.methods.spell.corpus import TASKS, Cluster, load_clusters, write_dataset
from trainers.methods.spell.corpus import synthetic as S
from trainers.methods.spell.corpus.build import build_synthetic
from trainers.methods.spell.corpus.clean import (
    benchmark_passages,
    deduplicate,
    quality_filter,
    shingles,
    signatures,
)
from trainers.methods.spell.corpus.cluster import allocate, groups, hierarchical_kmeans
from trainers.methods.spell.corpus.config import load_config
from trainers.methods.spell.corpus.sources import (
    WebDoc,
    docmath_report,
    read_docmath_local,
    read_web_local,
    web_document,
)
from trainers.methods.spell.corpus.tasks import split_tasks

SHIPPED = REPO / "configs" / "train" / "spell-cpu-corpus"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, S.Expected]:
    """The synthetic corpus built with the --synthetic settings, and what its generator planted."""
    expected = S.write_synthetic(tmp_path_factory.mktemp("sources"), seed=0)
    out = build_synthetic(tmp_path_factory.mktemp("built") / "corpus", load_config(None, synthetic=True))
    return out, expected


def manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def web_clusters(clusters: list[Cluster]) -> list[Cluster]:
    return [c for c in clusters if c.task != "docmath_qa"]


# --- the pipeline on the synthetic corpus --------------------------------------------------------------


def test_every_stage_removes_exactly_what_was_planted(built):
    out, expected = built
    counts = manifest(out)["counts"]
    web, docmath = counts["web"], counts["docmath"]
    assert (web["read"], web["filtered"], web["deduplicated"], web["decontaminated"]) == (
        expected.web_read,
        expected.web_filtered,
        expected.web_deduplicated,
        expected.web_decontaminated,
    )
    assert web["removed"] == {
        "low_score": len(S.LOW_SCORE),
        "too_short": len(S.TOO_SHORT),
        "too_long": 1,
        "near_duplicates": len(S.NEAR_DUPLICATES),
        "contaminated": {"aime24": 1, "aime25": 1, "jsonl:eval/synthetic-eval.jsonl": len(S.EVAL_COPIES)},
    }
    assert (docmath["read"], docmath["filtered"], docmath["deduplicated"], docmath["decontaminated"]) == (
        expected.docmath_read,
        expected.docmath_filtered,
        expected.docmath_deduplicated,
        expected.docmath_decontaminated,
    )
    assert docmath["removed"]["over_max_tokens"] == 1 and docmath["removed"]["near_duplicates"] == 2
    assert docmath["removed"]["contaminated"]["jsonl:eval/synthetic-eval.jsonl"] == 1


def test_what_is_left_is_exactly_the_families_and_the_clean_reports(built):
    out, expected = built
    clusters = load_clusters(out)
    documents = [d for c in web_clusters(clusters) for d in c.documents]
    family_docs = [d for family in expected.families for d in family]
    assert sorted(documents) == sorted(family_docs)  # each once: copies, contamination, junk all gone
    copies = [S._near_copy(S.FAMILIES[f][1][d], how) for f, d, how in S.NEAR_DUPLICATES if how != "exact"]
    quoted = [S._near_copy(S.EVAL_PASSAGES[p], how) for p, how in S.EVAL_COPIES]
    junk = [t for t, _ in S.LOW_SCORE] + list(S.TOO_SHORT)
    assert not set(copies + quoted + junk) & set(documents)
    assert not any("Math club puzzle" in d for d in documents)
    reports = [c for c in clusters if c.task == "docmath_qa"]
    assert len(reports) == expected.docmath_decontaminated == 12
    assert len({c.documents for c in reports}) == 12  # the report asked about twice is there once
    assert not any("Saltmarsh Shipping" in d for c in reports for d in c.documents)  # quoted by the eval
    assert not any("Vantor Motors" in d for c in reports for d in c.documents)  # over the token budget
    assert all(c.documents[1].startswith("| Segment |") for c in reports)  # chunks in report order


def test_the_clusters_recover_the_planted_families(built):
    out, expected = built
    family_of = {d: i for i, family in enumerate(expected.families) for d in family}
    clusters = web_clusters(load_clusters(out))
    majority = sum(max(Counter(family_of[d] for d in c.documents).values()) for c in clusters)
    purity = majority / sum(len(c.documents) for c in clusters)
    assert purity >= 0.9, purity
    assert len(clusters) == len(expected.families) == 22


def test_web_clusters_are_split_half_and_half_with_the_seed(built):
    out, _ = built
    clusters = load_clusters(out)
    per_task = Counter(c.task for c in clusters)
    assert per_task == {"doc_general_qa": 11, "doc_mc": 11, "docmath_qa": 12}
    assert [c.task for c in clusters] == sorted((c.task for c in clusters), key=TASKS.index)
    assert {c.source for c in clusters if c.task == "docmath_qa"} == {"synthetic-docmath"}
    assert {c.source for c in web_clusters(clusters)} == {"synthetic-web"}
    order = split_tasks(22, 12, seed=0)
    assert [c.id for c in clusters if c.task == "doc_general_qa"] == [
        f"web-{i:05d}" for i in order["doc_general_qa"]
    ]
    assert split_tasks(22, 12, seed=1) != order
    assert len(split_tasks(23, 0, seed=0)["doc_general_qa"]) == 12  # the odd one goes to general QA


def test_the_manifest_says_what_happened_and_nothing_machine_specific(built):
    out, _ = built
    data = manifest(out)
    file = out / "clusters.jsonl"
    assert data["dataset_version"] == hashlib.sha256(file.read_bytes()).hexdigest()[:16]
    assert data["format_version"] == 1
    assert data["clusters"] == {"total": 34, "doc_general_qa": 11, "docmath_qa": 12, "doc_mc": 11}
    assert data["counts"]["web"]["clustered"] == 110 and data["counts"]["web"]["clusters"]["kept"] == 22
    assert data["parameters"] == load_config(None, synthetic=True)
    assert data["embedder"]["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert data["embedder"]["dimension"] == 384
    assert set(data["libraries"]) >= {"datasketch", "scikit-learn", "sentence-transformers", "torch"}
    files = {f["name"] for f in data["inputs"]["synthetic"]["files"]}
    assert files == {"web/ultra-fineweb.jsonl", "eval/synthetic-eval.jsonl"} | {
        f"docmath/{s}_test.jsonl" for s in S.DOCMATH_SUBSETS
    }
    assert [b["name"] for b in data["inputs"]["benchmarks"]] == [
        "aime24",
        "aime25",
        "jsonl:eval/synthetic-eval.jsonl",
    ]
    text = (out / "manifest.json").read_text()
    assert "/tmp" not in text and str(REPO) not in text and "spell-synthetic-" not in text


def test_the_command_rebuilds_the_same_bytes_with_the_same_seed(built, tmp_path):
    out, _ = built
    result = CliRunner().invoke(
        app, ["corpus", "spell", "--synthetic", "--seed", "0", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith(str(tmp_path))
    for name in ("clusters.jsonl", "manifest.json"):
        assert (tmp_path / name).read_bytes() == (out / name).read_bytes(), name


def test_local_copies_in_data_dir_are_built_with_a_config_file(tmp_path):
    """The non-synthetic path: sources and benchmarks read from --data-dir, settings from --config."""
    import shutil

    from benchmarks.base import PACKAGED_DIR

    S.write_synthetic(tmp_path / "gen", seed=0)
    data = tmp_path / "data"
    (data / "ultra-fineweb").mkdir(parents=True)
    shutil.copy(tmp_path / "gen" / S.WEB_FILE, data / "ultra-fineweb" / "part-0.jsonl")
    shutil.copytree(tmp_path / "gen" / "docmath", data / "docmath")
    shutil.copytree(PACKAGED_DIR / "aime24", data / "aime24")
    config = tmp_path / "local.yaml"
    config.write_text(
        "docmath: {subsets: [complong, compshort], max_tokens: 500}\n"
        "clusters: {cluster_size: 5, min_docs: 3, max_tokens: 560}\n"
        f"decontaminate: {{benchmarks: [aime24, 'jsonl:{tmp_path / 'gen' / S.EVAL_FILE}']}}\n"
        "tasks: {per_task: 5}\n"
    )
    out = tmp_path / "out"
    args = ["corpus", "spell", "--config", str(config), "--data-dir", str(data), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    counts = manifest(out)["counts"]
    assert counts["web"]["decontaminated"] == 111  # the AIME 2025 copy stays: aime25 is not in the list
    assert counts["web"]["removed"]["contaminated"]["aime24"] == 1
    assert manifest(out)["inputs"]["web"]["path"] == str(data / "ultra-fineweb")
    clusters = load_clusters(out)
    assert Counter(c.task for c in clusters) == {"doc_general_qa": 5, "docmath_qa": 5, "doc_mc": 5}
    assert {c.source for c in clusters} == {"ultra-fineweb", "docmath"}


def test_command_errors_are_one_line_with_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("dedup:\n  threshold: 1.5\n")
    command = [sys.executable, "-m", "harness", "corpus", "spell", "--out", str(tmp_path / "o")]
    result = subprocess.run([*command, "--config", str(bad)], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 2
    assert "dedup.threshold must be in (0, 1]" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    result = subprocess.run(
        [*command, "--synthetic", "--data-dir", str(tmp_path)], capture_output=True, text=True
    )
    assert result.returncode == 2 and "exclude each other" in result.stderr


# --- the shipped corpus for the CPU run ---------------------------------------------------------------


def test_the_shipped_corpus_loads_and_matches_its_manifest():
    clusters = load_clusters(SHIPPED)
    data = manifest(SHIPPED)
    digest = hashlib.sha256((SHIPPED / "clusters.jsonl").read_bytes()).hexdigest()
    assert data["dataset_version"] == digest[:16]
    per_task = Counter(c.task for c in clusters)
    assert all(10 <= per_task[task] <= 14 for task in TASKS), per_task
    assert all(4 <= len(c.documents) <= 6 for c in clusters)
    assert all(40 <= len(d.split()) <= 90 for c in web_clusters(clusters) for d in c.documents)
    assert all(len("\n".join(c.documents)) <= 4 * 560 for c in clusters)  # the approximate token budget


def test_the_shipped_corpus_is_what_the_synthetic_build_makes(built):
    """Cluster membership, task and id: equal to a fresh build (the embedder's floating point may differ
    between machines, but the planted families are far apart)."""
    out, _ = built
    assert load_clusters(SHIPPED) == load_clusters(out)


def test_the_generator_writes_the_sources_the_shipped_manifest_records(tmp_path):
    """The prose read from the package's texts/ (families.md, planted.json) gives byte for byte the
    sources the shipped corpus was built from, and the same fingerprint."""
    recorded = manifest(SHIPPED)["inputs"]["synthetic"]
    S.write_synthetic(tmp_path, seed=recorded["seed"])
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    written = [
        {"name": str(f.relative_to(tmp_path)), "sha256": hashlib.sha256(f.read_bytes()).hexdigest()}
        for f in files
    ]
    assert written == recorded["files"]
    assert S.fingerprint() == recorded["text_sha256"]
    assert len(S.FAMILIES) == 22 and all(4 <= len(documents) <= 6 for _, documents in S.FAMILIES)


# --- stages -------------------------------------------------------------------------------------------


def test_shingles_ignore_case_punctuation_and_spacing():
    text = "The Velmora bridge, built in 1843, has seven arches."
    assert shingles(text, 5) == shingles("THE velmora   bridge built in 1843 -- has seven arches!", 5)
    assert shingles("two words", 5) == {b"two words"}
    sigs = signatures([text, text.upper(), "A completely different sentence about rivers and fish."], 128, 5)
    kept, twin = deduplicate(sigs, 0.8, 128)
    assert kept == [0, 2] and twin == {1: 0}


def test_benchmark_passages_cover_lines_runs_the_whole_document_and_the_question():
    lines = [f"Passage {i}: " + " ".join(f"w{i}x{j}" for j in range(40)) for i in range(10)]
    problem = "Read this.\n<text>\n" + "\n".join(lines) + "\n</text>\nQuestion: " + "which one is it " * 3
    passages = benchmark_passages(problem, chunk_words=100, min_words=8)
    assert all(line in passages for line in lines)
    assert "\n".join(lines[:3]) in passages  # a run of about chunk_words words
    assert "\n".join(lines) in passages  # the whole document
    assert "Question: " + "which one is it " * 3 not in passages and any("which one" in p for p in passages)
    assert not any("Read this" in p for p in passages)  # the prompt's instructions are not the document
    plain = "Find the number of ordered pairs of integers between -100 and 100."
    assert benchmark_passages(plain, 100, 8) == [plain]
    long_line = " ".join(f"t{i}" for i in range(250))
    assert " ".join(f"t{i}" for i in range(100)) in benchmark_passages(long_line, 100, 8)


def test_two_level_kmeans_keeps_each_cluster_inside_one_coarse_group():
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(12, 16)) * 10
    blobs = np.repeat(np.arange(12), 5)
    vectors = centers[blobs] + rng.normal(size=(60, 16))
    labels = hierarchical_kmeans(vectors, n_clusters=12, coarse_size=20, n_init=10, seed=0)
    assert len(set(labels)) == 12
    assert all(len(set(blobs[labels == label])) == 1 for label in set(labels))  # every blob whole
    flat = hierarchical_kmeans(vectors, n_clusters=12, coarse_size=1000, n_init=10, seed=0)
    assert sorted(map(sorted, groups(flat))) == sorted(map(sorted, groups(labels)))
    assert allocate([20, 20, 20], 12) == [4, 4, 4]
    assert allocate([1, 50, 9], 12) == [1, 10, 1] and sum(allocate([3, 0, 97], 10)) == 10


def test_quality_filter_counts_each_reason():
    docs = [
        WebDoc("x" * 150, 1.0, "a:1"),
        WebDoc("x" * 150, 0.99, "a:2"),
        WebDoc("short", 1.0, "a:3"),
        WebDoc("x" * 40_000, 1.0, "a:4"),
    ]
    kept, counts = quality_filter(docs, 1.0, 100, 32_768)
    assert kept == docs[:1] and counts == {"read": 4, "low_score": 1, "too_short": 1, "too_long": 1}
    with pytest.raises(HarnessError, match="a:1: no `score`"):
        quality_filter([WebDoc("x" * 150, None, "a:1")], 1.0, 100, 32_768)
    assert len(quality_filter([WebDoc("x" * 150, None, "a:1")], None, 100, 32_768)[0]) == 1


# --- the real sources' rows ---------------------------------------------------------------------------


def test_ultra_fineweb_rows_become_documents():
    row = {"content": "The Quorra Canal was dug between 1791 and 1803.", "score": 1.0, "source": "fineweb"}
    doc = web_document(row, "shard-00000.parquet:7")
    assert (doc.text, doc.score, doc.where) == (row["content"], 1.0, "shard-00000.parquet:7")
    assert web_document({"content": "text"}, "f:1").score is None
    with pytest.raises(HarnessError, match="f:2: `content` must be the document's text"):
        web_document({"text": "wrong field", "score": 1.0}, "f:2")
    with pytest.raises(HarnessError, match="f:3: `score` must be a number"):
        web_document({"content": "x", "score": "high"}, "f:3")


def test_docmath_rows_become_reports_of_their_paragraphs():
    row = {  # the fields of yale-nlp/DocMath-Eval's rows
        "question_id": "complong-test-12",
        "source": "",
        "original_question_id": "",
        "question": "What is the change in revenue?",
        "paragraphs": [
            "Revenue grew in 2019.",
            "| | 2019 | 2018 |\n|---|---|---|\n| Revenue | 5 | 4 |",
            "  ",
        ],
        "table_evidence": [1],
        "paragraph_evidence": [0],
        "python_solution": None,
        "ground_truth": None,
    }
    report = docmath_report(row, "complong_test.json:3")
    assert report.id == "complong-test-12" and report.paragraphs == tuple(row["paragraphs"][:2])
    assert report.text == "\n".join(row["paragraphs"][:2])
    as_string = docmath_report({**row, "paragraphs": json.dumps(row["paragraphs"])}, "x:1")
    assert as_string.paragraphs == report.paragraphs
    with pytest.raises(HarnessError, match="x:2: missing field 'paragraphs'"):
        docmath_report({"question_id": "q"}, "x:2")


def test_local_copies_are_read_with_their_hashes(tmp_path):
    S.write_synthetic(tmp_path, seed=0)
    docs, inputs = read_web_local(tmp_path / "web", "web", max_read=5)
    assert len(list(docs)) == 5 and inputs["files"][0]["name"] == "ultra-fineweb.jsonl"
    reports, inputs = read_docmath_local(tmp_path / "docmath", "docmath", ["compshort", "complong"], "test")
    assert [f["name"] for f in inputs["files"]] == ["compshort_test.jsonl", "complong_test.jsonl"]
    assert len(reports) == 16
    with pytest.raises(HarnessError, match="no DocMath-Eval file for subset 'simplong'"):
        read_docmath_local(tmp_path / "docmath", "docmath", ["simplong"], "test")
    with pytest.raises(HarnessError, match="no such file or folder"):
        read_web_local(tmp_path / "missing", "missing", None)


def test_bad_configs_are_refused_with_the_key_named(tmp_path):
    with pytest.raises(HarnessError, match=r"config.dedup: unknown keys \['treshold'\]"):
        load_config(None, {"dedup": {"treshold": 0.5}})
    with pytest.raises(HarnessError, match="web needs a `path` or a `hub`"):
        load_config(None, {"web": {"hub": None}})
    config = tmp_path / "c.yaml"
    config.write_text("clusters: [1, 2]\n")
    with pytest.raises(HarnessError, match="c.yaml.clusters: expected a mapping"):
        load_config(config)
    paper = load_config(REPO / "configs" / "corpus" / "spell.yaml")
    assert paper["embedder"]["model"] == "Qwen/Qwen3-Embedding-8B"
    assert (paper["clusters"]["n_clusters"], paper["tasks"]["per_task"]) == (50_000, 2150)
    assert (paper["dedup"]["threshold"], paper["dedup"]["num_perm"]) == (0.8, 128)
    assert (
        paper["web"]["hub"] == "openbmb/Ultra-FineWeb" and paper["docmath"]["hub"] == "yale-nlp/DocMath-Eval"
    )


# --- the reader ---------------------------------------------------------------------------------------

GOOD = {"id": "web-00001", "task": "doc_mc", "source": "synthetic-web", "documents": ["one", "two"]}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"clusters.jsonl:2: malformed JSON line"),
        ('["a list"]', r"clusters.jsonl:2: expected a JSON object"),
        (json.dumps({**GOOD, "id": "x", "task": "summaries"}), r":2: unknown task 'summaries'; tasks are"),
        (json.dumps({**GOOD, "id": "x", "documents": []}), r":2: cluster 'x' has an empty documents list"),
        (json.dumps({**GOOD, "id": "x", "documents": ["ok", " "]}), r":2: cluster 'x' document 1 must be"),
        (json.dumps({**GOOD, "id": "x", "documents": "one"}), r":2: documents must be a list of strings"),
        (json.dumps(GOOD), r":2: id 'web-00001' is used twice"),
        (json.dumps({"id": "x", "task": "doc_mc", "docs": []}), r":2: missing \['source', 'documents'\]"),
    ],
)
def test_the_reader_names_the_file_and_line_of_a_bad_row(tmp_path, line, message):
    (tmp_path / "clusters.jsonl").write_text(json.dumps(GOOD) + "\n" + line + "\n")
    with pytest.raises(HarnessError, match=message):
        load_clusters(tmp_path)


def test_the_reader_refuses_missing_and_edited_corpora(tmp_path):
    with pytest.raises(HarnessError, match="no such corpus folder"):
        load_clusters(tmp_path / "nowhere")
    with pytest.raises(HarnessError, match="no clusters.jsonl in this folder"):
        load_clusters(tmp_path)
    with pytest.raises(HarnessError, match="no such file"):
        load_clusters(tmp_path / "nowhere.jsonl")
    (tmp_path / "clusters.jsonl").write_text("\n")
    with pytest.raises(HarnessError, match="no clusters in the file"):
        load_clusters(tmp_path / "clusters.jsonl")
    clusters = [Cluster("web-00000", "doc_general_qa", ("a", "b"), "synthetic-web")]
    write_dataset(tmp_path, clusters, {"note": "by hand"})
    assert load_clusters(tmp_path) == clusters == load_clusters(tmp_path / "clusters.jsonl")
    with open(tmp_path / "clusters.jsonl", "a") as f:
        f.write(json.dumps(GOOD) + "\n")
    with pytest.raises(HarnessError, match="changed after it was built"):
        load_clusters(tmp_path)
    with pytest.raises(HarnessError, match="unknown task"):
        write_dataset(tmp_path / "w", [Cluster("a", "qa", ("x",), "s")], {})
