"""One backend per method; `BACKENDS` maps the `harness train METHOD` name to its class."""

from trainers.backends.grpo import GRPOBackend

BACKENDS = {"grpo": GRPOBackend}

__all__ = ["BACKENDS", "GRPOBackend"]
