"""A full Reasoning Arena-Live step through the real trainer, with scripted policy outputs and a
deterministic judge (Reasoning Arena paper, §3-4), checked against a hand computation; then real
optimizer steps and an exact resume.

Three problems, N = 5 samples each, verified by the harness's integer scorer (the last number):

| group | problem | answers | verifier | route |
|---|---|---|---|---|
| A | Add 2 and 3 | all 5 | 1 1 1 1 1 | all correct -> judge |
| B | Add 4 and 4 | 8 7 8 8 9 | 1 0 1 1 0 | diverse: Eq. 2 on the verifier |
| C | Multiply 12 by 13 | 150..154 | 0 0 0 0 0 | all incorrect -> judge |

Each response carries a quality mark [qK]; the judge prefers the higher K, says Tie on equal marks and
cannot decide on a response marked [qX] (no boxed verdict, twice: its retry fails too). Responses are
padded so their token lengths give the arrival order (shortest first, our choice).

Group A, qualities 2 2 1 3 X, arrival 0 1 2 3 4 (leaderboard: win-rate, wins, arrival):
- 1 vs 0: Tie (0.5). Board [0, 1] (both 0.5, no wins: arrival).
- 2 vs best 0, worst 1 (the median is 0 again): loses both. Board [0, 1, 2] (0.75 each, one win; arrival).
- 3 vs best 0, worst 2, median 1: wins all. Board [3, 0, 1, 2].
- 4 vs best 3, worst 2, median 0: no verdict, three times: 4 is unrated and gets advantage 0.
9 calls, 3 retries, 3 parse failures, 1 tie.

Group C, qualities 3 1 4 2 5, lengths ranked 2 0 4 1 3, so arrival 1 3 0 4 2:
- 3 vs 1: wins. Board [3, 1].
- 0 vs best 3, worst 1: wins both. Board [0, 3, 1].
- 4 vs best 0, worst 1, median 3: wins all. Board [4, 0, 3, 1].
- 2 vs best 4, worst 1, median 0: loses to 4, beats 1 and 0.
9 calls (3N - 6 = 9 at N = 5, against 10 for the round robin); the pair (2, 3) is never judged.

The Bradley-Terry scores are checked against a Newton solve of Eq. 10 written here, then min-max scaled
over the rated traces and standardised with the population std and eps 1e-6 (Eq. 2).
"""

from __future__ import annotations

import math
import re
import statistics
from pathlib import Path
from typing import Any

import torch
from trainer_helpers import scripted_trainer

from harness.core.types import Item
from harness.scoring.rules import gold_text
from trainers.data import item_rows
from trainers.engine import Generation
from trainers.integration.checkpoints import read_method_state
from trainers.integration.engines import HFEngine
from trainers.methods.arena.method import ArenaMethod, ArenaOptions, _tokenizer
from trainers.rewards import ScorerReward

N = 5
PROBLEMS = [
    ("A", "Add 2 and 3. Answer with the number only.", "5"),
    ("B", "Add 4 and 4. Answer with the number only.", "8"),
    ("C", "Multiply 12 by 13. Answer with the number only.", "156"),
]
REFILL = ("D", "Add 1 and 1. Answer with the number only.", "2")  # only in the refill pool
# (quality mark, answer, padding words) per sample; padding sets the arrival order
SCRIPT = {
    "A": [("2", 5, 0), ("2", 5, 2), ("1", 5, 4), ("3", 5, 6), ("X", 5, 8)],
    "B": [("1", 8, 0), ("1", 7, 2), ("1", 8, 4), ("1", 8, 6), ("1", 9, 8)],
    "C": [("3", 150, 4), ("1", 151, 0), ("4", 152, 8), ("2", 153, 2), ("5", 154, 6)],
    "D": [("1", 2, 0), ("1", 3, 0), ("1", 2, 0), ("1", 2, 0), ("1", 2, 0)],
}
MATCHES = {
    "A": [(1, 0, 0.5), (2, 0, 0.0), (2, 1, 0.0), (3, 0, 1.0), (3, 2, 1.0), (3, 1, 1.0)],
    "C": [
        (3, 1, 1.0),
        (0, 3, 1.0),
        (0, 1, 1.0),
        (4, 0, 1.0),
        (4, 1, 1.0),
        (4, 3, 1.0),
        (2, 4, 0.0),
        (2, 1, 1.0),
        (2, 0, 1.0),
    ],
}
RATED = {"A": [0, 1, 2, 3], "C": [0, 1, 2, 3, 4]}


def response(mark: str, answer: int, padding: int) -> str:
    return "so " * padding + f"[q{mark}] The answer is {answer}."


def rows(problems=PROBLEMS) -> list[dict[str, Any]]:
    items = [Item(f"p{name}", problem, gold_text(gold, problem)) for name, problem, gold in problems]
    return item_rows(items, "{problem}")


