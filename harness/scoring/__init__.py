"""Scorers by name. A scorer has `name`, `version` and `score(answers, golds[, previous]) -> (index, Score)`.

Rule scorers: math, code, choice, cem, numeric; `lm-eval:TASK` scores with an lm-eval task's own
filters and process_results. `judge` is an LLM judge alone; `cem+judge`,
`numeric+judge` and `choice+judge` are max(rule, judge). Scorers that take `previous` (the details
of each sample's earlier score) reuse work already done, such as judge verdicts.
"""

from __future__ import annotations

from harness import HarnessError
from harness.scoring.cem import CEMScorer
from harness.scoring.choice import ChoiceScorer
from harness.scoring.code import CodeScorer
from harness.scoring.judge import JudgeConfig, JudgeScorer
from harness.scoring.lmeval import PREFIX as LM_EVAL
from harness.scoring.lmeval import LMEvalScorer
from harness.scoring.math import MathScorer
from harness.scoring.numeric import DEFAULT_RTOL, NumericScorer

RULES = {"choice": ChoiceScorer, "cem": CEMScorer, "numeric": NumericScorer}
NAMES = ("math", "code", *RULES, "judge", *(f"{r}+judge" for r in RULES))


def get_scorer(
    name: str,
    *,
    timeout: float | None = None,
    workers: int | None = None,
    rtol: float = DEFAULT_RTOL,
    judge: JudgeConfig | None = None,
    lm_eval_include_path: str | None = None,
    persistent: bool = False,
):
    """`persistent` keeps the math scorer's worker processes alive between calls (training)."""
    if name.startswith(LM_EVAL):
        return LMEvalScorer(name.removeprefix(LM_EVAL), lm_eval_include_path)
    options = {k: v for k, v in (("timeout", timeout), ("workers", workers)) if v is not None}
    if name == "math":
        return MathScorer(**options, persistent=persistent)
    if name == "code":
        return CodeScorer(**options)
    rule_name, judged = name.removesuffix("+judge"), name == "judge" or name.endswith("+judge")
    if name not in NAMES:
        raise HarnessError(f"unknown scorer {name!r}; available: {', '.join(NAMES)}")
    rule = None
    if rule_name in RULES:
        rule = NumericScorer(rtol) if rule_name == "numeric" else RULES[rule_name]()
    if not judged:
        return rule
    if judge is None:
        raise HarnessError(f"scorer {name!r} needs a judge: pass --judge-model (and --judge-base-url)")
    return JudgeScorer(judge, rule)


def takes_previous(scorer) -> bool:
    return isinstance(scorer, JudgeScorer)
