"""Long-context and multiple-choice benchmarks: middle truncation, GPQA's seeded permutation, the
benchmark layouts (small files in the real schemas), presets, and a judged run end to end."""

import csv
import json
import subprocess
import sys

import pytest
from fake_openai import FakeOpenAI
from helpers import run_cli

from benchmarks import get_benchmark
from benchmarks.gpqa import permutation
from harness import HarnessError
from harness.backends import EngineConfig
from harness.backends.chat import ChatPrompt, middle_truncate
from harness.config import EvalConfig, SamplingOverrides
from harness.scoring.judge import JudgeConfig
from harness.scoring.latex import has_corrupted_escape
from harness.scoring.rules import parse_gold
from harness.stages.plan import plan


@pytest.mark.parametrize("limit", [4, 5, 9, 10, 64])
def test_middle_truncation_keeps_exactly_the_first_and_last_halves(limit):
    ids = list(range(10))
    cut = middle_truncate(ids, limit)
    if limit >= 10:
        assert cut == ids
    else:
        half = limit // 2
        assert cut == ids[:half] + ids[10 - half :]
        assert len(cut) <= limit
    assert middle_truncate(ids, None) == ids


def test_chat_prompt_cuts_the_chat_formatted_prompt(tiny_model):
    chat = ChatPrompt(str(tiny_model))
    prompt = chat.render([{"role": "user", "content": "word " * 300 + "QUESTION?"}])
    full = chat.encode(prompt)
    ids, length = chat.tokens(prompt, 40)
    assert length == len(full) > 40
    assert ids == full[:20] + full[-20:]  # the template's head and the question's tail survive
    assert chat.tokens(prompt, len(full)) == (full, len(full))


# small files in the real schemas


def write_gpqa(folder, name, rows=3):
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / name, "w", newline="") as f:
        writer = csv.DictWriter(
            f,
            [
                "Record ID",
                "Question",
                "Correct Answer",
                *(f"Incorrect Answer {i}" for i in (1, 2, 3)),
                "Extra",
            ],
        )
        writer.writeheader()
        for i in range(rows):
            writer.writerow(
                {
                    "Record ID": f"rec{i}",
                    "Question": f"Which is right, number {i}?\nSecond line, with, commas",
                    "Correct Answer": f"right {i}",
                    **{f"Incorrect Answer {k}": f"wrong {i}.{k}" for k in (1, 2, 3)},
                    "Extra": "x",
                }
            )


def write_long_context(root):
    (root / "longbench_v2").mkdir(parents=True)
    rows = [
        {
            "_id": f"v2-{i}",
            "domain": "d",
            "sub_domain": "s",
            "difficulty": ["easy", "hard"][i % 2],
            "length": ["short", "medium", "long"][i % 3],
            "question": f"Question {i}?",
            **{f"choice_{c}": f"option {c}" for c in "ABCD"},
            "answer": "ABCD"[i % 4],
            "context": "A long document with {braces} and words. " * 60,
        }
        for i in range(4)
    ]
    (root / "longbench_v2" / "data.json").write_text(json.dumps(rows))
    (root / "hotpotqa").mkdir()
    qa = [
        {
            "_id": f"h{i}",
            "input": f"Who {i}?",
            "context": "Passage 1:\n" + "text " * 200,
            "answers": ["Ada", "Ada L."],
        }
        for i in range(3)
    ]
    (root / "hotpotqa" / "hotpotqa.jsonl").write_text("\n".join(map(json.dumps, qa)))
    (root / "frames").mkdir()
    frames = [{"Prompt": "Which year?", "Answer": "1912", "wiki_items": [{"title": "T", "text": "body"}]}]
    (root / "frames" / "test.jsonl").write_text(json.dumps(frames[0]) + "\n")
    (root / "docmath").mkdir()
    for subset in ("complong", "compshort", "simplong", "simpshort"):
        rows = [
            {
                "question_id": "q1",
                "question": "How much?",
                "paragraphs": ["p1", "| a | b |"],
                "ground_truth": 1.5,
            }
        ]
        (root / "docmath" / f"{subset}_testmini.json").write_text(json.dumps(rows))