class ScriptedEngine(HFEngine):
    """The policy's samples, by problem, in the script's order."""

    def generate(self, prompts, max_tokens=None):
        out = []
        for k, prompt in enumerate(prompts):
            text = self.tokenizer.decode(list(prompt))
            name = next(name for name, problem, _ in [*PROBLEMS, REFILL] if problem in text)
            same = [p for p in prompts[:k] if list(p) == list(prompt)]
            ids = self.tokenizer.encode(response(*SCRIPT[name][len(same) % N]), add_special_tokens=False)
            ids.append(self.tokenizer.eos_token_id)
            out.append(Generation(ids, [-1.0] * len(ids), "stop"))
        return out


class MarkJudge:
    """A deterministic judge: the response with the higher [qK] wins; [qX] gets no verdict."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, float]] = []
        self.presented: list[str] = []

    def __call__(self, prompts, seeds, temperature):
        replies = []
        for prompt in prompts:
            self.requests.append((prompt, temperature))
            a, b = re.findall(r"\[q(\w)\]", prompt.split("[RESPONSE A]", 1)[1])[:2]
            if "X" in (a, b):
                replies.append("Both are fine, I think.")
                continue
            verdict = "Tie" if a == b else ("A" if a > b else "B")
            self.presented.append(verdict)
            replies.append(f"Compared the two.\n\\boxed{{{verdict}}}")
        return replies


class MarkRater(MarkJudge):
    """A deterministic pointwise judge: [q1] scores 0, [q2] 0.5, any other mark 1."""

    def __call__(self, prompts, seeds, temperature):
        self.requests += [(p, temperature) for p in prompts]
        marks = [re.findall(r"\[q(\w)\]", p.split("[RESPONSE]", 1)[1])[0] for p in prompts]
        return [{"1": "\\boxed{0}", "2": "\\boxed{0.5}"}.get(m, "\\boxed{1}") for m in marks]


def bt_newton(matches: list[tuple[int, int, float]], n: int) -> list[float]:
    """Eq. 10 with mirrored matches and 1/2 ||beta||^2, by Newton's method on its exact Hessian."""
    beta = torch.zeros(n, dtype=torch.float64)
    for _ in range(50):
        grad, hess = beta.clone(), torch.eye(n, dtype=torch.float64)
        for i, j, o in matches:
            for a, b, out in ((i, j, o), (j, i, 1 - o)):  # the match and its mirror
                p = 1 / (1 + math.exp(-(beta[a] - beta[b])))
                grad[a] -= out - p
                grad[b] += out - p
                w = p * (1 - p)
                hess[a, a] += w
                hess[b, b] += w
                hess[a, b] -= w
                hess[b, a] -= w
        beta = beta - torch.linalg.solve(hess, grad)
    return beta.tolist()


def judged_rewards(name: str) -> list[float | None]:
    beta = bt_newton(MATCHES[name], N)
    rated = RATED[name]
    low, high = min(beta[k] for k in rated), max(beta[k] for k in rated)
    return [(beta[k] - low) / (high - low) if k in rated else None for k in range(N)]


def eq2(values: list[float | None]) -> list[float]:
    rated = [v for v in values if v is not None]
    mean, std = statistics.fmean(rated), statistics.pstdev(rated)
    return [0.0 if v is None else (v - mean) / (std + 1e-6) for v in values]


def arena(pool=(), **options: Any) -> tuple[ArenaMethod, MarkJudge]:
    judge = MarkJudge()
    settings = dict(logged_groups=4, judge_context=4096, judge_max_tokens=64)
    options = ArenaOptions(**(settings | options))
    return ArenaMethod(ScorerReward("integer"), options, N, judge, pool=pool, seed=0), judge


def trainer_for(method: ArenaMethod, model: Path, out: Path, **args: Any):
    settings = dict(
        per_device_train_batch_size=3 * N,
        num_generations=N,
        max_completion_length=64,
        max_steps=1,
        learning_rate=1e-3,
        loss_type="cispo",
        epsilon_high=3.0,
    )
    return scripted_trainer(method, model, out, rows(), ScriptedEngine, **(settings | args))


def step_batch(trainer) -> dict[str, Any]:
    trainer.model.train()  # metrics go under "train"
    return trainer._generate_and_score_completions([row for row in rows() for _ in range(N)])


