"""Command-line options made from config dataclasses, so commands that share an option share it whole.

A config field declared with `harness.core.settings.setting(default, help)` becomes `--PREFIX-FIELD` with
that default and help. `@config_options(engine=ENGINE, ...)` adds a group's options to a command and
hands the command the built config under the group's name.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from typing import Annotated, Any, get_type_hints

import typer

from harness import HarnessError
from harness.backends import EngineConfig
from harness.config import EvalConfig, SamplingOverrides, ScoringConfig
from harness.scoring.judge import JudgeConfig


@dataclass(frozen=True)
class Options:
    """The options of one config class: `--{prefix}{field}` for each field shown on the command line."""

    config: type
    prefix: str = ""
    defaults: dict[str, Any] = field(default_factory=dict)  # this command's defaults, where they differ
    helps: dict[str, str] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    only: tuple[str, ...] = ()  # just these fields
    partial: bool = False  # build a dict of the values, for a config that also takes others
    types: dict[str, Any] = field(default_factory=dict)  # a field's command-line type, where it differs

    def fields(self) -> list:
        shown = [f for f in fields(self.config) if f.metadata.get("cli", True) and f.name not in self.exclude]
        return [f for f in shown if f.name in self.only] if self.only else shown

    def parameters(self) -> list[inspect.Parameter]:
        hints = get_type_hints(self.config)
        params = []
        for f in self.fields():
            default = self.defaults.get(f.name, f.default)
            help_text = self.helps.get(f.name, f.metadata["help"])
            params.append(
                inspect.Parameter(
                    self.prefix + f.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=inspect.Parameter.empty if default is MISSING else default,
                    annotation=Annotated[self.types.get(f.name, hints[f.name]), typer.Option(help=help_text)],
                )
            )
        return params

    def values(self, given: dict[str, Any]) -> dict[str, Any]:
        """This group's values, taken out of the command's keyword arguments."""
        return {f.name: given.pop(self.prefix + f.name) for f in self.fields()}

    def build(self, given: dict[str, Any]) -> Any:
        values = self.values(given)
        return values if self.partial else self.config(**values)


@dataclass(frozen=True)
class JudgeOptions:
    """`--judge-*`: the judge's engine (its model, backend, server, dtype, parallelism) and its decoding.

    Builds the judge's settings that differ from the defaults, flat (`{"model": ..., "base_url": ...}`):
    what `JudgeConfig.from_settings` takes, a train config keeps, and a rescore checks against the run's
    own judge (which needs no --judge-model)."""

    engine: Options = Options(
        EngineConfig,
        "judge_",
        defaults={"model": None, "backend": "openai"},
        helps={
            "model": "LLM judge: free-text benchmarks (cem, numeric) score max(rule, judge).",
            "backend": "The judge's backend: openai, vllm or hf.",
            "base_url": "The judge server's API root (openai).",
        },
        exclude=("data_parallel_size", "trust_remote_code", "raw_prompt"),  # a judge is a chat model
    )
    decoding: Options = Options(JudgeConfig, "judge_")

    def parameters(self) -> list[inspect.Parameter]:
        return self.engine.parameters() + self.decoding.parameters()

    def build(self, given: dict[str, Any]) -> dict[str, Any]:
        chosen = self.engine.values(given) | self.decoding.values(given)
        defaults = {p.name.removeprefix("judge_"): p.default for p in self.parameters()}
        return {k: v for k, v in chosen.items() if v != defaults[k]}


def judge_config(settings: dict[str, Any]) -> JudgeConfig | None:
    """The judge the --judge-* options describe; None without them, refused without --judge-model."""
    if not settings:
        return None
    if "model" not in settings:
        flags = ", ".join(f"--judge-{k.replace('_', '-')}" for k in settings)
        raise HarnessError(f"{flags}: the judge's settings need --judge-model")
    return JudgeConfig.from_settings(settings)


ENGINE = Options(EngineConfig)
SAMPLING = Options(SamplingOverrides)
SCORING = Options(ScoringConfig)
JUDGE = JudgeOptions()

RUN = Options(EvalConfig, partial=True)  # the run settings beside the configs above
DATA_DIR = Options(EvalConfig, partial=True, only=("data_dir",))


def config_options(**groups: Options | JudgeOptions) -> Callable:
    """Add each group's options to the decorated command, which gets the built config by group name."""

    def decorate(command: Callable) -> Callable:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name not in groups]
        added = [p for group in groups.values() for p in group.parameters()]

        @functools.wraps(command)
        def with_configs(**given: Any) -> Any:
            for name, group in groups.items():
                given[name] = group.build(given)
            return command(**given)

        del with_configs.__wrapped__  # typer reads the signature below, not the command's
        with_configs.__annotations__ = {}
        with_configs.__signature__ = signature.replace(parameters=own + added)  # type: ignore[attr-defined]
        return with_configs

    return decorate


THREADS = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Threads torch computes with [default: HARNESS_THREADS, else OMP_NUM_THREADS, else the CPUs "
        "this process may use, shared among its ranks; OpenMP threads sleep while they wait].",
    ),
]


def use_threads(threads: int | None) -> None:
    """`--threads N`, where given, over the count chosen at start-up (`harness.core.threads`)."""
    if threads is not None:
        from harness.core.threads import configure

        configure(threads)
