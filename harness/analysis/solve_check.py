"""`harness analyze RUN_DIR --solve-check`: SPAE's solving/checking tokens, Over-Checking, Right-to-Wrong.

Per math sample (SPAE paper, Eq. 4-10): the thinking region is cut into steps at `".\\n\\n"`; k* is the
first step at which the answer is reached; tokens through step k* are solving tokens, later thinking
tokens checking tokens; R2W = reached at some step but the final answer is wrong.

- mode "probe" (the paper's method): k* = the first step whose Step Potential exceeds 0.9 (harness/analysis
  /probe.py), probed with the run's model.
- mode "mention" (a proxy, NOT the paper's method): k* = the first step that states an answer the math
  scorer judges equal to the gold. Needs only the tokenizer. Every record and aggregate says so.

Records go to RUN_DIR/analysis/solve_check.jsonl as they finish (a rerun skips those already there);
aggregates per benchmark to RUN_DIR/analysis/solve_check.json, keyed by mode.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.io.read import CONFIG_BYTES, Missing, read_json
from harness.core.progress import progress_bar
from harness.core.runinfo import stable_hash
from harness.core.store import GENERATIONS, RUN, SCORES, RunDir, record_key
from harness.probing.probe import (
    N_PROBE,
    PROBE_MAX_TOKENS,
    PROBE_TEXT,
    Decoding,
    HFProber,
    ProbeJob,
    ProbeResult,
    VLLMProber,
    entropy_top_k,
)
from harness.probing.steps import (
    DELIMITER,
    REFLECT_MARKERS,
    TAU_SAT,
    Segments,
    Tokens,
    first_step,
    potential,
    reflect_count,
    segment,
    solve_check_fields,
    step_texts,
)
from harness.scoring.latex import boxed_contents

MODES = ("probe", "mention")
RECORDS, AGGREGATES = "solve_check.jsonl", "solve_check.json"
METHODS = {
    "probe": "SPAE probe (the paper's §3.1-3.2: teacher-forced Acc, Conf from the entropy, Phi > 0.9)",
    "mention": "PROXY, not the paper's method: k* = first step stating an answer equal to the gold "
    "(\\boxed{} or a final '= x'); not comparable with SPAE Table 3",
}
NOT_APPLICABLE = {"code": "code generation has no short answer to probe (SPAE paper §3.1)"}
MENTION_CHUNK = 256  # samples whose stated answers go to the math scorer in one call


@dataclass(frozen=True)
class Sample:
    generation: dict[str, Any]
    gold: str
    correct: bool


@dataclass(frozen=True)
class Label:
    mode: str
    settings_hash: str

    @property
    def proxy(self) -> bool:
        return self.mode != "probe"


Prober = HFProber | VLLMProber
Analyser = Callable[[str, list[Sample]], Iterator[list[dict]]]  # one benchmark's samples -> record batches


def analyze_solve_check(
    run_dir: Path,
    *,
    mode: str = "probe",
    model: str | None = None,
    backend: str = "hf",
    batch_size: int = 8,
    dtype: str = "auto",
    data_dir: Path | None = None,
    entropy_mode: str = "full",
) -> dict[str, Any]:
    """Analyse every math sample of a run not analysed yet; return this mode's aggregates.

    `model`: the probed model (probe) or tokenizer (mention); default the run's. `batch_size`: probe
    prompts per forward pass. `data_dir`: where the benchmark data is (probe mode rebuilds each prompt);
    default the run's local copy, else HARNESS_DATA_DIR or the Hub.
    """
    if mode not in MODES:
        raise HarnessError(f"unknown --mode {mode!r}; choose from {', '.join(MODES)}")
    if backend not in ("hf", "vllm"):
        raise HarnessError(f"solve/check probes through hf or vllm, not {backend!r}")
    if backend == "hf" and entropy_mode != "full":
        raise HarnessError("--entropy-mode topk=K reads vLLM's top-k logprobs: use --backend vllm")
    if batch_size < 1:
        raise HarnessError("--batch-size must be at least 1")
    run = RunDir(run_dir)
    info = run.read_json(RUN)
    model = model or info["config"].get("model")
    if model is None:
        raise HarnessError(f"{run.file(RUN)} names no model (generations scored from a file): pass --model")
    revision = info["config"].get("revision") if model == info["config"].get("model") else None
    todo = math_samples(run, info)
    out = RunDir(run.path / "analysis")
    out.path.mkdir(exist_ok=True)
    if mode == "probe":
        label, settings, analyse = probe_setup(
            info, model, revision, dtype, batch_size, data_dir, backend, entropy_mode
        )
    else:
        label, settings, analyse = mention_setup(model, revision)
    done = resume(out, label, settings)
    todo = {b: [s for s in samples if record_key(s.generation) not in done] for b, samples in todo.items()}
    with progress_bar() as bar:
        task = bar.add_task(f"solve/check ({mode})", total=sum(map(len, todo.values())))
        for benchmark, samples in todo.items():
            for records in analyse(benchmark, samples):
                out.append(RECORDS, records)
                bar.advance(task, len(records))
    return write_aggregates(out, info, label, settings)


def probe_setup(
    info: dict,
    model: str,
    revision: str | None,
    dtype: str,
    batch_size: int,
    data_dir: Path | None,
    backend: str,
    entropy_mode: str,
) -> tuple[Label, dict[str, Any], Analyser]:
    """Load the model once for the paper's probe: hf, or vllm with prefix caching."""
    if backend == "vllm":
        from harness.backends.vllm import VLLMBackend

        top_k = entropy_top_k(entropy_mode)
        engine = VLLMBackend(
            model, revision=revision, dtype=dtype, prefix_caching=True, max_logprobs=top_k or -1
        )
        prober: Prober = VLLMProber(engine, entropy_mode)
        engine_dtype = engine.settings["dtype"]
    else:
        from harness.backends.hf import HFBackend

        engine = HFBackend(model, revision=revision, dtype=dtype, batch_size=batch_size)
        prober, engine_dtype = HFProber(engine), engine.dtype
    settings = probe_settings(model, engine_dtype, backend, entropy_mode)
    label = Label("probe", stable_hash(settings)[:16])
    return label, settings, probe_analyser(prober, info, data_dir, batch_size, label)


