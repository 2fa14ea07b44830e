"""Whole runs: one evaluation run end to end, scoring generations made elsewhere, and the GPU check
(evaluation and training runs as subprocesses)."""
