"""Checkpoints of `harness train`: each process's method state in a safe format, and the last complete
checkpoint to resume from.

Method state is plain data: `method_state.json` (None, bools, numbers, strings, lists, tuples and dicts,
tagged where JSON has no form of its own) with any tensors in `method_state.safetensors`. Nothing in a
run folder is unpickled: a checkpoint that holds its method state as a pickle (`method_state.pt`, from
before) is refused, and TRL's own files (optimizer, scheduler, random state), which transformers reads with
`torch.load(weights_only=True)`, are refused before that if they name anything but tensors and numpy arrays.
A checkpoint is complete once its method state is written (after TRL's files); a save cut short leaves
one without it, which resume skips.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from harness import HarnessError
from harness.core.io.read import (
    RECORDS_BYTES,
    check_regular,
    loads,
    read_bytes,
    read_json,
    refuse_pickled_weights,
    validate,
)
from harness.core.io.write import write_file

STATE = "method_state"
LEGACY_STATES = ("method_state.pt", "backend_state.pt")  # pickles, from before this format
TRAINER_STATE = "trainer_state.json"  # TRL's, the last file it writes in a checkpoint
CHECKPOINT = re.compile(r"checkpoint-(\d+)")
METHOD_STATE = f"{STATE}.json"  # process 0's
TUPLE, TENSOR, PAIRS = "__tuple__", "__tensor__", "__pairs__"


def state_file(rank: int, suffix: str) -> str:
    """`method_state.SUFFIX` for process 0, `method_state-rank{r}.SUFFIX` for the others."""
    return f"{STATE}.{suffix}" if rank == 0 else f"{STATE}-rank{rank}.{suffix}"


def save_method_state(folder: Path, rank: int, state: Any) -> None:
    """Write `state` into `folder`: tensors first, the JSON last (its presence marks the save done)."""
    from safetensors.torch import save

    tensors: dict[str, Any] = {}
    text = json.dumps(_encode(state, tensors), allow_nan=True)
    if tensors:  # through the one writer: a link at that name is replaced, never followed
        write_file(Path(folder) / state_file(rank, "safetensors"), save(tensors))
    write_file(Path(folder) / state_file(rank, "json"), text + "\n")


def read_method_state(folder: Path, rank: int) -> Any:
    """The state `save_method_state` wrote in `folder`, read by the one reader (a regular file in the
    folder, never through a link, bounded); a one-line error for anything else."""
    from safetensors import SafetensorError
    from safetensors.torch import load

    path = Path(folder) / state_file(rank, "json")
    raw = read_bytes(path, folder)  # a link, a FIFO or a huge file: the reader's one line
    tensors_path = Path(folder) / state_file(rank, "safetensors")
    try:
        data = loads(raw)
        tensors = (
            load(read_bytes(tensors_path, folder, limit=RECORDS_BYTES))
            if os.path.lexists(tensors_path)
            else {}
        )
        return _decode(data, tensors)
    except (ValueError, KeyError, TypeError, SafetensorError) as e:
        raise _unfit(path, e) from None


def load_method_state(folder: Path, rank: int, method: Any) -> None:
    """Give `method` its saved state; a one-line error for a state that does not fit it."""
    state = read_method_state(folder, rank)
    try:
        method.load_state_dict(state)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
        raise _unfit(Path(folder) / state_file(rank, "json"), e) from None


def _unfit(path: Path, error: Exception) -> HarnessError:
    return HarnessError(
        f"{path}: not a method state of this run ({type(error).__name__}: {str(error)[:200]}); delete "
        f"{path.parent.name} to resume from the checkpoint before it, or start a new --out"
    )


def _encode(value: Any, tensors: dict[str, Any]) -> Any:
    import torch

    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, torch.Tensor):
        name = str(len(tensors))
        tensors[name] = value.detach().cpu().contiguous()
        return {TENSOR: name}
    if isinstance(value, tuple):
        return {TUPLE: [_encode(v, tensors) for v in value]}
    if isinstance(value, list):
        return [_encode(v, tensors) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) and k not in (TUPLE, TENSOR, PAIRS) for k in value):
            return {k: _encode(v, tensors) for k, v in value.items()}
        return {PAIRS: [[_encode(k, tensors), _encode(v, tensors)] for k, v in value.items()]}
    raise TypeError(f"method state holds a {type(value).__name__}: return plain data from state_dict()")


def _decode(data: Any, tensors: dict[str, Any]) -> Any:
    if isinstance(data, list):
        return [_decode(v, tensors) for v in data]
    if not isinstance(data, dict):
        return data
    if set(data) == {TUPLE}:
        return tuple(_decode(v, tensors) for v in data[TUPLE])
    if set(data) == {TENSOR}:
        return tensors[data[TENSOR]]
    if set(data) == {PAIRS}:
        return {_hashable(_decode(k, tensors)): _decode(v, tensors) for k, v in data[PAIRS]}
    return {k: _decode(v, tensors) for k, v in data.items()}


def _hashable(key: Any) -> Any:
    if isinstance(key, list | dict):
        raise TypeError(f"a dict key cannot be a {type(key).__name__}")
    return key


def resume_point(out: Path, processes: int) -> tuple[str | None, list[str]]:
    """The last complete checkpoint in `out` (None for a fresh run), and a note for each later one whose
    save was cut short (skipped); a symbolic link, a pickled method state or damaged weights are errors."""
    notes = []
    out = Path(out)
    found = sorted(
        ((int(m.group(1)), p) for p in out.iterdir() if (m := CHECKPOINT.fullmatch(p.name))),
        reverse=True,
    ) if out.is_dir() else []  # fmt: skip
    for _, folder in found:
        if folder.is_symlink() or not folder.is_dir():
            raise HarnessError(f"{folder}: a link or a file, not a checkpoint this trainer wrote; remove it")
        missing = _missing(folder, processes)
        if not missing:
            for entry in sorted(folder.iterdir()):  # transformers reads config, tokenizer and weights too
                if entry.is_symlink():
                    check_regular(entry, folder)  # the reader's one line for a link
            refuse_pickled_weights(folder)
            check_weights(folder)
            check_trainer_state(folder)
            check_trainer_files(folder)
            return str(folder), notes
        legacy = [name for name in LEGACY_STATES if (folder / name).is_file()]
        if legacy and (folder / TRAINER_STATE).is_file():
            raise HarnessError(
                f"{folder} holds its method state as a pickle ({legacy[0]}), which harness train does not "
                "load (a pickle can run code): start a new --out, or resume with the version that wrote it"
            )
        notes.append(
            f"note: skipping {folder.name}: its save did not finish (no {missing}); resuming before it"
        )
    return None, notes


def _missing(folder: Path, processes: int) -> str:
    """The first file a complete checkpoint has and `folder` lacks, or ""."""
    needed = [TRAINER_STATE, *(state_file(rank, "json") for rank in range(processes))]
    return next((name for name in needed if not (folder / name).is_file()), "")


def check_weights(folder: Path) -> None:
    """Refuse a checkpoint whose safetensors files are links, cut short or damaged, in one line."""
    from safetensors import SafetensorError, safe_open

    for path in sorted(folder.glob("*.safetensors")):
        check_regular(path, folder)
        try:
            with safe_open(str(path), "pt"):  # checks the header against the file's size
                pass
        except (SafetensorError, OSError, ValueError) as e:
            raise HarnessError(
                f"{path}: damaged ({str(e)[:160]}); delete {folder.name} to resume from the checkpoint "
                "before it, or start a new --out"
            ) from None


class TrainerStateFile(BaseModel, extra="forbid"):
    """TRL's trainer_state.json (transformers' `TrainerState`, built from its keys: an unknown key or a
    wrong type would fail only once the run has started)."""

    epoch: float | None = None
    global_step: int = 0
    max_steps: int = 0
    logging_steps: int | float = 500
    eval_steps: int | float = 500
    save_steps: int | float = 500
    train_batch_size: int | None = None
    num_train_epochs: int = 0
    num_input_tokens_seen: int = 0
    total_flos: float = 0
    log_history: list[dict[str, Any]] = []
    best_metric: float | None = None
    best_global_step: int | None = None
    best_model_checkpoint: str | None = None
    is_local_process_zero: bool = True
    is_world_process_zero: bool = True
    is_hyper_param_search: bool = False
    trial_name: str | None = None
    trial_params: dict[str, str | float | int | bool] | None = None
    stateful_callbacks: dict[str, Any] | None = None


def check_trainer_state(folder: Path) -> None:
    """Refuse a trainer_state.json that is not TRL's (read by the one reader, checked field by field)."""
    path = folder / TRAINER_STATE
    state = validate(TrainerStateFile, read_json(path, folder), str(path))
    if state.global_step < 0 or state.max_steps < 0:
        raise HarnessError(f"{path}: field global_step: a step count below 0")


