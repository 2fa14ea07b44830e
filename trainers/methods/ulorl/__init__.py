"""UloRL (ulorl.md): segment rollout across optimizer steps, pseudo on-policy importance sampling (POIS)
and dynamic masking of well-mastered positive tokens (DMMPT)."""

from trainers.methods.ulorl.method import UloRLMethod, UloRLOptions

__all__ = ["UloRLMethod", "UloRLOptions"]
