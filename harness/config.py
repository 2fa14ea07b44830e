"""What one evaluation run is: a few small frozen configs, each field with its command-line help.

`EvalConfig` gathers the engine (`harness.backends.EngineConfig`), the sampling overrides, the
scoring settings and the judge (`harness.scoring.judge.JudgeConfig`); `harness eval`, `harness score`
and `harness train` build them from the same option definitions (`harness/cli/options.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.backends import EngineConfig
from harness.scoring.judge import JudgeConfig
from harness.settings import setting


@dataclass(frozen=True)
class SamplingOverrides:
    """Sampling settings chosen for the run; None leaves the preset's, then the benchmark's default."""

    n: int | None = setting(None, "Samples per item (default: the benchmark's).")
    temperature: float | None = setting(None, "0 means greedy.")
    top_p: float | None = setting(None, "Nucleus sampling mass.")
    top_k: int | None = setting(None, "-1: no top-k cut.")
    max_tokens: int | None = setting(None, "Completion token budget.")


@dataclass(frozen=True)
class ScoringConfig:
    """How answers are scored and aggregated (the judge has its own config)."""

    scorer: str | None = setting(
        None, "Scorer for jsonl: benchmarks: math, code, choice, cem, numeric, judge, cem+judge..."
    )
    numeric_rtol: float | None = setting(None, "Relative tolerance of the numeric scorer [default: 0.0015].")
    lm_eval_include_path: str | None = setting(None, "A folder of lm-eval task YAML files, for lm-eval:TASK.")
    score_timeout: float | None = setting(None, "Seconds per scorer call before it is killed.")
    score_workers: int | None = setting(None, "Scorer worker processes.")
    upstream_compat: bool = setting(
        False, "CRUXEval: drop invalid answers from n as the upstream scorer does (inflates pass@k)."
    )


@dataclass(frozen=True)
class EvalConfig:
    """One `harness eval` run."""

    benchmarks: tuple[str, ...]
    engine: EngineConfig
    sampling: SamplingOverrides = SamplingOverrides()
    scoring: ScoringConfig = ScoringConfig()
    judge: JudgeConfig | None = None  # judges free-text answers: max(rule, judge)
    out: Path | None = None  # None: runs/<model>-<config hash>
    seed: int = 0
    limit: int | None = None
    data_dir: Path | None = None
    preset: str | None = None  # a paper's protocol (harness/presets.py); explicit settings win
    prompt_template: str | None = None  # "{problem}" is replaced by the problem text
    system_prompt: str | None = None
    max_input_tokens: int | None = None  # None: the benchmark's (or preset's); 0: never cut
