r"""Differential test of the math scorer's rules: the working tree's rules against an older commit's,
on (answer, gold) pairs generated from the real benchmark golds and questions.

    python scripts/math_rules_differential.py ../shared/data --against 8e5d858 [--out DIR] [--limit N]
        [--old-questions]

Every gold of MATH-500, OlympiadBench, Minerva, AMC23 and AIME 24/25 gets answers in the shapes a
model writes (boxed, after "the answer is", bare, a bold value ending the last line, a closing
"Therefore ..." sentence, the last equation before an empty "... is:", a value after a label or a
lone symbol, and the endings of unfinished work: "So we get x", "We get: **x**", "Let's try:
**x**", "Step 1: **x**"), and since rules 4 the answer line followed by a sign-off, an explanation
section or a comment, "it will take x", "Converting to ..., we get Q = x", "x times that of ...", a
bold residue after a congruence, a display equation that simplifies the question's first expression
and, for questions that ask for a percentage, "x% of ..." opening the closing sentence; each once
right and once wrong (the wrong one also after a right intermediate value: "it will take GOLD hours
for the first half, and the required quantity is WRONG"). Endings that must stay unanswered: the
work going on after the value ("Now we substitute back"), a comment that doubts it ("Wait, ...");
and two values in one final statement (multi-candidate). Numbers also get rounded and more precise
forms, lists their reorderings, subscripts their brace forms, equations a multiple, symbols their
other case and numbers a unit. Where the gold carries a unit or the question asks for one ("How
many square centimeters"), the answer states it spelled three ways (right: ``\text{ cm}^{2}``,
``\text{ sq cm}``, "square centimeters") and another unit or another power of it (wrong), boxed, in a
closing sentence and bold. MATH-500's reference solutions come whole and with their box unwrapped.
The older rules score the plain golds, as runs before rules 3 did (with --old-questions they get
the questions too, as runs since rules 3 do); the new ones get each item's question with its
gold. Every changed verdict is classified by the rule that moved it and written to
DIR/changed.jsonl (the older rules' verdicts are kept in DIR for the next run); the counts per
class are printed, and so is how many wrong, unfinished or two-candidate answers the new rules
credit (none, where they are right).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks import BENCHMARKS
from harness.core.data import read_rows
from harness.scoring.math import MathScorer
from harness.scoring.math_forms import asks_for_percent
from harness.scoring.math_normalise import answer_unit, normalise, variables
from harness.scoring.math_symbols import as_latex
from harness.scoring.rules import gold_text
from harness.scoring.units import asked_units

SETS = ("math500", "olympiadbench", "minerva", "amc23", "aime24", "aime25")
WORK = "We set up the equations and simplify step by step.\n\n"
OLD_SCORER = """
import json, sys
from harness.scoring.math import MathScorer
pairs = json.load(open(sys.argv[1]))
out = [None] * len(pairs)
for measured in sorted({p.get("measured") for p in pairs}, key=str):
    index = [i for i, p in enumerate(pairs) if p.get("measured") == measured]
    scorer = MathScorer(workers=2) if measured is None else MathScorer(workers=2, measured=measured)
    scores = dict(scorer.score([pairs[i]["answer"] for i in index], [pairs[i]["gold"] for i in index]))
    for j, i in enumerate(index):
        out[i] = vars(scores[j])
