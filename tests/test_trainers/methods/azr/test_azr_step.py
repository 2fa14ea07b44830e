"""Full Absolute Zero steps through the real trainer, with scripted policy outputs (AZR paper,
Algorithm 1): every proposal is validated and every answer checked in the real sandbox; the rewards, TRR++
advantages, buffers and batch composition are checked against a hand computation, then real optimizer
steps are taken and a resumed run is compared with an uninterrupted one.

B = 2 prompts per (task, role) slice, n = 4 Monte-Carlo solves per valid proposal, N = 4 induction
inputs (2 shown, 2 hidden), the raw R1 template (completions start inside `<think>`), 2 s sandbox limit.
The buffers start from the zero triplet: D_abd = D_ded = [identity on "Hello world"], D_ind empty, so
step 1's induction proposers both see the identity program.

Step 1 proposals (the paper's rule: -1 malformed, unparsable or invalid (Eq. 6, format as in §3.1), else the
learnability 1 - k/n, 0 for k in {0, n}):

| slice | proposal | sandbox | probes passing k | reward |
|---|---|---|---|---|
| abduction | `x * 2 + 1` on `3` | valid, output 7 | 1 of 4 (inputs 3, 4, 5, 0) | 1 - 1/4 = 0.75 |
| abduction | `while True: pass` | timeout | | -1 |
| deduction | `hash(s)` on `'abc'` | non-deterministic | | -1 |
| deduction | `import random` | forbidden import random | | -1 |
| induction | 4 inputs on identity | valid | 4 of 4 | 0 |
| induction | 3 inputs (N = 4) | does not parse | | -1 |

Step 1 answers (solver reward: 1 right, -0.5 wrong, -1 unreadable); the solver batch lists deduction,
abduction, induction, each slice this step's valid tasks filled up from the rest of its buffer:

| slice | task | answer | reward |
|---|---|---|---|
| deduction | identity (fill-up) | `'Hello world'` | 1 |
| deduction | identity (fill-up) | no `<answer>` block | -1 |
| abduction | `x * 2 + 1` -> 7 | `3` | 1 |
| abduction | identity (fill-up) | `'Hello'` | -0.5 |
| induction | the identity inputs | `return a` | 1 |
| induction | the same task (fill-up) | `return str(a)` (hidden `[1, 2]`) | -0.5 |

Step 2, on step 1's buffers (abduction proposers see both triplets as references):

| slice | proposal | sandbox | k | reward |
|---|---|---|---|---|
| abduction | `return x +` | syntax error | | -1 |
| abduction | `sorted(xs)[0]` on `[3, 1, 2]`, no `</think>` | valid, output 1 | 2 of 4 | -1 (format) |
| deduction | `sum(range(n))` on `5` | valid, output 10 | 0 of 4 | 0 |
| deduction | `s[::-1].upper()` on `'abc'` | valid, output 'CBA' | 2 of 4 | 0.5 |
| induction | no `<answer>` block | | | -1 |
| induction | inputs None, 1, 2, 3 | input 1 invalid on either program | | -1 |

| slice | task | answer | reward |
|---|---|---|---|
| deduction | `sum(range(n))` | `10` | 1 |
| deduction | `s[::-1].upper()` | `'cba'` | -0.5 |
| abduction | `sorted(xs)[0]` -> 1 | `[5, 1]` (not the gold input) | 1 |
| abduction | either older triplet (fill-up) | wrong | -0.5 |
| induction | step 1's task, twice (fill-up) | as in step 1 | 1, -0.5 |

TRR++ whitens each (task, role) slice with its unbiased std: two different rewards give -1/sqrt(2) and
+1/sqrt(2), two equal ones 0. The Monte-Carlo probes (their chains of thought say "probe") are scored,
never trained: the batch holds the 6 proposals and 6 answers only.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch
from trainer_helpers import scripted_trainer

from harness.sandbox import isolated
from trainers.engine import Generation
from trainers.integration.checkpoints import read_method_state
from trainers.integration.engines import HFEngine
from trainers.integration.trainer import MethodGRPOTrainer
from trainers.methods.azr.buffers import ZERO_TASK, Task, TaskBuffers
from trainers.methods.azr.executor import FORBIDDEN
from trainers.methods.azr.method import AzrMethod, AzrOptions
from trainers.methods.azr.prompts import propose_prompt, r1_prompt

pytestmark = pytest.mark.skipif(
    not isolated(), reason="bubblewrap isolation unavailable: the method runs proposals in the sandbox"
)

B, N_MC, NUM_INPUTS = 2, 4, 4
ROWS = 6 * B  # 3B proposals and 3B answers
IDENTITY = ZERO_TASK.program  # def f(a): return a

DOUBLE = "def f(x):\n    return x * 2 + 1"
LOOP = "def f(x):\n    while True:\n        pass"
HASH = "def f(s):\n    return hash(s)"
RANDOM = "import random\ndef f(x):\n    return random.randint(0, x)"
SYNTAX = "def f(x):\n    return x +"
SMALLEST = "def f(xs):\n    return sorted(xs)[0]"
TRIANGLE = "def f(n):\n    return sum(range(n))"
SHOUT = "def f(s):\n    return s[::-1].upper()"
MESSAGE = "It returns its argument."
IND_INPUTS = ("'a'", "'bc'", "[1, 2]", "7")


def propose(program: str, input: str, think: str = "a new program") -> str:
    return f"{think}</think>\n<answer>\n```python\n{program}\n```\n```input\n{input}\n```\n</answer>"


def inputs(values: tuple[str, ...], message: str = MESSAGE) -> str:
    fences = "".join(f"```input\n{v}\n```\n" for v in values)
    return f"some inputs</think>\n<answer>\n{fences}```message\n{message}\n```\n</answer>"


def answer(kind: str, value: str, think: str = "solving") -> str:
    return f"{think}</think>\n<answer>\n```{kind}\n{value}\n```\n</answer>"


def probe(kind: str, value: str) -> str:
    return answer(kind, value, think="probe: a Monte-Carlo solve")


NO_ANSWER = "I give up.</think>"

# per step: the proposer's i-th prompt of a task type in a call gets the i-th proposal
PROPOSALS = [
    {
        "abduction": [propose(DOUBLE, "3"), propose(LOOP, "1")],
        "deduction": [propose(HASH, "'abc'"), propose(RANDOM, "5")],
        "induction": [inputs(IND_INPUTS), inputs(("1", "2", "3"))],
    },
    {
        "abduction": [
            propose(SYNTAX, "1"),
            "no closing tag <answer>\n```python\n" + SMALLEST + "\n```\n```input\n[3, 1, 2]\n```\n</answer>",
        ],
        "deduction": [propose(TRIANGLE, "5"), propose(SHOUT, "'abc'")],
        "induction": ["I have no idea.", inputs(("None", "1", "2", "3"))],
    },
]
# per step and phase: keyed by (task, the program shown, or the induction message), served in order
REPLIES = [
    {
        "probe": {
            ("abduction", DOUBLE): [probe("input", v) for v in ("3", "4", "5", "0")],
            ("induction", MESSAGE): [probe("python", "def f(a):\n    return a")] * 2
            + [probe("python", "def f(x):\n    return x")] * 2,
        },
        "solve": {
            ("deduction", IDENTITY): [answer("output", "'Hello world'"), NO_ANSWER],
            ("abduction", DOUBLE): [answer("input", "3")],
            ("abduction", IDENTITY): [answer("input", "'Hello'")],
            ("induction", MESSAGE): [
                answer("python", "def f(a):\n    return a"),
                answer("python", "def f(a):\n    return str(a)"),
            ],
        },
    },
    {
        "probe": {
            ("abduction", SMALLEST): [probe("input", v) for v in ("[1]", "[0, 1]", "[2]", "[1, 1]")],
            ("deduction", TRIANGLE): [probe("output", v) for v in ("15", "9", "11", "0")],
            ("deduction", SHOUT): [probe("output", v) for v in ("'CBA'", "'cba'", "'CBA'", "'ABC'")],
        },
        "solve": {
            ("deduction", TRIANGLE): [answer("output", "10")],
            ("deduction", SHOUT): [answer("output", "'cba'")],
            ("abduction", SMALLEST): [answer("input", "[5, 1]")],
            ("abduction", IDENTITY): [answer("input", "'Hello'")],
            ("abduction", DOUBLE): [answer("input", "4")],
            ("induction", MESSAGE): [
                answer("python", "def f(a):\n    return a"),
                answer("python", "def f(a):\n    return str(a)"),
            ],
        },
    },
]

SOLVER_TITLES = {
    "# Task: Deduce the Output": "deduction",
    "# Task: Provide One Possible Input": "abduction",
    "# Task: Deduce the Function": "induction",
}
PROPOSER_TITLES = {
    "## Task: Create a Python Code Snippet": "abduction",
    "## Task: Create a New Python Code Snippet": "deduction",
    "## Task: Output": "induction",
}


def between(text: str, start: str, end: str = "\n```") -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


class ScriptedEngine(HFEngine):
    """The trainer's engine with the policy's texts scripted by what each prompt asks. A step makes
    three calls: the proposals, the Monte-Carlo probes of the valid ones, the answers (the script of
    step `trainer.state.global_step`)."""

    def __init__(self, trainer: MethodGRPOTrainer):
        super().__init__(trainer)
        self.calls: list[tuple[str, list[str]]] = []  # (phase, prompts) of each call
        self.replies: list[list[str]] = []  # the texts each call returned

    def generate(self, prompts, max_tokens=None):
        texts = [self.tokenizer.decode(list(p)) for p in prompts]
        proposing = [any(title in t for title in PROPOSER_TITLES) for t in texts]
        assert len(set(proposing)) == 1, "a call mixes proposer and solver prompts"
        if proposing[0]:
            phase = "propose"
        else:
            phase = "probe" if self.calls and self.calls[-1][0] == "propose" else "solve"
        self.calls.append((phase, texts))
        step, served = self.trainer.state.global_step, Counter()
        replies = []
        for text in texts:
            if phase == "propose":
                task = next(task for title, task in PROPOSER_TITLES.items() if title in text)
                script = PROPOSALS[step][task]
                key: Any = task
            else:
                task = next(task for title, task in SOLVER_TITLES.items() if title in text)
                shown = (
                    between(text, "# Message:\n```message\n")
                    if task == "induction"
                    else between(text, "# Code Snippet:\n```python\n")
                )
                key = (task, shown)
                script = REPLIES[step][phase][key]
            served[key] += 1
            replies.append(script[(served[key] - 1) % len(script)])
        self.replies.append(replies)
        return [self._generation(text) for text in replies]

    def _generation(self, text: str) -> Generation:
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return Generation(ids, [-1.0] * len(ids), "stop")


def azr(**options: Any) -> AzrMethod:
    settings = dict(mc_samples=N_MC, num_inputs=NUM_INPUTS, template="r1", timeout=2.0, logged_rollouts=12)
    return AzrMethod(TaskBuffers(), AzrOptions(**(settings | options)), batch_size=B, seed=0)


def trainer_for(method: AzrMethod, model: Path, out: Path, **args: Any) -> MethodGRPOTrainer:
    rows = [{"prompt": [{"role": "user", "content": "azr"}], "id": f"azr-{i}"} for i in range(ROWS)]
    settings = dict(
        per_device_train_batch_size=ROWS,
        num_generations=2,  # AzrMethod.sampler_group
        max_completion_length=128,
        max_steps=1,
        learning_rate=1e-3,
    )
    return scripted_trainer(method, model, out, rows * 2, ScriptedEngine, **(settings | args))


def zscore(values: list[float]) -> list[float]:
    """TRR++ within one slice: (r - mean) / (unbiased std + 1e-8), 0 for a constant slice."""
    if len(set(values)) == 1:
        return [0.0] * len(values)
    mean, std = statistics.fmean(values), statistics.stdev(values)
    return [(v - mean) / (std + 1e-8) for v in values]


def step_batch(trainer: MethodGRPOTrainer) -> dict[str, Any]:
    return trainer._generate_and_score_completions([{"prompt": [{"role": "user", "content": "azr"}]}] * ROWS)


def texts_of(trainer: MethodGRPOTrainer, batch: dict[str, Any]) -> list[str]:
    decode = trainer.engine.tokenizer.decode
    return [decode(ids, skip_special_tokens=True) for ids in batch["completion_ids"].tolist()]


def last_metrics(trainer: MethodGRPOTrainer) -> dict[str, float]:
    return {k: v[-1] for k, v in trainer._metrics["train"].items()}


DOUBLE_TASK = Task(DOUBLE, "3", "7")
IND_TASK = Task(IDENTITY, inputs=IND_INPUTS, outputs=("'a'", "'bc'", "[1, 2]", "7"), message=MESSAGE)

# step 1, in batch order: proposals (abduction, deduction, induction), then answers (deduction,
# abduction, induction)
STEP1_PROPOSE = {"abduction": [0.75, -1.0], "deduction": [-1.0, -1.0], "induction": [0.0, -1.0]}
STEP1_SOLVE = {"deduction": [1.0, -1.0], "abduction": [1.0, -0.5], "induction": [1.0, -0.5]}
STEP2_PROPOSE = {"abduction": [-1.0, -1.0], "deduction": [0.0, 0.5], "induction": [-1.0, -1.0]}
STEP2_SOLVE = {"deduction": [1.0, -0.5], "abduction": [1.0, -0.5], "induction": [1.0, -0.5]}


def expected(propose: dict[str, list[float]], solve: dict[str, list[float]]) -> tuple[list, list, list]:
    """(rewards, advantages, (task, role) per row) in batch order."""
    rewards, advantages, labels = [], [], []
    for role, table in (("propose", propose), ("solve", solve)):
        for task, values in table.items():
            rewards += values
            advantages += zscore(values)
            labels += [(task, role)] * len(values)
    return rewards, advantages, labels


def recorded(method: AzrMethod) -> list[list[Any]]:
    """The rollouts the trainer scores at each step (`method.score`'s argument)."""
    seen: list[list[Any]] = []
    score = method.score

    def recording(rollouts):
        seen.append(list(rollouts))
        return score(rollouts)

    method.score = recording  # type: ignore[method-assign]
    return seen


def test_one_azr_step_matches_the_hand_computation(plain_model, tmp_path):
    method = azr()
    scored = recorded(method)
    trainer = trainer_for(method, plain_model, tmp_path)
    trainer.model.train()
    batch = step_batch(trainer)
    engine: ScriptedEngine = trainer.engine  # type: ignore[assignment]

    # three generate calls: 6 proposals, n = 4 probes of each of the 2 valid ones, 6 answers
    assert [(phase, len(asked)) for phase, asked in engine.calls] == [
        ("propose", 6),
        ("probe", 2 * N_MC),
        ("solve", 6),
    ]
    proposer_prompts = engine.calls[0][1]
    assert all(p.endswith("\nAssistant: <think>") for p in proposer_prompts)  # the raw R1 prefill
    assert all("<snippet_0>\n```python\n" + IDENTITY in p for p in proposer_prompts[:4])  # K = 6, 1 held
    assert all("<snippet_1>" not in p for p in proposer_prompts[:4])
    assert all("### Code Snippet:\n```python\n" + IDENTITY + "\nf(<|YOUR" in p for p in proposer_prompts[4:])
    probe_prompts, solve_prompts = engine.calls[1][1], engine.calls[2][1]
    assert probe_prompts[:N_MC] == [solve_prompts[2]] * N_MC  # the probes ask what the solver is asked
    assert probe_prompts[N_MC:] == [solve_prompts[4]] * N_MC

    # the batch: exactly the 6 proposals and 6 answers, in order; no probe reaches the loss
    texts = texts_of(trainer, batch)
    assert batch["completion_ids"].shape[0] == ROWS == len(engine.replies[0]) + len(engine.replies[2])
    assert texts == engine.replies[0] + engine.replies[2]
    assert not any("probe" in t for t in texts) and all("probe" in t for t in engine.replies[1])
    assert batch["completion_mask"].sum(1).min() > 0  # no padded row

    rewards, advantages, labels = expected(STEP1_PROPOSE, STEP1_SOLVE)
    (rollouts,) = scored
    assert [(r.task, r.role) for r in rollouts] == labels  # 3B proposer rows, then 3B solver rows
    assert [r.reward for r in rollouts] == rewards
    assert [r.group for r in rollouts] == [f"0/{task}/{role}" for task, role in labels]
    torch.testing.assert_close(batch["advantages"], torch.tensor(advantages), atol=1e-5, rtol=0)
    assert advantages[:2] == pytest.approx([1 / math.sqrt(2), -1 / math.sqrt(2)])
    assert batch["num_items_in_batch"] == batch["completion_mask"].sum()

    metrics = last_metrics(trainer)
    assert metrics["rewards/propose/mean"] == pytest.approx(sum(rewards[:6]) / 6)  # -0.625
    assert metrics["rewards/solve/mean"] == pytest.approx(sum(rewards[6:]) / 6)  # 1/6
    for task, role in set(labels):
        values = [r for r, label in zip(rewards, labels, strict=True) if label == (task, role)]
        assert metrics[f"azr/{task}/{role}/reward"] == pytest.approx(statistics.fmean(values)), (task, role)
    assert metrics["azr/abduction/propose/valid_rate"] == 0.5
    assert metrics["azr/deduction/propose/valid_rate"] == 0.0
    assert metrics["azr/induction/propose/valid_rate"] == 0.5
    assert metrics["azr/induction/propose/solved_rate"] == 1.0  # 4 of 4: learnability 0
    assert metrics["azr/abduction/propose/trivial_rate"] == 0.0
    # over the task types: 2 of 6 valid, of which the abduction one is learnable and the induction one not
    assert metrics["azr/propose/valid_rate"] == pytest.approx(1 / 3)
    assert metrics["azr/propose/learnable_rate"] == 0.5
    assert metrics["azr/deduction/solve/accuracy"] == 0.5
    assert (metrics["azr/buffer/deduction"], metrics["azr/buffer/abduction"]) == (1, 2)
    assert metrics["azr/buffer/induction"] == 1
    assert metrics["batch/padded_rows"] == 0

    # every valid proposal joins its buffer, whatever its reward; nothing else does
    assert method.buffers["abduction"] == [ZERO_TASK, DOUBLE_TASK]
    assert method.buffers["deduction"] == [ZERO_TASK]
    assert method.buffers["induction"] == [IND_TASK]

    # the step's readable record: why each proposal failed, and each answer's verdict
    samples = method.take_samples()
    reasons = [s["reason"] for s in samples if s["role"] == "propose"]
    assert reasons == [
        "",
        "timeout",
        "non-deterministic",
        "forbidden import random",
        "",
        "3 input fences, 4 needed",
    ]
    assert [s["successes"] for s in samples if s["role"] == "propose"] == [1, None, None, None, 4, None]
    assert [s["verdict"] for s in samples if s["role"] == "solve"] == [
        "pass",
        "",
        "pass",
        "fail",
        "pass",
        "fail",
    ]
    assert [s["answer"] for s in samples if s["role"] == "solve"][:2] == ["'Hello world'", None]


def test_the_second_step_builds_on_the_buffers(plain_model, tmp_path):
    method = azr()
    trainer = trainer_for(method, plain_model, tmp_path)
    trainer.model.train()
    step_batch(trainer)
    method.take_samples()
    trainer.state.global_step = 1  # the engine plays step 2's script
    scored = recorded(method)
    batch = step_batch(trainer)
    engine: ScriptedEngine = trainer.engine  # type: ignore[assignment]
    assert [(phase, len(asked)) for phase, asked in engine.calls[3:]] == [
        ("propose", 6),
        ("probe", 3 * N_MC),  # the misformatted but valid abduction proposal is probed too
        ("solve", 6),
    ]

    # the abduction proposers show both triplets of D_abd (K = 6 > 2), the deduction ones the seed;
    # the induction proposers one program of D_abd ∪ D_ded
    proposer_prompts = engine.calls[3][1]
    for prompt in proposer_prompts[:2]:
        assert "<snippet_1>" in prompt and IDENTITY in prompt and DOUBLE in prompt
    for prompt in proposer_prompts[2:4]:
        assert "<snippet_1>" not in prompt and "```python\n" + IDENTITY + "\n```" in prompt
    shown = [between(p, "### Code Snippet:\n```python\n", "\nf(<|YOUR") for p in proposer_prompts[4:]]
    assert set(shown) <= {IDENTITY, DOUBLE}

    rewards, advantages, labels = expected(STEP2_PROPOSE, STEP2_SOLVE)
    (rollouts,) = scored
    assert [(r.task, r.role) for r in rollouts] == labels
    assert [r.reward for r in rollouts] == rewards
    torch.testing.assert_close(batch["advantages"], torch.tensor(advantages), atol=1e-5, rtol=0)
    assert batch["advantages"][:2].abs().sum() == 0  # abduction proposers: both -1
    texts = texts_of(trainer, batch)
    assert texts == engine.replies[3] + engine.replies[5] and not any("probe" in t for t in texts)

    # valid proposals join their buffers whatever their reward: -1 (format), 0 (k = 0), 0.5
    assert method.buffers["abduction"] == [ZERO_TASK, DOUBLE_TASK, Task(SMALLEST, "[3, 1, 2]", "1")]
    assert method.buffers["deduction"] == [
        ZERO_TASK,
        Task(TRIANGLE, "5", "10"),
        Task(SHOUT, "'abc'", "'CBA'"),
    ]
    assert method.buffers["induction"] == [IND_TASK]

    samples = method.take_samples()
    proposals = [s for s in samples if s["role"] == "propose"]
    assert proposals[0]["reason"].startswith("the program does not parse")
    assert [p["successes"] for p in proposals] == [None, 2, 0, 2, None, None]
    assert proposals[4]["reason"] == "no <answer> block"
    assert proposals[5]["reason"].startswith("input 1: ")  # None: returned None, or raised TypeError
    solves = [s for s in samples if s["role"] == "solve"]
    assert [s["source"]["program"] for s in solves[:3]] == [TRIANGLE, SHOUT, SMALLEST]
    assert solves[3]["source"]["program"] in (IDENTITY, DOUBLE)  # filled from the older entries
    assert [s["verdict"] for s in solves] == ["pass", "fail", "pass", "fail", "pass", "fail"]
    metrics = last_metrics(trainer)
    assert metrics["azr/deduction/propose/valid_rate"] == 1.0
    assert metrics["azr/deduction/propose/trivial_rate"] == 0.5  # 0 of 4
    assert metrics["azr/propose/learnable_rate"] == pytest.approx(2 / 3)  # successes 2, 0, 2 of 4
    assert (metrics["azr/buffer/abduction"], metrics["azr/buffer/deduction"]) == (3, 3)


def test_a_real_optimizer_step_on_the_scripted_batch(plain_model, tmp_path):
    method = azr()
    trainer = trainer_for(method, plain_model, tmp_path)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    after = dict(trainer.model.named_parameters())
    assert any(not torch.equal(v, after[n].detach()) for n, v in before.items())
    logged = trainer.state.log_history[0]
    assert logged["grad_norm"] > 0 and math.isfinite(logged["loss"])
    assert logged["rewards/propose/mean"] == pytest.approx(sum(sum(STEP1_PROPOSE.values(), [])) / 6)
    assert logged["rewards/solve/mean"] == pytest.approx(1 / 6)
    for task in ("deduction", "abduction", "induction"):
        for role in ("propose", "solve"):
            assert f"azr/{task}/{role}/reward" in logged, (task, role)
    assert logged["batch/padded_rows"] == 0
    assert len(method.buffers["abduction"]) == 2


def test_resume_gives_identical_weights_and_method_state(plain_model, tmp_path):
    """Two steps straight through, against one step, a checkpoint, and a fresh trainer resuming."""
    saving = dict(max_steps=2, save_strategy="steps", save_steps=1)
    straight = azr()
    first = trainer_for(straight, plain_model, tmp_path / "a", **saving)
    first.train()
    assert len(straight.buffers["deduction"]) == 3  # the state being checked is not empty
    saved = read_method_state(tmp_path / "a" / "checkpoint-1", 0)
    assert set(saved) == {"buffers", "rng", "answers"}
    assert [t["program"] for t in saved["buffers"]["buffers"]["abduction"]] == [IDENTITY, DOUBLE]
    assert saved["buffers"]["current"] == {"deduction": [], "abduction": [], "induction": []}
    assert saved["answers"]["'Hello world'"] == 1

    resumed = azr()
    second = trainer_for(resumed, plain_model, tmp_path / "a", **saving)
    second.train(resume_from_checkpoint=str(tmp_path / "a" / "checkpoint-1"))
    engine: ScriptedEngine = second.engine  # type: ignore[assignment]
    assert [phase for phase, _ in engine.calls] == ["propose", "probe", "solve"]  # step 2 only
    assert resumed.state_dict() == straight.state_dict()
    final = dict(second.model.named_parameters())
    for name, value in first.model.named_parameters():
        torch.testing.assert_close(final[name], value, atol=0, rtol=0)
    saved = read_method_state(tmp_path / "a" / "checkpoint-2", 0)
    assert saved == straight.state_dict()


def token_whiten(values: list[float], lengths: list[int]) -> list[float]:
    """veRL's masked_whiten of the reward broadcast over each response: token-weighted mean, Bessel's
    correction over tokens, (r - mean) * rsqrt(var + 1e-8); 0 for a constant slice."""
    if len(set(values)) == 1:
        return [0.0] * len(values)
    tokens = sum(lengths)
    mean = sum(n * v for v, n in zip(values, lengths, strict=True)) / tokens
    var = sum(n * (v - mean) ** 2 for v, n in zip(values, lengths, strict=True)) / (tokens - 1)
    return [(v - mean) / math.sqrt(var + 1e-8) for v in values]


def test_the_codes_reward_rule_and_token_weighted_advantages(plain_model, tmp_path):
    """The two fidelity switches: the released code gives -1 to every proposal without a valid task and
    -0.5 to a valid one that every probe solves; `advantages: token` whitens each slice with veRL's
    token-weighted statistics."""
    method = azr(reward_rule="code", advantages="token")
    scored = recorded(method)
    trainer = trainer_for(method, plain_model, tmp_path)
    trainer.model.train()
    batch = step_batch(trainer)
    (rollouts,) = scored
    propose = {"abduction": [0.75, -1.0], "deduction": [-1.0, -1.0], "induction": [-0.5, -1.0]}
    rewards, _, labels = expected(propose, STEP1_SOLVE)
    assert [r.reward for r in rollouts] == rewards
    lengths = [len(r.completion_ids) for r in rollouts]
    advantages = []
    for start in range(0, ROWS, B):  # the slices are consecutive pairs of rows
        assert len(set(labels[start : start + B])) == 1
        advantages += token_whiten(rewards[start : start + B], lengths[start : start + B])
    assert lengths[0] != lengths[1]  # the token weights matter: not the sequence z-score
    assert advantages[0] != pytest.approx(1 / math.sqrt(2), abs=1e-3)
    torch.testing.assert_close(batch["advantages"], torch.tensor(advantages), atol=1e-5, rtol=0)


class CharTokenizer:
    """One token per character: prompt lengths computed by hand."""

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return [ord(c) for c in text]


class CharEngine:
    tokenizer = CharTokenizer()


def test_an_over_long_proposer_prompt_is_drawn_again_with_fewer_references():
    """`max_prompt_tokens` (Table 3, the code's 5600-token resampling): K references are drawn again
    while the prompt is too long, then one fewer at a time; with nothing that fits, none is shown."""
    triplets = [Task(f"def f(x):\n    return x + {i}", str(i), repr(2 * i)) for i in range(10, 16)]
    method = AzrMethod(TaskBuffers(triplets), AzrOptions(references=6), batch_size=B, seed=0)

    def size(k: int) -> int:
        return len(r1_prompt(propose_prompt("deduction", triplets[:k], FORBIDDEN)))

    assert size(0) < size(1) < size(2) < size(6)  # every triplet has the same length
    method.options = replace(method.options, max_prompt_tokens=size(2))
    made = method._proposer(CharEngine(), "deduction")
    assert len(made.shown) == 2 and len(made.prompt_ids) == size(2)
    assert set(made.shown) <= set(triplets)
    method.options = replace(method.options, max_prompt_tokens=size(0) - 1)
    made = method._proposer(CharEngine(), "deduction")
    assert made.shown == [] and len(made.prompt_ids) == size(0)  # the last resort, still over budget


def test_a_lagged_solver_batch_holds_no_task_of_this_step(plain_model, tmp_path):
    """`solver_lag: 1` is the released code's order: the solver's data loader is built at the
    start of the step, from the buffers as they were then, so step t's proposals are first solved at t+1.
    At step 1 the buffers hold only the zero triplet: the solvers get it for deduction and abduction, and
    nothing for induction (D_ind was empty)."""
    method = azr(solver_lag=1)
    trainer = trainer_for(method, plain_model, tmp_path)
    trainer.model.train()
    step_batch(trainer)
    solves = [s for s in method.take_samples() if s["role"] == "solve"]
    made = [DOUBLE_TASK.to_dict(), IND_TASK.to_dict()]  # what step 1 validated
    assert [s["source"] for s in solves if s["source"] in made] == []
    assert [(s["task"], s["source"]["program"]) for s in solves] == [
        ("deduction", IDENTITY),
        ("deduction", IDENTITY),
        ("abduction", IDENTITY),
        ("abduction", IDENTITY),
    ]
