"""What `harness train --dry-run` checks beyond resolving the config: whether it is meant for a GPU this
machine lacks (and what TRL would do here instead), whether vLLM is installed where the config uses
it, and whether the dataset exists (read as training reads it, without loading the model)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from harness import HarnessError
from trainers.config import TrainConfig

OK, PROBLEM = "ok", "problem"
PRECISIONS = ("bf16", "fp16", "tf32")


def gpu_settings(config: TrainConfig) -> list[str]:
    """The config's settings that only a GPU serves: vLLM in the trainer, GPU memory shares, half
    precision, DeepSpeed."""
    found = [f"use_vllm: true (vllm_mode: {config.vllm_mode})"] if config.use_vllm else []
    for key, value in sorted(config.trl.items()):
        if key.startswith("vllm_gpu") or key == "deepspeed" or (key in PRECISIONS and value):
            found.append(f"trl.{key}: {value}")
    return found


def checks(config: TrainConfig) -> dict[str, str]:
    """Each check's finding, "ok: ..." or "problem: ...", by name: gpu, vllm (where used), dataset."""
    import torch

    found = {"gpu": _gpu(config, torch.cuda.is_available(), torch.cuda.device_count())}
    if config.use_vllm:
        found["vllm"] = (
            f"{OK}: vLLM is installed"
            if importlib.util.find_spec("vllm")
            else f"{PROBLEM}: use_vllm is true but vLLM is not installed (pip install -e '.[vllm]' on the "
            "GPU machine)"
        )
    found["dataset"] = _dataset(config)
    return found


def _gpu(config: TrainConfig, cuda: bool, devices: int) -> str:
    wanted = gpu_settings(config)
    if cuda:
        return f"{OK}: {devices} CUDA device(s)"
    if not wanted:
        return f"{OK}: a CPU config; no CUDA device here (TRL's use_cpu: true, bf16: false)"
    return (
        f"{PROBLEM}: this config is meant for a GPU ({'; '.join(wanted)}) and this machine has none: "
        "here TRL would train on the CPU (use_cpu: true, bf16: false, as printed)"
        + (" and vLLM would not start" if config.use_vllm else "")
        + "; the printed TRL values are this machine's, not the GPU's"
    )


def _dataset(config: TrainConfig) -> str:
    from trainers.integration.run import training_rows

    try:
        rows, _ = training_rows(config)
    except HarnessError as e:
        why = str(e).splitlines()[0]
        named = why if config.dataset in why else f"{config.dataset}: {why}"
        return f"{PROBLEM}: {named}{_fetch_hint(config.dataset)}"
    return f"{OK}: {config.dataset}: {len(rows)} rows"


def _fetch_hint(dataset: str) -> str:
    """How to make a missing file that `harness fetch-data` makes (DAPO-Math-17K's JSONL)."""
    from benchmarks.dapo import NAME

    path = Path(dataset.removeprefix("jsonl:"))
    if path.name == f"{NAME}.jsonl":
        return f" (`harness fetch-data {NAME} --to {path.parent}` makes it)"
    return ""
