"""Trainer benchmark: step time of `MethodGRPOTrainer` + the GRPO method against stock TRL
`GRPOTrainer`, same tiny model, data, reward (the harness math scorer), seed and settings, in one
process, alternating runs. Prints the median step times and their ratio (goal: at most 1.10), and
whether the two trained models came out identical.

    python tests/perf/bench_trainer.py [--steps 20] [--rounds 2] [--prompts 8] [--generations 8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


class StepTimer:
    """Wall-clock seconds of every optimizer step (generation, scoring and update)."""

    def __init__(self):
        from transformers import TrainerCallback

        timer = self

        class Callback(TrainerCallback):
            def on_step_begin(self, args, state, control, **kwargs):
                timer.started = time.perf_counter()

            def on_step_end(self, args, state, control, **kwargs):
                timer.times.append(time.perf_counter() - timer.started)

        self.callback = Callback()
        self.times: list[float] = []
        self.started = 0.0


def run(kind: str, model: Path, rows: list[dict], reward, args_kwargs: dict, out: Path):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from trainers.integration.trainer import MethodGRPOTrainer
    from trainers.methods.grpo import GRPOMethod

    args = GRPOConfig(output_dir=str(out), **args_kwargs)
    timer = StepTimer()
    data = Dataset.from_list(rows)
    if kind == "ours":
        method = GRPOMethod(reward, args.num_generations, "group")
        trainer = MethodGRPOTrainer(
            model=str(model), args=args, train_dataset=data, method=method, callbacks=[timer.callback]
        )
    else:

        def harness_math(prompts, completions, answer, **kwargs):
            texts = [c[-1]["content"] for c in completions]  # conversational: [{"role", "content"}]
            return reward(texts, answer, [False] * len(texts))

        trainer = GRPOTrainer(
            model=str(model),
            reward_funcs=[harness_math],
            args=args,
            train_dataset=data,
            callbacks=[timer.callback],
        )
    trainer.train()
    return timer.times[2:], {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--prompts", type=int, default=8, help="prompts per step")
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=16)
    options = parser.parse_args()

    import torch

    from benchmarks.arithmetic import arithmetic_rows
    from benchmarks.base import MATH_PROMPT
    from harness.core.tiny_model import build_tiny_model
    from harness.core.types import Item
    from trainers.data import item_rows
    from trainers.rewards import ScorerReward

    torch.set_num_threads(max(1, (os.cpu_count() or 2)))
    with tempfile.TemporaryDirectory() as tmp:
        model = build_tiny_model(Path(tmp) / "tiny", thinking=False)
        rows = item_rows([Item(**r) for r in arithmetic_rows(400, seed=1)], MATH_PROMPT)
        reward = ScorerReward("math")
        args_kwargs = dict(
            use_cpu=True,
            bf16=False,
            gradient_checkpointing=False,
            report_to="none",
            save_strategy="no",
            logging_steps=1000,
            disable_tqdm=True,
            per_device_train_batch_size=options.prompts * options.generations,
            num_generations=options.generations,
            max_completion_length=options.max_tokens,
            max_steps=options.steps,
            learning_rate=2e-3,
            loss_type="grpo",
            scale_rewards="group",
            seed=0,
        )
        times: dict[str, list[float]] = {"ours": [], "trl": []}
        weights = {}
        for kind in ("trl", "ours"):  # warm-up: first-use costs (allocator, kernels) land here
            run(kind, model, rows, reward, {**args_kwargs, "max_steps": 3}, Path(tmp) / f"warm-{kind}")
        for r in range(options.rounds):
            for kind in ("ours", "trl"):
                step_times, weights[kind] = run(
                    kind, model, rows, reward, args_kwargs, Path(tmp) / f"{kind}{r}"
                )
                times[kind] += step_times
        ours, trl = statistics.median(times["ours"]), statistics.median(times["trl"])
        drift = max((weights["ours"][k] - weights["trl"][k]).abs().max().item() for k in weights["trl"])
        print(
            f"workload: {options.steps} steps x {options.rounds} rounds, {options.prompts} prompts x "
            f"{options.generations} samples, {options.max_tokens} tokens, tiny model, CPU"
        )
        print(f"median step: ours {ours * 1000:.1f} ms, stock TRL GRPOTrainer {trl * 1000:.1f} ms")
        print(f"ratio ours/TRL: {ours / trl:.3f} (goal <= 1.10)")
        print(f"largest weight difference between the two trained models: {drift:.2e}")


if __name__ == "__main__":
    main()
