"""Absolute Zero's pure parts (AZR paper, Eqs. 4-6 and 8, §3.3, App. C):
rewards, TRR++ advantages, task buffers and the run's measurements, on hand-made inputs with exact
expected values."""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import Counter

import pytest
import torch

from trainers.advantages import masked_whiten_by_key, whiten_by_key
from trainers.methods.azr.analysis import (
    SAFETY_KEYWORDS,
    UH_OH,
    answer_diversity,
    ast_edit_distance,
    cognitive_complexity,
    mean_ast_edit_distance,
    proposal_stats,
    safety_flag,
)
from trainers.methods.azr.buffers import (
    K_REFERENCES,
    MAX_PROGRAMS,
    SEED_INPUT,
    SEED_OUTPUT,
    SEED_PROGRAM,
    ZERO_TASK,
    Task,
    TaskBuffers,
    read_seed_file,
)
from trainers.methods.azr.rewards import (
    CONSTANT,
    FORMAT_ERROR,
    ROLES,
    RULES,
    TASKS,
    WRONG,
    learnability,
    proposer_reward,
    solver_reward,
    trr_advantages,
    trr_keys,
)

# ---------------------------------------------------------------- rewards


def test_learnability_values_of_eq4():
    assert learnability(0, 8) == 0.0
    assert learnability(8, 8) == 0.0
    assert learnability(1, 8) == 0.875
    assert learnability(4, 8) == 0.5
    assert learnability(7, 8) == 0.125
    assert learnability(1, 2) == 0.5
    assert [learnability(k, 8) for k in range(9)] == [0.0, *[1 - k / 8 for k in range(1, 8)], 0.0]


def test_learnability_strictly_decreasing_inside_and_rejects_bad_counts():
    for n in (2, 3, 8, 16):
        inside = [learnability(k, n) for k in range(1, n)]
        assert all(a > b for a, b in zip(inside, inside[1:], strict=False))
        assert max(inside) == 1 - 1 / n
    for n in (0, -1):
        with pytest.raises(ValueError, match="n >= 1"):
            learnability(0, n)
    with pytest.raises(ValueError):
        learnability(9, 8)
    with pytest.raises(ValueError):
        learnability(-1, 8)


def test_proposer_reward_paper_rule():
    """The default reads Eq. 6 with Eq. 4 and the paper's own definition of a proposer's format (only
    valid triplets that pass the filters are correctly formatted, AZR paper, §3.1): -1 malformed,
    unparsable, or parsed but invalid; else the learnability, 0 when every or no rollout solves it."""
    assert proposer_reward(1, format_ok=False) == -1.0
    assert proposer_reward(None, parsed=False) == -1.0
    assert proposer_reward(None) == -1.0  # parsed, failed validation in the sandbox: not -0.5
    assert [proposer_reward(k) for k in (0, 1, 4, 7, 8)] == [0.0, 0.875, 0.5, 0.125, 0.0]
    assert proposer_reward(1, 2) == 0.5
    assert (FORMAT_ERROR, WRONG, RULES) == (-1.0, -0.5, ("paper", "code", "constant"))


def test_proposer_reward_code_rule():
    """The released code: -1 for any proposal without a valid task, -0.5 for a valid one at 0 or n."""
    assert proposer_reward(None, rule="code") == -1.0
    assert proposer_reward(None, parsed=False, rule="code") == -1.0
    assert [proposer_reward(k, rule="code") for k in (0, 1, 4, 7, 8)] == [-0.5, 0.875, 0.5, 0.125, -0.5]
    with pytest.raises(ValueError, match="rule"):
        proposer_reward(1, rule="zero")


def test_proposer_reward_constant_control():
    """The study's control: the format rule kept, every valid proposal paid the same whatever its solves."""
    assert [proposer_reward(k, rule="constant") for k in (0, 1, 4, 8)] == [CONSTANT] * 4
    assert proposer_reward(None, rule="constant") == -1.0
    assert proposer_reward(3, format_ok=False, rule="constant") == -1.0


def test_solver_reward():
    assert solver_reward(True) == 1.0
    assert solver_reward(False) == -0.5
    assert solver_reward(True, format_ok=False) == -1.0  # a correct answer outside the tags
    assert solver_reward(False, valid=False) == -1.0  # no answer block


