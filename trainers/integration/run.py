"""`harness train METHOD`: dataset, method and trainer from a `TrainConfig`, run with resume.

OUT holds `train.json` (the resolved config), `checkpoint-N/` (Hugging Face model folders that
`harness eval --model` loads, with optimizer, RNG and method state for resuming), `metrics.jsonl`
(one line per logged step), `samples.jsonl` (what the method generated, for reading, where it
says; `Method.take_samples`), `tensorboard/`, and `evals/step-N/` (harness run directories; step-0 is
the initial model).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import HarnessError
from harness.core.hub import check_model_source
from harness.core.io.read import Unfit, loads
from harness.core.store import RunDir, atomic_write, read_file
from trainers.coldstart.options import ColdStartOptions
from trainers.config import TrainConfig
from trainers.data import dataset_rows
from trainers.integration.callbacks import (
    EvalEveryCallback,
    FinalCheckpointCallback,
    MetricsJsonlCallback,
    SamplesJsonlCallback,
    StepLineCallback,
    read_jsonl,
)
from trainers.integration.checkpoints import load_method_state, processes, resume_point
from trainers.integration.memory import bound_memory
from trainers.integration.quiet import quiet_libraries
from trainers.integration.sft import FOLDER as COLD_START_FOLDER
from trainers.integration.sft import check_cold_start, cold_start_model
from trainers.methods import METHODS

if TYPE_CHECKING:
    from trainers.method import Method

CONFIG_FILE = "train.json"


TRAIN_EXTRA = ("trl", "tensorboard", "complexipy", "apted", "scipy")  # pyproject.toml's `train` extra


def require_train_extra() -> None:
    """Refuse in one line where the `train` extra is not installed (`pip install .` only evaluates)."""
    import importlib.util

    missing = [name for name in TRAIN_EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        raise HarnessError(
            f"harness train needs the train extra ({', '.join(missing)} not installed): "
            "pip install 'harness[train]'"
        )


def method_class(config: TrainConfig) -> type[Method]:
    return METHODS.require(config.method)


def training_rows(config: TrainConfig) -> tuple[list[dict[str, Any]], str | None]:
    """The rows TRL iterates and the reward's scorer (None for a method that scores by its own rules)."""
    own = method_class(config).dataset_rows(config)
    return (own, None) if own is not None else dataset_rows(config)


def grpo_args(config: TrainConfig):
    """The `trl.GRPOConfig` this run trains with; a setting TRL does not know or refuses is a user error."""
    import torch
    from trl import GRPOConfig

    on_cpu = not torch.cuda.is_available()
    defaults = {
        "gradient_checkpointing": False,
        "bf16": not on_cpu,
        "use_cpu": on_cpu,
        "save_strategy": "steps",
    }
    unknown = sorted(set(config.trl) - {f.name for f in dataclasses.fields(GRPOConfig)})
    if unknown:
        raise HarnessError(f"unknown trl settings {unknown}: not fields of TRL's GRPOConfig")
    try:
        with quiet_libraries():  # its deprecation warnings are not the user's business
            return GRPOConfig(**owned_trl_settings(config), **(defaults | config.trl))
    except (ValueError, TypeError) as e:
        raise HarnessError(f"TRL refuses these settings: {' '.join(str(e).split())[:400]}") from None


def owned_trl_settings(config: TrainConfig) -> dict[str, Any]:
    """The GRPOConfig fields this trainer sets from the config (`trl:` may not set them: their names are
    `trainers.config.OWNED_TRL_FIELDS`, which a test keeps equal to these keys)."""
    method = method_class(config)
    return dict(
        output_dir=config.out,
        per_device_train_batch_size=method.rows_per_step(config),
        num_generations=method.sampler_group(config),
        max_steps=config.max_steps,
        learning_rate=config.learning_rate,
        temperature=config.temperature,
        top_p=config.top_p,
        max_completion_length=config.max_completion_length,
        beta=config.beta,
        loss_type=config.loss_type,
        scale_rewards=config.scale_rewards,
        seed=config.seed,
        save_steps=config.save_steps,
        logging_steps=config.logging_steps,
        use_vllm=config.use_vllm,
        vllm_mode=config.vllm_mode,
        vllm_server_base_url=config.vllm_server_base_url,
        report_to=list(config.report_to),
        chat_template_kwargs=dict(config.chat_template_kwargs) or None,
        trust_remote_code=config.trust_remote_code,  # only ever from --trust-remote-code
    )


def make_method(config: TrainConfig, scorer: str | None):
    from harness.scoring.judge import JudgeConfig
    from trainers.rewards import ScorerReward

    judge = JudgeConfig.from_settings(config.judge) if config.judge else None
    reward = ScorerReward(scorer, judge=judge) if scorer else None
    return method_class(config).from_config(config, reward)


