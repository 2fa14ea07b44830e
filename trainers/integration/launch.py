"""How many processes `harness train` runs in, as its launcher started them, said in its first line.

torchrun and `accelerate launch` (with --multi_gpu, DeepSpeed or --multi_cpu) start one process per
rank and set WORLD_SIZE and RANK in each; a plain `python -m harness train` is one process. `accelerate
launch --cpu --num_processes 2` is not several: without --multi_cpu it runs its simple launcher, one
process, and tells that process nothing of the 2 asked for (it sets ACCELERATE_USE_CPU only). The
harness cannot see such a request, so it names the case in its first line, and `--num-processes N`
makes any difference between what was asked and what was started an error.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness import HarnessError

CPU_COMMAND = "torchrun --nproc_per_node N -m harness train ..."


def launched() -> tuple[int, int]:
    """(this process's rank, the number of processes), from the launcher's environment."""
    return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


def check_processes(requested: int | None) -> None:
    """Refuse a run whose launcher started another number of processes than `--num-processes`."""
    _, world = launched()
    if requested is None or requested == world:
        return
    hint = (
        f"; `accelerate launch --cpu` starts one process whatever --num_processes says: use {CPU_COMMAND}"
        if world == 1 and os.environ.get("ACCELERATE_USE_CPU", "").lower() == "true"
        else ""
    )
    raise HarnessError(
        f"--num-processes {requested}, but the launcher started {world} process"
        f"{'es' if world != 1 else ''} (WORLD_SIZE){hint}"
    )


def launch_line(method: str) -> str | None:
    """The first line of `harness train METHOD`, for the main process (None on the others)."""
    rank, world = launched()
    if rank != 0:
        return None
    if world > 1:
        return f"harness train {method}: {world} processes"
    simple = os.environ.get("ACCELERATE_USE_CPU", "").lower() == "true"
    note = (
        f" (accelerate launch --cpu starts one, whatever --num_processes says; for several: {CPU_COMMAND})"
        if simple
        else ""
    )
    return f"harness train {method}: 1 process{note}"


def kept(out: str, max_steps: int, save_steps: int) -> str | None:
    """What an interrupted `harness train` keeps, for its last line (said by the main process only:
    None on the others): the last checkpoint saved whole, which the same command resumes from."""
    rank, _ = launched()
    if rank != 0:
        return None
    from trainers.integration.checkpoints import processes, resume_point

    last, _ = resume_point(Path(out), processes())
    if last is None:
        return f"{out} holds no finished checkpoint yet (one is saved every {save_steps} steps)"
    return f"{out} keeps {Path(last).name} (step {Path(last).name.rsplit('-', 1)[1]} of {max_steps})"
