"""The training methods: one package each (`grpo.py` alone), registered by name in pyproject.toml's
`harness.methods` entry points; `METHODS` maps a name to its class, importing it on first use."""

from trainers.names import METHODS

__all__ = ["METHODS"]