def mention_setup(model: str, revision: str | None) -> tuple[Label, dict[str, Any], Analyser]:
    """The proxy needs only the tokenizer and the math scorer."""
    from harness.scoring import get_scorer

    scorer = get_scorer("math")
    settings = mention_settings(model, scorer.version)
    label = Label("mention", stable_hash(settings)[:16])
    return label, settings, mention_analyser(load_tokenizer(model, revision), scorer, label)


def math_samples(run: RunDir, info: dict[str, Any]) -> dict[str, list[Sample]]:
    """Each math benchmark's samples with their gold answer and final verdict (the run's scores)."""
    config = info["config"]
    math = [b for b in config["benchmarks"] if config["scorers"][b] == "math"]
    scores = {record_key(s): s for s in run.records(SCORES)}
    samples: dict[str, list[Sample]] = {b: [] for b in math}
    seen = set()
    for g in run.records(GENERATIONS):
        key = record_key(g)
        if g["benchmark"] not in samples or key in seen:
            continue
        seen.add(key)
        if key not in scores:
            raise HarnessError(
                f"{g['benchmark']} item {g['item_id']} sample {g['sample_idx']} has no score: "
                f"run `harness score {run.path}` first"
            )
        gold = info["answers"][g["benchmark"]][g["item_id"]]
        samples[g["benchmark"]].append(Sample(g, gold, scores[key]["value"] >= 1.0))
    return samples


def load_tokenizer(model: str, revision: str | None):
    """The model's tokenizer alone (the proxy mode loads no weights)."""
    from transformers import AutoTokenizer

    from harness.backends.chat import load_error

    try:
        return AutoTokenizer.from_pretrained(model, revision=revision)
    except Exception as e:
        raise load_error(model, e) from None


def tokenize(tokenizer, text: str) -> Tokens:
    """The response re-tokenised with character offsets (the run stores text, not token ids)."""
    if not tokenizer.is_fast:
        raise HarnessError("solve/check analysis needs a fast tokenizer (for token character offsets)")
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    return Tokens(text, encoded["input_ids"], [tuple(span) for span in encoded["offset_mapping"]])


