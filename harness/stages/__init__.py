"""The stages of an evaluation run: plan (requests), generate (records), score (scores and results)."""
