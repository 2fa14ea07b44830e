"""The SPELL study's documents: each question's answer is the value its documents state for the site
asked about, the clusters read as SPELL's corpus, and no company is in two sets."""

import json
import random
import re

import pytest

from harness import HarnessError
from trainers.methods.spell.corpus.dataset import load_clusters
from trainers.studies.documents import cluster, split
from trainers.studies.task import Level, parse_levels

ASKED = re.compile(r"Question: How many ([a-z ]+?) (?:does|do) (the \w+ \w+) (\w+)\?")


@pytest.mark.parametrize("seed", range(4))
def test_each_answer_is_the_value_stated_for_the_site_asked(seed):
    ((clusters, questions),) = split(parse_levels("2x3,3x4,4x5"), (12,), seed)
    for row, q in zip(clusters, questions, strict=True):
        things, site, _ = ASKED.search(q["problem"]).groups()
        document = next(d for d in row["documents"] if f"runs {site}." in d)
        stated = re.search(rf"{site[4:]} \w+ (\d+) {things.split()[0]}", document)
        assert stated and stated[1] == q["answer"], (q["problem"], document)
        assert all(d in q["problem"] for d in row["documents"])  # the whole cluster is shown


def test_levels_set_documents_and_facts_and_the_sets_share_no_company(tmp_path):
    row, questions = cluster(Level(3, 4), "Acme", random.Random(0))
    assert len(row["documents"]) == 3 and len(questions) == 12
    assert all(d.count(".") == 5 for d in row["documents"])  # who runs the site, then 4 facts
    (train, _), (heldout, _) = split(parse_levels("2x3"), (40, 20), 0)
    companies = [{r["documents"][0].split(" runs ")[0] for r in rows} for rows in (train, heldout)]
    assert len(companies[0]) == 40 and not companies[0] & companies[1]
    path = tmp_path / "clusters.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in train))
    assert [c.id for c in load_clusters(path)] == [r["id"] for r in train]


def test_more_facts_than_kinds_is_refused():
    with pytest.raises(HarnessError, match="at most 8 facts"):
        split(parse_levels("2x9"), (1,), 0)