def probe_settings(model: str, dtype: str, backend: str, entropy_mode: str) -> dict[str, Any]:
    return {
        "mode": "probe",
        "model": model,
        "backend": backend,
        "dtype": dtype,
        "delimiter": DELIMITER,
        "probe_text": PROBE_TEXT,
        "n_probe": N_PROBE,
        "probe_max_tokens": PROBE_MAX_TOKENS,
        "decoding": "the run's sampling settings per benchmark",
        "tau_sat": TAU_SAT,
        "acc_mode": "paper",
        "entropy_mode": entropy_mode,
        "reflect_markers": list(REFLECT_MARKERS),
    }


def mention_settings(model: str, scorer_version: str) -> dict[str, Any]:
    return {
        "mode": "mention",
        "model": model,
        "delimiter": DELIMITER,
        "answers": "\\boxed{} contents and the right side of the step's last '='",
        "scorer": scorer_version,
        "reflect_markers": list(REFLECT_MARKERS),
    }


def resume(out: RunDir, label: Label, settings: dict[str, Any]) -> set[tuple[str, str, int]]:
    """Keys already analysed in this mode; refuse to mix in records made with other settings."""
    records = [r for r in out.records(RECORDS) if r["mode"] == label.mode]
    if any(r["settings_hash"] != label.settings_hash for r in records):
        old = _read_aggregates(out).get(label.mode, {}).get("settings", {})
        changes = [f"{k}: {old.get(k)!r} -> {settings[k]!r}" for k in settings if old.get(k) != settings[k]]
        raise HarnessError(
            f"{out.file(RECORDS)} holds {label.mode}-mode records made with other settings"
            + (":\n  " + "\n  ".join(changes) if changes else "")
            + "\nMove the file away to analyse again with these settings."
        )
    return {record_key(r) for r in records}


def sample_record(sample: Sample, tokens: Tokens, seg: Segments, k_star: int | None, label: Label) -> dict:
    g = sample.generation
    return {
        "benchmark": g["benchmark"],
        "item_id": g["item_id"],
        "sample_idx": g["sample_idx"],
        "mode": label.mode,
        "proxy": label.proxy,
        "settings_hash": label.settings_hash,
        "correct": sample.correct,
        "truncated": g.get("truncated"),
        **solve_check_fields(seg, len(tokens.ids), k_star, sample.correct),
        "reflect_count": reflect_count(tokens, seg),
    }


def mention_analyser(tokenizer, scorer, label: Label) -> Analyser:
    """Proxy mode: k* = the first step stating an answer that the math scorer judges equal to the gold."""

    def analyse(benchmark: str, samples: list[Sample]) -> Iterator[list[dict]]:
        for start in range(0, len(samples), MENTION_CHUNK):
            chunk = samples[start : start + MENTION_CHUNK]
            traces = [tokenize(tokenizer, s.generation["text"]) for s in chunk]
            segs = [segment(t) for t in traces]
            calls = [
                (i, k, answer)
                for i, (t, seg) in enumerate(zip(traces, segs, strict=True))
                for k, text in enumerate(step_texts(t, seg))
                for answer in stated_answers(text)
            ]
            golds = [chunk[i].gold for i, _, _ in calls]
            verdicts = scorer.score([f"\\boxed{{{a}}}" for _, _, a in calls], golds)
            hits = {calls[j][:2] for j, score in verdicts if score.value >= 1.0}
            records = []
            for i, (sample, t, seg) in enumerate(zip(chunk, traces, segs, strict=True)):
                mentions = [(i, k) in hits for k in range(len(seg.boundaries))]
                records.append(
                    {**sample_record(sample, t, seg, first_step(mentions), label), "mention": mentions}
                )
            yield records

    return analyse


def stated_answers(step: str) -> list[str]:
    """Answers a step states: each \\boxed{} content, and the right side of its last '=' to the line end."""
    answers = [a.strip() for a in boxed_contents(step)]
    equals = step.rfind("=")
    if equals >= 0:
        rest = step[equals + 1 :].split("\n", 1)[0].strip()
        answers.append(re.sub(r"(?:\\[\])]|[\s$.,;:])+$", "", rest))
    return [a for a in answers if a]


@dataclass(frozen=True)
class Prepared:
    """A sample ready to probe: its response tokens, steps, prompt and gold token ids."""

    sample: Sample
    tokens: Tokens
    seg: Segments
    prompt: list[int]
    gold: list[int]
    seed: int

    def job(self, k: int, probe: list[int]) -> ProbeJob:
        """The probe at boundary k (0-based): prompt + response through b_k + the probe text."""
        b = self.seg.boundaries[k]
        return ProbeJob(self.prompt + self.tokens.ids[: b + 1] + probe, self.gold, self.seed + k * N_PROBE)