def test_one_live_step_matches_the_hand_computation(plain_model, tmp_path):
    method, judge = arena()
    trainer = trainer_for(method, plain_model, tmp_path)
    trainer.model.train()
    batch = step_batch(trainer)
    samples = {s["group"].split(":")[0].split("/")[-1]: s for s in method.take_samples() if "group" in s}

    # routing: A and C to the judge, B keeps its verifier rewards
    assert {k: s["route"] for k, s in samples.items()} == {"0": "all_correct", "2": "all_incorrect"}
    assert samples["0"]["verifier"] == [1.0] * N and samples["2"]["verifier"] == [0.0] * N
    # the comparison graph and the call counts
    assert [tuple(m) for m in samples["0"]["matches"]] == MATCHES["A"]
    assert [tuple(m) for m in samples["2"]["matches"]] == MATCHES["C"]
    assert samples["0"]["calls"] == samples["2"]["calls"] == 9
    # the judge: 18 comparisons, 3 of them retried once at the retry temperature and still unparsable
    assert all("The correct answer is 156." in p for p, _ in judge.requests if "Multiply 12" in p)
    assert all("The correct answer is 5." in p for p, _ in judge.requests if "Add 2 and 3" in p)
    temperatures = [t for _, t in judge.requests]
    assert len(temperatures) == 21 and temperatures.count(1.0) == 3 and temperatures.count(0.0) == 18
    metrics = {k: v[-1] for k, v in trainer._metrics["train"].items()}
    assert metrics["arena/judge/calls"] == 18 and metrics["arena/judge/calls_per_routed_group"] == 9
    assert metrics["arena/judge/requests"] == 21 and metrics["arena/judge/retries"] == 3
    assert metrics["arena/judge/parse_failures"] == 3
    assert metrics["arena/judge/tie_rate"] == 1 / 15
    decided = [v for v in judge.presented if v != "Tie"]
    assert metrics["arena/judge/position_a_rate"] == decided.count("A") / len(decided)
    assert metrics["arena/routed_fraction"] == 2 / 3
    assert metrics["arena/routed/all_correct"] == metrics["arena/routed/all_incorrect"] == 1 / 3
    assert metrics["arena/generations"] == 3 * N

    # BT scores min-max scaled, then Eq. 2 per group; B on its verifier rewards
    for key, name in (("0", "A"), ("2", "C")):
        got = samples[key]["judge"]
        want = judged_rewards(name)
        assert [g is None for g in got] == [w is None for w in want]
        torch.testing.assert_close(
            torch.tensor([g for g in got if g is not None]),
            torch.tensor([w for w in want if w is not None]),
            atol=1e-5,
            rtol=0,
        )
    expected = eq2(judged_rewards("A")) + eq2([1.0, 0.0, 1.0, 1.0, 0.0]) + eq2(judged_rewards("C"))
    assert expected[4] == 0.0  # A's unrated trace

    # what reaches TRL's loss: per-token advantages weighted by Eq. 1's per-group normaliser
    mask = batch["completion_mask"].float()
    tokens = [float(mask[g * N : (g + 1) * N].sum()) for g in range(3)]
    total = sum(tokens)
    weights = torch.tensor([total / (3 * tokens[k // N]) for k in range(3 * N)])
    want = torch.tensor(expected)[:, None] * weights[:, None] * mask
    torch.testing.assert_close(batch["advantages"], want, atol=1e-4, rtol=1e-5)
    assert float(batch["num_items_in_batch"]) == total
    assert "tool_mask" not in batch  # the normaliser counts every real token


def test_round_robin_and_pointwise_are_the_same_method(plain_model, tmp_path):
    """Reasoning Arena's round robin: C(5, 2) = 10 calls per routed group and Eq. 8's win-rates; the
    Adaptive Pointwise baseline: one call per trace."""
    method, judge = arena(tournament="round_robin")
    trainer = trainer_for(method, plain_model, tmp_path / "rr")
    step_batch(trainer)
    samples = {s["group"].split(":")[0].split("/")[-1]: s for s in method.take_samples() if "group" in s}
    assert samples["2"]["calls"] == 10 and len(samples["2"]["matches"]) == 10
    quality = [3, 1, 4, 2, 5]
    assert samples["2"]["judge"] == [sorted(quality).index(q) / 4 for q in quality]  # wins / (N - 1)
    assert samples["0"]["calls"] == 10 and len(samples["0"]["matches"]) == 6  # 4 pairs with [qX] failed

    rater = MarkRater()
    method = ArenaMethod(
        ScorerReward("integer"), ArenaOptions(tournament="pointwise", judge_max_tokens=64), N, rater
    )
    step_batch(trainer_for(method, plain_model, tmp_path / "pw"))
    samples = {s["group"].split(":")[0].split("/")[-1]: s for s in method.take_samples() if "group" in s}
    assert samples["0"]["calls"] == samples["2"]["calls"] == N and len(rater.requests) == 2 * N
    assert samples["2"]["judge"] == [1.0, 0.0, 1.0, 0.5, 1.0]


def test_routing_all_and_none_are_the_paper_baselines(plain_model, tmp_path):
    """ArenaRL / RLAIF judge every group (B too); RLVR judges none and its diverse group's advantages are
    bit-identical to the verifier's own Eq. 2."""
    method, judge = arena(route="all")
    step_batch(trainer_for(method, plain_model, tmp_path / "all"))
    routed = [s for s in method.take_samples() if "group" in s]
    assert len(routed) == 3 and [s["route"] for s in routed][1] == "diverse"

    method, judge = arena(route="none", normalise="batch")
    batch = step_batch(trainer_for(method, plain_model, tmp_path / "none"))
    assert not judge.requests and not [s for s in method.take_samples() if "group" in s]
    from trainers.advantages import group_zscore

    want = group_zscore(torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0]), ["b"] * N, unbiased=False, eps=1e-6).values
    assert torch.equal(batch["advantages"][N : 2 * N], want)
    assert batch["advantages"][:N].abs().sum() == 0 and batch["advantages"][2 * N :].abs().sum() == 0


def test_rlvr_discards_groups_without_variance_and_refills(plain_model, tmp_path):
    """The RLVR baseline (docs/methods/arena.md): A and C have no verifier variance and are discarded; two
    prompts drawn from the pool (here only D, which is diverse) refill the step. 25 generations for the 15
    rows; with one round allowed, B alone is trained and the batch is padded."""
    method, judge = arena(pool=rows([REFILL]), route="none", refill=True, normalise="batch")
    trainer = trainer_for(method, plain_model, tmp_path / "refill")
    batch = step_batch(trainer)
    texts = [trainer.engine.decode(ids) for ids in batch["completion_ids"].tolist()]
    assert [t.rsplit(" ", 1)[1] for t in texts[:N]] == ["8.", "7.", "8.", "8.", "9."]  # B
    assert [t.rsplit(" ", 1)[1] for t in texts[N:]] == ["2.", "3.", "2.", "2.", "2."] * 2  # D twice
    d = eq2([1.0, 0.0, 1.0, 1.0, 1.0])
    want = torch.tensor(eq2([1.0, 0.0, 1.0, 1.0, 0.0]) + d + d)
    torch.testing.assert_close(batch["advantages"], want, atol=1e-6, rtol=0)
    metrics = {k: v[-1] for k, v in trainer._metrics["train"].items()}
    assert metrics["arena/generations"] == 5 * N and metrics["arena/routed_fraction"] == 0
    assert metrics["batch/padded_rows"] == 0 and not judge.requests
    assert (
        "arena/judge/tie_rate" not in metrics and "arena/judge/position_a_rate" not in metrics
    )  # no verdict

    method, _ = arena(pool=rows([REFILL]), route="none", refill=True, max_refill_rounds=1, normalise="batch")
    trainer = trainer_for(method, plain_model, tmp_path / "one-round")
    batch = step_batch(trainer)
    metrics = {k: v[-1] for k, v in trainer._metrics["train"].items()}
    assert metrics["arena/generations"] == 3 * N and metrics["batch/padded_rows"] == 2 * N
    assert batch["completion_mask"][N:].sum() == 0


def test_steps_train_and_resume_exactly(plain_model, tmp_path):
    """Two real optimizer steps, checkpointed after each; a new trainer resumed from checkpoint-1 ends
    step 2 with the same weights and the same method state (the judge's order generator and cache)."""
    method, _ = arena()
    trainer = trainer_for(
        method, plain_model, tmp_path / "full", max_steps=2, save_strategy="steps", save_steps=1
    )
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    after = dict(trainer.model.named_parameters())
    assert any(not torch.equal(before[n], after[n].detach()) for n in before)
    full_state = read_method_state(tmp_path / "full" / "checkpoint-2", 0)
    assert full_state["judge"]["cache"]
    hits = [
        log["arena/judge/cache_hits"] for log in trainer.state.log_history if "arena/judge/cache_hits" in log
    ]
    assert hits[0] == 0 and hits[1] > 0  # step 2 met step 1's pairs again, some in the same order

    resumed_method, _ = arena()
    resumed = trainer_for(
        resumed_method, plain_model, tmp_path / "full", max_steps=2, save_strategy="steps", save_steps=1
    )
    resumed.train(resume_from_checkpoint=str(tmp_path / "full" / "checkpoint-1"))
    for name, p in resumed.model.named_parameters():
        assert torch.equal(p.detach(), after[name].detach()), name
    assert resumed_method.state_dict() == full_state


def test_a_served_judges_prompts_are_sized_with_its_own_tokenizer_when_it_loads(plain_model):
    assert _tokenizer(str(plain_model)).name_or_path == str(plain_model)
    assert _tokenizer(str(plain_model / "no-such-judge")) is None  # the policy's counts instead
