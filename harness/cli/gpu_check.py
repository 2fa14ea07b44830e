"""`harness gpu-check`: the checks of `harness.runs.gpu_check`, everything that needs a GPU."""

from __future__ import annotations

import typer

from harness.cli.app import app
from harness.cli.options import Options, config_options
from harness.runs.gpu_check import GpuCheckConfig, run


@app.command("gpu-check")
@config_options(config=Options(GpuCheckConfig))
def gpu_check_command(config: GpuCheckConfig) -> None:
    """On one CUDA GPU (or --device cpu): the tiny model, `harness eval` in bf16 on hf and 2 bf16 steps of
    each method, each a subprocess with a time limit; PASS/FAIL lines, exit 1 if any check failed. On a
    machine whose dependencies come as wheels, `python3 scripts/gpu_check.py --wheels DIR` starts it."""
    code = run(config)
    if code:
        raise typer.Exit(code)