def probe_analyser(
    prober: Prober, info: dict, data_dir: Path | None, batch_size: int, label: Label
) -> Analyser:
    """The paper's probe at every boundary, batch_size probes per forward pass; a sample's record is
    written once all its probes are done."""
    tokenizer = prober.backend.tokenizer
    probe_ids = tokenizer(PROBE_TEXT, add_special_tokens=False)["input_ids"]

    def analyse(benchmark: str, samples: list[Sample]) -> Iterator[list[dict]]:
        prepared = prepare(prober, info, benchmark, samples, data_dir)
        decoding = run_decoding(info, benchmark)
        jobs = [(i, k) for i, p in enumerate(prepared) for k in range(len(p.seg.boundaries))]
        results: list[list[ProbeResult]] = [[] for _ in prepared]
        written = 0

        def finished() -> list[dict]:
            """Records of the samples, in order, whose probes are all done."""
            nonlocal written
            start = written
            while written < len(prepared) and len(results[written]) == len(prepared[written].seg.boundaries):
                written += 1
            return [probe_record(prepared[i], results[i], label) for i in range(start, written)]

        yield finished()  # samples without boundaries
        for start in range(0, len(jobs), batch_size):
            batch = jobs[start : start + batch_size]
            found = prober.probe([prepared[i].job(k, probe_ids) for i, k in batch], decoding)
            for (i, _), result in zip(batch, found, strict=True):
                results[i].append(result)
            yield finished()

    return analyse


def probe_record(p: Prepared, results: list[ProbeResult], label: Label) -> dict:
    acc, conf = [r.acc for r in results], [r.conf for r in results]
    phi = [potential(a, c) for a, c in zip(acc, conf, strict=True)]
    k_star = first_step([value > TAU_SAT for value in phi])
    return {**sample_record(p.sample, p.tokens, p.seg, k_star, label), "acc": acc, "conf": conf, "phi": phi}


def prepare(prober: Prober, info: dict, benchmark: str, samples: list[Sample], data_dir: Path | None):
    """Tokenise each response and rebuild its exact prompt (checked against the run's prompt hash)."""
    from harness.backends.chat import prompt_hash
    from harness.core.types import messages_for
    from harness.stages.plan import derive_seed

    if not samples:
        return []
    chat, tokenizer = prober.backend.chat, prober.backend.tokenizer
    items = load_items(info, benchmark, data_dir)
    recorded = info["prompts"][benchmark]
    max_input = info["config"].get("max_input_tokens", {}).get(benchmark)
    prompts: dict[str, tuple[str, list[int]]] = {}
    prepared = []
    for s in samples:
        g = s.generation
        if g["item_id"] not in prompts:
            text = chat.render(messages_for(items[g["item_id"]], recorded["template"], recorded["system"]))
            prompts[g["item_id"]] = text, chat.tokens(text, max_input)[0]
        text, ids = prompts[g["item_id"]]
        if g.get("prompt_hash") not in (None, prompt_hash(text)):
            raise HarnessError(
                f"{benchmark} item {g['item_id']}: the prompt rebuilt from run.json and the data differs "
                f"from the one the run generated with (another chat template or model?)"
            )
        tokens = tokenize(tokenizer, g["text"])
        seed = derive_seed(
            info["config"].get("seed", 0), benchmark, f"{g['item_id']}\x1f{g['sample_idx']}", 0
        )
        gold = tokenizer(s.gold, add_special_tokens=False)["input_ids"]
        if not gold:
            raise HarnessError(f"{benchmark} item {g['item_id']}: the gold answer {s.gold!r} has no tokens")
        prepared.append(Prepared(s, tokens, segment(tokens), ids, gold, seed))
    return prepared


