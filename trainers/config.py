"""`harness train` configuration: defaults, then a YAML file, then command-line values.

Every field below can be set in the YAML file or with `--set KEY=VALUE`; `trl:` holds any other
`trl.GRPOConfig` field (e.g. `epsilon_high`, `gradient_accumulation_steps`, `lr_scheduler_type`),
which is passed through unchanged. The resolved configuration is written to `OUT/train.json`; running
the same configuration on the same `OUT` resumes from its last checkpoint, and a different one is
refused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from harness import HarnessError
from harness.scoring.judge import IDENTITY as JUDGE_IDENTITY
from harness.settings import check, setting
from trainers.names import check_method

# Ours: set on the GRPOConfig we build, so `trl:` may not set them
OWNED_TRL_FIELDS = {
    "output_dir",
    "per_device_train_batch_size",
    "num_generations",
    "max_steps",
    "learning_rate",
    "temperature",
    "top_p",
    "max_completion_length",
    "beta",
    "loss_type",
    "scale_rewards",
    "seed",
    "save_steps",
    "logging_steps",
    "use_vllm",
    "vllm_mode",
    "vllm_server_base_url",
    "report_to",
    "chat_template_kwargs",
}


@dataclass(frozen=True)
class TrainConfig:
    """One training run. Sizes are per process; a step trains `prompts_per_step * num_generations` rows."""

    method: str
    model: str
    dataset: str  # a benchmark name, jsonl:PATH (or a .jsonl path), lm-eval:TASK
    out: str
    scorer: str | None = None  # the reward's harness scorer; default: the dataset's own
    judge: dict[str, Any] | None = None  # for judged scorers: flat judge settings (model, base_url, ...)
    data_dir: str | None = None  # local benchmark files, as for `harness eval`
    limit: int | None = setting(None, minimum=1)  # train on the first L items only
    prompt_template: str | None = None  # "{problem}" is replaced; default: the benchmark's prompt
    system_prompt: str | None = None
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)  # e.g. {enable_thinking: false}
    seed: int = setting(0, minimum=0)
    max_steps: int = setting(100, minimum=1)
    prompts_per_step: int = setting(4, minimum=1)
    num_generations: int = setting(8, minimum=2)  # GRPO's advantages need two samples of a prompt
    learning_rate: float = setting(1e-6, exclusive_minimum=0)
    temperature: float = setting(1.0, exclusive_minimum=0)
    top_p: float = setting(1.0, exclusive_minimum=0, maximum=1)
    max_completion_length: int = setting(1024, minimum=1)
    beta: float = setting(0.0, minimum=0)  # KL to the initial policy; 0 loads no reference model
    loss_type: str = "grpo"  # TRL's: grpo (per-sequence mean, the paper), dapo, dr_grpo, bnpo, ...
    scale_rewards: str = "group"  # group, batch or none (Dr. GRPO)
    save_steps: int = setting(50, minimum=1)
    logging_steps: int = setting(1, minimum=1)
    # evaluate every K steps into OUT/evals/step-K (K a multiple of save_steps)
    eval_every: int | None = setting(None, minimum=1)
    eval_benchmarks: tuple[str, ...] = ()
    eval_n: int = setting(1, minimum=1)
    eval_temperature: float = setting(0.0, minimum=0)
    eval_max_tokens: int | None = setting(None, minimum=1)  # default: max_completion_length
    eval_limit: int | None = setting(None, minimum=1)
    eval_scorer: str | None = None  # for jsonl: evaluation benchmarks
    use_vllm: bool = False
    vllm_mode: str = "colocate"  # colocate (same GPUs) or server (`trl vllm-serve` on other GPUs)
    vllm_server_base_url: str | None = None
    report_to: tuple[str, ...] = ("tensorboard",)  # add "wandb" to log there too
    trl: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # the method's own settings (SPELL's m, L, ...)
    # supervised fine-tuning on demonstrations of the method's roles before self-play (trainers/coldstart/);
    # None: off (the papers), {}: on with ColdStartOptions' defaults
    cold_start: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        check(type(self), vars(self), name=str)  # named as in the config file and --set
        clash = OWNED_TRL_FIELDS & set(self.trl)
        if clash:
            raise HarnessError(f"set {sorted(clash)} as top-level keys, not under `trl:`")
        if self.cold_start is not None:
            from trainers.coldstart.options import ColdStartOptions

            ColdStartOptions.from_mapping(self.cold_start)
        if self.judge is not None and "model" not in self.judge:
            raise HarnessError("judge settings need a model (judge: {model: ...} or --judge-model)")
        if self.eval_every is not None:
            if not self.eval_benchmarks:
                raise HarnessError("--eval-every needs --eval-benchmarks")
            if self.eval_every % self.save_steps:
                raise HarnessError(
                    f"eval_every ({self.eval_every}) must be a multiple of save_steps ({self.save_steps}): "
                    "evaluations read the saved checkpoints"
                )

    @property
    def identity(self) -> dict[str, Any]:
        """What makes two runs the same run: all but where the data files and the judge server live."""
        values = {k: v for k, v in dataclasses.asdict(self).items() if k != "data_dir"}
        if not self.options:  # runs from before methods had options keep their hash
            del values["options"]
        if self.cold_start is None:  # and those from before the cold start
            del values["cold_start"]
        if self.judge:  # who judges and how, not where or how fast it is served
            values["judge"] = {k: v for k, v in self.judge.items() if k in JUDGE_IDENTITY}
        return values

    @property
    def hash(self) -> str:
        return hashlib.sha256(json.dumps(self.identity, sort_keys=True).encode()).hexdigest()[:16]


FIELDS = {f.name: f for f in fields(TrainConfig)}


REQUIRED = ("method", "model", "dataset", "out")
DRY_RUN_OUT = "(none: a dry run writes nothing)"  # `out` of a dry run given no --out


def load_config(path: Path | None, overrides: dict[str, Any], *, dry_run: bool = False) -> TrainConfig:
    """Defaults < the YAML file at `path` < `overrides` (None values in overrides are ignored).

    A dry run needs no `out` (it writes nothing): without one, `out` is `DRY_RUN_OUT`."""
    values: dict[str, Any] = {}
    if path is not None:
        try:
            loaded = yaml.safe_load(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError) as e:
            raise HarnessError(f"cannot read config {path}: {e}") from None
        if not isinstance(loaded, dict):
            raise HarnessError(f"config {path} must be a mapping of keys to values")
        values.update(loaded)
    for key, value in overrides.items():
        if value is None:
            continue
        if key.startswith(("trl.", "options.", "cold_start.")):
            group, _, name = key.partition(".")
            values[group] = {**(values.get(group) or {}), name: value}
        elif key == "judge":  # the command line's judge settings amend the file's
            values["judge"] = {**(values.get("judge") or {}), **value}
        else:
            values[key] = value
    unknown = sorted(set(values) - set(FIELDS))
    if unknown:
        raise HarnessError(f"unknown config keys {unknown}; valid keys: {', '.join(FIELDS)}")
    if "method" in values:  # before the other keys: `harness train foo` names the method, not --out
        check_method(values["method"])
    if dry_run:
        values.setdefault("out", DRY_RUN_OUT)
    missing = [k for k in REQUIRED if k not in values]
    if missing:
        raise HarnessError(f"missing {missing}: give them on the command line or in the config file")
    for key in ("eval_benchmarks", "report_to"):
        if isinstance(values.get(key), str):
            values[key] = tuple(v for v in values[key].split(",") if v)
        elif key in values:
            values[key] = tuple(values[key])
    return TrainConfig(**values)


def parse_set(items: list[str]) -> dict[str, Any]:
    """`--set KEY=VALUE` pairs; VALUE is read as YAML (numbers, booleans, lists)."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise HarnessError(f"--set expects KEY=VALUE, got {item!r}")
        out[key.strip()] = yaml.safe_load(value)
    return out
