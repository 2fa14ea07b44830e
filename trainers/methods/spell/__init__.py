"""SPELL: questioner, responder and verifier self-play on one policy over document clusters
(docs/methods/spell.md). `method.py` runs a step, `options.py` declares its settings; the other modules
are its pure parts and its corpus."""