def test_gpqa_permutation_is_seeded_by_the_item_alone(tmp_path):
    write_gpqa(tmp_path / "gpqa_diamond", "gpqa_diamond.csv")
    items = get_benchmark("gpqa_diamond").load(tmp_path).items
    assert [i.id for i in items] == ["rec0", "rec1", "rec2"]
    for item in items:
        gold = json.loads(item.answer)
        letter = gold["answers"][0]
        assert (
            f"({letter}) right {item.id[-1]}" in item.problem
        )  # the correct answer sits under the gold letter
        assert gold["permutation"] == item.meta["permutation"] == permutation(item.id)
        assert "Second line, with, commas" in gold["question"]
    code = "from benchmarks.gpqa import permutation; print([permutation(f'rec{i}') for i in range(50)])"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == str([permutation(f"rec{i}") for i in range(50)])
    assert len({tuple(permutation(f"rec{i}")) for i in range(50)}) > 5  # not one fixed order
    assert {permutation(f"rec{i}")[0] for i in range(50)} == {0, 1, 2, 3}  # the gold letter varies


def test_long_context_layouts_load(tmp_path):
    write_long_context(tmp_path)
    v2 = get_benchmark("longbench_v2").load(tmp_path).items
    assert len(v2) == 4 and v2[1].meta["difficulty"] == "hard"
    assert "{braces}" in v2[0].problem and "(D) option D" in v2[0].problem
    assert parse_gold(v2[1].answer).answers == ["B"]
    hotpot = get_benchmark("hotpotqa").load(tmp_path).items
    assert parse_gold(hotpot[0].answer).answers == ["Ada", "Ada L."]
    assert parse_gold(hotpot[0].answer).question == "Who 0?"
    assert hotpot[0].problem.endswith('"The correct answer is (insert answer here)."')
    frames = get_benchmark("frames").load(tmp_path).items
    assert "T\nbody" in frames[0].problem
    docmath = get_benchmark("docmath").load(tmp_path).items
    assert [i.id for i in docmath][:2] == ["complong/q1", "compshort/q1"]
    assert parse_gold(docmath[0].answer).answers == ["1.5"] and "p1\n| a | b |" in docmath[0].problem


# Real LongBench-V2 documents: a PDF bullet then a tab, tab-indented code, a tab after a newline, a
# page break (FF) and old Mac line ends (CR), right before words a LaTeX command could end with.
TABBED_DOCUMENTS = [
    "Key findings\n\u2022\texternal validity is limited\n\u2022\ttimes of arrival vary\n" * 40,
    "def clean(texts):\n\textra = 1\n\ttexts = filter(None, texts)\n\treturn texts\n" * 40,
    "Files with the\n\textension .tex were\n\theta-tested.\n" * 40,
    "end of page 3\x0crace results, page 4\rhow the race went\rightly or not\n" * 40,
]


def test_longbench_v2_documents_with_tabs_load(tmp_path, capsys):
    assert all(has_corrupted_escape(d) for d in TABBED_DOCUMENTS)  # what a math set would flag
    (tmp_path / "longbench_v2").mkdir()
    rows = [
        {
            "_id": f"doc-{i}",
            "domain": "Single-Document QA",
            "sub_domain": "Academic",
            "difficulty": "hard",
            "length": "long",
            "question": "What does the document say?",
            **{f"choice_{c}": f"option {c}" for c in "ABCD"},
            "answer": "C",
            "context": document,
        }
        for i, document in enumerate(TABBED_DOCUMENTS)
    ]
    (tmp_path / "longbench_v2" / "data.json").write_text(json.dumps(rows))
    loaded = get_benchmark("longbench_v2").load(tmp_path)
    assert [i.id for i in loaded.items] == ["doc-0", "doc-1", "doc-2", "doc-3"]
    assert all(d in i.problem for d, i in zip(TABBED_DOCUMENTS, loaded.items, strict=True))
    assert "corrupted_escapes" not in loaded.source and "skipped" not in loaded.source
    assert "warning" not in capsys.readouterr().err


