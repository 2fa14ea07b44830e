"""`harness score --generations`: generations made by another tool, scored into a run directory."""

import json
from math import comb
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import run_cli

from benchmarks import BENCHMARKS
from harness.backends import EngineConfig
from harness.config import EvalConfig, SamplingOverrides, ScoringConfig
from harness.core.metrics import k_values
from harness.core.records import generation_record
from harness.core.runinfo import stable_hash
from harness.core.store import GENERATIONS, RUN, RunDir
from harness.runs.external import import_generations
from harness.stages.plan import plan
from harness.stages.score import score_run

R1_STYLE = (
    "<think>\nLet me compute. Maybe \\boxed{205}? No, recheck: 9/s + t = 4 ...\n</think>\n\n"
    "The walk takes **204** minutes.\n\n\\[\\boxed{204}\\]"
)
BASE_STYLE = "We solve for s = 2.5, so the total is 3 hours and 24 minutes. The answer is 204."
WRONG = "The answer is \\boxed{205}."
UNCLOSED = "<think>\nLet me think about this for a long time and never stop"


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def scored(tmp_path_factory, shared_data):
    tmp = tmp_path_factory.mktemp("external")
    problem_61 = next(
        json.loads(line)["problem"]
        for line in (shared_data / "aime24" / "test.jsonl").read_text().splitlines()
        if json.loads(line)["id"] == 61
    )
    rows = [
        {"item_id": 60, "sample_idx": 0, "text": R1_STYLE, "finish_reason": "stop", "completion_tokens": 50},
        {
            "item_id": "60",
            "sample_idx": 1,
            "text": BASE_STYLE,
            "finish_reason": "stop",
            "completion_tokens": 30,
        },
        {"item_id": "60", "sample_idx": 2, "text": WRONG, "finish_reason": "stop", "completion_tokens": 10},
        {
            "item_id": "60",
            "sample_idx": 3,
            "text": UNCLOSED,
            "finish_reason": "length",
            "completion_tokens": 90,
        },
        # matched by problem text (whitespace differences tolerated), numbered in file order
        {"problem": "  " + problem_61.replace(" ", "  ") + "\n", "text": "so $\\boxed{113}$"},
        {"problem": problem_61, "text": "\\boxed{114}"},
    ]
    generations = write(tmp / "gens.jsonl", rows)
    out = tmp / "run"
    run_cli(
        "score", "--generations", str(generations), "--benchmark", "aime24", "--out", str(out),
        "--data-dir", str(shared_data),
    )  # fmt: skip
    return out


def test_scores_match_hand_judgement(scored):
    scores = [json.loads(line) for line in (scored / "scores.jsonl").read_text().splitlines()]
    assert [(s["item_id"], s["sample_idx"], s["value"]) for s in scores] == [
        ("60", 0, 1.0),
        ("60", 1, 1.0),
        ("60", 2, 0.0),
        ("60", 3, 0.0),
        ("61", 0, 1.0),
        ("61", 1, 0.0),
    ]
    assert [s["extracted"] for s in scores] == ["204", "204", "205", None, "113", "114"]


def test_results_handle_unequal_sample_counts(scored):
    results = json.loads((scored / "results.json").read_text())["aime24"]
    assert results["n_items"] == 2 and results["n_samples"] == 6
    assert results["samples_per_item"] == {"min": 2, "max": 4}
    assert results["avg@4"] == pytest.approx((2 / 4 + 1 / 2) / 2)
    assert results["pass@1"] == pytest.approx(0.5)
    assert results["pass@2"] == pytest.approx(((1 - 1 / 6) + 1) / 2)  # item 60: 1 - C(2,2)/C(4,2)
    assert "pass@4" not in results
    assert results["maj@4"] == pytest.approx(1.0)  # 204 wins on item 60; 113 (first) wins the tie on 61
    assert results["unextracted_rate"] == pytest.approx(1 / 6)
    assert results["truncated_rate"] == pytest.approx(1 / 4)  # only rows that report a finish reason
    generations = [json.loads(line) for line in (scored / "generations.jsonl").read_text().splitlines()]
    assert generations[0]["answer"].endswith("\\[\\boxed{204}\\]") and "205" in generations[0]["reasoning"]
    assert generations[3]["unclosed_think"] is True and generations[3]["answer"] is None


def test_rescoring_the_run_gives_the_same_results(scored):
    before = (scored / "results.json").read_bytes()
    run_cli("score", str(scored))
    assert (scored / "results.json").read_bytes() == before