TRAINER_GLOBALS = {  # what transformers lets torch.load(weights_only=True) build for its random state
    "numpy._core.multiarray._reconstruct", "numpy.core.multiarray._reconstruct",
    "numpy.ndarray", "numpy.dtype", "numpy.dtypes.UInt32DType",
}  # fmt: skip


def check_trainer_files(folder: Path) -> None:
    """Refuse TRL's torch files (optimizer.pt, scheduler.pt, rng_state*.pth) if they are links, damaged,
    name any Python global beyond tensors and numpy arrays (a crafted one is named, never loaded), or
    have another structure than TRL's; the structure is read with torch's restricted loader
    (`weights_only=True`, as transformers then reads them) and the random states are tried on
    throwaway generators."""
    import torch

    for path in sorted([*folder.glob("*.pt"), *folder.glob("*.pth")]):
        check_regular(path, folder)
        try:
            named = set(torch.serialization.get_unsafe_globals_in_checkpoint(str(path))) - TRAINER_GLOBALS
        except Exception as e:  # noqa: BLE001 (a damaged zip raises whatever its reader meets)
            raise HarnessError(f"{folder}: {path.name} does not load: damaged ({str(e)[:120]})") from None
        if named:
            raise HarnessError(
                f"{folder}: {path.name} does not load: it names {', '.join(sorted(named))}, which only a "
                "pickle that runs code needs; delete the checkpoint or start a new --out"
            )
        problem = _structure_problem(path)
        if problem:
            raise HarnessError(
                f"{folder}: {path.name} is not TRL's ({problem}); delete the checkpoint or start a new --out"
            )


