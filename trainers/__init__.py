"""Trainer core for self-play and RLVR methods on Hugging Face TRL.

One `GRPOTrainer` subclass owns the batch; each method (GRPO, SPELL, Absolute Zero, Reasoning Arena,
UloRL, SPAE) is a `Method` that turns dataset rows into `Rollout`s, scores them and returns advantages
and loss masks. `advantages` and `masks` hold the pure tensor functions the methods share.
"""
