"""Analyses of a finished run's generations (read from RUN_DIR, written under RUN_DIR/analysis/)."""
