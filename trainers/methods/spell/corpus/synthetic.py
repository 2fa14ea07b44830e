"""A small corpus, generated offline, that exercises every stage of `build.py` for real.

`write_synthetic(folder, seed)` writes, in the shapes of the real sources:

* `web/ultra-fineweb.jsonl`: Ultra-FineWeb-style rows (`content`, `score`, `source`) in a seeded order:
  * `FAMILIES`: 22 families of 4-6 short documents (40-90 words of plain English), each family about one
    fictional entity on a topic of its own (a town, a bicycle maker, a botanist, a river, ...). Each
    document of a family gives different facts (names, years, numbers), so a question can need several
    of them. Clustering should give back exactly these families.
  * near-duplicates of 6 family documents (an exact copy, changed case and punctuation, a few words added
    or changed at the edges: what copies of one page look like on the web); deduplication removes them;
  * 5 documents that copy evaluation texts (two AIME problems as shipped in the package, three paragraphs
    of the long-context item in `eval/synthetic-eval.jsonl`) with small edits; decontamination removes
    them;
  * 6 documents the quality and length filter removes: 3 with a quality score below 1.0, 2 shorter than
    100 characters and 1 longer than 32,768 characters.
* `docmath/complong_test.jsonl` and `docmath/compshort_test.jsonl`: DocMath-Eval-style rows (`question_id`,
  `source`, `original_question_id`, `question`, `paragraphs` with tables as markdown, `table_evidence`,
  `paragraph_evidence`, `python_solution`, `ground_truth`) for 12 short financial reports of fictional
  companies, plus one report asked about twice (a second row with the same paragraphs: dedup), one report
  that the evaluation file quotes (decontamination) and one too long for the token budget (filter).
* `eval/synthetic-eval.jsonl`: an evaluation set in the harness's custom-benchmark format (`id`,
  `problem`, `answer`; loaded as `jsonl:PATH`) whose problems are SPELL prompts with documents.

`write_synthetic` returns what each stage must leave (`Expected`), for the tests. The fixed prose (the
families, the planted web pages, the evaluation passages) is package data in `texts/`: `families.md` and
`planted.json`.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

WEB_FILE, EVAL_FILE = "web/ultra-fineweb.jsonl", "eval/synthetic-eval.jsonl"
DOCMATH_DIR, DOCMATH_SUBSETS = "docmath", ("complong", "compshort")

TEXTS = "texts"  # the package folder of the fixed prose: families.md, planted.json


def _text(name: str) -> str:
    """A file of TEXTS, read from the installed package."""
    return resources.files(__package__).joinpath(TEXTS, name).read_text(encoding="utf-8")


def _families(markdown: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(entity, documents) per `## entity` heading of families.md; each non-blank line under one is a
    document."""
    families: list[tuple[str, list[str]]] = []
    for line in markdown.splitlines():
        if line.startswith("## "):
            families.append((line[3:].strip(), []))
        elif line.strip() and families:  # the lines before the first heading describe the file
            families[-1][1].append(line)
    return tuple((entity, tuple(documents)) for entity, documents in families)


# One family = (entity, documents). Facts are consistent inside a family and never shared across them.
FAMILIES = _families(_text("families.md"))
_PLANTED = json.loads(_text("planted.json"))


# --- planted documents the pipeline must remove ------------------------------------------------------

# (family index, document index, how it was copied): what several copies of one page look like
NEAR_DUPLICATES = (
    (0, 1, "exact"),
    (3, 1, "case_and_punctuation"),
    (7, 2, "suffix"),
    (10, 0, "prefix"),
    (13, 2, "last_words"),
    (19, 1, "case_and_punctuation"),
)

# (text, quality score below 1.0): removed however good the text looks
LOW_SCORE = tuple((row["text"], row["score"]) for row in _PLANTED["low_score"])
TOO_SHORT = tuple(_PLANTED["too_short"])
TOO_LONG_SENTENCE = _PLANTED["too_long_sentence"]


def _near_copy(text: str, how: str) -> str:
    if how == "exact":
        return text
    if how == "case_and_punctuation":  # what normalisation undoes: case, commas, spacing
        return text.upper().replace(", ", " ").replace(". ", ".  ")
    if how == "suffix":
        return text + " Share this page."
    if how == "prefix":
        return "Company profile: " + text
    if how == "last_words":  # the last sentence's final words changed
        body, _, _ = text.rstrip(".").rpartition(" ")
        return body + " altogether. Updated yearly."
    raise ValueError(how)