json.dump(out, open(sys.argv[2], "w"))
"""


def shapes(value: str, other: str) -> dict[str, str]:
    """The answer `value` written in each final-answer shape (name -> response text); `other` is
    another value, stated before it as an intermediate one or beside it as a second candidate."""
    closing = f"{WORK}Therefore, the required quantity is ${value}$."
    return {
        "boxed": f"{WORK}So the answer is $\\boxed{{{value}}}$.",
        "phrase": f"{WORK}The final answer is ${value}$.",
        "whole": f"${value}$",
        "bold_end": f"{WORK}Adding the two parts, the result = **{value}**",
        "closing_sentence": f"{WORK}Therefore, the required quantity is ${value}$.",
        "closing_equation": f"{WORK}Thus, $Q = {value}$.",
        "lead_in": f"{WORK}$Q = {value}$\n\n**Therefore, the value of $Q$ is:**",
        "label": f"{WORK}Final answer: The required quantity \\(Q\\) is ${value}$",
        "label_equals": f"{WORK}Final answer: $Q$ = ${value}$",
        "label_is": f"{WORK}**Final Answer:** $Q$ is ${value}$.",
        "so_we_get": f"{WORK}So we get ${value}$",
        "we_have": f"{WORK}Therefore, we have $Q = {value}$",
        "we_get_bold": f"{WORK}We get: **{value}**",
        "lets_try_bold": f"{WORK}Let's try a small case first: **{value}**",
        "step_bold": f"{WORK}Step 1: **{value}**",
        "first_bold": f"{WORK}First, the discriminant is **{value}**",
        # rules 4 (issue 46)
        "signoff": f"{closing}\n\nLet me know if you have other questions!",
        "explanation": f"{closing}\n\n### Explanation\n\n1. We combined the equations.\n2. We solved.",
        "comment": f"{closing}\n\nThis assumes that the quantities stay the same throughout.",
        "it_will_take": f"{WORK}Therefore, it will take ${value}$.",
        "times_that_of": f"{WORK}Therefore, the required quantity is ${value}$ times that of the first one.",
        "congruence_bold": f"{WORK}So $Q \\equiv$ **{value}** (mod 1000)",
        "converted": f"{WORK}Converting to the required units, we get $Q = {value}$.",
        "intermediate_first": (
            f"{WORK}Therefore, it will take ${other}$ hours for the first half, "
            f"and the required quantity is ${value}$."
        ),
        "work_goes_on": f"{closing}\n\nNow we substitute this back into the first equation",
        "doubted": f"{closing}\n\nWait, this does not satisfy the second condition.",
        "explanation_doubted": f"{closing}\n\n### Explanation\n\nBut this is not the only case to consider.",
        "two_congruences": f"{WORK}So $Q \\equiv$ **{value}** (mod 1000) or **{other}** (mod 1000)",
        "two_converted": f"{WORK}Converting to the required units, we get ${value}$ or ${other}$.",
        "two_then_signoff": f"{WORK}Therefore, the quantity is ${value}$ or ${other}$.\n\nHope this helps!",
    }


def question_shapes(value: str, question: str) -> dict[str, str]:
    """Shapes that need the question: a display equation from its first math span without "="
    ("$$\\dbinom{8}{4} = 70$$") and, where it asks for a percentage, "x% of ..." opening the closing
    sentence."""
    found = {}
    spans = [m.group(1) for m in re.finditer(r"(?<!\\)\$([^$]+)\$", question) if "=" not in m.group(1)]
    if spans:
        found["display_chain"] = f"{WORK}$${spans[0].strip()} = {value}$$"
    number = re.fullmatch(r"(-?\d+(?:\.\d+)?)\s*\\?%?", value.strip())
    if asks_for_percent(question) and number:
        found["percent_subject"] = (
            f"{WORK}Therefore, approximately {number.group(1)}% of the total is reached after 10 minutes."
        )
    return found


UNFINISHED = (
    *("so_we_get", "we_have", "we_get_bold", "lets_try_bold", "step_bold", "first_bold"),
    *(
        "work_goes_on",
        "doubted",
        "explanation_doubted",
        "two_congruences",
        "two_converted",
        "two_then_signoff",
    ),
)
LONG = {  # canonical unit -> (plural, singular) names
    "m": ("meters", "meter"),
    "cm": ("centimeters", "centimeter"),
    "mm": ("millimeters", "millimeter"),
    "km": ("kilometers", "kilometer"),
    "in": ("inches", "inch"),
    "ft": ("feet", "foot"),
    "mi": ("miles", "mile"),
    "s": ("seconds", "second"),
    "min": ("minutes", "minute"),
    "h": ("hours", "hour"),
    "day": ("days", "day"),
    "year": ("years", "year"),
    "deg": ("degrees", "degree"),
    "rad": ("radians", "radian"),
    "unit": ("units", "unit"),
    "cent": ("cents", "cent"),
    "dollar": ("dollars", "dollar"),
}
OTHER = {"m": "km", "cm": "m", "mm": "cm", "km": "m", "in": "ft", "ft": "in", "mi": "km", "s": "min"}
OTHER |= {"min": "h", "h": "min", "day": "year", "year": "day", "deg": "rad", "rad": "deg", "unit": "cm"}
OTHER |= {"cent": "dollar", "dollar": "cent"}
POWER_WORDS = {2: ("square", "sq"), 3: ("cubic", "cu")}


def unit_factors(unit: str) -> tuple[str, int, str] | None:
    """A canonical unit as (name, power, denominator): "cm^2" -> ("cm", 2, ""), "mi/h" -> ("mi", 1,
    "h"); None for one the tables below do not spell (several factors, a power in the denominator)."""
    up, _, down = unit.partition("/")
    name, _, power = up.partition("^")
    if " " in unit or "^" in down or name not in LONG or (down and down not in LONG):
        return None
    return (name, int(power or 1), down) if int(power or 1) in (1, *POWER_WORDS) else None


def spellings(name: str, power: int, down: str) -> dict[str, str]:
    """One unit written as LaTeX, abbreviated and in words: "\\text{ cm}^{2}", "\\text{ sq cm}",
    "square centimeters"; "\\text{ mi/h}", "\\text{ mi/h}", "miles per hour"."""
    long, short = LONG[name][0], name
    if power > 1:
        long, short = f"{POWER_WORDS[power][0]} {long}", f"{POWER_WORDS[power][1]} {name}"
    if down:
        long, short = f"{long} per {LONG[down][1]}", f"{short}/{down}"
    tex = f"\\text{{ {name}{'/' + down if down else ''}}}" + (f"^{{{power}}}" if power > 1 else "")
    return {"tex": tex, "abbrev": f"\\text{{ {short}}}", "words": long}


def unit_answers(gold: str, question: str) -> dict[str, str]:
    """Answers stating the unit the gold carries or, for a number, the one unit its question asks for:
    right in three spellings, boxed, closing and bold; wrong as another unit or another power of it."""
    unit = answer_unit(gold, variables(gold))
    value = normalise(gold) if unit else gold.strip()
    if unit is None and re.fullmatch(r"-?\d+(?:\.\d+)?", value):
        asked = asked_units(question)
        unit = next(iter(asked)) if len(asked) == 1 else None
    factors = unit_factors(unit) if unit and "," not in value else None
    if factors is None:
        return {}
    name, power, down = factors
    right = spellings(*factors)
    boxed = {"tex": right["tex"], "abbrev": right["abbrev"], "words": f"\\text{{ {right['words']}}}"}
    found = {f"right/unit_{k}": f"{WORK}So the answer is $\\boxed{{{value}{v}}}$." for k, v in boxed.items()}
    found["right/unit_closing"] = f"{WORK}Therefore, the required quantity is ${value}$ {right['words']}."
    found["right/unit_bold"] = f"{WORK}So the required quantity is **${value}$ {right['words']}**."
    other, other_power = spellings(OTHER[name], power, down), spellings(name, power - 1 or 2, down)
    for kind, unit_words in (("other", other), ("power", other_power)):
        found[f"wrong/unit_{kind}"] = f"{WORK}So the answer is $\\boxed{{{value}{unit_words['tex']}}}$."
        found[f"wrong/unit_{kind}_closing"] = (
            f"{WORK}Therefore, the required quantity is ${value}$ {unit_words['words']}."
        )
        found[f"wrong/unit_{kind}_bold"] = (
            f"{WORK}So the required quantity is **${value}$ {unit_words['words']}**."
        )
    return found


def wrong(gold: str, others: list[str]) -> str:
    """A near miss of `gold`: the next integer, else the first other gold of its benchmark that is
    not the same text (a real answer of the same kind, where `gold+1` would not be a value)."""
    stripped = gold.strip()
    if re.fullmatch(r"-?\d+", stripped):
        return str(int(stripped) + 1)
    return next(o for o in others if o.strip().replace(" ", "") != stripped.replace(" ", ""))


UNICODE = {  # LaTeX -> the Unicode or plain text a model may write (rules 4 reads it back)
    r"\\sqrt\{(\d+|[A-Za-z])\}": r"√\1",
    r"\\tau\b": "τ",
    r"\\Delta\b": "Δ",
    r"\\theta\b": "θ",
    r"\\ln\b": "ln",
}


def variants(gold: str) -> dict[str, str]:
    """Rewritings of `gold` that the rules may judge differently (name -> answer value)."""
    found: dict[str, str] = {}
    number = re.fullmatch(r"-?\d+(?:\.\d+)?", gold.strip())
    if number:
        g = float(gold)
        found["rounded_off"] = f"{g - 0.07:.2f}"  # 165.93 for 166
        found["half_off"] = f"{g - 0.5:g}"  # 35.5 for 36
        found["one_more_digit"] = gold.strip() + ("4" if "." in gold else ".4")
        found["unit_m"] = f"{gold} \\text{{ m}}"
        found["unit_km"] = f"{gold} \\text{{ km}}"
    items = [i.strip() for i in re.split(r",(?![^({\[]*[)}\]])", gold) if i.strip()]
    if len(items) > 1 and "=" not in gold and gold.strip()[:1] not in "([{\\":
        found["reversed_list"] = ", ".join(reversed(items))
    if re.search(r"_\{[A-Za-z0-9]\}", gold):
        found["bare_subscripts"] = re.sub(r"_\{([A-Za-z0-9])\}", r"_\1", gold)
    if re.fullmatch(r"[^=]+=\s*0", gold.strip()):
        found["equation_multiple"] = f"4\\left({gold.split('=')[0]}\\right)=0"
    unicode = gold
    for command, symbol in UNICODE.items():
        unicode = re.sub(command, symbol, unicode)
    if unicode != gold:  # rules 4: "√5", "τ", "ln 2"
        found["unicode"] = unicode
    if gold.strip().endswith("%"):  # rules 4: a bare number for "What percentage"
        found["percent_bare"] = gold.strip().rstrip("%").rstrip("\\").strip()
    if re.search(r"\\pi k\b", gold):  # rules 4: the family's parameter named n and declared
        found["parameter_n"] = re.sub(r"\\pi k\b", r"\\pi n", gold) + r",\ n \in \mathbb{Z}"
    if choice := re.fullmatch(r"\\text\{\(([A-E])\)\}", gold.strip()):  # rules 4: the letter with text
        found["choice_text"] = f"\\textbf{{({choice.group(1)})}}\\ \\text{{the option's text}}"
    letters = re.findall(r"(?<![\\A-Za-z])[A-Za-z](?![A-Za-z])", re.sub(r"\\text\{[^{}]*\}", "", gold))
    if letters:
        found["other_case"] = re.sub(
            rf"(?<![\\A-Za-z]){letters[0]}(?![A-Za-z])", letters[0].swapcase(), gold, count=1
        )
    return found


def pairs(data_dir: Path, limit: int | None) -> list[dict]:
    """Every generated pair: benchmark, item, kind, answer, gold, question."""
    found = []
    for name in SETS:
        items = BENCHMARKS[name].load(data_dir).items[:limit]
        for n, item in enumerate(items):
            others = [i.answer for i in items[n + 1 :] + items[:n]]
            miss = wrong(item.answer, others)
            answers = {f"right/{k}": v for k, v in shapes(item.answer, miss).items()}
            answers |= {f"wrong/{k}": v for k, v in shapes(miss, item.answer).items()}
            answers |= {f"right/{k}": v for k, v in question_shapes(item.answer, item.problem).items()}
            answers |= {f"wrong/{k}": v for k, v in question_shapes(miss, item.problem).items()}
            answers |= {f"variant/{k}": f"$\\boxed{{{v}}}$" for k, v in variants(item.answer).items()}
            answers |= unit_answers(item.answer, item.problem)
            for kind, answer in answers.items():
                found.append({"benchmark": name, "item": item.id, "kind": kind, "answer": answer})
                found[-1] |= {"gold": item.answer, "question": item.problem}
    golds = {item.id: item for item in BENCHMARKS["math500"].load(data_dir).items}
    for _, row in list(read_rows(data_dir / "math500" / "test.jsonl"))[:limit]:
        item = golds[row["unique_id"]]
        unboxed = re.sub(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}", r"\1", row["solution"])
        for kind, answer in (("solution/whole", row["solution"]), ("solution/unboxed", unboxed)):
            found.append({"benchmark": "math500", "item": item.id, "kind": kind, "answer": answer})
            found[-1] |= {"gold": item.answer, "question": item.problem}
    return found


def new_scores(found: list[dict]) -> list[dict]:
    """The working tree's verdicts, each benchmark with its own setting and each gold with its question."""
    results: list[dict] = [{}] * len(found)
    for name in SETS:
        index = [i for i, p in enumerate(found) if p["benchmark"] == name]
        scorer = MathScorer(workers=2, measured=BENCHMARKS[name].measured)
        golds = [gold_text(found[i]["gold"], found[i]["question"]) for i in index]
        for j, score in scorer.score([found[i]["answer"] for i in index], golds):
            results[index[j]] = vars(score)
    return results