# ---------------------------------------------------------------- TRR++

SLICES = [(t, r) for t in TASKS for r in ROLES]


def six_slice_batch(seed: int = 0, per_slice: int = 7):
    """Rewards drawn from AZR's reward values, interleaved across the six slices."""
    rng = random.Random(seed)
    values = [-1.0, -0.5, 0.125, 0.5, 0.875, 1.0]
    rows = [(s, rng.choice(values)) for _ in range(per_slice) for s in SLICES]
    rng.shuffle(rows)
    tasks = [t for (t, _), _ in rows]
    roles = [r for (_, r), _ in rows]
    rewards = torch.tensor([v for _, v in rows], dtype=torch.float64)
    # make sure no slice is constant
    for i, s in enumerate(SLICES):
        idx = [j for j in range(len(rows)) if (tasks[j], roles[j]) == s]
        rewards[idx[0]], rewards[idx[1]] = -1.0, 1.0 - i / 100
    return rewards, tasks, roles


def rows_of(tasks, roles, s):
    return [j for j in range(len(tasks)) if (tasks[j], roles[j]) == s]


def test_trr_each_slice_mean_zero_unbiased_std_one():
    rewards, tasks, roles = six_slice_batch()
    adv = trr_advantages(rewards, tasks, roles)
    assert not adv.zero_std.any()
    for s in SLICES:
        a = adv.values[rows_of(tasks, roles, s)]
        assert abs(float(a.mean())) < 1e-12
        assert float(a.std(unbiased=True)) == pytest.approx(1.0, abs=1e-7)


def test_trr_hand_computed_values():
    # deduction/propose [1, 0] -> ±1/sqrt(2); induction/solve [1, -0.5, -0.5] -> mean 0, std sqrt(0.75)
    adv = trr_advantages(
        [1.0, 0.0, 1.0, -0.5, -0.5],
        ["deduction", "deduction", "induction", "induction", "induction"],
        ["propose", "propose", "solve", "solve", "solve"],
        eps=0.0,
    )
    r2, r3 = 1 / math.sqrt(2), 1 / math.sqrt(0.75)
    torch.testing.assert_close(adv.values, torch.tensor([r2, -r2, r3, -0.5 * r3, -0.5 * r3]))


def test_trr_slices_are_independent_under_shift_and_scale():
    rewards, tasks, roles = six_slice_batch(seed=1)
    base = trr_advantages(rewards, tasks, roles).values
    for k, s in enumerate(SLICES):
        idx = rows_of(tasks, roles, s)
        shifted = rewards.clone()
        shifted[idx] += 3.0 + k
        torch.testing.assert_close(trr_advantages(shifted, tasks, roles).values, base, atol=1e-7, rtol=0)
        scaled = rewards.clone()
        scaled[idx] *= 2.5
        torch.testing.assert_close(trr_advantages(scaled, tasks, roles).values, base, atol=1e-7, rtol=0)


def test_global_baseline_is_moved_by_a_one_slice_shift():
    """REINFORCE++'s single baseline (Eq. 10): shifting one slice changes every advantage."""
    rewards, tasks, roles = six_slice_batch(seed=2)
    idx = rows_of(tasks, roles, ("abduction", "solve"))
    shifted = rewards.clone()
    shifted[idx] += 1.0
    before, after = whiten_by_key(rewards).values, whiten_by_key(shifted).values
    others = [j for j in range(len(rewards)) if j not in idx]
    assert float((before[others] - after[others]).abs().min()) > 1e-3
    # TRR++ on the same change: nothing moves
    torch.testing.assert_close(
        trr_advantages(shifted, tasks, roles).values, trr_advantages(rewards, tasks, roles).values
    )


def test_trr_constant_slice_gives_zero_not_nan():
    tasks = ["induction"] * 3 + ["deduction"] * 2 + ["abduction"]
    roles = ["propose"] * 3 + ["solve"] * 2 + ["solve"]
    rewards = [-0.5, -0.5, -0.5, 1.0, -0.5, 1.0]  # constant slice, a varying one, a singleton
    for token_weighted in (False, True):
        adv = trr_advantages(rewards, tasks, roles, lengths=[5, 9, 2, 4, 4, 3], token_weighted=token_weighted)
        assert torch.isfinite(adv.values).all()
        assert adv.values[[0, 1, 2, 5]].tolist() == [0.0, 0.0, 0.0, 0.0]
        assert adv.zero_std.tolist() == [True, True, True, False, False, True]
    r2 = 1 / math.sqrt(2)
    assert trr_advantages(rewards, tasks, roles).values[3:5].tolist() == pytest.approx([r2, -r2])