def _structure_problem(path: Path) -> str | None:
    """Why a torch file of a checkpoint does not have the structure TRL gives it; None if it does."""
    import random

    import numpy as np
    import torch
    from transformers.trainer_pt_utils import safe_globals

    try:
        with safe_globals():
            value = torch.load(str(path), weights_only=True, map_location="cpu")
    except Exception as e:  # noqa: BLE001 (the restricted loader raises whatever it meets)
        return f"does not load: {str(e)[:120]}"
    if not isinstance(value, dict):
        return f"a {type(value).__name__}, not a mapping"
    try:
        if path.name.startswith("rng_state"):
            random.Random().setstate(value["python"])
            np.random.RandomState().set_state(value["numpy"])
            torch.Generator().set_state(value["cpu"])
        elif path.name == "optimizer.pt":
            groups = value["param_groups"]
            if not isinstance(value["state"], dict) or not all(
                isinstance(g, dict) and isinstance(g["params"], list) for g in groups
            ):
                return "its state or param_groups is not a mapping and a list of groups"
        elif path.name == "scheduler.pt":
            numbers = value.get("base_lrs", [])
            if not isinstance(value.get("last_epoch", 0), int) or not (
                isinstance(numbers, list) and all(isinstance(n, int | float) for n in numbers)
            ):
                return "its last_epoch or base_lrs is not a step and a list of rates"
    except (KeyError, TypeError, ValueError, RuntimeError, IndexError, OverflowError) as e:
        return f"{type(e).__name__}: {str(e)[:120]}"
    return None


def processes() -> int:
    """How many processes train (accelerate's or torchrun's WORLD_SIZE; 1 alone)."""
    return int(os.environ.get("WORLD_SIZE", "1"))
