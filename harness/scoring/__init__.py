"""Scorers by name; each follows `base.Scorer` (`name`, `version`, `score(answers, golds, previous)`,
`close()`).

Rule scorers: math, code, choice, cem, numeric, integer; `lm-eval:TASK` scores with an lm-eval task's own
filters and process_results. `judge` is an LLM judge alone; `cem+judge`, `numeric+judge`,
`choice+judge` and `math+judge` are max(rule, judge) (cascade.py). `previous` (the details of each
sample's earlier score) lets a scorer reuse work already done, such as judge verdicts; the others
ignore it. Every scorer is registered under the `harness.scorers` entry point, the built-in ones in this
project's pyproject.toml and any installed package's the same way: a `Kind` (its factory, which takes
`Options`, and what its verdicts depend on), or a bare factory (the AZR method's held-out deduction
scorer is one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.registry import Registry
from harness.scoring.base import Scorer
from harness.scoring.cascade import RuleThenJudge, ScorerThenJudge
from harness.scoring.cem import CEMScorer
from harness.scoring.choice import ChoiceScorer
from harness.scoring.code import CodeScorer
from harness.scoring.integer import IntegerScorer
from harness.scoring.judge import JudgeConfig, JudgeScorer
from harness.scoring.lmeval import PREFIX as LM_EVAL
from harness.scoring.lmeval import LMEvalScorer
from harness.scoring.math import MathScorer
from harness.scoring.numeric import DEFAULT_RTOL, NumericScorer

__all__ = [
    "SCORERS",
    "JudgeConfig",
    "JudgeScorer",
    "RuleThenJudge",
    "Scorer",
    "Kind",
    "exact_golds",
    "get_scorer",
    "judged",
    "kind",
    "names",
    "timeless",
]


@dataclass(frozen=True)
class Options:
    """`get_scorer`'s options, for the factories (each takes the ones it needs)."""

    name: str
    timeout: float | None
    workers: int | None
    rtol: float
    judge: JudgeConfig | None
    persistent: bool
    measured: bool = False  # the benchmark's golds are measured quantities (the math scorer rounds)
    cache: bool = True  # code: reuse the ground truth kept in the harness cache

    def pool(self) -> dict:
        """The time limit and worker count the caller chose (the scorer's own defaults otherwise)."""
        return {k: v for k, v in (("timeout", self.timeout), ("workers", self.workers)) if v is not None}

    def judge_scorer(self) -> JudgeScorer:
        if self.judge is None:
            raise HarnessError(
                f"scorer {self.name!r} needs a judge: pass --judge-model (and --judge-base-url)"
            )
        return JudgeScorer(self.judge)


@dataclass(frozen=True)
class Kind:
    """A scorer's factory and what its verdicts depend on, declared beside it (not read from its name)."""

    build: Callable[[Options], Scorer] | None
    exact_golds: bool = False  # its gold is an answer a model could give verbatim (a constant can match it)
    judged: bool = False  # asks an LLM judge
    timed: bool = False  # runs timed programs: a verdict may depend on how busy the machine is
    sandboxed: bool = False  # runs model-written programs in the code sandbox: refused where it is not
    reads_question: bool = False  # reads each item's question with its gold (run.json `questions`)
    math_text: bool = False  # its benchmarks' problems and answers are LaTeX math text
    # NAME+judge, max(this, judge), exists with this cascade (cascade.py); None: no such scorer
    judge_after: type | None = None
    judge_given: bool = False  # a free-text rule: with --judge-model, its benchmarks score NAME+judge


# the built-in scorers, registered by name in pyproject.toml's `harness.scorers` entry points
MATH = Kind(
    lambda o: MathScorer(**o.pool(), persistent=o.persistent, measured=o.measured),
    exact_golds=True,
    reads_question=True,
    math_text=True,
    judge_after=ScorerThenJudge,
)
CODE = Kind(lambda o: CodeScorer(**o.pool(), cache=o.cache), timed=True, sandboxed=True)
INTEGER = Kind(lambda o: IntegerScorer(), exact_golds=True, math_text=True)
CHOICE = Kind(lambda o: ChoiceScorer(), exact_golds=True, judge_after=RuleThenJudge)
CEM = Kind(lambda o: CEMScorer(), judge_after=RuleThenJudge, judge_given=True)
NUMERIC = Kind(lambda o: NumericScorer(o.rtol), exact_golds=True, judge_after=RuleThenJudge, judge_given=True)
JUDGE = Kind(Options.judge_scorer, judged=True)
THEN_JUDGE = "+judge"
LM_EVAL_KIND = Kind(None)  # an lm-eval task's own filters and process_results: no judge, no timed code


