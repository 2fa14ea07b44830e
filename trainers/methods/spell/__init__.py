"""SPELL: questioner, responder and verifier self-play on one policy over document clusters
(spell.md). `method.py` runs a step; the other modules are its pure parts and its corpus."""

from trainers.methods.spell.method import SpellMethod, SpellOptions

__all__ = ["SpellMethod", "SpellOptions"]
