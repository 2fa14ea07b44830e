"""The `harness` command line: evaluation (eval, score), reports (table, plot, analyze, regress, compare,
export, list), training (train, tiny-model) and training corpora (corpus), each family in its own module."""

from harness.cli import corpus, evaluation, reports, training  # noqa: F401 - each module registers its commands
from harness.cli.app import app, main

__all__ = ["app", "main"]
