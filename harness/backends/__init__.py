"""Inference engines behind one interface (`base.Backend`), and how to build one from its settings."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from harness import HarnessError
from harness.backends.remote_code import refuse_code_settings
from harness.core.hub import check_model_source
from harness.core.settings import check, option_name, setting

BACKENDS = ("hf", "vllm", "openai")
# keyword arguments each engine is given from its options, so --model-arg may not give them again
SET_BY_BACKEND = {
    "hf": frozenset({"pretrained_model_name_or_path"}),
    "vllm": frozenset(
        {"tokenizer_revision", "enable_prefix_caching", "enable_chunked_prefill", "max_logprobs"}
    ),
}


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
    api: str = setting("chat", "openai endpoint: chat or completions.")
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


def check_engine(engine: EngineConfig) -> None:
    """Refuse option combinations that would be silently ignored."""
    if engine.backend not in BACKENDS:
        raise HarnessError(f"unknown backend {engine.backend!r}; available: {', '.join(BACKENDS)}")
    if (engine.backend == "openai") != (engine.base_url is not None):
        raise HarnessError("--base-url goes with --backend openai, and --backend openai needs --base-url")
    if engine.backend == "openai" and engine.data_parallel_size != 1:
        raise HarnessError("--data-parallel-size is for local engines; for a server, raise --concurrency")
    if engine.backend != "vllm" and engine.tensor_parallel_size != 1:
        raise HarnessError("--tensor-parallel-size needs --backend vllm")
    if engine.backend == "openai" and engine.model_args:
        raise HarnessError("--model-arg is for local engines (hf, vllm); a server takes its own settings")
    if engine.backend == "openai" and engine.raw_prompt and engine.api != "completions":
        raise HarnessError(
            "--raw-prompt with --backend openai needs --api completions (chat applies a template)"
        )
    refuse_code_settings(dict(engine.model_args), "--model-arg")
    for key in dict(engine.model_args):
        if key in {f.name for f in fields(EngineConfig)}:
            raise HarnessError(f"--model-arg {key}: use its own option, {option_name(key)}")
        if key in SET_BY_BACKEND.get(engine.backend, ()):
            raise HarnessError(f"--model-arg {key}: the {engine.backend} backend sets it from its options")


def check_model(engine: EngineConfig) -> None:
    """Refuse, before anything is written, a local engine's model that cannot load: a missing folder, a
    Hub id that cannot be fetched, a tokenizer that does not load or has no chat template (without
    --raw-prompt). A server's model is a name it serves, not checked here."""
    if engine.backend == "openai":
        return
    from harness.backends.chat import ChatPrompt

    check_model_source(engine.model, engine.revision)
    ChatPrompt(
        engine.model, engine.revision, trust_remote_code=engine.trust_remote_code, raw=engine.raw_prompt
    )


def make_backend(engine: EngineConfig):
    """Start the engine `engine` describes (one engine: data parallelism is the caller's)."""
    if engine.backend == "hf":
        from harness.backends.hf import HFBackend

        return HFBackend(
            engine.model,
            revision=engine.revision,
            dtype=engine.dtype,
            batch_size=engine.batch_size,
            trust_remote_code=engine.trust_remote_code,
            raw_prompt=engine.raw_prompt,
            model_args=dict(engine.model_args),
        )
    if engine.backend == "vllm":
        from harness.backends.vllm import VLLMBackend

        return VLLMBackend(
            engine.model,
            revision=engine.revision,
            dtype=engine.dtype,
            tensor_parallel_size=engine.tensor_parallel_size,
            max_model_len=engine.max_model_len,
            gpu_memory_utilization=engine.gpu_memory_utilization,
            enable_prefix_caching=engine.prefix_caching,
            enforce_eager=engine.enforce_eager,
            max_num_seqs=engine.max_num_seqs,
            trust_remote_code=engine.trust_remote_code,
            raw_prompt=engine.raw_prompt,
            model_args=dict(engine.model_args),
        )
    from harness.backends.openai import OpenAIBackend

    return OpenAIBackend(
        engine.model,
        engine.base_url,
        api=engine.api,
        revision=engine.revision,
        concurrency=engine.concurrency,
        timeout=engine.request_timeout,
        max_retries=engine.max_retries,
        server_wait=engine.server_wait,
        trust_remote_code=engine.trust_remote_code,
        raw_prompt=engine.raw_prompt,
    )
