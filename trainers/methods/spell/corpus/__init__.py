"""SPELL's training corpus: document clusters per task (SPELL paper, App. C.1).

`dataset` is the on-disk format (clusters.jsonl + manifest.json) and its reader `load_clusters`; `build`
makes it (`harness corpus spell`) from Ultra-FineWeb and DocMath-Eval, or with `--synthetic` from the
small offline corpus of `synthetic` (its prose in `texts/`), running the stages of `sources`, `clean`,
`cluster` and `tasks` with the settings of `config`. Only `dataset` is imported here: building needs the
`corpus` extra.
"""

from trainers.methods.spell.corpus.dataset import TASKS, Cluster, load_clusters, write_dataset

__all__ = ["TASKS", "Cluster", "load_clusters", "write_dataset"]
