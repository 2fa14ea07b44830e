"""Run a study: its data, its warm start, then every (arm, seed) trained, evaluated on the held-out sums
and gated with `harness regress`, each a `harness` command in its own process.

STUDY/ holds `study.json` (the settings), `data/` (warm-start, train and held-out sums, disjoint; for
programs, the train and held-out sets in `data/train/` and `data/heldout/`, in CRUXEval's layout, as
`azr_deduction` reads them),
`warm-start/` (the model every arm starts from), `evals/warm-start/` (its held-out run), `runs/ARM-seedS/`
(`harness train` folders; once a run is recorded, its checkpoint keeps the model but not the optimizer,
scheduler and random states, two thirds of its size, that only resuming reads), `evals/ARM-seedS/` and
`record/ARM-seedS/` (metrics.jsonl and summary.json: what the table reads; the only part worth keeping).
Everything is resumable: a finished part is skipped, an interrupted `harness train` resumes from its last
checkpoint, and a study folder is only reused for the same settings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from harness import HarnessError
from harness.core.io.read import RECORDS_BYTES, Missing, read_bytes, read_json
from harness.core.io.write import OutDir, open_file
from harness.core.settings import check, setting
from trainers.coldstart.options import ColdStartOptions
from trainers.studies import documents, programs
from trainers.studies.catalog import BASE, Arm, Study, study
from trainers.studies.task import disjoint, parse_levels, split
from trainers.studies.warmstart import demonstrations, warm_start

STUDY_FILE = "study.json"
# what a profile changes in every arm's config: on a GPU, TRL's vLLM colocated in the training process
PROFILES: dict[str, dict] = {
    "cpu": {},
    "gpu": {
        "use_vllm": True,
        "vllm_mode": "colocate",
        "prompts_per_step": 16,
        "trl": {"vllm_gpu_memory_utilization": 0.3, "bf16": True},
    },
}


@dataclass(frozen=True)
class Settings:
    """How much of a study to run: the defaults are the full study on SmolLM2-135M-Instruct."""

    study: str = setting(help="The study (its method's name).", cli=False)
    model: str = setting(help="The model the warm start trains (a folder, e.g. from `harness fetch-model`).")
    seeds: int = setting(3, "Seeds per arm (0..S-1).", minimum=1)
    steps: int = setting(24, "Optimizer steps per run.", minimum=1)
    warm_examples: int | None = setting(
        None,
        "Warm-start demonstrations: sums in the study's style, or the method's cold start (default: the "
        "study's: 192 sums, 72 for Absolute Zero, 90 for SPELL).",
        minimum=1,
    )
    warm_epochs: float = setting(2.0, "Warm-start epochs.", exclusive_minimum=0)
    train_size: int = setting(256, "Training sums.", minimum=1)
    heldout_size: int = setting(60, "Held-out sums (disjoint from the others).", minimum=1)
    eval_n: int = setting(4, "Samples per held-out sum.", minimum=1)
    parallel: int = setting(2, "Runs at once, sharing the machine's CPUs.", minimum=1)
    data_seed: int = setting(0, "Seed of the sums and of the warm start.", minimum=0)
    profile: str = setting("cpu", "cpu, or gpu: vLLM colocated and larger batches (a 0.5-1.5B model).")
    bf16: bool = setting(
        False,
        "Train the warm start and every arm in bf16 autocast, as the papers' GPUs do (the gpu profile's arms "
        "always do): faster on a CPU with AVX512-BF16 (docs/studies.md). The evaluations stay float32.",
    )

    def __post_init__(self) -> None:
        check(type(self), vars(self), name=lambda f: f"--{f.replace('_', '-')}")
        if self.profile not in PROFILES:
            raise HarnessError(f"--profile must be one of {', '.join(PROFILES)}, got {self.profile!r}")


def warm_examples(s: Study, settings: Settings) -> int:
    return settings.warm_examples or s.warm_examples


def _log(text: str) -> None:
    print(f"study: {text}", flush=True)


def _harness(*args: object, threads: int | None = None, log: Path | None = None) -> None:
    command = [sys.executable, "-m", "harness", *map(str, args)]
    env = dict(os.environ, **({"HARNESS_THREADS": str(threads)} if threads else {}))
    started = time.monotonic()
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    with os.fdopen(open_file(log, flags), "a") if log else open(os.devnull, "w") as sink:
        sink.write(f"$ {' '.join(command[2:])}\n")
        sink.flush()
        code = subprocess.run(command, env=env, stdout=sink, stderr=subprocess.STDOUT).returncode
    if code != 0:
        raise HarnessError(f"`harness {args[0]}` failed (exit {code}); its output is in {log}")
    _log(f"harness {args[0]} {args[1] if len(args) > 1 else ''} done in {time.monotonic() - started:.0f} s")


def write(folder: Path, relative: str, text: str) -> None:
    """Write FOLDER/RELATIVE through the one writer (made with its folders; no link followed)."""
    with OutDir.open(folder) as out:
        out.write(relative, text)


def _claim(folder: Path, settings: Settings) -> None:
    """Make STUDY/study.json, or check that the folder's study has the same settings."""
    record = {"settings": asdict(settings)}
    path = folder / STUDY_FILE
    if folder.exists() and any(folder.iterdir()):
        try:
            have = read_json(path)
        except Missing:
            raise HarnessError(f"{folder} exists and is not a study folder (no {STUDY_FILE})") from None
        if not isinstance(have, dict) or have.get("settings") != record["settings"]:
            raise HarnessError(f"{folder} holds a study with other settings; choose a new folder")
        return
    write(folder, STUDY_FILE, json.dumps(record, indent=2) + "\n")


