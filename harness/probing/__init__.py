"""Probing a policy and cutting its reasoning into steps, for solve-check analysis and SPAE training."""