def test_unknown_item_is_reported_with_its_line(tmp_path, shared_data):
    generations = write(
        tmp_path / "g.jsonl", [{"item_id": "60", "text": "1"}, {"item_id": "999", "text": "2"}]
    )
    done = run_cli(
        "score", "--generations", str(generations), "--benchmark", "aime24", "--out", str(tmp_path / "o"),
        "--data-dir", str(shared_data), check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "g.jsonl:2: item_id '999' is not in aime24" in done.stderr.replace("\n", "")


def test_run_json_names_the_local_copy_it_read(scored, shared_data):
    """Scored with --data-dir: run.json says the data was a local folder, which files, and their hashes."""
    source = json.loads((scored / "run.json").read_text())["datasets"]["aime24"]
    assert source["kind"] == "local"
    assert source["dir"] == str(shared_data / "aime24")
    # the sha256 shared/data/SOURCES.md publishes for its aime24/test.jsonl
    sha256 = "af2b8bd2aa911b6333ad0df32f3ca05c7ae8ed10f1731f4372c8ae26990bf7ac"
    assert source["files"] == [{"path": "test.jsonl", "sha256": sha256}]
    assert not {"repo", "revision", "laid_out_as"} & set(source)  # nothing suggests the Hub


# pass@k: every path into results.json reports the benchmark's own k values

EXTRA_K = [b for b in BENCHMARKS.values() if b.pass_k]


def _answers(item, n: int) -> tuple[list[str], int]:
    """n answers to `item` and how many are right: three where the gold says how (CRUXEval)."""
    gold = json.loads(item.answer) if item.answer.startswith("{") else {}
    if gold.get("kind") == "cruxeval":
        right = f"[ANSWER]\nassert f({gold['input']}) == {gold['output']}\n[/ANSWER]"
        return [right] * 3 + ["[ANSWER]\nassert f(0) == 0\n[/ANSWER]"] * (n - 3), 3
    return ["I do not know."] * n, 0


def test_the_filter_finds_the_benchmarks_with_their_own_k():
    assert {b.name: b.pass_k for b in EXTRA_K if b.name.startswith("cruxeval")} == {
        "cruxeval_i": (5,),
        "cruxeval_i_cot": (5,),
        "cruxeval_o": (5,),
        "cruxeval_o_cot": (5,),
    }


@pytest.mark.parametrize("bench", EXTRA_K, ids=lambda b: b.name)
def test_every_path_reports_the_benchmarks_own_pass_k(bench, shared_data, tmp_path):
    """eval, score --generations (published generations), and score RUN of a run recorded before the k
    values were: the same metrics, the benchmark's own pass@k among them."""
    n = bench.sampling.n  # the benchmark's default samples (CRUXEval: 10, the published generations')
    assert max(bench.pass_k) <= n
    items = bench.load(shared_data).items[:2]
    answers = {items[0].id: _answers(items[0], n), items[1].id: (["no answer"] * n, 0)}
    rows = [
        {"item_id": item_id, "sample_idx": k, "text": text}
        for item_id, (texts, _) in answers.items()
        for k, text in enumerate(texts)
    ]
    generations = write(tmp_path / "gens.jsonl", rows)

    external = tmp_path / "external"
    scored = import_generations(
        generations, bench.name, external, data_dir=shared_data, scoring=ScoringConfig()
    )
    planned = plan(
        EvalConfig(
            benchmarks=(bench.name,),
            engine=EngineConfig("m"),
            sampling=SamplingOverrides(n=n),
            limit=2,
            data_dir=shared_data,
        )
    )
    run = RunDir(tmp_path / "eval")
    with run.locked():
        run.start(planned.run_info)
        run.append(
            GENERATIONS,
            [generation_record(bench.name, r["item_id"], r["sample_idx"], r["text"]) for r in rows],
        )
        evaluated = score_run(run, planned=[(r.benchmark, r.item_id, r.sample_idx) for r in planned.requests])
    info = json.loads((external / RUN).read_text())
    assert (
        info["config"]["pass_k"] == planned.run_info["config"]["pass_k"] == {bench.name: list(bench.pass_k)}
    )
    del info["config"]["pass_k"]  # as `score --generations` recorded it before
    info["config_hash"] = stable_hash(info["config"])
    (external / RUN).write_text(json.dumps(info))
    with RunDir(external).locked():  # `harness score RUN`
        rescored = score_run(RunDir(external), force=True)
    assert json.loads((external / RUN).read_text())["config"]["pass_k"] == {bench.name: list(bench.pass_k)}
    # the upgraded run is the one `score --generations` makes now: the same command resumes it
    again = import_generations(
        generations, bench.name, external, data_dir=shared_data, scoring=ScoringConfig()
    )

    def pass_k(results):
        return {m: v for m, v in results[bench.name].items() if m.startswith("pass@")}

    ks = sorted({*k_values(n), *bench.pass_k})  # CRUXEval: 1, 2, 4, 5, 8, 10
    assert sorted(int(m[5:]) for m in pass_k(evaluated)) == ks
    for results in (scored, rescored, again):
        assert set(results[bench.name]) == set(evaluated[bench.name])
        assert pass_k(results) == pytest.approx(pass_k(evaluated))
    for k in bench.pass_k:
        expected = sum(1 - comb(n - c, k) / comb(n, k) for _, c in answers.values()) / len(answers)
        assert scored[bench.name][f"pass@{k}"] == pytest.approx(expected)


def test_training_evaluates_through_eval(monkeypatch, tmp_path):
    """Training's evaluations are `harness eval` runs, so they plan the same k values as eval."""
    import trainers.integration.run as training
    from trainers.config import TrainConfig

    commands = []
    monkeypatch.setattr(
        training.subprocess,
        "run",
        lambda command, **kw: commands.append(command) or SimpleNamespace(returncode=0),
    )
    config = TrainConfig(
        method="grpo", model="m", dataset="d", out=str(tmp_path), eval_benchmarks=("cruxeval_o",)
    )
    training.evaluate_checkpoint(config, "ckpt", tmp_path / "evals" / "step-0")
    assert commands[0][1:6] == ["-m", "harness", "eval", "--benchmarks", "cruxeval_o"]