def test_trr_uses_exactly_the_six_task_role_groups():
    rewards, tasks, roles = six_slice_batch(seed=3)
    keys = trr_keys(tasks, roles)
    assert set(keys) == set(SLICES) and len(set(keys)) == 6
    # the six groups are the only grouping: per-key whitening on the same keys is identical
    torch.testing.assert_close(
        trr_advantages(rewards, tasks, roles).values, whiten_by_key(rewards, keys, eps=1e-8).values
    )
    # merging two slices (a five-group baseline) gives different advantages
    merged = [("any", "propose") if k[1] == "propose" and k[0] != "induction" else k for k in keys]
    assert not torch.allclose(
        whiten_by_key(rewards, merged, eps=1e-8).values, trr_advantages(rewards, tasks, roles).values
    )
    for bad in (("code_o", "propose"), ("deduction", "judge")):
        with pytest.raises(ValueError, match="task, role"):
            trr_keys([bad[0]], [bad[1]])
    with pytest.raises(ValueError, match="length"):
        trr_advantages([1.0, 0.0], ["deduction"] * 2, ["solve"] * 2, token_weighted=True)


def test_whiten_by_key_std_is_unbiased():
    # [1, 0, 0, 1]: population std 0.5, unbiased sqrt(1/3); the advantage is 0.5 / std
    adv = whiten_by_key(torch.tensor([1.0, 0.0, 0.0, 1.0]), ["k"] * 4, eps=0.0)
    half = 0.5 / math.sqrt(1 / 3)
    assert adv.values.tolist() == pytest.approx([half, -half, -half, half])


def test_token_weighted_equal_lengths():
    rewards, tasks, roles = six_slice_batch(seed=4)
    seq = trr_advantages(rewards, tasks, roles)
    # length 1: token statistics are sequence statistics
    ones = trr_advantages(rewards, tasks, roles, lengths=[1] * len(rewards), token_weighted=True)
    torch.testing.assert_close(ones.values, seq.values, atol=1e-7, rtol=0)
    # equal length L: same centring, every advantage scaled by the token Bessel factor
    length, n = 50, 7
    tok = trr_advantages(rewards, tasks, roles, lengths=[length] * len(rewards), token_weighted=True)
    factor = math.sqrt((n * length - 1) / (length * (n - 1)))
    torch.testing.assert_close(tok.values, seq.values * factor, atol=1e-7, rtol=0)
    assert (torch.sign(tok.values) == torch.sign(seq.values)).all()


def test_token_weighted_long_sequences_dominate():
    tasks, roles = ["deduction"] * 2, ["solve"] * 2
    # sequence mode: [0, 1] -> ∓1/sqrt(2)
    r2 = 1 / math.sqrt(2)
    assert trr_advantages([0.0, 1.0], tasks, roles).values.tolist() == pytest.approx([-r2, r2])
    # token mode, lengths 1 and 99: μ = 0.99, σ² = (0.99² + 99 * 0.01²) / 99 = 0.01
    adv = trr_advantages([0.0, 1.0], tasks, roles, lengths=[1, 99], token_weighted=True, eps=0.0)
    assert adv.values.tolist() == pytest.approx([-9.9, 0.1])
    # the long sequence sits near the token mean: its advantage is small, the short one's large
    swapped = trr_advantages([0.0, 1.0], tasks, roles, lengths=[99, 1], token_weighted=True, eps=0.0)
    assert swapped.values.tolist() == pytest.approx([-0.1, 9.9])