# --- the evaluation set and the web pages that copy it ----------------------------------------------

EVAL_PASSAGES = tuple(_PLANTED["eval_passages"])
# (evaluation passage index, how the web page copied it)
EVAL_COPIES = ((0, "case_and_punctuation"), (1, "prefix"), (2, "suffix"))
AIME_COPIES = (("aime24", "60"), ("aime25", "I-3"))  # benchmark, item id: pages quoting these problems


def _aime_problem(benchmark: str, item_id: str) -> str:
    """The problem as shipped in the package (the copy decontamination reads in the synthetic build)."""
    from benchmarks import get_benchmark
    from benchmarks.base import PACKAGED_DIR

    items = {item.id: item for item in get_benchmark(benchmark).load(PACKAGED_DIR).items}
    return items[item_id].problem


# --- DocMath-style reports ----------------------------------------------------------------------------

COMPANIES = (
    ("Halvard Logistics", "freight and warehousing", "Rotterham", ("Road freight", "Warehousing")),
    ("Brisa Foods", "packaged food", "Valmont", ("Snacks", "Frozen meals")),
    ("Corvid Semiconductors", "chip design", "Ostfield", ("Sensors", "Power chips")),
    ("Larkspur Hotels", "hotel", "Sandmere", ("Rooms", "Food and drink")),
    ("Tamsin Pharma", "generic medicines", "Caldwell", ("Tablets", "Injections")),
    ("Norrland Timber", "forestry and sawmill", "Ekby", ("Sawn timber", "Wood pellets")),
    ("Quayside Retail", "clothing retail", "Portwell", ("Stores", "Online")),
    ("Aster Water", "water utility", "Fenbridge", ("Households", "Businesses")),
    ("Mireval Mining", "copper mining", "Kessock", ("Copper", "Gold by-product")),
    ("Orison Software", "accounting software", "Linfield", ("Subscriptions", "Consulting")),
    ("Pellucid Glass", "glass packaging", "Marwick", ("Bottles", "Jars")),
    ("Juniper Telecom", "mobile network", "Easthaven", ("Mobile plans", "Broadband")),
    ("Saltmarsh Shipping", "container shipping", "Grimsholt", ("Container freight", "Port services")),
    ("Vantor Motors", "electric bus", "Dalby", ("Buses", "Service contracts")),
    ("Westerly Energy", "gas and power", "Brantham", ("Electricity", "Gas")),
)
INTRO = (
    "{name} is a {industry} company based in {city}. This annual report covers fiscal year {year}, which "
    "ended on December 31, {year}. Amounts are in thousands of US dollars unless stated otherwise.",
    "Founded in {founded}, {name} operates in the {industry} business from its head office in {city}. The "
    "figures below are for the fiscal year ended December 31, {year}, in thousands of US dollars.",
)
GROWTH = (
    "Total revenue went from {total_prev} in {prev} to {total} in {year}. {seg0} revenue changed by {g0} "
    "and {seg1} revenue by {g1}. Gross margin was {margin}% in {year}.",
    "In {year} revenue reached {total}, compared with {total_prev} a year earlier. The change in the "
    "{seg0} segment was {g0} and in the {seg1} segment {g1}. The gross margin for the year was {margin}%.",
)
PEOPLE = (
    "At the end of {year} {name} had {staff} employees. It paid a dividend of ${dividend} per share on "
    "{shares} million shares and ended the year with long-term debt of {debt}.",
    "{name} employed {staff} people at December 31, {year}. Long-term debt stood at {debt}. The board "
    "paid ${dividend} per share in dividends; {shares} million shares were outstanding.",
)


