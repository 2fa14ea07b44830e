"""Absolute Zero's own settings (`options:` in a train config), each with its default, bounds and help;
importable without torch (the docs build the method page's table from this dataclass)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from harness.core.settings import setting
from trainers.method import MethodOptions
from trainers.methods.azr import prompts
from trainers.methods.azr.executor import LIMITS

N_SAMPLES = 8  # n, Monte-Carlo solver rollouts per validated proposal (Table 3)
RULES = ("paper", "code", "constant")  # the proposer's reading of Eq. 6, or a control without it
MAX_PROGRAMS = 16384
STRATEGIES = ("paper", "max_new")
DISTANCE_METHODS = ("tree", "difflib")


@dataclass(frozen=True)
class AzrOptions(MethodOptions):
    """Absolute Zero's own settings (`options:` in the config); defaults are the paper's (Table 3)."""

    method: ClassVar[str] = "Absolute Zero"
    references: int = setting(6, "K", minimum=0)
    mc_samples: int = setting(N_SAMPLES, "n, rollouts estimating a task's accuracy", minimum=1)
    num_inputs: int = setting(prompts.NUM_INPUTS, "N, induction (half shown)", minimum=2)
    max_programs: int = setting(MAX_PROGRAMS, "buffer cap", minimum=1)
    template: str = setting(
        "r1",
        'the raw R1 string with `<think>` prefilled (base models); "chat": a chat template',
        choices=("r1", "chat"),
    )
    reward_rule: str = setting(
        "paper",
        "paper: -1 unparsable or invalid, else the learnability (0 at mean 0 or 1); "
        '"code": -1 for any proposal without a valid task and -0.5 for a valid one at mean 0 or 1 '
        '(Eq. 6, rewards.py); "constant": a control without learnability, 0.5 for every valid proposal',
        choices=RULES,
    )
    advantages: str = setting(
        "sequence",
        'TRR++ statistics per slice (paper); "token": veRL\'s token-weighted',
        choices=("sequence", "token"),
    )
    solver_lag: int = setting(0, "1: solve last step's proposals (the code)", minimum=0, maximum=1)
    solver_batch: str = setting(
        "paper", 'fill-up rule; "max_new": the code\'s pred_data_mix_strategy', choices=STRATEGIES
    )
    reject_multiple_functions: bool = setting(True, "the code's default for the Qwen runs")
    accept_none: bool = setting(False, "True: a program returning None is a task, as the code allows")
    timeout: float = setting(LIMITS.wall, "seconds per sandboxed run", exclusive_minimum=0)
    answer_cache: bool = setting(True, "identical answers to the same task are checked once")
    max_prompt_tokens: int = setting(6144, "Table 3", minimum=16)
    propose_max_tokens: int | None = setting(None, "default: max_completion_length", minimum=1)
    solve_max_tokens: int | None = setting(
        None, "the solver's token budget; default: max_completion_length", minimum=1
    )
    distance: str = setting(
        "tree", 'AST edit distance: APTED; "difflib": the code\'s cheap version', choices=DISTANCE_METHODS
    )
    logged_rollouts: int = setting(12, "per step in OUT/samples.jsonl (flagged ones always)", minimum=0)
