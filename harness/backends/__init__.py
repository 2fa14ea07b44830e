"""Inference engines behind one interface (`base.Backend`), and how to build one from its settings.

Engines register as entry points in group `harness.backends` (pyproject.toml), as methods do. Each
declares what the checks below ask of it: `ENGINE_FIELDS`, the EngineConfig fields it takes (under the
same names); `SET_BY_ENGINE`, the keywords it sets itself, which --model-arg may not give; `server`,
whether it reaches a model served at --base-url; `gpus(engine, cluster_gpus)`, what one engine needs."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from harness import HarnessError
from harness.backends.remote_code import refuse_code_settings
from harness.core.hub import check_model_source
from harness.core.registry import Registry
from harness.core.settings import check, option_name, setting


@dataclass(frozen=True)
class EngineConfig:
    """Which model, served how: the settings of one inference engine (hf, vllm or openai)."""

    model: str = setting(help="Local model folder or Hugging Face model id.")
    backend: str = setting(
        "hf", "hf (transformers), vllm (offline engine) or openai (a server at --base-url)."
    )
    base_url: str | None = setting(None, "OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1.")
    revision: str | None = setting(None, "Model revision on the Hub.")
    trust_remote_code: bool = setting(
        False, "Run the model folder's own Python code (transformers, vLLM); a config can never allow it."
    )
    raw_prompt: bool = setting(
        False, "Send the prompt text as it is, without a chat template (for models that have none)."
    )
    # --model-arg KEY=VALUE pairs, passed to the engine (hf: from_pretrained, vllm: LLM)
    model_args: tuple[tuple[str, Any], ...] = setting((), cli=False)
    dtype: str = setting("auto", "Weights dtype (hf, vllm): auto, bfloat16, float32...")
    batch_size: int | None = setting(None, "Generation batch size (hf).", minimum=1)
    tensor_parallel_size: int = setting(1, "GPUs per vLLM engine.", minimum=1)
    data_parallel_size: int = setting(
        1, "Engines (hf, vllm), each on its own GPUs and share of the items.", minimum=1
    )
    max_model_len: int | None = setting(None, "vLLM context length.", minimum=1)
    gpu_memory_utilization: float | None = setting(
        None, "vLLM memory share [default: 0.9 on GPU, 0.2 of RAM on CPU].", exclusive_minimum=0, maximum=1
    )
    prefix_caching: bool = setting(True, "vLLM prefix caching.")
    enforce_eager: bool = setting(False, "vLLM without graph compilation: faster start, slower decoding.")
    max_num_seqs: int | None = setting(None, "vLLM: sequences decoded at once.", minimum=1)
    api: str = setting("chat", "openai endpoint: chat or completions.", choices=("chat", "completions"))
    concurrency: int = setting(32, "openai: requests in flight.", minimum=1)
    max_retries: int = setting(
        5,
        "openai: retries of a request that failed (timeout, 500, 408, 409, 425, a reply that is not JSON).",
        minimum=0,
    )
    server_wait: float = setting(
        300.0,
        "openai: seconds to keep polling a server that stopped answering (refused or dropped connections, "
        "429, 502-504) before giving up; any answer restarts the count.",
        minimum=0,
    )
    request_timeout: float = setting(600.0, "openai: seconds per request.", exclusive_minimum=0)

    def __post_init__(self) -> None:
        check(type(self), vars(self))


def _backend(name: str, loaded: Any) -> type:
    """A registered object as an engine: a class named as its entry point that declares its fields."""
    names = {f.name for f in fields(EngineConfig)}
    declared = getattr(loaded, "ENGINE_FIELDS", None)
    if (
        not isinstance(loaded, type)
        or getattr(loaded, "name", None) != name
        or not isinstance(declared, tuple)
    ):
        raise HarnessError(
            f"backend {name!r} is registered as {loaded!r}, not an engine class named {name!r}"
        )
    if set(declared) - names:
        raise HarnessError(
            f"backend {name!r} takes fields EngineConfig lacks: {sorted(set(declared) - names)}"
        )
    return loaded


BACKENDS: Registry[type] = Registry("harness.backends", "backend", _backend)


def check_engine(engine: EngineConfig) -> None:
    """Refuse option combinations that would be silently ignored, from what each engine declares."""
    backend = BACKENDS.require(engine.backend)
    servers = " or ".join(f"--backend {name}" for name in _taking(server=True))
    if backend.server != (engine.base_url is not None):
        raise HarnessError(f"--base-url goes with {servers}, and {servers} needs --base-url")
    if backend.server and engine.data_parallel_size != 1:
        raise HarnessError("--data-parallel-size is for local engines; for a server, raise --concurrency")
    if engine.tensor_parallel_size != 1 and "tensor_parallel_size" not in backend.ENGINE_FIELDS:
        takers = " or ".join(f"--backend {name}" for name in _taking("tensor_parallel_size"))
        raise HarnessError(f"--tensor-parallel-size needs {takers}")
    if engine.model_args and "model_args" not in backend.ENGINE_FIELDS:
        takers = ", ".join(_taking("model_args"))
        raise HarnessError(f"--model-arg is for local engines ({takers}); a server takes its own settings")
    if backend.server and engine.raw_prompt and engine.api != "completions":
        raise HarnessError(
            "--raw-prompt with --backend openai needs --api completions (chat applies a template)"
        )
    refuse_code_settings(dict(engine.model_args), "--model-arg")
    for key in dict(engine.model_args):
        if key in {f.name for f in fields(EngineConfig)}:
            raise HarnessError(f"--model-arg {key}: use its own option, {option_name(key)}")
        if key in backend.SET_BY_ENGINE:
            raise HarnessError(f"--model-arg {key}: the {engine.backend} backend sets it from its options")


def _taking(field: str | None = None, server: bool | None = None) -> list[str]:
    """The registered engines that take `field`, or that are (or are not) servers."""
    return [
        name
        for name in BACKENDS
        if (field is None or field in BACKENDS[name].ENGINE_FIELDS)
        and (server is None or BACKENDS[name].server == server)
    ]


def check_model(engine: EngineConfig) -> None:
    """Refuse, before anything is written, a local engine's model that cannot load: a missing folder, a
    Hub id that cannot be fetched, a tokenizer that does not load or has no chat template (without
    --raw-prompt). A server's model is a name it serves, not checked here."""
    if BACKENDS.require(engine.backend).server:
        return
    from harness.backends.chat import ChatPrompt

    check_model_source(engine.model, engine.revision)
    ChatPrompt(
        engine.model, engine.revision, trust_remote_code=engine.trust_remote_code, raw=engine.raw_prompt
    )


def make_backend(engine: EngineConfig):
    """Start the engine `engine` describes (one engine: data parallelism is the caller's), given the
    fields it declares."""
    backend = BACKENDS.require(engine.backend)
    return backend(engine.model, **{name: getattr(engine, name) for name in backend.ENGINE_FIELDS})
