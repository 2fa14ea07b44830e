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
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, get_type_hints

from harness import HarnessError
from harness.backends.remote_code import refuse_code_settings
from harness.core.io.read import Unfit, load_yaml, read_yaml
from harness.core.settings import check, setting
from harness.scoring.judge import IDENTITY as JUDGE_IDENTITY
from trainers.names import check_method

CPU_MEMORY_MODES = ("bounded", "stock")  # stock: TRL's tiles and glibc's adaptive threshold

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
    "trust_remote_code",  # only ever from the command line's --trust-remote-code
}
# TRL 1.16's (`GRPOTrainer`'s loss branches and `_compute_advantages`), checked before anything loads
LOSS_TYPES = ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo")
SCALE_REWARDS = ("group", "batch", "none")


@dataclass(frozen=True)
class TrainConfig:
    """One training run. Sizes are per process; a step trains `prompts_per_step * num_generations` rows.
    `harness train` offers the fields in `harness.cli.training.FLAGS` as options, with their help."""

    method: str = setting(help="The method (harness list): grpo, spell, azr, arena, ulorl, spae, ...")
    model: str = setting(help="Model folder or Hub id to start from.")
    dataset: str = setting(help="Benchmark name, jsonl:PATH (or PATH.jsonl) or lm-eval:TASK.")
    out: str = setting(help="Run folder; the same config on it resumes. Not needed by --dry-run.")
    scorer: str | None = setting(None, "Reward scorer [default: the dataset's].")
    judge: dict[str, Any] | None = setting(
        None, "For judged scorers: flat judge settings (model, base_url, ...)."
    )
    data_dir: str | None = setting(None, "Local benchmark files, as for `harness eval`.")
    limit: int | None = setting(None, "Train on the first L items only.", minimum=1)
    prompt_template: str | None = setting(
        None, "User prompt; {problem} is replaced [default: the benchmark's]."
    )
    system_prompt: str | None = setting(None, "System prompt [default: the benchmark's; an empty one: none].")
    chat_template_kwargs: dict[str, Any] = setting(
        {}, "Passed to the chat template, e.g. {enable_thinking: false}."
    )
    # numpy's seeds are 32-bit
    seed: int = setting(0, "Seed of sampling, row order, method draws.", minimum=0, maximum=2**32 - 1)
    max_steps: int = setting(100, "Optimizer steps to train.", minimum=1)
    prompts_per_step: int = setting(4, "Prompts per step and process.", minimum=1)
    # GRPO's advantages need two samples of a prompt
    num_generations: int = setting(8, "Samples per prompt (G).", minimum=2)
    learning_rate: float = setting(1e-6, "The optimizer's learning rate.", exclusive_minimum=0)
    temperature: float = setting(1.0, "Sampling temperature of the rollouts.", exclusive_minimum=0)
    top_p: float = setting(1.0, "Nucleus sampling of the rollouts.", exclusive_minimum=0, maximum=1)
    max_completion_length: int = setting(1024, "Most tokens a completion may have.", minimum=1)
    beta: float = setting(0.0, "KL weight to the initial policy; 0 loads no reference model.", minimum=0)
    loss_type: str = setting(
        "grpo", "TRL's: grpo (per-sequence mean, the paper), dapo, dr_grpo, bnpo, ...", choices=LOSS_TYPES
    )
    scale_rewards: str = setting("group", "group, batch or none (Dr. GRPO).", choices=SCALE_REWARDS)
    save_steps: int = setting(50, "Save OUT/checkpoint-N every N steps.", minimum=1)
    logging_steps: int = setting(1, "Log metrics.jsonl every N steps.", minimum=1)
    # K a multiple of save_steps
    eval_every: int | None = setting(None, "Evaluate every K steps into OUT/evals/step-K.", minimum=1)
    eval_benchmarks: tuple[str, ...] = setting((), "Comma-separated benchmarks to evaluate.")
    eval_n: int = setting(1, "Samples per item of the evaluations.", minimum=1)
    eval_temperature: float = setting(0.0, "Temperature of the evaluations.", minimum=0)
    eval_max_tokens: int | None = setting(
        None, "Completion budget of the evaluations [default: max_completion_length].", minimum=1
    )
    eval_limit: int | None = setting(None, "Only the first L items of each evaluation.", minimum=1)
    eval_scorer: str | None = setting(None, "The scorer of jsonl: evaluation benchmarks.")
    use_vllm: bool = setting(False, "Generate with vLLM (TRL's).")
    vllm_mode: str = setting("colocate", "colocate (same GPUs) or server (`trl vllm-serve` on other GPUs).")
    vllm_server_base_url: str | None = setting(None, "The vLLM server's URL in server mode.")
    report_to: tuple[str, ...] = setting(
        ("tensorboard",), "Where metrics go besides metrics.jsonl; add wandb."
    )
    cpu_memory: str = setting(
        "bounded",
        'Off the GPU: "bounded" log-prob tiles and malloc (trainers/integration/memory.py), or "stock".',
        choices=CPU_MEMORY_MODES,
    )
    trl: dict[str, Any] = setting({}, "Any other trl.GRPOConfig field, passed through unchanged.")
    options: dict[str, Any] = setting({}, "The method's own settings (SPELL's m, L, ...).")
    cold_start: dict[str, Any] | None = setting(
        None, "SFT on the method's role demonstrations first (trainers/coldstart/); {}: the defaults."
    )
    trust_remote_code: bool = setting(
        False, "Run the model folder's own Python: set by --trust-remote-code only, never by a config."
    )

    def __post_init__(self) -> None:
        refuse_code_settings({k: v for k, v in vars(self).items() if k != "trust_remote_code"}, "config")
        for name, value in vars(self).items():
            problem = _type_problem(name, value)
            if problem:
                raise HarnessError(f"{name} must be {problem}, got {value!r}"[:300])
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
        """What makes two runs the same run: all but where the data files and the judge server live,
        and how memory is bounded (the same values, to float rounding)."""
        values = {k: v for k, v in dataclasses.asdict(self).items() if k not in ("data_dir", "cpu_memory")}
        if not self.options:  # runs from before methods had options keep their hash
            del values["options"]
        if self.cold_start is None:  # and those from before the cold start
            del values["cold_start"]
        if not self.trust_remote_code:  # and those from before --trust-remote-code
            del values["trust_remote_code"]
        if self.judge:  # who judges and how, not where or how fast it is served
            values["judge"] = {k: v for k, v in self.judge.items() if k in JUDGE_IDENTITY}
        return values

    @property
    def hash(self) -> str:
        return hashlib.sha256(json.dumps(self.identity, sort_keys=True).encode()).hexdigest()[:16]


