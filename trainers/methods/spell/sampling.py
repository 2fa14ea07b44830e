"""Role-specific dynamic sampling (SPELL paper, §4.3): which questions, answers and judgments one step
trains on, chosen from everything the step generated.

- Responder: the first `n` questions whose G answers have 0 < mean reward < 1.
- Questioner: those `n` questions (the positives, all with reward > 0) and as many negatives (reward
  <= 0: every or no responder right, ungrounded, malformed), drawn per task so each task gives as many
  negatives as it has positives; a task short of negatives passes its shortfall to the next (the last
  task's to any task's left over), so there are as many negatives as positives while the pool lasts.
- Verifier: the judgment groups that are not unanimous (the share agreeing with the majority in
  [0.51, 0.99]) and whose majority equals the rule's verdict ("update consistency"; off: any
  non-unanimous group), subsampled to ceil(n / V) groups of V judgments, i.e. about n trajectories.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

AGREEMENT = (0.51, 0.99)


@dataclass(frozen=True)
class Question:
    """What sampling needs to know of one generated question."""

    task: str
    reward: float | None  # the questioner's; None when dropped without penalty
    responder_rewards: tuple[float, ...] = ()  # empty unless answered with the documents


@dataclass(frozen=True)
class Judged:
    """One responder answer's verifier group."""

    question: int  # index into the step's questions
    judgments: tuple[int, ...]  # 1 YES, 0 NO, -1 invalid
    vote: int  # the group's majority
    rule: float  # the rule's score of the answer


@dataclass(frozen=True)
class Selection:
    responders: list[int]  # question indices whose responder groups are trained
    positives: list[int]  # questioner rows: the same questions
    negatives: list[int]
    verifiers: list[int]  # indices into the judged groups


def kept(question: Question) -> bool:
    rewards = question.responder_rewards
    return bool(rewards) and 0.0 < sum(rewards) / len(rewards) < 1.0


def eligible(group: Judged, consistency: bool = True) -> bool:
    valid = [j for j in group.judgments if j >= 0]
    if not valid or group.vote < 0:
        return False
    agreement = sum(j == group.vote for j in valid) / len(valid)
    low, high = AGREEMENT
    return low <= agreement <= high and (not consistency or float(group.vote) == group.rule)


def select(
    questions: Sequence[Question],
    judged: Sequence[Judged],
    n: int,
    verifier_group_size: int,
    rng: random.Random,
    *,
    consistency: bool = True,
    negatives_per_task: bool = True,
) -> Selection:
    responders = [i for i, q in enumerate(questions) if kept(q)][:n]
    pool = [i for i, q in enumerate(questions) if q.reward is not None and q.reward <= 0]
    if negatives_per_task:
        negatives, carry = [], 0
        for task in dict.fromkeys(questions[i].task for i in responders + pool):
            wanted = sum(questions[i].task == task for i in responders) + carry
            mine = [i for i in pool if questions[i].task == task]
            taken = rng.sample(mine, min(wanted, len(mine)))
            negatives += taken
            carry = wanted - len(taken)
        rest = [i for i in pool if i not in negatives]  # the last task's shortfall, from any task
        negatives += rng.sample(rest, min(carry, len(rest)))
    else:
        negatives = rng.sample(pool, min(len(responders), len(pool)))
    groups = [g for g, group in enumerate(judged) if eligible(group, consistency)]
    wanted = math.ceil(len(responders) / verifier_group_size)
    verifiers = sorted(rng.sample(groups, min(wanted, len(groups))))
    return Selection(responders, list(responders), sorted(negatives), verifiers)
