"""Self-play and RLVR methods, and their training on Hugging Face TRL.

This package is the method API: a `Method` (`method`) turns dataset rows into `Rollout`s (`rollout`),
generating through an `Engine` (`engine`; `solver` samples a row's group), scores them (`rewards`) and
returns advantages and loss masks (`advantages` and `masks` hold the pure tensor functions the methods
share); `config` is the run's `TrainConfig`, `data` a benchmark's rows, `names` the installed methods.
`methods/` holds GRPO, SPELL, Absolute Zero, Reasoning Arena, UloRL and SPAE. `integration/` trains a
method on TRL (one `GRPOTrainer` subclass owns the batch), and `studies/` runs a method against GRPO over
seeds.
"""