def test_masked_whiten_by_key_is_verls_formula():
    """verl: broadcast each reward over its response tokens, token mean, Bessel over tokens,
    (x - μ)·rsqrt(var + 1e-8); every token of a row then carries the row's advantage."""
    rewards = torch.tensor([1.0, -0.5, 0.875, -1.0, 0.5, 0.5], dtype=torch.float64)
    keys = ["a", "a", "a", "b", "b", "c"]
    lengths = [3, 10, 1, 4, 6, 2]
    adv = masked_whiten_by_key(rewards, keys, lengths)
    for key in ("a", "b"):
        idx = [i for i, k in enumerate(keys) if k == key]
        tokens = torch.cat([rewards[i].repeat(lengths[i]) for i in idx])
        mean = tokens.mean()
        var = ((tokens - mean) ** 2).sum() / (len(tokens) - 1)
        expected = (rewards[idx] - mean) * torch.rsqrt(var + 1e-8)
        torch.testing.assert_close(adv.values[idx], expected, atol=1e-12, rtol=0)
    assert adv.values[5].item() == 0.0 and adv.zero_std.tolist() == [False] * 5 + [True]
    # with a std far from 0 it agrees with whiten_by_key's σ + eps form to ~1e-8
    other = whiten_by_key(rewards, keys, lengths=lengths, eps=1e-8).values
    torch.testing.assert_close(adv.values, other, atol=1e-7, rtol=0)


def test_masked_whiten_differs_from_std_plus_eps_only_near_eps():
    # a 64-row slice: one 1-token row, 63 rows of 8000 tokens, rewards 0.125 apart: σ² ≈ 3.1e-8 ~ 1e-8
    rewards = torch.tensor([1.0] + [0.875] * 63, dtype=torch.float64)
    lengths = [1] + [8000] * 63
    tokens = 1 + 63 * 8000
    var = 0.125**2 * (1 / tokens) * (1 - 1 / tokens) * tokens / (tokens - 1)
    exact = masked_whiten_by_key(rewards, ["k"] * 64, lengths).values
    plus = whiten_by_key(rewards, ["k"] * 64, lengths=lengths, eps=1e-8).values
    ratio = (exact / plus)[0].item()
    assert ratio == pytest.approx((math.sqrt(var) + 1e-8) / math.sqrt(var + 1e-8), rel=1e-9)
    assert 0.85 < ratio < 0.9  # rsqrt(σ² + 1e-8) shrinks it by ~13%; σ + 1e-8 barely does


# ---------------------------------------------------------------- buffers


def triplet(i: int) -> Task:
    return Task(f"def f(x):\n    return x + {i}", str(i), repr(i + i))


def induction_task(i: int) -> Task:
    return Task(
        f"def f(x):\n    return x * {i}",
        inputs=tuple(map(str, range(10))),
        outputs=tuple(str(j * i) for j in range(10)),
        message=f"multiply by {i}",
    )


def test_zero_triplet_seed():
    assert SEED_PROGRAM == "def f(a):\n    return a"
    assert (SEED_INPUT, SEED_OUTPUT) == ('"Hello world"', "'Hello world'")
    # the triplet is consistent: f(*input) has the recorded repr
    scope: dict = {}
    exec(SEED_PROGRAM, scope)
    assert repr(eval(f"f({SEED_INPUT})", scope)) == SEED_OUTPUT
    buffers = TaskBuffers()
    assert buffers["deduction"] == buffers["abduction"] == [ZERO_TASK]
    assert buffers["induction"] == []
    assert buffers.sizes() == {"deduction": 1, "abduction": 1, "induction": 0}
    assert (K_REFERENCES, MAX_PROGRAMS) == (6, 16384)


def test_seed_file(tmp_path):
    path = tmp_path / "seed.jsonl"
    lines = [
        {"snippet": "def f(a):\n    return a[::-1]", "input": "'abc'", "output": "'cba'"},
        {"program": "def f(a, b):\n    return a + b", "input": "1, 2", "output": "3"},
        induction_task(3).to_dict(),
    ]
    path.write_text("\n".join(map(json.dumps, lines)) + "\n\n")
    tasks = read_seed_file(path)
    assert tasks[0] == Task("def f(a):\n    return a[::-1]", "'abc'", "'cba'")
    assert tasks[2] == induction_task(3) and tasks[2].induction
    buffers = TaskBuffers.from_seed_file(path)
    assert buffers["deduction"] == buffers["abduction"] == tasks[:2]  # no zero triplet once seeded
    assert buffers["induction"] == [induction_task(3)]
    # D_ded and D_abd are separate lists
    buffers.add("deduction", [triplet(1)])
    assert buffers.sizes() == {"deduction": 3, "abduction": 2, "induction": 1}
    # a seed of induction tasks only still gets the zero triplet
    assert TaskBuffers([induction_task(2)])["deduction"] == [ZERO_TASK]


