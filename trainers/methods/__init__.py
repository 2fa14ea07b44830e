"""One class per training method; `METHODS` maps the `harness train METHOD` name to its class."""

from trainers.methods.grpo import GRPOMethod

METHODS = {"grpo": GRPOMethod}

__all__ = ["METHODS", "GRPOMethod"]