def _report(rng: random.Random, company: tuple, year: int, extra_years: int = 0) -> list[str]:
    """The paragraphs of one short financial report: text and markdown tables with its numbers."""
    name, industry, city, segments = company
    prev = year - 1
    rev = [rng.randrange(8_000, 60_000) for _ in segments]
    rev_prev = [int(r * rng.uniform(0.8, 1.1)) for r in rev]
    shares = {"Cost of sales": (0.5, 0.75), "Selling": (0.05, 0.12), "Administration": (0.04, 0.1)}
    costs = {k: int(sum(rev) * rng.uniform(*share)) for k, share in shares.items()}
    costs_prev = {k: int(v * rng.uniform(0.85, 1.1)) for k, v in costs.items()}
    fields = {
        "name": name,
        "industry": industry,
        "city": city,
        "year": year,
        "prev": prev,
        "founded": rng.randrange(1950, 2005),
        "seg0": segments[0],
        "seg1": segments[1],
        "total": f"{sum(rev):,}",
        "total_prev": f"{sum(rev_prev):,}",
        "g0": f"{rev[0] - rev_prev[0]:,}",
        "g1": f"{rev[1] - rev_prev[1]:,}",
        "margin": round(100 * (1 - costs["Cost of sales"] / sum(rev)), 1),
        "staff": f"{rng.randrange(300, 9_000):,}",
        "dividend": f"{rng.randrange(10, 250) / 100:.2f}",
        "shares": rng.randrange(20, 400),
        "debt": f"{rng.randrange(2_000, 40_000):,}",
    }
    revenue = [f"| Segment | {year} | {prev} |", "| --- | --- | --- |"]
    revenue += [f"| {s} | {r:,} | {p:,} |" for s, r, p in zip(segments, rev, rev_prev, strict=True)]
    revenue.append(f"| Total revenue | {sum(rev):,} | {sum(rev_prev):,} |")
    expenses = [f"| Expense | {year} | {prev} |", "| --- | --- | --- |"]
    expenses += [f"| {k} | {v:,} | {costs_prev[k]:,} |" for k, v in costs.items()]
    paragraphs = [
        rng.choice(INTRO).format(**fields),
        "\n".join(revenue),
        rng.choice(GROWTH).format(**fields),
        "\n".join(expenses),
        rng.choice(PEOPLE).format(**fields),
    ]
    for back in range(1, extra_years + 1):  # older years, in the long reports DocMath also has
        rows = [f"| Segment | {year - back} |", "| --- | --- |"]
        rows += [f"| {s} | {int(r * rng.uniform(0.6, 1.0)):,} |" for s, r in zip(segments, rev, strict=True)]
        paragraphs.append(f"Revenue by segment for fiscal {year - back}:\n" + "\n".join(rows))
        paragraphs.append(
            f"In fiscal {year - back} {name} opened {rng.randrange(2, 9)} new sites and its staff numbered "
            f"{rng.randrange(300, 9_000):,}; capital spending was {rng.randrange(500, 9_000):,}."
        )
    return paragraphs


def _docmath_row(report_id: str, paragraphs: list[str], company: str, year: int, n: int) -> dict:
    """A row shaped like yale-nlp/DocMath-Eval's (its test split hides the solution and the answer)."""
    return {
        "question_id": f"synthetic-{report_id}-q{n}",
        "source": "synthetic",
        "original_question_id": f"{report_id}-q{n}",
        "question": f"By what percentage did total revenue of {company} change in fiscal {year}?",
        "paragraphs": paragraphs,
        "table_evidence": [1],
        "paragraph_evidence": [0, 2],
        "python_solution": None,
        "ground_truth": None,
    }


# --- writing ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """What each stage must leave of the synthetic corpus (the builder's counts must equal these)."""

    web_read: int
    web_filtered: int  # after the quality/length filter
    web_deduplicated: int
    web_decontaminated: int
    families: tuple[tuple[str, ...], ...]  # the documents each cluster should hold
    docmath_read: int
    docmath_filtered: int  # after the token budget
    docmath_deduplicated: int
    docmath_decontaminated: int


