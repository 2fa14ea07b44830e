"""The `harness` command line: evaluation (eval, score), reports (table, plot, analyze, regress, compare,
export, list) and training (train, tiny-model), each family in its own module."""

from harness.cli import evaluation, reports, training  # noqa: F401 - each module registers its commands
from harness.cli.app import app, main

__all__ = ["app", "main"]
