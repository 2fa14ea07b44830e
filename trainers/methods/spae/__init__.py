"""SPAE (spae.md): step-potential advantages from training-free probes, to stop reasoning once it is
solved. So far the advantage builder (`advantage.py`); the probes and the method class are to come."""