def _heldout(s: Study, folder: Path) -> list[object]:
    """`harness eval`'s arguments naming the held-out set and how it is asked and scored."""
    if s.task == "programs":
        return ["--benchmarks", programs.BENCHMARK, "--data-dir", folder / "data" / "heldout"]
    heldout = folder / "data" / "heldout.jsonl"
    return ["--benchmarks", f"jsonl:{heldout}", "--scorer", "integer", "--prompt-template", "{problem}"]


def _eval_args(s: Study, model: Path, folder: Path, n: int, out: Path) -> list[object]:
    config = {**BASE, **s.config}
    return [
        "eval", *_heldout(s, folder), "--model", model, "--n", n, "--temperature", config["temperature"],
        "--max-tokens", s.eval_max_tokens or config["max_completion_length"], "--seed", 0, "--out", out,
    ]  # fmt: skip


def _training_set(s: Study, arm: Arm, folder: Path) -> dict[str, str]:
    """The config keys naming an arm's training set: SPELL reads the corpus of training clusters; an arm's
    own settings may replace them (AZR proposes its own tasks)."""
    if s.task == "programs":
        return {"dataset": programs.BENCHMARK, "data_dir": str(folder / "data" / "train")}
    if s.task == "documents" and arm.method == s.method:
        return {"dataset": str(folder / "data" / documents.CORPUS)}
    return {"dataset": f"jsonl:{folder / 'data' / 'train.jsonl'}"}


def arm_config(s: Study, arm_name: str, settings: Settings, model: Path, folder: Path) -> dict:
    """The `harness train` config of one arm (the seed is set per run)."""
    arm = s.arm(arm_name)
    config = {**BASE, **s.config, "method": arm.method, "model": str(model), **_training_set(s, arm, folder)}
    config.update(max_steps=settings.steps, save_steps=settings.steps)
    own = s.gpu if settings.profile == "gpu" and arm.method == s.method else {}
    precision = {"trl": {"bf16": True}} if settings.bf16 else {}
    for layer in (PROFILES[settings.profile], precision, own, arm.settings):
        for key, value in layer.items():
            config[key] = {**config.get(key, {}), **value} if isinstance(value, dict) else value
    return config


def _sets(s: Study, settings: Settings) -> dict[str, list[dict]]:
    """The study's sets by the file under STUDY/data/ each is written to: the sums (warm start, train,
    held out; disjoint), or the programs (the same three; train and held out in CRUXEval's layout), or the
    documents (the SPELL corpus of training clusters, and a question on each training and held-out
    cluster)."""
    levels, seed = parse_levels(s.levels), settings.data_seed
    sizes = (settings.train_size, settings.heldout_size)
    if s.task == "programs":  # the method's cold start, and deduction traced on programs of its own
        warm, train, heldout = programs.split(levels, (warm_examples(s, settings), *sizes), seed)
        return {
            "warm-start.jsonl": warm,
            f"train/{programs.FILE}": train,
            f"heldout/{programs.FILE}": heldout,
        }
    if s.task == "documents":
        (clusters, train), (_, heldout) = documents.split(levels, sizes, seed)
        return {documents.CORPUS: clusters, "train.jsonl": train, "heldout.jsonl": heldout}
    sets = split(levels, (warm_examples(s, settings), *sizes), seed)
    disjoint(*sets)
    return dict(zip(("warm-start.jsonl", "train.jsonl", "heldout.jsonl"), sets, strict=True))


