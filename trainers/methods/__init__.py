"""One class per training method; `METHODS` maps the `harness train METHOD` name to its class."""

from trainers.methods.arena.method import ArenaMethod
from trainers.methods.azr.method import AzrMethod
from trainers.methods.grpo import GRPOMethod
from trainers.methods.spae.method import SpaeMethod
from trainers.methods.spell import SpellMethod
from trainers.methods.ulorl import UloRLMethod

METHODS = {
    "grpo": GRPOMethod,
    "spell": SpellMethod,
    "azr": AzrMethod,
    "arena": ArenaMethod,
    "ulorl": UloRLMethod,
    "spae": SpaeMethod,
}

__all__ = ["METHODS", "ArenaMethod", "AzrMethod", "GRPOMethod", "SpaeMethod", "SpellMethod", "UloRLMethod"]