def write_synthetic(folder: str | Path, seed: int = 0) -> Expected:
    """Write the synthetic sources under FOLDER (WEB_FILE, DOCMATH_DIR/*_test.jsonl, EVAL_FILE); the same
    seed gives the same bytes."""
    folder = Path(folder)
    rng = random.Random(seed)
    rows: list[dict] = []
    for _entity, documents in FAMILIES:
        rows += [{"content": d, "score": 1.0, "source": "synthetic"} for d in documents]
    planted = [_near_copy(FAMILIES[f][1][d], how) for f, d, how in NEAR_DUPLICATES]
    planted += [_near_copy(EVAL_PASSAGES[p], how) for p, how in EVAL_COPIES]
    planted += ["Math club puzzle of the week: " + _aime_problem(b, i) for b, i in AIME_COPIES]
    rows += [{"content": t, "score": 1.0, "source": "synthetic"} for t in planted]
    rows += [{"content": t, "score": s, "source": "synthetic"} for t, s in LOW_SCORE]
    rows += [{"content": t, "score": 1.0, "source": "synthetic"} for t in TOO_SHORT]
    long_text = TOO_LONG_SENTENCE * (32_768 // len(TOO_LONG_SENTENCE) + 1)
    rows.append({"content": long_text, "score": 1.0, "source": "synthetic"})
    # the originals come first, so deduplication keeps them and drops the copies
    originals = sum(len(d) for _, d in FAMILIES)
    head, tail = rows[:originals], rows[originals:]
    rng.shuffle(head)
    rng.shuffle(tail)
    _write_jsonl(folder / WEB_FILE, head + tail)

    reports = {}  # r12 is quoted by the evaluation set; r13 is over the token budget
    for index, company in enumerate(COMPANIES[:14]):
        year = 2016 + index % 8
        paragraphs = _report(rng, company, year, extra_years=6 if index == 13 else 0)
        reports[f"r{index:02d}"] = (company[0], year, paragraphs)
    docmath_rows: dict[str, list[dict]] = {s: [] for s in DOCMATH_SUBSETS}
    for number, (report_id, (company, year, paragraphs)) in enumerate(reports.items()):
        subset = DOCMATH_SUBSETS[number % 2]
        docmath_rows[subset].append(_docmath_row(report_id, paragraphs, company, year, 1))
        if report_id in ("r03", "r08"):  # asked about twice: the same report in two rows
            docmath_rows[subset].append(_docmath_row(report_id, paragraphs, company, year, 2))
    for subset, subset_rows in docmath_rows.items():
        _write_jsonl(folder / DOCMATH_DIR / f"{subset}_test.jsonl", subset_rows)

    _write_jsonl(folder / EVAL_FILE, _eval_rows(reports["r12"][2]))
    families = tuple(documents for _, documents in FAMILIES)
    web_read = len(rows)
    web_filtered = web_read - len(LOW_SCORE) - len(TOO_SHORT) - 1
    deduplicated = web_filtered - len(NEAR_DUPLICATES)
    docmath_read = sum(map(len, docmath_rows.values()))
    return Expected(
        web_read=web_read,
        web_filtered=web_filtered,
        web_deduplicated=deduplicated,
        web_decontaminated=deduplicated - len(EVAL_COPIES) - len(AIME_COPIES),
        families=families,
        docmath_read=docmath_read,
        docmath_filtered=docmath_read - 1,
        docmath_deduplicated=docmath_read - 1 - 2,
        docmath_decontaminated=docmath_read - 1 - 2 - 1,
    )


def _eval_rows(quoted_report: list[str]) -> list[dict]:
    """Three long-context items in SPELL's prompts: a general-QA item over EVAL_PASSAGES, a financial-math
    item over a report the DocMath-style rows also hold, and a multiple-choice item nothing copies."""
    from benchmarks.doc_prompts import FINANCIAL_MATH, GENERAL_QA, MULTIPLE_CHOICE, fill

    choices = {"choice_A": "1790", "choice_B": "1803", "choice_C": "1846", "choice_D": "1921"}
    unrelated = (
        "The Ferrand Observatory of Weather kept daily records from 1871. Its rain gauge, the oldest in the "
        "region, measured 1,132 millimetres of rain in a normal year and 1,690 in the wet year of 1912."
    )
    return [
        {
            "id": "canal-qa",
            "problem": fill(
                GENERAL_QA,
                content="\n".join(EVAL_PASSAGES),
                question="Where is the chief engineer of the Quorra Canal buried?",
            ),
            "answer": "Beside the canal at Tallis Lock",
        },
        {
            "id": "report-math",
            "problem": fill(
                FINANCIAL_MATH,
                content="\n".join(quoted_report),
                question="What was the total revenue growth in percent?",
            ),
            "answer": "5.2",
        },
        {
            "id": "weather-mc",
            "problem": fill(
                MULTIPLE_CHOICE, content=unrelated, question="When did the records start?", **choices
            ),
            "answer": "A",
        },
    ]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def fingerprint() -> str:
    """A hash of the generator's fixed text, recorded in manifests of synthetic builds."""
    text = json.dumps([FAMILIES, NEAR_DUPLICATES, LOW_SCORE, TOO_SHORT, EVAL_PASSAGES, COMPANIES])
    return hashlib.sha256(text.encode()).hexdigest()[:16]