def check_out_dir(config: TrainConfig) -> tuple[str | None, list[str]]:
    """The checkpoint to resume from (None for a fresh run) and notes on the half-saved ones skipped;
    refuses an OUT made by another config, and one whose train.json, metrics.jsonl or samples.jsonl is
    not what this trainer wrote (or a link).
    A run folder that was moved or copied resumes: where OUT lives is not part of the comparison."""
    out = Path(config.out)
    if out.exists() and not out.is_dir():
        raise HarnessError(f"--out {out} is a file, not a folder")
    saved = out / CONFIG_FILE
    if os.path.lexists(saved):
        previous = {k: v for k, v in _saved_config(saved).items() if k != "out"}
        current = {k: v for k, v in json.loads(json.dumps(config.identity)).items() if k != "out"}
        if previous != current:
            changed = sorted(k for k in set(previous) | set(current) if previous.get(k) != current.get(k))
            raise HarnessError(
                f"{out} holds a run with a different configuration (changed: {', '.join(changed)}); "
                "use another --out, or the same settings to resume"
            )
    for name in ("metrics.jsonl", "samples.jsonl"):
        read_jsonl(out / name)  # a corrupt line stops the run here, before anything is written
    return resume_point(out, processes())


def _saved_config(path: Path) -> dict[str, Any]:
    try:
        saved = loads(read_file(path))
    except Unfit as e:
        raise HarnessError(f"{path}: not a train.json this trainer wrote ({e}); use another --out") from None
    if not (isinstance(saved, dict) and isinstance(saved.get("config"), dict)):
        raise HarnessError(f"{path}: not a train.json this trainer wrote (no config); use another --out")
    return saved["config"]


def check_model(config: TrainConfig, rows: list[dict[str, Any]]) -> None:
    """Refuse a model that does not load, and any prompt that with `max_completion_length` exceeds the
    model's context (as `harness eval` refuses it; prompts are never cut)."""
    from transformers import AutoConfig, AutoTokenizer

    check_model_source(config.model)  # a missing folder or an unreachable Hub: one line, in a second
    trust = config.trust_remote_code
    try:
        with quiet_libraries():
            model = AutoConfig.from_pretrained(config.model, trust_remote_code=trust)
            tokenizer = AutoTokenizer.from_pretrained(config.model, trust_remote_code=trust)
    except (OSError, ValueError) as e:
        raise HarnessError(
            f"--model {config.model}: cannot load it ({' '.join(str(e).split())[:300]})"
        ) from None
    limit = getattr(model, "max_position_embeddings", None)
    if not limit:
        return
    for row in rows:
        if not isinstance(row.get("prompt"), list):
            continue
        ids = tokenizer.apply_chat_template(
            row["prompt"], tokenize=True, add_generation_prompt=True, **dict(config.chat_template_kwargs)
        )
        # transformers 5 returns a BatchEncoding (a Mapping, not a dict): its len() is its 2 keys
        tokens = len(ids["input_ids"] if isinstance(ids, Mapping) else ids)
        if tokens + config.max_completion_length > limit:
            raise HarnessError(
                f"{config.dataset} item {row.get('id')}: prompt ({tokens} tokens) + max_completion_length "
                f"({config.max_completion_length}) exceeds the model's context of {limit} tokens; "
                "drop the item or lower max_completion_length (prompts are not cut)"
            )