def write_v1(root, name, rows=2):
    root.mkdir(parents=True, exist_ok=True)
    qa = [
        {"_id": f"{name}-{i}", "input": f"Who {i}?", "context": "Passage 1:\n\ttext", "answers": ["Ada"]}
        for i in range(rows)
    ]
    (root / f"{name}.jsonl").write_text("\n".join(map(json.dumps, qa)) + "\n")


@pytest.mark.parametrize("name", ["hotpotqa", "2wikimqa", "musique"])
@pytest.mark.parametrize("layout", ["data", "own"])
def test_longbench_v1_reads_the_unzipped_data_zip_and_its_own_folder(tmp_path, name, layout):
    folder = tmp_path / ("data" if layout == "data" else name)  # data.zip holds data/<name>.jsonl
    write_v1(folder, name)
    write_v1(tmp_path / "data", "other")  # the zip's other sets beside it are not read
    loaded = get_benchmark(name).load(tmp_path)
    assert [i.id for i in loaded.items] == [f"{name}-0", f"{name}-1"]
    assert loaded.source["dir"] == str(folder)
    assert [f["path"] for f in loaded.source["files"]] == [f"{name}.jsonl"]


def write_official_frames(path, header_only_links=True):
    """Google's release: questions, answers and links to Wikipedia, tab-separated, no articles."""
    path.parent.mkdir(parents=True, exist_ok=True)
    links = [f"wikipedia_link_{i}" for i in range(1, 11)] + ["wikipedia_link_11+"]
    with open(path, "w", newline="") as f:
        writer = csv.writer(f, delimiter="\t")
        writer.writerow(["Prompt", "Answer", *links, "reasoning_types"])
        writer.writerow(
            ["Which year?", "1912", "https://en.wikipedia.org/wiki/Titanic", *[""] * 10, "Temporal"]
        )


