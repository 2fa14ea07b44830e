"""Mechanism studies: each self-play method against GRPO and its own ablation, over seeds, from a warm start
that puts the model where the mechanism has something to act on (docs/studies.md)."""
