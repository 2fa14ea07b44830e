"""Run folders for the solve/check analysis: hand-written traces, or a real plan with synthetic traces
(the analysis tests, and its vLLM test in tests/engines)."""

from __future__ import annotations

from pathlib import Path

from harness.core.records import generation_record
from harness.core.store import GENERATIONS, RUN, SCORES, RunDir


def write_run(path: Path, run_info: dict, samples: list[tuple]) -> Path:
    """A run directory with generations (benchmark, item, sample, text, correct, finish, think_opened)."""
    run = RunDir(path)
    path.mkdir(parents=True)
    run.write_json(RUN, run_info)
    gens, scores = [], []
    for benchmark, item_id, k, text, correct, finish, opened, prompt in samples:
        gens.append(
            generation_record(
                benchmark, item_id, k, text, prompt_hash=prompt, finish_reason=finish, think_opened=opened
            )
        )
        score = {"value": float(correct), "extracted": None, "canonical": None, "scorer": "s", "details": {}}
        scores.append({"benchmark": benchmark, "item_id": item_id, "sample_idx": k, **score})
    run.append(GENERATIONS, gens)
    run.append(SCORES, scores)
    return path


def write_probe_run(tiny_model: Path, shared_data: Path, folder: Path) -> Path:
    """A real run.json (an AIME item x 2 samples, the tiny model's prompts) with synthetic traces."""
    from harness.backends import EngineConfig
    from harness.backends.chat import ChatPrompt, prompt_hash
    from harness.config import EvalConfig, SamplingOverrides
    from harness.stages.plan import plan

    made = plan(
        EvalConfig(
            benchmarks=("aime24",),
            engine=EngineConfig(str(tiny_model)),
            sampling=SamplingOverrides(n=2),
            data_dir=shared_data,
            limit=1,
        )
    )
    chat = ChatPrompt(str(tiny_model))
    samples = []
    for r in made.requests:
        gold = made.run_info["answers"]["aime24"][r.item_id]
        steps = "".join(f"Step {i}: x = {i}.\n\n" for i in range(r.sample_idx + 2))
        text = steps + f"So x = {gold}.\n\nHmm.</think>\n\n\\boxed{{{gold}}}"
        hashed = prompt_hash(chat.render(r.messages))
        samples.append(("aime24", r.item_id, r.sample_idx, text, r.sample_idx == 0, "stop", True, hashed))
    return write_run(folder / "run", made.run_info, samples)