def _factory(name: str, loaded: Any) -> Kind:
    """A registered object as a scorer: a `Kind`, or a bare factory (of `Options`), which is taken to run
    timed code. NAME+judge names are made from NAME's `judge_after`, never registered."""
    if name.endswith(THEN_JUDGE) or not (isinstance(loaded, Kind) or callable(loaded)):
        raise HarnessError(f"scorer {name!r} is registered as {loaded!r}, not a new scorer factory")
    return loaded if isinstance(loaded, Kind) else Kind(loaded, timed=True)


SCORERS: Registry[Kind] = Registry("harness.scorers", "scorer", _factory)


def names() -> tuple[str, ...]:
    """Every scorer's name: the registered ones, then NAME+judge for each a judge may follow (and any
    lm-eval:TASK for an lm-eval generate_until task)."""
    return (*SCORERS, *(f"{name}{THEN_JUDGE}" for name in SCORERS if SCORERS[name].judge_after))


def kind(name: str) -> Kind:
    """What the named scorer is (an unknown name: a scorer with none of the properties)."""
    if name.startswith(LM_EVAL):
        return LM_EVAL_KIND
    rule = name.removesuffix(THEN_JUDGE)
    if rule not in SCORERS:
        return Kind(None)
    found = SCORERS[rule]
    if rule == name:
        return found
    if found.judge_after is None:
        return Kind(None)
    build, then = found.build, found.judge_after
    return replace(
        found,
        build=lambda o: then(build(o), o.judge_scorer()),
        judged=True,
        reads_question=False,  # the rule inside is given no questions
        judge_after=None,
        judge_given=False,
    )


def judged(name: str) -> bool:
    """Whether the named scorer asks an LLM judge."""
    return kind(name).judged


def timeless(name: str) -> bool:
    """Whether the named scorer's verdicts cannot depend on how busy the machine is: no judge engine to
    start, no timed programs to run (code that passes on an idle machine may time out on a busy one)."""
    return not (kind(name).judged or kind(name).timed)


def exact_golds(name: str) -> bool:
    """Whether the named scorer's gold is an answer a model could give verbatim, so that a constant
    answer's accuracy is the share of items with that gold."""
    return kind(name).exact_golds


def get_scorer(
    name: str,
    *,
    timeout: float | None = None,
    workers: int | None = None,
    rtol: float = DEFAULT_RTOL,
    judge: JudgeConfig | None = None,
    lm_eval_include_path: str | None = None,
    persistent: bool = False,
    measured: bool = False,
    cache: bool = True,
) -> Scorer:
    """`persistent` keeps the math scorer's worker processes alive between calls (training);
    `measured` says a benchmark's golds are measured quantities (`MathScorer`); `cache` lets the code
    scorer reuse the ground truth kept in the harness cache."""
    if name.startswith(LM_EVAL):
        return LMEvalScorer(name.removeprefix(LM_EVAL), lm_eval_include_path)
    build = kind(name).build
    if build is None:
        raise HarnessError(f"unknown scorer {name!r}; available: {', '.join(names())}")
    return build(Options(name, timeout, workers, rtol, judge, persistent, measured, cache))


def trusted_include_path(config: dict[str, Any], given: str | Path | None) -> str | None:
    """The folder of lm-eval task files a run's config names, where the caller names the same folder.

    Its YAML can import Python (`!function`), and a run folder is data, not code: a folder that only
    run.json names is refused, and none is needed where no benchmark is an lm-eval task."""
    recorded = config.get("scoring", {}).get("lm_eval_include_path")
    uses = any(str(b).startswith(LM_EVAL) for b in config.get("benchmarks", ())) or any(
        str(s).startswith(LM_EVAL) for s in config.get("scorers", {}).values()
    )
    if not recorded or not uses:
        return None
    if given is not None and Path(given).expanduser().resolve() == Path(str(recorded)).expanduser().resolve():
        return str(recorded)
    raise HarnessError(
        f"run.json names the lm-eval task folder {recorded}, whose YAML files can run Python: "
        f"pass --lm-eval-include-path {recorded} if you trust it"
    )
