"""One `harness train` run under torchrun with the policy's texts scripted per rank (the multi-process tier).

    torchrun --nproc_per_node 2 tests/multiproc/worker.py SPEC.json

SPEC.json: {"overrides": {TrainConfig keys}, "config": optional YAML path, "script": a name in SCRIPTS,
"record": folder}. The run is `trainers.integration.run.train` itself (dataset, method, trainer,
callbacks, resume), with one difference: the trainer's engine is `ScriptedEngine`, which answers every
prompt with the text `SCRIPTS[script](prompt, rank, call)` and, before answering, checks with the other
ranks that they are at the same engine call (a collective, as a generation is under DeepSpeed ZeRO-3 or
vLLM's server mode). Each rank writes RECORD/rank{r}.json: the sequence of collectives it entered
(torch.distributed calls and engine calls), what `advantages` saw each step, and a digest of its weights.
This file is test code; nothing in `harness` or `trainers` can load it."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

HERE = Path(__file__).resolve().parent
RANK = int(os.environ.get("RANK", "0"))
EVENTS: list[str] = []  # the collectives this rank entered, in order
STEPS: list[dict[str, Any]] = []  # what `advantages` got and returned, per call
ROLLOUTS: list[dict[str, Any]] = []  # what this rank's `rollout` returned, per call
WRAPPED = (
    "all_gather_object",
    "all_gather",
    "all_gather_into_tensor",
    "all_reduce",
    "broadcast",
    "broadcast_object_list",
    "barrier",
    "gather_object",
    "reduce",
    "scatter_object_list",
)


def record_collectives() -> None:
    """Count every torch.distributed collective this process enters (accelerate and TRL call them by
    module attribute, so the wrappers see theirs; DDP's gradient all-reduce runs in C++ and is not seen)."""
    for name in WRAPPED:
        original = getattr(dist, name)

        @functools.wraps(original)
        def wrapper(*args, __original=original, __name=name, **kwargs):
            EVENTS.append(__name)
            return __original(*args, **kwargs)

        setattr(dist, name, wrapper)


# --- scripts: (prompt text, rank, engine call of this step, the prompt's copy in the call) -> the text ---


def gold(prompt: str) -> int:
    """The answer to an arithmetic problem of configs/train/*-cpu-problems.jsonl."""
    a, b = (int(x) for x in re.findall(r"\d+", prompt.split("<|im_start|>user")[-1])[:2])
    return a + b if "+" in prompt or "Add " in prompt else a * b


def arithmetic(prompt: str, rank: int, call: int, copy: int) -> str:
    """GRPO: a completion that depends on the prompt and its copy only, wherever it is generated (the
    equivalence runs); the first copy is right, the second wrong, both right for a third of prompts."""
    digest = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    wrong = copy % 2 and digest % 3
    return f"{'so ' * (digest % 5)}The answer is {gold(prompt) + (1 if wrong else 0)}."


def ulorl_one_rank_finishes(prompt: str, rank: int, call: int, copy: int) -> str:
    """Rank 0's samples end in their first segment, one right and one wrong; rank 1's never stop
    (they run into the cap, several steps later)."""
    return f" {gold(prompt) + copy % 2}" if rank == 0 else " so" * 200


def spae_refill_and_boundaries(prompt: str, rank: int, call: int, copy: int) -> str:
    """Rank 0: diverse groups, three step boundaries in right samples, one in wrong ones. Rank 1: the
    first call of each step is uniform (all right), so it refills; then one boundary in right samples,
    none in wrong ones."""
    answer = gold(prompt)
    if rank == 0:
        return f"A\n\nSo 1\n\nSo 2\n\nok {answer}" if copy % 2 == 0 else f"B\n\nNo {answer + 1}"
    if call == 0:
        return f"all right\n\n {answer}"
    return f"Yes\n\n {answer}" if copy % 2 == 0 else f"No {answer + 1}"


SPELL_QUESTION = '{"question": "Which city hosts Alpha?", "answer": "Paris"}'


def spell_refill_on_one_rank(prompt: str, rank: int, call: int, copy: int) -> str:
    """Rank 1's first proposal of each step is malformed (its round keeps no question, so it plays
    another); rank 0's first is usable. Responders: half right; verifiers say YES to Paris."""
    if "## Document Context" in prompt:  # the questioner
        return "I cannot write JSON." if rank == 1 and call == 0 else SPELL_QUESTION
    if "Answer 1:" in prompt:  # a verifier
        return "[[YES]]" if "Answer 1: Paris" in prompt else "[[NO]]"
    if "<text>\nEmpty\n</text>" in prompt:  # the grounding check, without documents
        return "The correct answer is London."
    return f"The correct answer is {'Paris' if copy % 2 == 0 else 'London'}."


AZR_PROGRAM = "def f(x):\n    return x * 2 + 1"


def azr_valid_on_one_rank(prompt: str, rank: int, call: int, copy: int) -> str:
    """Rank 0 proposes a valid program (and induction inputs); rank 1 proposes nothing parseable, so
    only rank 0 has proposals to probe with Monte-Carlo solves. Solvers answer 3 (right for x=1)."""
    if "## Task: Create a" in prompt or "## Task: Output" in prompt:  # a proposer
        if rank == 1:
            return "I have no idea.</think>"
        if "## Task: Output" in prompt:
            fences = "".join(f"```input\n{v}\n```\n" for v in ("1", "2", "3", "4"))
            return f"some inputs</think>\n<answer>\n{fences}```message\nDoubles.\n```\n</answer>"
        return f"a program</think>\n<answer>\n```python\n{AZR_PROGRAM}\n```\n```input\n1\n```\n</answer>"
    kind = (
        "python" if "Deduce the Function" in prompt else "input" if "Possible Input" in prompt else "output"
    )
    value = AZR_PROGRAM if kind == "python" else "1" if kind == "input" else "3"
    return f"solving</think>\n<answer>\n```{kind}\n{value}\n```\n</answer>"


def arena_routes_on_one_rank(prompt: str, rank: int, call: int, copy: int) -> str:
    """Rank 0's groups are diverse (the verifier decides); rank 1's are uniform, all right, so only
    rank 1's groups are routed to the judge (which the main process, rank 0, asks)."""
    answer = gold(prompt)
    wrong = rank == 0 and copy % 2
    return f"{'so ' * copy}[q{copy}] The answer is {answer + 1 if wrong else answer}."


SCRIPTS: dict[str, Callable[[str, int, int, int], str]] = {
    "arena": arena_routes_on_one_rank,
    "spell": spell_refill_on_one_rank,
    "azr": azr_valid_on_one_rank,
    "arithmetic": arithmetic,
    "ulorl": ulorl_one_rank_finishes,
    "spae": spae_refill_and_boundaries,
}


def make_scripted_engine(script: Callable[[str, int, int, int], str]) -> Callable[[Any], Any]:
    from trainers.engine import Generation
    from trainers.integration.engines import HFEngine

    class ScriptedEngine(HFEngine):
        """The trainer's engine with the policy's texts scripted; every call a checked collective."""

        def __init__(self, trainer: Any):
            super().__init__(trainer)
            self.calls = (0, 0)  # (step, generate calls in it): a script's `call` is the second
            self.checks = 0

        def check(self, kind: str) -> None:
            """A collective: every rank must be at the same engine call of the same kind."""
            EVENTS.append(f"engine.{kind}")
            self.checks += 1
            if not dist.is_initialized() or dist.get_world_size() == 1:
                return
            here = (self.checks, kind)
            everyone: list[Any] = [None] * dist.get_world_size()
            dist.all_gather_object(everyone, here)
            if any(x != here for x in everyone):
                raise RuntimeError(f"engine calls diverge between ranks: (call, kind) per rank {everyone}")

        def generate(self, prompts, max_tokens=None):
            self.check("generate")
            budget = max_tokens or self.trainer.generation_config.max_new_tokens
            step = self.trainer.state.global_step
            call = self.calls[1] if self.calls[0] == step else 0  # a resumed run replays a step alike
            out = []
            for k, prompt in enumerate(prompts):
                copy = sum(1 for p in prompts[:k] if list(p) == list(prompt))
                text = script(self.tokenizer.decode(list(prompt)), RANK, call, copy)
                ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
                ids = ids[:budget]
                stop = ids[-1] == self.tokenizer.eos_token_id
                out.append(Generation(ids, [-1.0] * len(ids), "stop" if stop else "length"))
            self.calls = (step, call + 1)
            return out

        def logprobs(self, prompts, continuations, batch_size=8):
            self.check("logprobs")
            return super().logprobs(prompts, continuations, batch_size)

        @contextlib.contextmanager
        def inference_model(self):
            self.check("inference_model")
            with super().inference_model() as model:
                yield model

    return ScriptedEngine


def record_method(method: Any) -> None:
    from trainers.method import IDLE

    rollout, advantages = method.rollout, method.advantages

    def recorded_rollout(rows, engine):
        out = rollout(rows, engine)
        ROLLOUTS.append(
            {
                "returned": len(out),
                "trainable": sum(r.trainable for r in out),
                "idle": any(r.meta.get(IDLE) for r in out),
                "rows": [r.get("id") for r in rows],
            }
        )
        return out

    def recorded_advantages(rollouts, rewards):
        values = advantages(rollouts, rewards)
        STEPS.append(
            {
                "groups": [r.group for r in rollouts],
                "roles": [r.role for r in rollouts],
                "trainable": [r.trainable for r in rollouts],
                "rewards": rewards.tolist(),
                "advantages": values.tolist(),
            }
        )
        return values

    method.rollout, method.advantages = recorded_rollout, recorded_advantages


def weights_digest(model: Any) -> str:
    h = hashlib.sha256()
    for name, p in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(p.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def main() -> int:
    spec = json.loads(Path(sys.argv[1]).read_text())
    record = Path(spec["record"])
    record.mkdir(parents=True, exist_ok=True)
    record_collectives()

    import trainers.integration.run
    import trainers.integration.trainer
    from trainers.config import load_config

    engine_class = make_scripted_engine(SCRIPTS[spec["script"]])
    # the one change to `harness train`: scripted texts
    trainers.integration.trainer.make_engine = engine_class
    made: dict[str, Any] = {}
    make_method = trainers.integration.run.make_method

    def recorded_make_method(config, scorer):
        method = made["method"] = make_method(config, scorer)
        record_method(method)
        return method

    trainers.integration.run.make_method = recorded_make_method
    original_train = trainers.integration.trainer.MethodGRPOTrainer.train

    def train(self, *args, **kwargs):
        made["trainer"] = self
        return original_train(self, *args, **kwargs)

    trainers.integration.trainer.MethodGRPOTrainer.train = train
    config = load_config(Path(spec["config"]) if spec.get("config") else None, spec["overrides"])
    trainers.integration.run.train(config)
    trainer = made["trainer"]
    (record / f"rank{RANK}.json").write_text(
        json.dumps(
            {
                "rank": RANK,
                "world_size": trainer.accelerator.num_processes,
                "events": EVENTS,
                "steps": STEPS,
                "rollouts": ROLLOUTS,
                "weights": weights_digest(trainer.accelerator.unwrap_model(trainer.model)),
                "global_step": trainer.state.global_step,
            }
        )
    )
    trainers.integration.run.end_processes()
    return 0


if __name__ == "__main__":
    torch.set_num_threads(1)
    sys.exit(main())