def test_frames_official_release_is_refused_naming_the_copy_needed(tmp_path):
    write_official_frames(tmp_path / "frames" / "test.tsv")
    with pytest.raises(HarnessError) as refused:
        get_benchmark("frames").load(tmp_path)
    message = str(refused.value)
    assert message.startswith(f"{tmp_path / 'frames' / 'test.tsv'}:1: this is the official Frames release ")
    assert "(google/frames-benchmark's test.tsv): questions with links to Wikipedia, without the" in message
    assert "needs the copy with the articles: Tongyi-Zhiwen/frames test.jsonl (field wiki_items)" in message
    assert "missing field" not in message
    # the same rows converted to JSON Lines are recognised too
    row = {"Prompt": "Which year?", "Answer": "1912", "wikipedia_link_1": "https://en.wikipedia.org/wiki/T"}
    (tmp_path / "frames" / "test.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(HarnessError, match=r"test.jsonl:1: this is the official Frames release"):
        get_benchmark("frames").load(tmp_path)


def test_docmath_rejects_a_non_numeric_answer(tmp_path):
    write_long_context(tmp_path)
    path = tmp_path / "docmath" / "simplong_testmini.json"
    path.write_text(
        json.dumps([{"question_id": "q", "question": "?", "paragraphs": ["p"], "ground_truth": "n/a"}])
    )
    with pytest.raises(HarnessError, match="not a number"):
        get_benchmark("docmath").load(tmp_path)


def test_gated_download_says_how_to_get_access(tmp_path, monkeypatch):
    monkeypatch.delenv("HARNESS_DATA_DIR", raising=False)
    with pytest.raises(
        HarnessError, match="gated: accept its terms at https://huggingface.co/datasets/Idavidrein"
    ):
        get_benchmark("gpqa_main").load()


def test_presets_resolve_the_papers_settings(tmp_path):
    write_long_context(tmp_path)
    with pytest.raises(HarnessError, match="--judge-model"):
        plan(EvalConfig(benchmarks=(), engine=EngineConfig("m"), preset="spell", data_dir=tmp_path))
    p = plan(
        EvalConfig(
            benchmarks=("hotpotqa", "longbench_v2"),
            engine=EngineConfig("m"),
            preset="spell-100k",
            data_dir=tmp_path,
            judge=JudgeConfig(EngineConfig("j", backend="openai")),
        )
    )
    config = p.run_info["config"]
    assert config["sampling"]["hotpotqa"] == {"n": 8, "temperature": 0.7, "top_p": 0.95, "max_tokens": 4096}
    assert config["max_input_tokens"] == {"hotpotqa": 100000, "longbench_v2": 100000}
    assert config["scorers"] == {"hotpotqa": "cem+judge", "longbench_v2": "choice"}
    assert config["judge"]["model"] == "j" and config["judge"]["temperature"] == 0.0
    assert {r.max_input_tokens for r in p.requests} == {100000}
    explicit = plan(
        EvalConfig(
            benchmarks=("hotpotqa",),
            engine=EngineConfig("m"),
            preset="spell",
            data_dir=tmp_path,
            judge=JudgeConfig(EngineConfig("j", backend="openai")),
            sampling=SamplingOverrides(n=2),
            max_input_tokens=0,
        )
    )
    assert explicit.run_info["config"]["sampling"]["hotpotqa"]["n"] == 2  # explicit flags win
    assert (
        "max_input_tokens" not in explicit.run_info["config"]
        and explicit.requests[0].max_input_tokens is None
    )


def test_spae_preset_sets_top_k(shared_data):
    p = plan(
        EvalConfig(benchmarks=("aime24",), engine=EngineConfig("m"), preset="spae", data_dir=shared_data)
    )
    assert p.run_info["config"]["sampling"]["aime24"]["top_k"] == 50
    assert {r.top_k for r in p.requests} == {50}


def test_judged_long_context_run_end_to_end(tmp_path, answering_model):
    write_long_context(tmp_path / "data")
    model = answering_model
    out = tmp_path / "run"

    def never_sure(body, count):
        return 200, {"choices": [{"message": {"content": "Decision: [[NO]]"}, "finish_reason": "stop"}]}, {}

    with FakeOpenAI(never_sure) as fake:
        args = ["--judge-model", "fake/model", "--judge-base-url", fake.base_url]
        run_cli(
            "eval", "--benchmarks", "longbench_v2,hotpotqa", "--model", str(model), "--data-dir",
            str(tmp_path / "data"), "--n", "2", "--max-tokens", "4", "--max-input-tokens", "64",
            "--out", str(out), *args,
        )  # fmt: skip
        asked = len(fake.bodies)
        run_cli("score", str(out), "--judge-base-url", fake.base_url)
        assert len(fake.bodies) == asked  # rescoring reuses every stored verdict
    generations = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    assert all(g["prompt_tokens"] == 64 and g["prompt_cut_from"] > 64 for g in generations)
    scores = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    hotpot = [s for s in scores if s["benchmark"] == "hotpotqa"]
    judged = [s["details"]["judge"] for s in hotpot if "judge" in s["details"]]
    assert len(hotpot) == 6 and judged
    assert asked == len(
        {j["key"] for j in judged}
    )  # one judge call per distinct (question, prediction, gold)
    assert all(j["verdicts"] == ["no"] for j in judged)
    assert all(s["scorer"].startswith("max(cem-1,judge-spell-v1") for s in hotpot)
    results = json.loads((out / "results.json").read_text())
    assert set(results["longbench_v2"]["breakdown"]) == {"difficulty", "length"}
    assert set(results["longbench_v2"]["breakdown"]["length"]) == {"short", "medium", "long"}
    info = json.loads((out / "run.json").read_text())
    assert info["config"]["judge"]["model"] == "fake/model" and "base_url" not in info["config"]["judge"]
