"""The `harness` command line: evaluation (eval, score), reports (table, plot, analyze, regress, compare,
export, list), training (train, tiny-model), training corpora (corpus), looking at runs (view) and the GPU
check (gpu-check), each family in its own module."""

from harness.cli import corpus, data, evaluation, gpu_check, reports, study, training, view  # noqa: F401 - each registers its commands
from harness.cli.app import app, main

__all__ = ["app", "main"]