def load_items(info: dict, benchmark: str, data_dir: Path | None) -> dict:
    """The benchmark's items, from the same data the run used (its content hash is checked)."""
    from benchmarks import get_benchmark
    from harness.scoring import trusted_include_path

    config = info["config"]
    if "prompts" not in info or benchmark not in config.get("dataset_hashes", {}):
        raise HarnessError(
            f"run.json records no prompt or data for {benchmark}; probe mode needs the exact prompts "
            f"(use --mode mention for runs scored from generation files)"
        )
    source = info.get("datasets", {}).get(benchmark, {})
    if data_dir is None and source.get("kind") == "local":
        data_dir = Path(source["dir"]).parent
    bench = get_benchmark(benchmark, "math", trusted_include_path(config, None))
    loaded = bench.load(data_dir)
    if loaded.source["content_hash"] != config["dataset_hashes"][benchmark]:
        raise HarnessError(
            f"{benchmark}: the data found ({loaded.source.get('dir') or loaded.source.get('kind')}) differs "
            f"from the data the run used; pass --data-dir with the run's copy"
        )
    return {item.id: item for item in loaded.items}


def run_decoding(info: dict, benchmark: str) -> Decoding:
    """The run's decoding settings for the benchmark: probes sample as the evaluation did."""
    sampling = info["config"].get("sampling", {}).get(benchmark)
    if sampling is None:
        raise HarnessError(f"run.json records no sampling settings for {benchmark}")
    return Decoding(sampling["temperature"], sampling["top_p"], sampling.get("top_k", -1))


def aggregate(records: list[dict]) -> dict[str, Any]:
    """SPAE paper §4.4 (Table 3) aggregates. Solve/check/reflect means over correct samples; rates in %."""
    correct = [r for r in records if r["correct"]]
    wrong = [r for r in records if not r["correct"]]
    reached = [r for r in records if r["saturated"]]
    correct_reached = [r for r in correct if r["saturated"]]
    solve_check = sum(r["solve_tokens"] + r["check_tokens"] for r in correct)
    r2w = sum(r["r2w"] for r in records)
    return {
        "n_samples": len(records),
        "n_correct": len(correct),
        "acc": _ratio(len(correct), len(records)),
        "mean_solve": _mean(r["solve_tokens"] for r in correct),
        "mean_check": _mean(r["check_tokens"] for r in correct),
        "mean_reflect": _mean(r["reflect_count"] for r in correct),
        "check_fraction": _ratio(sum(r["check_tokens"] for r in correct), solve_check),
        "frac_saturated": _ratio(len(reached), len(records)),
        "frac_correct_saturated": _ratio(len(correct_reached), len(correct)),
        "mean_solve_saturated": _mean(r["solve_tokens"] for r in correct_reached),
        "mean_check_saturated": _mean(r["check_tokens"] for r in correct_reached),
        "n_incorrect": len(wrong),
        "n_r2w": r2w,
        "r2w_rate": _percent(r2w, len(wrong)),
        "r2w_rate_all": _percent(r2w, len(records)),
        "mean_first_sat_relpos": _mean(r["first_sat_relpos"] for r in reached),
        "n_no_think_close": sum(r["no_think_close"] for r in records),
        "n_no_boundaries": sum(r["no_boundaries"] for r in records),
        "n_truncated": sum(bool(r["truncated"]) for r in records),
    }


def write_aggregates(out: RunDir, info: dict, label: Label, settings: dict[str, Any]) -> dict[str, Any]:
    """Aggregate this mode's records per benchmark (N/A for non-math ones) into solve_check.json."""
    config = info["config"]
    records = [r for r in out.records(RECORDS) if r["mode"] == label.mode]
    benchmarks: dict[str, Any] = {}
    for b in config["benchmarks"]:
        scorer = config["scorers"][b]
        if scorer == "math":
            mine = [r for r in records if r["benchmark"] == b]
            benchmarks[b] = {"mode": label.mode, "proxy": label.proxy, "status": "ok", **aggregate(mine)}
        else:
            reason = NOT_APPLICABLE.get(scorer, "only math-scored benchmarks are analysed")
            benchmarks[b] = {"mode": label.mode, "status": "n/a", "scorer": scorer, "reason": reason}
    result = {
        "mode": label.mode,
        "proxy": label.proxy,
        "method": METHODS[label.mode],
        "settings_hash": label.settings_hash,
        "settings": settings,
        "benchmarks": benchmarks,
    }
    out.write_json(AGGREGATES, {**_read_aggregates(out), label.mode: result})
    return result


def _read_aggregates(out: RunDir) -> dict[str, Any]:
    try:
        return read_json(out.file(AGGREGATES), limit=CONFIG_BYTES)
    except Missing:
        return {}


def _mean(values) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def _ratio(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def _percent(part: float, whole: float) -> float | None:
    return 100 * part / whole if whole else None
