"""The last stage: the web clusters and DocMath reports shared among SPELL's three tasks, as dataset
clusters."""

from __future__ import annotations

import random

from trainers.methods.spell.corpus.dataset import Cluster
from trainers.methods.spell.corpus.sources import Report


def split_tasks(n_web: int, n_docmath: int, seed: int) -> dict[str, list[int]]:
    """Cluster indices per task: the web clusters shuffled with the seed, the first half (rounded up) for
    doc_general_qa and the rest for doc_mc; the DocMath reports shuffled for docmath_qa."""
    rng = random.Random(seed)
    web = list(range(n_web))
    rng.shuffle(web)
    docmath = list(range(n_docmath))
    rng.shuffle(docmath)
    half = (n_web + 1) // 2
    return {"doc_general_qa": web[:half], "docmath_qa": docmath, "doc_mc": web[half:]}


def assemble(
    order: dict[str, list[int]],
    web_groups: list[tuple[str, ...]],
    reports: list[Report],
    per_task: int | None,
    names: tuple[str, str],
) -> list[Cluster]:
    """The clusters of each task in TASKS order, at most `per_task` of each; ids number the web
    clusters and the reports in their reading order (web-00012, docmath-00003)."""
    web_name, docmath_name = names
    clusters = []
    for task in ("doc_general_qa", "docmath_qa", "doc_mc"):
        for index in order[task][:per_task]:
            if task == "docmath_qa":
                clusters.append(
                    Cluster(f"docmath-{index:05d}", task, reports[index].paragraphs, docmath_name)
                )
            else:
                clusters.append(Cluster(f"web-{index:05d}", task, web_groups[index], web_name))
    return clusters
