"""Fixtures for trainer tests (helpers are in trainer_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def plain_model(tmp_path_factory) -> Path:
    """The tiny model with a plain ChatML template: the completion is the answer."""
    from harness.core.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("plain") / "model", thinking=False)
