"""SPAE (docs/methods/spae.md): step-potential advantages from training-free probes, to stop reasoning once
it is solved: the advantage builder (`advantage.py`), the probes (`probes.py`), the method (`method.py`) and
its options (`options.py`)."""
