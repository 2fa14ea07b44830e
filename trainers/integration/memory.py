"""What bounds a training process's memory off the GPU, beyond what the configuration asks for
(gradient checkpointing is a `trl:` setting).

- TRL computes per-token log-probabilities and entropies through the LM head in tiles, never the whole
  logits. On a GPU each tile is a Triton program; elsewhere the tile is a torch tensor of
  `TOKEN_CHUNK_SIZE` x `_CHUNKED_LOGPROB_CHUNK_SIZE` (4096 tokens x 32768 vocabulary entries in TRL
  1.16), 0.5 GB in float32, with half a dozen temporaries of its size: 4.9 GB more for one forward and
  backward of 6,000 tokens through SmolLM2's head. `bounded` tiles are 512 x 8192 (16 MB). Each token's
  log-sum-exp then folds over more, smaller vocabulary chunks: the same values to float rounding.
- glibc raises its mmap threshold each time a large block is freed, so later tensors come from the heap,
  which it rarely gives back: a process's resident memory grows step after step (UloRL's CPU config:
  6 GB after 5 steps, 3.2 GB with the threshold fixed). `bounded` fixes it at 128 KiB, unless
  MALLOC_MMAP_THRESHOLD_ is set. Allocation only: no value changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

TILES = (512, 8192)  # tokens x vocabulary entries
MMAP_THRESHOLD = 128 * 1024
M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


def bound_memory(mode: str, device: str) -> None:
    """Apply `mode` ("bounded" or "stock") for a run computing on `device`."""
    import torch
    import trl.kernels.chunked_logprob as kernel
    import trl.trainer.utils as head

    trl_tiles = _trl_tiles()  # read before the first change
    bounded = mode == "bounded" and not kernel._use_triton(torch.device(device))
    kernel.TOKEN_CHUNK_SIZE, head._CHUNKED_LOGPROB_CHUNK_SIZE = TILES if bounded else trl_tiles
    if bounded and "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        _mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)


@functools.cache
def _trl_tiles() -> tuple[int, int]:
    """TRL's tile sizes, as it set them (read before `bound_memory` first changes them)."""
    import trl.kernels.chunked_logprob as kernel
    import trl.trainer.utils as head

    return kernel.TOKEN_CHUNK_SIZE, head._CHUNKED_LOGPROB_CHUNK_SIZE


def _mallopt(parameter: int, value: int) -> bool:
    """glibc's mallopt; False where the C library has none (musl, macOS)."""
    name = ctypes.util.find_library("c")
    libc = ctypes.CDLL(name) if name else None
    return bool(libc is not None and hasattr(libc, "mallopt") and libc.mallopt(parameter, value))