def old_scores(found: list[dict], revision: str, questions: bool, cache: Path) -> list[dict]:
    """The verdicts of the rules at `revision` (its `harness` package, run in a child process); with
    `questions` (rules 3 or later) each gold carries its question and each benchmark its setting.
    Verdicts are kept in the JSON file `cache` (one per commit and setting: its rules do not
    change), and only pairs it lacks are scored."""
    if questions:
        old = [
            {"answer": p["answer"], "gold": gold_text(p["gold"], p["question"])}
            | {"measured": BENCHMARKS[p["benchmark"]].measured}
            for p in found
        ]
    else:
        old = [{"answer": p["answer"], "gold": p["gold"]} for p in found]
    keys = [json.dumps(o, sort_keys=True) for o in old]
    known = json.loads(cache.read_text()) if cache.is_file() else {}
    missing = [o for o, key in zip(old, keys, strict=True) if key not in known]
    if missing:
        scored = _score_at(revision, list({json.dumps(o, sort_keys=True): o for o in missing}.values()))
        known |= scored
        cache.write_text(json.dumps(known))
    return [known[key] for key in keys]


def _score_at(revision: str, old: list[dict]) -> dict[str, dict]:
    """Score the pairs `old` with the `harness` package of `revision`: key -> verdict."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", revision, "harness"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        Path(tmp, "pairs.json").write_text(json.dumps(old))
        env_path = {"PYTHONPATH": tmp, "PATH": "/usr/bin:/bin"}
        check = "import harness, sys; assert harness.__file__.startswith(sys.argv[1]), harness.__file__"
        subprocess.run([sys.executable, "-c", check, tmp], cwd=tmp, env=env_path, check=True)
        subprocess.run(
            [sys.executable, "-c", OLD_SCORER, "pairs.json", "out.json"], cwd=tmp, env=env_path, check=True
        )
        scores = json.loads(Path(tmp, "out.json").read_text())
    return {json.dumps(o, sort_keys=True): score for o, score in zip(old, scores, strict=True)}


def shape_of(pair: dict, old: dict, new: dict) -> str:
    """The rule that moved a verdict, read from both rules' details: issue 46's patterns (rules 4)
    first, then issue 38's (rules 3); a changed extraction before the rule that judged it (that rule
    may have moved only because the answer did)."""
    method, source = new["details"].get("method"), new["details"].get("source")
    extracted, gold = new["extracted"] or "", pair["gold"]
    if old["extracted"] is None or source == "closing" or old["extracted"] != new["extracted"]:
        return "46.1 extraction" if source == "closing" else "38.1 extraction"
    if old["details"].get("method") == "case" or method == "case":
        return "46.3 case"
    if method == "choice":
        return "46.4 choice"
    if as_latex(extracted) != extracted or as_latex(gold) != gold:
        return "46.2 notation" if "np." not in gold else "46.4 code gold"
    if "%" in gold or "%" in extracted:
        return "46.4 percent"
    if "\\in" in extracted:
        return "46.4 parameter"
    if "=" in extracted:
        return "46.4 assignment"
    if method in ("unit", "multiset", "form"):
        return {"unit": "38.6 units", "multiset": "38.3 multiset", "form": "38.5 fixed form"}[method]
    if old["details"].get("method") == "decimal" and new["value"] < old["value"]:
        return "38.2 exact rounding"
    if "_" in extracted:
        return "38.4 subscripts"
    return "other"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--against", required=True, help="the commit whose rules are compared")
    parser.add_argument("--out", type=Path, default=Path("differential"))
    parser.add_argument("--limit", type=int, default=None, help="items per benchmark (a quick look)")
    parser.add_argument(
        "--old-questions",
        action="store_true",
        help="give the older rules the questions too (rules 3 or later)",
    )
    args = parser.parse_args()
    found = pairs(args.data_dir, args.limit)
    print(f"{len(found)} pairs", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    revision = subprocess.run(
        ["git", "rev-parse", args.against], capture_output=True, text=True, check=True
    ).stdout.strip()
    cache = args.out / f"old-{revision}{'-questions' if args.old_questions else ''}.json"
    old, new = old_scores(found, revision, args.old_questions, cache), new_scores(found)
    changed = []
    for pair, before, after in zip(found, old, new, strict=True):
        if before["value"] != after["value"]:
            shape = shape_of(pair, before, after)
            changed.append(
                {**pair, "question": pair["question"][:300], "shape": shape, "old": before, "new": after}
            )
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "changed.jsonl", "w") as f:
        for record in changed:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    counts = Counter(
        (c["shape"], c["kind"].split("/")[0], f"{c['old']['value']:g}->{c['new']['value']:g}")
        for c in changed
    )
    print("credited by the old and the new rules, per kind of answer:")
    for kind in sorted({p["kind"] for p in found}):
        index = [i for i, p in enumerate(found) if p["kind"] == kind]
        credited = [sum(s[i]["value"] for i in index) for s in (old, new)]
        print(f"  {kind:28} {credited[0]:6.0f} {credited[1]:6.0f} of {len(index)}")
    print(f"{len(changed)} of {len(found)} verdicts changed")
    refused = [
        i for i, p in enumerate(found) if p["kind"].startswith("wrong/") or p["kind"].endswith(UNFINISHED)
    ]
    print(f"  wrong or unfinished, credited by the new rules: {sum(new[i]['value'] for i in refused):.0f}")
    for (shape, kind, move), n in sorted(counts.items()):
        print(f"  {shape:18} {kind:9} {move}: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
