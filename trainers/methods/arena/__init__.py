"""Reasoning Arena (docs/methods/arena.md): verifier groups with no reward variance re-scored by a pairwise
judge tournament and a Bradley-Terry fit."""
