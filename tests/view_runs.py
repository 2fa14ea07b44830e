"""Run folders for `harness view`'s tests, written by the harness's own pipeline (plan, generate, score,
finalize) with a scripted model in place of an engine, so samples say what a test needs."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from helpers import SHARED_DATA

from harness.backends import EngineConfig
from harness.config import EvalConfig, SamplingOverrides
from harness.core.types import Completion, Request
from harness.runs.evaluate import run_eval

XSS = (
    '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> '
    '<a href="javascript:window.pwned = 3">click</a> [link](javascript:window.pwned=4) <b>bold?</b>'
)
SOLVED = (
    "```python\nfrom typing import List\n\n\n"
    "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1 :])\n```"
)
UNSOLVED = "```python\ndef separate_paren_groups(paren_string):\n    return []  # not yet\n```"
AIME_ITEMS = 6


class ScriptedBackend:
    """An engine whose completion of each request is `script(request, gold)`: (text, finished)."""

    name = "scripted"

    def __init__(self, script: Callable[[Request, str], tuple[str, bool]], golds: dict[tuple[str, str], str]):
        self.script, self.golds = script, golds

    def describe(self) -> dict:
        return {"backend": "scripted", "chat_template_sha256": "0" * 64}

    def context_length(self) -> None:
        return None

    def prompt_tokens(self, messages) -> None:
        return None

    def generate(self, requests):
        batch = []
        for r in requests:
            text, finished = self.script(r, self.golds.get((r.benchmark, r.item_id), ""))
            batch.append(
                Completion(
                    r, text, 120, 4 * len(text.split()), "stop" if finished else "length", "ab" * 32, True
                )
            )
        yield batch

    def close(self) -> None:
        pass


def aime_text(item: int, sample: int, right: bool, gold: str) -> tuple[str, bool]:
    """A thinking model's sample: its reasoning with math, then a boxed answer (or none)."""
    if item == 5 and sample == 1:  # cut off while thinking: truncated, nothing extracted
        return "Let $s$ be the speed. Then $\\frac{9}{s} + \\frac{t}{60} = 4$, so", False
    answer = gold if right else str(int(gold) + 1 if gold.isdigit() else 0)
    thinking = f"Let $x = {item}$. We need $x^2 + 2x = {item * item + 2 * item}$, hence check $\\sqrt{{x}}$."
    if item == 3 and sample == 0:
        thinking += "\n" + XSS
    return f"{thinking}\n</think>\n\nThe answer is $\\boxed{{{answer}}}$.", True


def eval_run(out: Path, right: Callable[[int, int], bool], model: str) -> Path:
    """AIME 2024's first items and HumanEval's first two, two samples each; `right(item, sample)` says
    which AIME samples answer the gold. HumanEval/0 is solved, HumanEval/1 fails its tests."""
    cfg = EvalConfig(
        benchmarks=("aime24", "humaneval"),
        engine=EngineConfig(model=model),
        sampling=SamplingOverrides(n=2, max_tokens=512, temperature=0.6),
        data_dir=SHARED_DATA,
        limit=AIME_ITEMS,
        out=out,
    )
    from harness.stages.plan import plan

    info = plan(cfg).run_info
    golds = {(b, i): str(g) for b, answers in info["answers"].items() for i, g in answers.items()}
    order = {b: list(answers) for b, answers in info["answers"].items()}

    def script(r: Request, gold: str) -> tuple[str, bool]:
        k = order[r.benchmark].index(r.item_id)
        if r.benchmark == "humaneval":
            return ("Here it is.\n</think>\n\n" + (SOLVED if k == 0 else UNSOLVED)), True
        return aime_text(k, r.sample_idx, right(k, r.sample_idx), gold)

    run_eval(cfg, ScriptedBackend(script, golds))
    return out


def base_run(out: Path) -> Path:
    return eval_run(out, lambda item, sample: item < 3 or (item == 4 and sample == 0), "scripted/base")


