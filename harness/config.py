"""What one evaluation run is: a few small frozen configs, each field with its command-line help.

`EvalConfig` gathers the engine (`harness.backends.EngineConfig`), the sampling overrides, the
scoring settings and the judge (`harness.scoring.judge.JudgeConfig`); `harness eval`, `harness score`
and `harness train` build them from the same option definitions (`harness/cli/options.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness import HarnessError
from harness.backends import EngineConfig
from harness.core.settings import check, setting
from harness.scoring.judge import JudgeConfig


@dataclass(frozen=True)
class SamplingOverrides:
    """Sampling settings chosen for the run; None leaves the preset's, then the benchmark's default."""

    n: int | None = setting(None, "Samples per item (default: the benchmark's).", minimum=1)
    temperature: float | None = setting(None, "0 means greedy.", minimum=0)
    top_p: float | None = setting(None, "Nucleus sampling mass.", exclusive_minimum=0, maximum=1)
    top_k: int | None = setting(None, "-1: no top-k cut.", minimum=1, also=(-1,))
    max_tokens: int | None = setting(None, "Completion token budget.", minimum=1)

    def __post_init__(self) -> None:
        check(type(self), vars(self))


@dataclass(frozen=True)
class ScoringConfig:
    """How answers are scored and aggregated (the judge has its own config)."""

    scorer: str | None = setting(
        None, "Scorer for jsonl: benchmarks: math, integer, code, choice, cem, numeric, judge, cem+judge..."
    )
    numeric_rtol: float | None = setting(
        None, "Relative tolerance of the numeric scorer [default: 0.0015].", minimum=0
    )
    lm_eval_include_path: str | None = setting(None, "A folder of lm-eval task YAML files, for lm-eval:TASK.")
    score_timeout: float | None = setting(
        None, "Seconds per scorer call before it is killed.", exclusive_minimum=0
    )
    score_workers: int | None = setting(None, "Scorer worker processes.", minimum=1)
    cache: bool = setting(
        True,
        "Reuse the ground truth kept under HARNESS_CACHE (evalplus's expected outputs); off: run it again.",
    )
    upstream_compat: bool = setting(
        False, "CRUXEval: drop invalid answers from n as the upstream scorer does (inflates pass@k)."
    )
    unsafe_no_sandbox: bool = setting(
        False, "Run model code WITHOUT isolation where bubblewrap is unusable (recorded, marked in tables)."
    )

    def __post_init__(self) -> None:
        check(type(self), vars(self))


MAX_SHARDS = 100_000


def parse_shard(text: str) -> tuple[int, int]:
    """`--shard K/N` as (K, N), or a one-line error."""
    index, slash, count = text.partition("/")
    if not (slash and index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count) <= MAX_SHARDS):
        raise HarnessError(f"--shard must be K/N with 1 <= K <= N <= {MAX_SHARDS} (e.g. 2/8), got {text!r}")
    return int(index), int(count)


@dataclass(frozen=True)
class EvalConfig:
    """One `harness eval` run."""

    # configs and names the command line builds its own way (harness/cli/evaluation.py)
    benchmarks: tuple[str, ...] = setting(cli=False)
    engine: EngineConfig = setting(cli=False)
    sampling: SamplingOverrides = setting(SamplingOverrides(), cli=False)
    scoring: ScoringConfig = setting(ScoringConfig(), cli=False)
    judge: JudgeConfig | None = setting(None, cli=False)  # judges free-text answers: max(rule, judge)
    preset: str | None = setting(
        None, "A paper's protocol: spell, spell-100k, azr, arena, ulorl, spae... (see list)."
    )
    out: Path | None = setting(
        None, "Run directory, resumed if it exists [default: runs/<model>-<config hash>]."
    )
    seed: int = setting(0, "Run seed; each sample's seed is derived from it.", minimum=0)
    limit: int | None = setting(None, "Only the first L items of each benchmark.", minimum=1)
    data_dir: Path | None = setting(
        None, "Local data folder (D/<benchmark>/...) instead of the Hub; `harness fetch-data` fills one."
    )
    max_input_tokens: int | None = setting(
        None,
        "Cut longer prompts in the middle to this many tokens (0: never) [default: the benchmark's].",
        minimum=0,
    )
    prompt_template: str | None = setting(None, "User prompt; {problem} is replaced.")
    system_prompt: str | None = setting(None, "System prompt.")
    shard: str | None = setting(
        None, "Evaluate part K of N (K/N, 1 <= K <= N); `harness merge` joins the N run folders."
    )

    def __post_init__(self) -> None:
        check(type(self), vars(self))
        if self.shard is not None:
            parse_shard(self.shard)