def prepare(
    settings: Settings, folder: Path, model: Path | None = None
) -> tuple[Study, dict[str, list[dict]]]:
    """Claim the folder, write the study's sets to STUDY/data/ and each arm's config to STUDY/configs/
    (starting from `model`, by default the warm start)."""
    s = study(settings.study)
    _claim(folder, settings)
    sets = _sets(s, settings)
    for name, rows in sets.items():
        write(folder, f"data/{name}", "".join(json.dumps(r) + "\n" for r in rows))
    for arm in s.arms:
        config = arm_config(s, arm.name, settings, model or folder / "warm-start", folder)
        write(folder, f"configs/{arm.name}.yaml", yaml.safe_dump(config, sort_keys=False))
    return s, sets


def _warm_start_demonstrations(
    s: Study, settings: Settings, sets: dict[str, list[dict]], folder: Path
) -> tuple[list, list[str]]:
    """The warm start's demonstrations and the held-out texts they are checked against: the study's sums
    in its style, or the method's own cold start (`warm_examples` demonstrations, spread over its roles and
    tasks), read from the method arm's config with the base model; for programs, also `warm_examples`
    of the study's own, their deduction traced."""
    if s.task == "programs":
        heldout = [r["code"] for r in sets[f"heldout/{programs.FILE}"]]
    else:
        heldout = [r["problem"] for r in sets["heldout.jsonl"]]
    if s.task == "sums":
        return demonstrations(sets["warm-start.jsonl"], s.style), heldout
    from transformers import AutoTokenizer

    from trainers.config import load_config
    from trainers.integration.run import method_class

    config = load_config(folder / "configs" / "method.yaml", {"model": settings.model, "out": str(folder)})
    examples = max(1, warm_examples(s, settings) // s.demos_per_example)
    tokenizer = AutoTokenizer.from_pretrained(settings.model)
    method = method_class(config)
    demos = method.demonstrations(config, tokenizer, examples)
    if s.task == "programs":
        demos += programs.demonstrations(sets["warm-start.jsonl"], method.options_of(config))
    return demos, heldout


def dry_run(settings: Settings, folder: Path) -> None:
    """Write the data and configs (from the base model: no warm start is trained) and resolve each arm's
    config with `harness train --dry-run`, which prints it and its checks."""
    s, _ = prepare(settings, Path(folder), Path(settings.model))
    for arm in s.arms:
        _log(f"{arm.name}: harness train {arm.method} --config {folder}/configs/{arm.name}.yaml --dry-run")
        config = folder / "configs" / f"{arm.name}.yaml"
        command = [sys.executable, "-m", "harness", "train", arm.method, "--config", config, "--dry-run"]
        code = subprocess.run(command).returncode
        if code != 0:
            raise HarnessError(f"the {arm.name} arm's config does not resolve (exit {code})")


def run_study(settings: Settings, folder: Path) -> Path:
    """The whole study into `folder`: what is recorded there already is kept, the rest is run."""
    folder = Path(folder)
    s, sets = prepare(settings, folder)
    logs = folder / "logs"
    OutDir.open(logs).close()
    started = time.monotonic()
    options = ColdStartOptions(
        examples=warm_examples(s, settings),
        epochs=settings.warm_epochs,
        learning_rate=s.warm_learning_rate,
        batch_size=8,
    )
    model = warm_start(
        settings.model,
        lambda: _warm_start_demonstrations(s, settings, sets, folder),
        s.style,
        options,
        folder / "warm-start",
        settings.data_seed,
        settings.bf16,
    )
    _log(f"warm start ready: {model}")
    base_eval = folder / "evals" / "warm-start"
    if not (base_eval / "results.json").is_file():
        _harness(*_eval_args(s, model, folder, settings.eval_n, base_eval), log=logs / "warm-start.log")
    jobs = [(arm.name, seed) for seed in range(settings.seeds) for arm in s.arms]
    threads = max(1, (os.cpu_count() or 1) // settings.parallel)
    with ThreadPoolExecutor(settings.parallel) as pool:
        for future in [
            pool.submit(_run_arm, s, folder, name, seed, settings, threads) for name, seed in jobs
        ]:
            future.result()
    for seed in range(settings.seeds):
        for arm in ("method", "ablation"):
            _gate_against_grpo(folder, arm, seed)
    _log(f"{len(jobs)} runs recorded in {folder / 'record'} ({(time.monotonic() - started) / 60:.1f} min)")
    return folder


def _regress(base: Path, candidate: Path, out: Path) -> dict:
    """`harness regress BASE CANDIDATE`'s one comparison (its exit code is a verdict, not an error)."""
    command = [sys.executable, "-m", "harness", "regress", base, candidate, "--json", out]
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    (comparison,) = read_json(out)["comparisons"]
    return comparison


def _gate_against_grpo(folder: Path, arm: str, seed: int) -> None:
    """Add `harness regress`'s verdict of ARM against GRPO, same seed, to ARM's summary."""
    path = folder / "record" / f"{arm}-seed{seed}" / "summary.json"
    summary = read_json(path)
    if "vs_grpo" in summary:
        return
    evals = folder / "evals"
    c = _regress(
        evals / f"grpo-seed{seed}", evals / f"{arm}-seed{seed}", evals / f"{arm}-seed{seed}.vs-grpo.json"
    )
    summary["vs_grpo"] = {"delta": c["delta"], "ci95": c["ci95"], "p": c["p"], "verdict": c["verdict"]}
    write(folder, f"record/{arm}-seed{seed}/summary.json", json.dumps(summary, indent=2) + "\n")


def _run_arm(s: Study, folder: Path, arm: str, seed: int, settings: Settings, threads: int) -> None:
    """Train, evaluate and record one (arm, seed); a recorded one is skipped."""
    name = f"{arm}-seed{seed}"
    record = folder / "record" / name
    if (record / "summary.json").is_file():
        return
    run, evals, log = folder / "runs" / name, folder / "evals" / name, folder / "logs" / f"{name}.log"
    started = time.monotonic()
    _harness(
        "train", s.arm(arm).method, "--config", folder / "configs" / f"{arm}.yaml", "--set", f"seed={seed}",
        "--out", run, threads=threads, log=log,
    )  # fmt: skip
    seconds = time.monotonic() - started
    if not (evals / "results.json").is_file():
        checkpoint = run / f"checkpoint-{settings.steps}"
        _harness(
            *_eval_args(s, checkpoint, folder, settings.eval_n, evals),
            threads=threads,
            log=log,
        )
    comparison = _regress(folder / "evals" / "warm-start", evals, folder / "evals" / f"{name}.regress.json")
    summary = {
        "arm": arm,
        "seed": seed,
        "train_seconds": round(seconds, 1),
        "accuracy": comparison["candidate"],
        "warm_start_accuracy": comparison["base"],
        "gain_over_warm_start": comparison["delta"],
        "gain_ci95": comparison["ci95"],
        "verdict_vs_warm_start": comparison["verdict"],
        "constant_baseline": comparison["constant_baseline"],
        "mode_answer_share": comparison["candidate_answers"]["mode_answer_share"],
        "distinct_answers": comparison["candidate_answers"]["distinct_answers"],
        "collapse": comparison["collapse"],
        "items": comparison["items"],
    }
    with OutDir.open(record) as out:
        out.write("metrics.jsonl", read_bytes(run / "metrics.jsonl", run, RECORDS_BYTES))
        out.write("summary.json", json.dumps(summary, indent=2) + "\n")
    drop_resume_state(folder, f"runs/{name}/checkpoint-{settings.steps}")
    _log(f"{name}: accuracy {summary['accuracy']:.3f} ({seconds / 60:.1f} min of training)")


RESUME_STATE = ("optimizer.pt", "scheduler.pt", "rng_state.pth")


def drop_resume_state(folder: Path, checkpoint: str) -> None:
    """Remove what only resuming a run reads from a recorded run's checkpoint (1.1 GB of a 1.6 GB SmolLM2
    checkpoint), opened under the study folder without following a link; its model stays, to be evaluated
    again."""
    with OutDir.open(folder) as study, study.folders(checkpoint) as out:
        for name in RESUME_STATE:
            out.remove(name)
