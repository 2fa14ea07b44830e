"""UloRL's cleaned corpus (docs/methods/ulorl.md#data-cleaning), what `harness corpus ulorl` writes:
`clean.jsonl`, `removed.jsonl` (each removed row with its filter and reason) and `report.json`, the
pass-rate filter through a `harness eval` run of a second model under `pass-rate/`. `CorpusOptions`
declares the command's settings once, with the paper's defaults from `cleaning.py`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.data import read_rows
from harness.core.settings import check, setting
from trainers.methods.ulorl import cleaning


@dataclass(frozen=True)
class CorpusOptions:
    """The cleaning's settings beside the input and output: `harness corpus ulorl`'s options."""

    max_answer_chars: int = setting(
        cleaning.MAX_ANSWER_CHARS, "Longest reference answer kept; matrices are always removed.", minimum=1
    )
    reference_run: list[Path] | None = setting(
        None,
        "A `harness eval` run directory of a strong model on these rows (repeat, at least twice): "
        "rows whose runs all agree on one answer that scored wrong are removed.",
    )
    pass_rate_model: str | None = setting(
        None, "Model that answers each remaining row n times; rows it gets n/n right are removed."
    )
    pass_rate_n: int = setting(cleaning.PASS_RATE_N, "Samples per row (the paper's).", minimum=1)
    pass_rate_temperature: float = setting(
        cleaning.PASS_RATE_TEMPERATURE,
        "Sampling temperature (the paper's rollouts', with top-p 1.0).",
        minimum=0,
    )
    pass_rate_max_tokens: int | None = setting(
        None, "Completion budget [default: harness eval's, 32,768; the paper's was 131,072].", minimum=1
    )
    pass_rate_backend: str = setting("hf", "Engine of the pass-rate model: hf, vllm or openai.")
    pass_rate_scorer: str = setting("math", "Scorer of its answers (math, integer, numeric, cem...).")
    pass_rate_seed: int = setting(0, "Seed of the pass-rate run.", minimum=0)

    def __post_init__(self) -> None:
        check(type(self), {f.name: getattr(self, f.name) for f in fields(self)})


def pass_rate_command(items: Path, out: Path, options: CorpusOptions) -> list[str]:
    """The `harness eval` arguments (after `python -m harness`) that sample `items` n times with the
    rollout's settings (top-p 1.0, no top-k) into the run directory `out`."""
    command = [
        "eval", "--benchmarks", f"jsonl:{items}", "--model", str(options.pass_rate_model),
        "--backend", options.pass_rate_backend, "--scorer", options.pass_rate_scorer,
        "--n", str(options.pass_rate_n), "--temperature", str(options.pass_rate_temperature),
        "--top-p", "1.0", "--top-k", "-1", "--seed", str(options.pass_rate_seed), "--out", str(out),
    ]  # fmt: skip
    max_tokens = options.pass_rate_max_tokens
    return command if max_tokens is None else [*command, "--max-tokens", str(max_tokens)]


def build_corpus(data: Path, out: Path, options: CorpusOptions) -> cleaning.Report:
    """Clean the rows of `data` into `out`, printing what was removed and converted; nothing is written
    before every row has been read and checked."""
    numbered = list(read_rows(data))
    runs = None
    if options.reference_run:
        if len(options.reference_run) < 2:
            raise HarnessError("--reference-run: give at least two models' run directories")
        runs = {str(path): cleaning.majority_answers(path) for path in options.reference_run}
    kept, report = cleaning.clean(
        [row for _, row in numbered],
        max_answer_chars=options.max_answer_chars,
        reference_runs=runs,
        source=str(data),
        lines=[number for number, _ in numbered],
    )
    out.mkdir(parents=True, exist_ok=True)
    settings = None
    if options.pass_rate_model is not None:
        kept, settings = _drop_too_easy(kept, out, options, report)
    _write_jsonl(out / "clean.jsonl", kept)
    _write_jsonl(out / "removed.jsonl", [r.record() for r in report.removed_rows])
    summary = {
        "input": str(data),
        "max_answer_chars": options.max_answer_chars,
        "reference_runs": list(runs or ()),
        "pass_rate": settings,
        **report.as_json(),
    }
    (out / "report.json").write_text(
        json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"{report.total} rows: kept {report.kept}, removed {report.total - report.kept}")
    for name, count in report.removed.items():
        print(f"  removed {name}: {count}")
    for name, count in report.converted.items():
        print(f"  converted {name}: {count}")
    return report


def _drop_too_easy(
    kept: list[dict[str, Any]], out: Path, options: CorpusOptions, report: cleaning.Report
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows the pass-rate model does not answer n/n right, and the report's note of its run."""
    model = options.pass_rate_model
    if not kept:
        return kept, {"model": model, "run": None}
    items, run_dir = out / "pass-rate-items.jsonl", out / "pass-rate"
    _write_jsonl(items, [{k: r[k] for k in ("id", "problem", "answer")} for r in kept])
    command = pass_rate_command(items, run_dir, options)
    print(f"pass rate: {len(kept)} rows x {options.pass_rate_n} samples of {model} -> {run_dir}", flush=True)
    done = subprocess.run([sys.executable, "-m", "harness", *command])  # its progress shows
    if done.returncode != 0:
        raise HarnessError(
            f"the pass-rate evaluation failed (exit {done.returncode}; its output is above); "
            "the same command resumes it"
        )
    kept = cleaning.drop_too_easy(kept, cleaning.pass_counts(run_dir), options.pass_rate_n, report)
    return kept, {"model": model, "run": str(run_dir), "command": ["harness", *command]}


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