def train(config: TrainConfig, announce: Callable[[], None] | None = None) -> Path:
    """Train (or resume) and return OUT. Everything is checked before OUT is written: the options, the
    folder, the data, the TRL settings, the model and its context, the method. `announce` (the launch
    line) is called once they all passed, so that a refused run prints its one error line alone."""
    require_train_extra()
    import torch
    from datasets import Dataset

    from trainers.integration.trainer import MethodGRPOTrainer

    method_class(config).resolved_options(config)  # a bad option stops the run before anything loads
    method_class(config).check_batch(config, processes())
    check_cold_start(config, method_class(config))
    resume, skipped = check_out_dir(config)
    out = Path(config.out)
    if resume is not None and _step_of(resume) >= config.max_steps:
        print(f"{out} is already trained to step {_step_of(resume)} of {config.max_steps}: nothing to do")
        return out
    rows, scorer = training_rows(config)
    args = grpo_args(config)
    sandbox = code_sandbox(scorer)
    check_model(config, rows)
    method = make_method(config, scorer)
    if resume is not None:  # a state that does not fit is refused here; the trainer loads it again
        load_method_state(Path(resume), process_index(), method)
    with RunDir(out).locked() if is_main_process() else contextlib.nullcontext():
        if announce is not None:
            announce()
        for note in skipped if is_main_process() else ():  # after the launch line, once
            print(note, flush=True)
        cold = {"cold_start": COLD_START_FOLDER} if config.cold_start is not None else {}
        record = {"hash": config.hash, "config": config.identity, "scorer": scorer, **sandbox, **cold}
        if is_main_process():  # one writer: another process may get here before the main one made OUT
            atomic_write(out / CONFIG_FILE, json.dumps(record, indent=2) + "\n")
        os.environ["TENSORBOARD_LOGGING_DIR"] = str(out / "tensorboard")  # read by transformers' callback
        bound_memory(config.cpu_memory, "cuda" if torch.cuda.is_available() else "cpu")
        model = cold_start_model(config, method_class(config)) or config.model
        callbacks = [
            MetricsJsonlCallback(out / "metrics.jsonl", resumed_at=_step_of(resume)),
            SamplesJsonlCallback(out / "samples.jsonl", method, resumed_at=_step_of(resume)),
            FinalCheckpointCallback(),
        ]
        if config.eval_every:
            callbacks.append(EvalEveryCallback(config, evaluate_checkpoint, model))
        with quiet_libraries():
            trainer = MethodGRPOTrainer(
                model=model,
                args=args,
                train_dataset=Dataset.from_list(rows),
                method=method,
                callbacks=callbacks,
            )
            one_line_per_step(trainer, max(1, config.max_steps // 10))
            trainer.train(resume_from_checkpoint=resume)
    return out


def end_processes() -> None:
    """Close the process group once every process is done. Left to the interpreter's exit, gloo's
    threads are torn down in any order and can abort a finished process ("terminate called without
    an active exception", exit -6)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def process_index() -> int:
    from accelerate import PartialState

    return PartialState().process_index


def is_main_process() -> bool:
    """Whether this process reports for the run: the only one, or the main one of several (accelerate's
    rank 0; every process trains, one says so)."""
    from accelerate import PartialState

    return PartialState().is_main_process


def one_line_per_step(trainer: Any, every: int) -> None:
    """Replace the trainer's progress bar and printed metric dicts by `StepLineCallback` (metrics.jsonl
    and TensorBoard keep every value)."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    trainer.remove_callback(ProgressCallback)
    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(StepLineCallback(every))


def code_sandbox(scorer: str | None) -> dict[str, Any]:
    """For a reward that runs programs (a `sandboxed` scorer): refuse to run model code unisolated
    unless opted in (before anything is loaded or written), and say how it is isolated. None: the
    method scores by its own rules, and sets up its own sandbox where it runs programs."""
    from harness import sandbox
    from harness.scoring import kind

    if scorer is None or not kind(scorer).sandboxed:
        return {}

    sandbox.require()
    return {"sandbox": sandbox.facts()}


def _step_of(checkpoint: str | None) -> int:
    return int(Path(checkpoint).name.rsplit("-", 1)[1]) if checkpoint else 0


def evaluate_checkpoint(config: TrainConfig, checkpoint: str, out: Path) -> None:
    """`harness eval` of one checkpoint, in a fresh process so training memory is not shared."""
    command = [
        sys.executable,
        "-m",
        "harness",
        "eval",
        "--benchmarks",
        ",".join(config.eval_benchmarks),
        "--model",
        str(checkpoint),
        "--out",
        str(out),
        "--n",
        str(config.eval_n),
        "--temperature",
        str(config.eval_temperature),
        "--max-tokens",
        str(config.eval_max_tokens or config.max_completion_length),
        "--seed",
        str(config.seed),
    ]
    for flag, value in (
        ("--limit", config.eval_limit),
        ("--data-dir", config.data_dir),
        ("--scorer", config.eval_scorer),
        ("--prompt-template", config.prompt_template),
        ("--system-prompt", config.system_prompt),
    ):
        if value is not None:
            command += [flag, str(value)]
    if config.trust_remote_code:
        command.append("--trust-remote-code")
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy())
    if done.returncode != 0:
        raise HarnessError(f"evaluation of {checkpoint} failed:\n{done.stderr[-2000:]}")


def describe(config: TrainConfig) -> dict[str, Any]:
    """What `--dry-run` prints: the resolved config and the TRL arguments it becomes."""
    require_train_extra()
    args = grpo_args(config)
    keys = (
        "per_device_train_batch_size",
        "num_generations",
        "gradient_accumulation_steps",
        "steps_per_generation",
        "learning_rate",
        "loss_type",
        "scale_rewards",
        "beta",
        "use_vllm",
        "vllm_mode",
        "bf16",
        "use_cpu",
        "deepspeed",
        "report_to",
    )
    options = method_class(config).resolved_options(config)
    return {
        "config": asdict(config),
        "cold_start": None
        if config.cold_start is None
        else asdict(ColdStartOptions.from_mapping(config.cold_start)),
        "hash": config.hash,
        "options": options,
        "trl": {k: getattr(args, k) for k in keys},
    }