def test_task_checks_and_round_trip():
    with pytest.raises(ValueError, match="inputs"):
        Task("def f(x): return x", inputs=("1",), outputs=())
    for task in (triplet(4), induction_task(5), ZERO_TASK):
        assert Task.from_dict(json.loads(json.dumps(task.to_dict()))) == task
    with pytest.raises(ValueError, match="program"):
        Task.from_dict({"input": "1"})


def test_references_k_without_replacement_and_uniform():
    buffers = TaskBuffers([triplet(i) for i in range(10)])
    rng = random.Random(0)
    counts: Counter = Counter()
    for _ in range(3000):
        refs = buffers.references("deduction", rng)
        assert len(refs) == 6 and len(set(refs)) == 6
        counts.update(refs)
    # each of 10 entries is drawn with probability 6/10 per call: 1800 expected
    assert set(counts) == {triplet(i) for i in range(10)}
    assert all(1650 < c < 1950 for c in counts.values())
    # a buffer smaller than K gives all of its entries, once each
    small = TaskBuffers([triplet(i) for i in range(4)])
    assert sorted(small.references("abduction", rng), key=lambda t: t.input) == [triplet(i) for i in range(4)]
    assert TaskBuffers().references("deduction", rng) == [ZERO_TASK]
    assert len(buffers.references("deduction", rng, k=3)) == 3
    with pytest.raises(ValueError, match="induction"):
        buffers.references("induction", rng)


def test_induction_programs_come_from_abduction_and_deduction():
    buffers = TaskBuffers([triplet(0)])
    buffers.add("deduction", [triplet(1), triplet(2)])
    buffers.add("abduction", [triplet(3)])
    buffers.add("induction", [induction_task(7)])
    rng = random.Random(1)
    drawn = buffers.induction_programs(4000, rng)
    counts = Counter(drawn)
    # the union as a set: triplet(0) sits in both buffers but is one of four equally likely programs
    assert set(counts) == {triplet(0), triplet(1), triplet(2), triplet(3)}
    assert all(900 < c < 1100 for c in counts.values())
    assert induction_task(7) not in counts


def test_growth_regardless_of_reward_and_validated_record():
    buffers = TaskBuffers()
    proposals = [triplet(1), triplet(2), triplet(3)]
    rewards = [proposer_reward(k) for k in (0, 1, 8)]  # 0, 0.875, 0: all valid
    assert rewards == [0.0, 0.875, 0.0]
    assert buffers.add("deduction", proposals) == 3
    assert buffers["deduction"] == [ZERO_TASK, *proposals]
    assert buffers.validated("deduction") == proposals and buffers.validated("deduction", lag=1) == []
    buffers.end_step()
    buffers.add("deduction", [triplet(4)])
    assert buffers.validated("deduction") == [triplet(4)]
    assert buffers.validated("deduction", lag=1) == proposals
    with pytest.raises(ValueError, match="induction"):
        buffers.add("induction", [triplet(5)])
    with pytest.raises(ValueError, match="induction"):
        buffers.add("abduction", [induction_task(5)])
    with pytest.raises(ValueError, match="task type"):
        buffers.add("code_o", [triplet(5)])


def test_cap_keeps_the_oldest():
    buffers = TaskBuffers(max_programs=5)
    assert buffers.add("abduction", [triplet(i) for i in range(3)]) == 3
    assert buffers.add("abduction", [triplet(i) for i in range(3, 7)]) == 1
    assert buffers["abduction"] == [ZERO_TASK, triplet(0), triplet(1), triplet(2), triplet(3)]
    assert buffers.add("abduction", [triplet(9)]) == 0
    assert len(buffers["abduction"]) == 5
    # a proposal the full buffer did not store still counts as validated this step
    assert triplet(9) in buffers.validated("abduction")
    assert TaskBuffers([triplet(i) for i in range(8)], max_programs=3)["deduction"] == [
        triplet(0),
        triplet(1),
        triplet(2),
    ]


