"""The lm-eval bridge: a local lm-eval task run through our pipeline on the tiny model, scored as
lm-eval's own evaluator scores the same outputs, and exported in lm-eval's results and samples files."""

import json
import re
from pathlib import Path

import pytest
from helpers import run_cli

from harness import HarnessError

pytestmark = pytest.mark.slow

QUESTIONS = [
    f"What is {a} plus {b}?" for a, b in [(1, 2), (3, 4), (5, 6), (7, 8), (2, 2), (9, 1), (4, 4), (6, 3)]
]

TASK = """task: tiny_arith
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["Question:", "\\n\\n"]
  max_gen_toks: 12
  do_sample: false
filter_list:
  - name: whole
    filter:
      - function: take_first
  - name: first-word
    filter:
      - function: regex
        regex_pattern: "(\\\\w+)"
      - function: take_first
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
"""


def write_task(folder: Path, targets: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "tiny_arith.jsonl"
    data.write_text(
        "".join(
            json.dumps({"question": q, "answer": t}) + "\n" for q, t in zip(QUESTIONS, targets, strict=True)
        )
    )
    (folder / "tiny_arith.yaml").write_text(TASK.format(data=data))
    return folder


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def evaluate(model: Path, tasks: Path, out: Path) -> list[dict]:
    run_cli(
        "eval", "--benchmarks", "lm-eval:tiny_arith", "--lm-eval-include-path", str(tasks),
        "--model", str(model), "--out", str(out),
    )  # fmt: skip
    return records(out / "generations.jsonl")


@pytest.fixture(scope="module")
def bridged(tmp_path_factory, answering_model):
    """Two runs: the first finds what the model says; the second's targets match some of it exactly,
    some by the first word, and some not at all, so every filter scores both ways."""
    root = tmp_path_factory.mktemp("bridge")
    tasks = write_task(root / "tasks", ["none"] * len(QUESTIONS))
    first = evaluate(answering_model, tasks, root / "first")
    texts = [g["answer"] or "" for g in first]  # a sample without an answer is scored as ""
    targets = []
    for i, text in enumerate(texts):
        word = re.search(r"\w+", text)
        targets.append([text, word.group(0) if word else "none", "none"][i % 3])
    write_task(tasks, targets)
    second = evaluate(answering_model, tasks, root / "second")
    assert [g["text"] for g in second] == [g["text"] for g in first]  # greedy: the same outputs
    return root, tasks, second


def lm_eval_on(texts: dict[int, str], tasks: Path) -> dict:
    """lm-eval's own evaluator on the same outputs: a model that replays them for each document."""
    import lm_eval
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager

    class Replay(LM):
        def generate_until(self, requests):
            return [texts[r.doc_id] for r in requests]

        def loglikelihood(self, requests):
            raise AssertionError("not a loglikelihood task")

        def loglikelihood_rolling(self, requests):
            raise AssertionError("not a loglikelihood task")

    manager = TaskManager(include_path=str(tasks), include_defaults=False)
    return lm_eval.simple_evaluate(
        model=Replay(), tasks=["tiny_arith"], task_manager=manager, log_samples=True
    )


def test_bridge_scores_equal_lm_evals_own_on_the_same_outputs(bridged):
    root, tasks, generations = bridged
    run = root / "second"
    info = json.loads((run / "run.json").read_text())
    assert info["config"]["sampling"]["lm-eval:tiny_arith"] == {
        "n": 1, "temperature": 0.0, "top_p": 1.0, "max_tokens": 12, "stop": ["Question:", "\n\n"]
    }  # fmt: skip
    assert all("Question:" not in g["text"] and "\n\n" not in g["text"] for g in generations)

    reference = lm_eval_on({int(g["item_id"]): g["answer"] or "" for g in generations}, tasks)
    theirs = {(s["doc_id"], s["filter"]): s for s in reference["samples"]["tiny_arith"]}
    scores = records(run / "scores.jsonl")
    for s in scores:
        for key in ("whole", "first-word"):
            sample = theirs[(int(s["item_id"]), key)]
            assert s["details"]["metrics"][key] == {"exact_match": sample["exact_match"]}
            assert [s["details"]["filtered"][key]] == sample["filtered_resps"]
    values = {
        key: [s["details"]["metrics"][key]["exact_match"] for s in scores] for key in ("whole", "first-word")
    }
    assert all(0.0 in v and 1.0 in v for v in values.values())  # the comparison is not vacuous

    results = json.loads((run / "results.json").read_text())["lm-eval:tiny_arith"]
    assert results["avg@1"] == reference["results"]["tiny_arith"]["exact_match,whole"]  # the first filter


def test_export_writes_lm_evals_own_files(bridged):
    root, tasks, generations = bridged
    run = root / "second"
    export = ("export", str(run), "--format", "lm-eval", "--out", str(root / "export"))
    written = run_cli(*export, "--lm-eval-include-path", str(tasks)).stdout.split()
    results_file = next(Path(p) for p in written if Path(p).name.startswith("results_"))
    samples_file = next(Path(p) for p in written if Path(p).name.startswith("samples_tiny_arith_"))
    date = results_file.stem.removeprefix("results_")
    assert samples_file.name == f"samples_tiny_arith_{date}.jsonl"

    reference = lm_eval_on({int(g["item_id"]): g["answer"] or "" for g in generations}, tasks)
    ours = json.loads(results_file.read_text())
    assert ours["results"]["tiny_arith"] == reference["results"]["tiny_arith"]
    for key in ("versions", "n-shot", "higher_is_better", "n-samples", "configs"):
        assert ours[key] == json.loads(json.dumps(reference[key], default=str)), key
    assert ours["config"]["model_args"].startswith("pretrained=")

    theirs = {(s["doc_id"], s["filter"]): s for s in reference["samples"]["tiny_arith"]}
    lines = records(samples_file)
    assert len(lines) == len(theirs) == 2 * len(QUESTIONS)
    for line in lines:
        sample = theirs[(line["doc_id"], line["filter"])]
        ((context, kwargs),) = sample["arguments"]
        assert line["arguments"] == {"gen_args_0": {"arg_0": context, "arg_1": kwargs}}
        for field in ("doc", "target", "resps", "filtered_resps", "metrics", "exact_match"):
            assert line[field] == sample[field], field
        for field in ("doc_hash", "prompt_hash", "target_hash"):
            assert line[field] == sample[field], field


def test_rescoring_refuses_a_task_whose_targets_changed(bridged):
    root, tasks, _ = bridged
    done = run_cli("score", str(root / "first"), "--lm-eval-include-path", str(tasks), check=False)
    assert done.returncode == 2
    assert "target changed since the run was made" in done.stderr


def test_a_task_folder_named_only_by_run_json_is_never_imported(bridged, tmp_path):
    """lm-eval's YAML imports Python (`!function`): a run folder naming a task folder must not make
    score, export or the view run it. The folder is used once the user names it on the command line."""
    from harness.view.prompts import PromptSource

    root, tasks, _ = bridged
    marker = tmp_path / "PWNED"
    hostile = tmp_path / "tasks"
    hostile.mkdir()
    data = tasks / "tiny_arith.jsonl"
    (hostile / "utils.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n\ndef doc_to_text(doc):\n    return doc['question']\n"
    )
    yaml_text = TASK.format(data=data).replace(
        'doc_to_text: "Question: {{question}}\\nAnswer:"', "doc_to_text: !function utils.doc_to_text"
    )
    assert "!function" in yaml_text
    (hostile / "tiny_arith.yaml").write_text(yaml_text)
    run = tmp_path / "run"
    run.mkdir()
    for name in ("run.json", "generations.jsonl", "scores.jsonl", "results.json"):
        (run / name).write_bytes((root / "second" / name).read_bytes())
    info = json.loads((run / "run.json").read_text())
    info["config"]["scoring"]["lm_eval_include_path"] = str(hostile)
    (run / "run.json").write_text(json.dumps(info))

    for command in (
        ("score", str(run)),
        ("export", str(run), "--format", "lm-eval", "--out", str(tmp_path / "x")),
    ):
        done = run_cli(*command, check=False)
        assert done.returncode == 2, command
        assert (
            f"run.json names the lm-eval task folder {hostile}, whose YAML files can run Python"
            in done.stderr
        )
        assert f"pass --lm-eval-include-path {hostile}" in done.stderr
    turns, why = PromptSource(info).messages("lm-eval:tiny_arith", "0")
    assert turns is None and "can run Python" in why
    assert not marker.exists()

    trusted = run_cli("export", str(run), "--format", "lm-eval", "--out", str(tmp_path / "x"),
                      "--lm-eval-include-path", str(hostile))  # fmt: skip
    assert trusted.returncode == 0 and marker.exists()  # named by the user: lm-eval's own behaviour


def test_task_errors_are_clear(tmp_path):
    from benchmarks.lmeval import task_sampling
    from harness.scoring.lmeval import load_task

    folder = write_task(tmp_path / "tasks", ["1"] * len(QUESTIONS))
    (folder / "group.yaml").write_text("group: tiny_group\ntask:\n  - tiny_arith\n")
    (folder / "choice.yaml").write_text(
        TASK.format(data=folder / "tiny_arith.jsonl")
        .replace("task: tiny_arith", "task: tiny_choice")
        .replace("output_type: generate_until", "output_type: multiple_choice\ndoc_to_choice: ['1', '2']")
        .split("generation_kwargs")[0]
    )
    with pytest.raises(HarnessError, match="is a group or tag"):
        load_task("tiny_group", str(folder))
    with pytest.raises(HarnessError, match="is a multiple_choice task; the bridge runs generate_until"):
        load_task("tiny_choice", str(folder))
    with pytest.raises(HarnessError, match="did you mean gsm8k"):
        load_task("gsm8kk", str(folder))

    sampling = task_sampling(
        "t", {"until": "Q:", "max_gen_toks": 7, "temperature": 0.5, "do_sample": True}, 3
    )
    assert (sampling.n, sampling.temperature, sampling.max_tokens, sampling.stop) == (3, 0.5, 7, ("Q:",))
    greedy = task_sampling("t", {"temperature": 0.7, "do_sample": False}, 1)
    assert (greedy.temperature, greedy.max_tokens, greedy.stop) == (0.0, 256, ())