FIELDS = {f.name: f for f in fields(TrainConfig)}


def _type_problem(name: str, value: Any) -> str | None:
    """What kind of value field `name` takes, if `value` is not one (its bounds are `check`'s)."""
    hint = str(get_type_hints(TrainConfig)[name])
    if value is None and "None" in hint:
        return None
    if "dict[" in hint:
        ok = isinstance(value, dict) and all(isinstance(k, str) for k in value)
        return None if ok else "a mapping of names to values"
    if "tuple" in hint:
        ok = isinstance(value, tuple) and all(isinstance(v, str) for v in value)
        return None if ok else "a list of names (or one comma-separated string)"
    if hint == "<class 'bool'>":
        return None if isinstance(value, bool) else "true or false"
    if "str" in hint:
        return None if isinstance(value, str) else "a string"
    return None  # numbers: `check` names their bounds


REQUIRED = ("method", "model", "dataset", "out")
DRY_RUN_OUT = "(none: a dry run writes nothing)"  # `out` of a dry run given no --out


def load_config(
    path: Path | None, overrides: dict[str, Any], *, dry_run: bool = False, trust_remote_code: bool = False
) -> TrainConfig:
    """Defaults < the YAML file at `path` < `overrides`; a None override (`--set cold_start=null`) drops
    the key, so the default applies. Neither the file nor `overrides` may hold a setting that runs a
    model's code (`harness.backends.remote_code`): `trust_remote_code` is the command line's flag.

    A dry run needs no `out` (it writes nothing): without one, `out` is `DRY_RUN_OUT`."""
    values: dict[str, Any] = {}
    if path is not None:
        try:  # the one reader: a regular file, bounded, without YAML anchors or aliases
            loaded = read_yaml(Path(path))
        except HarnessError as e:
            raise HarnessError(f"cannot read config {e}") from None
        loaded = {} if loaded is None else loaded
        if not isinstance(loaded, dict):
            raise HarnessError(f"config {path} must be a mapping of keys to values")
        refuse_code_settings(loaded, f"config {path}")
        values.update(loaded)
    refuse_code_settings(overrides, "--set")
    for key, value in overrides.items():
        if key.startswith(("trl.", "options.", "cold_start.")):
            group, _, name = key.partition(".")
            values[group] = {**_mapping(group, values.get(group)), name: value}
            if value is None:
                del values[group][name]
        elif value is None:
            values.pop(key, None)
        elif key == "judge":  # the command line's judge settings amend the file's
            values["judge"] = {**_mapping("judge", values.get("judge")), **_mapping("judge", value)}
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
        elif isinstance(values.get(key), list):
            values[key] = tuple(values[key])
    return TrainConfig(**values, trust_remote_code=trust_remote_code)


def _mapping(name: str, value: Any) -> dict[str, Any]:
    """The mapping `name` holds so far (none: empty), which a `name.KEY` setting amends."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise HarnessError(f"{name} must be a mapping of names to values, got {value!r}"[:300])
    return value


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())


def parse_set(items: list[str]) -> dict[str, Any]:
    """`--set KEY=VALUE` pairs; VALUE is read as YAML (numbers, booleans, lists)."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise HarnessError(f"--set expects KEY=VALUE, got {item!r}")
        try:
            out[key.strip()] = load_yaml(value)
        except Unfit as e:
            raise HarnessError(f"--set {item!r}: VALUE is not YAML ({_one_line(e)})") from None
    return out