def candidate_run(out: Path) -> Path:
    """Item 0 flips right -> wrong, item 4 wrong -> right."""
    return eval_run(out, lambda item, sample: 1 <= item <= 4, "scripted/candidate")


def generations_run(out: Path, tmp: Path) -> Path:
    """`harness score --generations` of answers made elsewhere (no prompts, no token counts)."""
    from harness.config import ScoringConfig
    from harness.runs.external import import_generations

    file = tmp / "elsewhere.jsonl"
    rows = [{"item_id": "60", "text": "\\boxed{204}"}, {"item_id": "61", "text": XSS + " \\boxed{1}"}]
    file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_generations(file, "aime24", out, data_dir=SHARED_DATA, scoring=ScoringConfig())
    return out


# What each method writes to samples.jsonl (trainers/methods/*/method.py), in miniature
METHOD_RECORDS = [
    {"task": "qa", "cluster": 0, "documents": ["Doc A: the river is 40 km long."],
     "proposal": "<question>How long is the river?</question><answer>40 km</answer>",
     "parsed": {"question": "How long is the river?", "answer": "40 km"}, "ungrounded": False,
     "answers": ["It is \\boxed{40} km.", XSS], "predictions": ["40", None], "rules": [1.0, 0.0],
     "judgments": {"0": [1, 1]}, "votes": {"0": 1.0}, "responder_rewards": [1.0, 0.0], "reward": 0.5},
    {"role": "propose", "task": "deduction",
     "completion": "```python\ndef f(x):\n    return x * 2\n```\n```input\n3\n```",
     "valid": True, "reason": None, "task_made": {"program": "def f(x):\n    return x * 2", "input": "3"},
     "successes": 3, "reward": 0.6, "safety_flags": []},
    {"role": "solve", "task": "deduction", "source": {"program": "def f(x):\n    return x * 2"},
     "completion": "The output is 6.", "answer": "6", "verdict": "correct", "reward": 1.0},
    {"group": "g1", "route": "judge", "problem": "What is $2^{10}$?", "reference": "1024",
     "verifier": [1.0, 1.0],
     "judge": [0.8, 0.2], "matches": [[0, 1, 1.0]], "calls": 1, "uninformative": False,
     "responses": ["$2^{10} = 1024$", "It is 1024, since $2^{10}=1024$."]},
    {"judge_replies": ["Response A is more rigorous. [[A]]"]},
    {"group": "u1", "released_at": 2, "admitted_at": 1, "reference": "12",
     "samples": [{"reward": 1.0, "finish_reason": "stop", "segments": [8, 5], "policy_versions": [1, 2],
                  "waited": 1, "text": "3 * 4 = \\boxed{12}"}]},
    {"id": "add-1", "answer": "7", "samples": [
        {"text": "3 + 4 = 7. Check: 7 - 4 = 3. \\boxed{7}", "reward": 1.0, "tokens": 20,
         "phi": [0.1, 0.35, 0.8, 0.92, 0.97, 0.99], "solve_tokens": 8, "check_tokens": 12,
         "saturated": True}]},
]  # fmt: skip


def training_run(out: Path, step0: Path, step2: Path) -> Path:
    """A `harness train` folder: train.json, metrics.jsonl, samples.jsonl with every method's records
    across two steps, and evals/step-0 and step-2 (copies of two evaluation runs)."""
    out.mkdir(parents=True)
    config = {"method": "spell", "model": "scripted/base", "max_steps": 2, "options": {"logged_questions": 8}}
    (out / "train.json").write_text(json.dumps({"hash": "0", "config": config}))
    metrics = [
        {"step": s, "reward": 0.2 * s, "loss": 0.5 / s, "completions/mean_length": 40.0 + s} for s in (1, 2)
    ]
    (out / "metrics.jsonl").write_text("".join(json.dumps(m) + "\n" for m in metrics))
    lines = [{"step": step, **r} for step in (1, 2) for r in METHOD_RECORDS]
    (out / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    shutil.copytree(step0, out / "evals" / "step-0")
    shutil.copytree(step2, out / "evals" / "step-2")
    return out