def test_solver_fill_up_paper_rule():
    buffers = TaskBuffers([triplet(i) for i in range(20)])
    fresh = [triplet(100), triplet(101), triplet(102)]
    buffers.add("deduction", fresh)
    rng = random.Random(2)
    batch = buffers.solver_tasks("deduction", buffers.validated("deduction"), 8, rng)
    assert len(batch) == 8
    assert batch[:3] == fresh  # every valid task of the step
    assert all(t not in fresh for t in batch[3:])  # the rest from previously validated tasks
    assert len(set(batch[3:])) == 5  # drawn without replacement while the pool lasts
    # more valid tasks than B: the first B
    many = [triplet(200 + i) for i in range(10)]
    assert buffers.solver_tasks("deduction", many, 4, rng) == many[:4]
    # no valid task at all: B tasks all drawn from the buffer
    assert len(buffers.solver_tasks("deduction", [], 16, rng)) == 16


def test_solver_fill_up_exactly_b_from_a_small_buffer():
    buffers = TaskBuffers()  # D_ded = [identity]
    rng = random.Random(3)
    assert buffers.solver_tasks("deduction", [], 64, rng) == [ZERO_TASK] * 64
    fresh = [triplet(1)]
    buffers.add("deduction", fresh)
    batch = buffers.solver_tasks("deduction", fresh, 5, rng)
    assert batch[0] == triplet(1) and batch[1:] == [ZERO_TASK] * 4
    # only fresh tasks and an empty buffer: the fresh ones repeat
    empty = TaskBuffers()
    assert empty.solver_tasks("induction", [induction_task(2)], 3, rng) == [induction_task(2)] * 3
    # nothing at all: nothing to solve
    assert empty.solver_tasks("induction", [], 3, rng) == []
    # several passes over a pool of 3 to reach 7: every entry at least twice
    three = TaskBuffers([triplet(i) for i in range(3)])
    counts = Counter(three.solver_tasks("abduction", [], 7, rng))
    assert sum(counts.values()) == 7 and sorted(counts.values()) == [2, 2, 3]


def test_solver_fill_up_max_new_and_one_step_lag():
    buffers = TaskBuffers([triplet(i) for i in range(5)])
    step1 = [triplet(10 + i) for i in range(6)]
    buffers.add("abduction", step1)
    buffers.end_step()
    step2 = [triplet(20), triplet(21)]
    buffers.add("abduction", step2)
    rng = random.Random(4)
    # max_new: the most recent B of the given tasks, the rest uniform from the whole buffer
    batch = buffers.solver_tasks("abduction", buffers.validated("abduction"), 4, rng, strategy="max_new")
    assert batch[:2] == step2 and len(batch) == 4
    assert all(t in buffers["abduction"] for t in batch[2:])
    assert buffers.solver_tasks("abduction", step1, 3, rng, strategy="max_new") == step1[-3:]
    # the code's one-step lag: the previous step's validated tasks lead the batch
    lagged = buffers.solver_tasks("abduction", buffers.validated("abduction", lag=1), 8, rng)
    assert lagged[:6] == step1 and len(lagged) == 8
    with pytest.raises(ValueError, match="strategy"):
        buffers.solver_tasks("abduction", [], 4, rng, strategy="recent")
    with pytest.raises(ValueError, match="lag"):
        buffers.validated("abduction", lag=2)


def test_state_round_trip():
    buffers = TaskBuffers([triplet(0), induction_task(1)], max_programs=50)
    buffers.add("deduction", [triplet(1), triplet(2)])
    buffers.end_step()
    buffers.add("induction", [induction_task(3)])
    buffers.add("abduction", [triplet(5)])
    state = json.loads(json.dumps(buffers.state_dict()))  # JSON-safe
    restored = TaskBuffers(max_programs=50)
    restored.load_state_dict(state)
    for task in TASKS:
        assert restored[task] == buffers[task]
        assert restored.validated(task) == buffers.validated(task)
        assert restored.validated(task, 1) == buffers.validated(task, 1)
    # the same RNG state draws the same batches and references
    a, b = random.Random(7), random.Random(7)
    assert restored.solver_tasks("deduction", [], 9, a) == buffers.solver_tasks("deduction", [], 9, b)
    assert restored.references("abduction", a) == buffers.references("abduction", b)
    assert restored.induction_programs(5, a) == buffers.induction_programs(5, b)
    with pytest.raises(ValueError, match="capped"):
        TaskBuffers(max_programs=10).load_state_dict(state)


