"""The SPELL study's task: key-value documents about made-up companies, and questions on one value.

A level is `DOCSxFACTS` (e.g. `3x4`): a cluster is one company, described by DOCS documents, one per site,
each stating FACTS numbers about its site ("The Varn depot stores 482 crates."). A question asks for one
site's value ("How many crates does the Varn depot store?"); the other sites' values of the same kind are
the distractors, so more documents and facts make it harder. Clusters are SPELL corpus rows (`id`, `task`,
`source`, `documents`); questions are rows for the `integer` scorer, asked in SPELL's responder prompt
with all of the cluster's documents, as SPELL asks its responders. Sets never share a company, so no
held-out document is in the training corpus.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from harness import HarnessError
from trainers.methods.spell.prompts import GENERAL, responder_prompt
from trainers.studies.task import Level

CORPUS = "train/clusters.jsonl"  # the SPELL corpus of the training clusters, under STUDY/data/
# (statement, question) per kind of value; {site} is "the Varn depot"
FACTS = (
    ("{Site} stores {n} crates.", "How many crates does {site} store?"),
    ("{Site} employs {n} workers.", "How many workers does {site} employ?"),
    ("{Site} owns {n} trucks.", "How many trucks does {site} own?"),
    ("{Site} ships {n} parcels a day.", "How many parcels a day does {site} ship?"),
    ("{Site} has {n} loading docks.", "How many loading docks does {site} have?"),
    ("{Site} uses {n} forklifts.", "How many forklifts does {site} use?"),
    ("{Site} serves {n} shops.", "How many shops does {site} serve?"),
    ("{Site} covers {n} square metres.", "How many square metres does {site} cover?"),
)
KINDS = ("depot", "warehouse", "yard", "hub")
_SYLLABLES = (
    "ka",
    "lo",
    "ve",
    "rin",
    "mar",
    "to",
    "sel",
    "bru",
    "dan",
    "fi",
    "gor",
    "hal",
    "ny",
    "pe",
    "quo",
)


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def cluster(level: Level, company: str, rng: random.Random) -> tuple[dict, list[dict]]:
    """One company: its corpus row and a question on each of its facts."""
    if level.maximum > len(FACTS):
        raise HarnessError(f"a document states at most {len(FACTS)} facts, got level {level.name}")
    sites = []
    while len(sites) < level.terms:
        site = f"the {_name(rng)} {rng.choice(KINDS)}"
        if site not in sites:
            sites.append(site)
    documents, questions = [], []
    for site in sites:
        kinds = rng.sample(range(len(FACTS)), level.maximum)
        sentences = [f"{company} runs {site}."]
        for kind in kinds:
            statement, question = FACTS[kind]
            n = rng.randint(10, 999)
            sentences.append(statement.format(Site=site[0].upper() + site[1:], n=n))
            questions.append((question.format(site=site), str(n)))
        documents.append(" ".join(sentences))
    key = f"{level.name}-{company}"
    shown = "\n".join(documents)  # as SPELL shows its responders a cluster
    rows = [
        {
            "id": f"{key}-q{k}",
            "problem": responder_prompt(GENERAL, shown, q),
            "answer": a,
            "level": level.name,
        }
        for k, (q, a) in enumerate(questions)
    ]
    return {"id": key, "task": "doc_general_qa", "source": "study", "documents": documents}, rows


def split(levels: Sequence[Level], sizes: Sequence[int], seed: int) -> list[tuple[list[dict], list[dict]]]:
    """Per size, that many clusters drawn evenly over the levels and one question of each (at random);
    no company in two sets."""
    rng = random.Random(seed)
    companies: set[str] = set()
    out = []
    for size in sizes:
        clusters, questions = [], []
        for i in range(size):
            for _ in range(1000):
                company = _name(rng)
                if company not in companies:
                    break
            else:
                raise HarnessError(f"too few company names for {sum(sizes)} clusters")
            companies.add(company)
            row, asked = cluster(levels[i % len(levels)], company, rng)
            clusters.append(row)
            questions.append(rng.choice(asked))
        out.append((clusters, questions))
    return out