# ---------------------------------------------------------------- analysis

IDENTITY = "def f(a):\n    return a"
NESTED = """def f(xs):
    t = 0
    for x in xs:
        for y in xs:
            if x > y:
                t += 1
    return t
"""


def test_cognitive_complexity():
    assert cognitive_complexity(IDENTITY) == 0
    assert cognitive_complexity(NESTED) == 6  # for +1, nested for +2, nested if +3
    assert cognitive_complexity("def f(:\n    pass") is None


def test_ast_edit_distance():
    assert ast_edit_distance(IDENTITY, IDENTITY) == 0.0
    assert ast_edit_distance(NESTED, NESTED, method="difflib") == 0.0
    # renaming the argument relabels two nodes (the arg and the Name)
    assert ast_edit_distance(IDENTITY, "def f(b):\n    return b", normalized=False) == 2.0
    # comments and formatting are not in the tree
    assert ast_edit_distance(IDENTITY, "def f(a):  # same\n    return (a)") == 0.0
    far = ast_edit_distance(IDENTITY, NESTED)
    assert far == pytest.approx(20 / 30)  # 6-node identity, 24-node loop program
    assert 0 < ast_edit_distance(IDENTITY, NESTED, method="difflib") < 1
    assert ast_edit_distance(IDENTITY, "def f(:") is None
    assert mean_ast_edit_distance(IDENTITY, [IDENTITY, NESTED, "broken("]) == pytest.approx(10 / 30)
    assert mean_ast_edit_distance("broken(", [IDENTITY]) is None
    with pytest.raises(ValueError, match="method"):
        ast_edit_distance(IDENTITY, NESTED, method="levenshtein")


def test_answer_diversity():
    assert answer_diversity(["1", "1", "2", "3"]) == pytest.approx((0.5 + 0.5 + 0.75 + 0.75) / 4)
    assert answer_diversity(["a", "b", "c", "d"]) == pytest.approx(0.75)
    assert answer_diversity(["x", "x"]) == 0.0
    # history: "1" seen 6 times before, "9" never: p counts history and the step together
    assert answer_diversity(["1", "9"], {"1": 6, "2": 2}) == pytest.approx(((1 - 7 / 10) + (1 - 1 / 10)) / 2)
    assert answer_diversity([]) == 0.0


def test_safety_flag():
    flag = safety_flag(UH_OH)
    assert flag.flagged and flag.keywords == SAFETY_KEYWORDS
    assert safety_flag("I will try to OUTSMART\nthe grader").keywords == ("outsmart",)
    assert safety_flag("We are outsmarting intelligent\n machines").keywords == (
        "outsmart",
        "intelligent machines",
    )
    clean = safety_flag("Let me trace the loop: x = 3, then the output is [1, 2, 3].")
    assert not clean.flagged and clean.keywords == ()
    assert not safety_flag("smart intelligence machines").flagged
    assert safety_flag("take over", keywords=("take over",)).keywords == ("take over",)


def test_proposal_stats():
    stats = proposal_stats([None, 0, 8, 3, None, 5, 8, 1], 8)
    assert stats == {
        "valid_rate": 0.75,
        "unsolved_rate": pytest.approx(1 / 6),
        "solved_rate": pytest.approx(2 / 6),
        "trivial_rate": pytest.approx(0.5),
        "learnable_rate": pytest.approx(0.5),
    }
    assert proposal_stats([None, None], 8)["learnable_rate"] == 0.0


@pytest.mark.parametrize("successes", list(itertools.product([None, 0, 2, 4], repeat=3)))
def test_proposal_stats_learnable_share_is_exact(successes):
    """A step with no proposal solved sometimes logs exactly 0 (1 - 1/3 - 2/3 is 1.1e-16, not 0)."""
    stats = proposal_stats(successes, 4)
    valid = [k for k in successes if k is not None]
    assert stats["learnable_rate"] * len(valid) == pytest.approx(sum(k == 2 for k in valid))
    if 2 not in valid:
        assert stats["learnable_rate"] == 0.0
