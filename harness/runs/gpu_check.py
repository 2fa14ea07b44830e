"""The GPU check (`harness gpu-check`): on one CUDA GPU with PyTorch installed and no network, everything
that needs the GPU, each check a subprocess of `harness` with a time limit.

    scripts/gpu_wheels.sh                                   # here: the project + missing deps into .whl/
    python3 scripts/gpu_check.py --wheels .whl --out OUT    # there, from the repository root
    harness gpu-check --device cpu --out OUT                # anywhere a checkout is installed (CI does)

On the GPU machine the project's dependencies arrive as wheels, so `harness` cannot start before they are
installed: scripts/gpu_check.py imports this module from the checkout (it needs only the standard
library) and calls `main`, which takes the same options as `harness gpu-check`. The checks run from a
scratch folder (--work, new or empty) with the wheels' packages (--wheels), else the checkout, first on the
import path; the methods' CPU configs are read from the checkout's configs/train.

1. `install` (with --wheels): the wheels into WORK/site-packages with pip --no-index --no-deps (the machine's
   torch and transformers are used as they are); it warns if the project's wheel is not the working tree;
2. `env`: the versions, the device (with --device cuda: CUDA must be usable, else the check stops there),
   and every module the checks need imported, TRL's GRPOTrainer included;
3. `tiny-model`: `harness tiny-model --no-thinking`, the deterministic tiny random model, offline;
4. `eval`: `harness eval` on the hf backend in bfloat16, the first 4 AIME 2024 problems shipped in the
   package, 2 samples each; its run.json must say bfloat16 on the device, and every sample be scored;
5. `train-METHOD` for each method the checkout's pyproject.toml registers: 2 steps of `harness train
   METHOD` with bf16 (`--set trl.bf16=true`) and transformers generation, each from its CPU config
   (configs/train/METHOD-cpu.yaml) at the sizes its test uses, or with GRPO's small problems;
   metrics.jsonl must hold steps 1 and 2 with a finite loss, and checkpoint-2 the model's weights.

It prints one line per check, `PASS|FAIL name seconds detail`, writes each check's output to OUT/NAME.log
and the lines to OUT/summary.txt, and returns 1 if any check failed. Arena's judge is the policy itself (as
in its CPU config), so nothing is served. AZR runs proposals under bubblewrap where it works, else
unisolated (`--unsafe-no-sandbox`: a throwaway machine and a random model's code).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import get_args, get_type_hints

from harness import HarnessError
from harness.core.settings import check as check_bounds
from harness.core.settings import option_name, setting

STEPS = 2
BF16 = ["--set", "trl.bf16=true"]
SMALL_COLD_START = ["--set", "cold_start.examples=1", "--set", "cold_start.epochs=1"]  # its SFT in bf16


def checkout() -> Path:
    """The repository checkout the checks train from (its configs/train) and, without --wheels, import:
    the one this module is in, else the current folder (an installed harness, run from a checkout)."""
    for root in (Path(__file__).resolve().parents[2], Path.cwd()):
        if (root / "configs" / "train").is_dir() and (root / "harness" / "__init__.py").is_file():
            return root
    raise HarnessError("configs/train not found: run the check from the root of a checkout of the repository")


def trainings(configs: Path) -> list[tuple[str, list[str]]]:
    """(method, extra arguments) for each method the checkout's pyproject.toml registers: GRPO's small
    problems and sizes, unless `special` below gives the method its CPU config at the sizes of its tests
    (tests/test_trainers/methods/)."""
    problems = configs / "ulorl-cpu-problems.jsonl"  # 64 arithmetic problems, scored `integer`
    plain = ["--dataset", f"jsonl:{problems}", "--scorer", "integer", "--num-generations", "4"]
    plain += ["--prompts-per-step", "2", "--max-completion-length", "16"]
    special = {
        "spell": ["--config", str(configs / "spell-cpu.yaml"), "--dataset", str(configs / "spell-cpu-corpus")]
        + ["--set", "options.questioner_max_tokens=24", "--set", "options.questions_per_round=2"]
        + SMALL_COLD_START,
        "azr": ["--config", str(configs / "azr-cpu.yaml"), "--unsafe-no-sandbox"]
        + ["--set", "options.propose_max_tokens=16", "--set", "options.solve_max_tokens=8"]
        + ["--set", "options.mc_samples=2"]
        + SMALL_COLD_START,
        "arena": ["--config", str(configs / "arena-cpu.yaml"), "--set", "max_completion_length=8"]
        + ["--dataset", f"jsonl:{configs / 'arena-cpu-problems.jsonl'}"],
        "ulorl": ["--config", str(configs / "ulorl-cpu.yaml"), "--dataset", f"jsonl:{problems}"]
        + ["--set", "max_completion_length=8", "--set", "options.segments=2"]
        + ["--set", "options.dynamic_sampling=false"],
        "spae": ["--config", str(configs / "spae-cpu.yaml"), "--dataset", f"jsonl:{problems}"]
        + ["--set", "max_completion_length=32", "--set", "options.delimiter=e"],
    }
    return [(method, special.get(method, plain)) for method in own_methods(configs.parents[1])]


def own_methods(repo: Path) -> list[str]:
    """The methods a checkout's pyproject.toml registers (`harness.methods`), in its order, read without
    importing them (the GPU machine has not installed the wheels yet)."""
    project = tomllib.loads((repo / "pyproject.toml").read_text())["project"]
    return list(project["entry-points"]["harness.methods"])


# What `env` imports and reports: a missing wheel fails here, with its name, before any model loads.
ENV_PROBE = r"""
import importlib.metadata as md, json, sys
import torch
info = {"python": sys.version.split()[0], "torch": torch.__version__, "cuda": torch.cuda.is_available()}
if info["cuda"]:
    info["gpu"] = torch.cuda.get_device_name(0)
    info["bf16_supported"] = torch.cuda.is_bf16_supported()
for name in ("transformers", "trl", "accelerate", "datasets", "huggingface_hub", "math-verify", "harness"):
    try:
        info[name] = md.version(name)
    except md.PackageNotFoundError:
        info[name] = None
import apted, complexipy, latex2sympy2_extended, math_verify, trl
from trl import GRPOTrainer
import harness, trainers.integration.run
from harness.sandbox import isolated
info["harness_from"] = str(harness.__file__)
info["bwrap"] = isolated()
print("ENV " + json.dumps(info))
"""


class Check:
    """Runs the checks in order, one line each; a failed check stops the ones that depend on it."""

    def __init__(self, out: Path, env: dict[str, str], cwd: Path, timeout: float, budget: float):
        self.out, self.env, self.cwd, self.timeout = out, env, cwd, timeout
        self.deadline = time.monotonic() + budget
        self.lines: list[str] = []
        self.failed = False

    def run(self, name: str, argv: list[str], verify: Callable[[str], str], timeout: float = 0) -> bool:
        """One subprocess; `verify(output)` returns the line's detail or raises AssertionError."""
        log = self.out / f"{name}.log"
        start = time.monotonic()
        limit = min(timeout or self.timeout, self.deadline - start)
        if limit < 1:
            log.write_text("")
            return self.report(False, name, 0.0, "not run: the --budget is spent")
        with log.open("w") as f:
            f.write("$ " + " ".join(argv) + "\n")
            f.flush()
            process = subprocess.Popen(
                argv, cwd=self.cwd, env=self.env, stdout=f, stderr=subprocess.STDOUT, start_new_session=True
            )
            try:
                code = process.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)  # the check's own process group: its workers too
                process.wait()
                code = None
        seconds = time.monotonic() - start
        output = log.read_text(errors="replace")
        if code is None:
            return self.report(False, name, seconds, f"timed out after {limit:.0f} s")
        if code != 0:
            return self.report(False, name, seconds, f"exit {code}: {last_line(output)}")
        try:
            detail = verify(output)
        except (AssertionError, OSError, ValueError, KeyError) as e:
            return self.report(False, name, seconds, f"{type(e).__name__}: {e}")
        return self.report(True, name, seconds, detail)

    def report(self, ok: bool, name: str, seconds: float, detail: str) -> bool:
        line = f"{'PASS' if ok else 'FAIL'} {name} {seconds:.1f} {detail}"
        print(line, flush=True)
        self.lines.append(line)
        self.failed |= not ok
        with (self.out / f"{name}.log").open("a") as f:
            f.write(f"\n# {line}\n")
        return ok


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("$ ")]
    return lines[-1][:300] if lines else "(no output)"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def install(wheels: Path, target: Path, check: Check) -> bool:
    files = sorted(str(p) for p in wheels.glob("*.whl"))
    if not files:
        return check.report(False, "install", 0.0, f"no wheels in {wheels}: scripts/gpu_wheels.sh makes them")
    argv = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile"]
    argv += ["--no-cache-dir", "--disable-pip-version-check", "--target", str(target), *files]

    def verify(_: str) -> str:
        assert (target / "harness").is_dir(), f"harness is not in {target}"
        stale = stale_files(target, checkout())
        where = f"{len(files)} wheels into {target}"
        if not stale:
            return f"{where}; the project's wheel holds the working tree's code"
        return f"{where}; WARNING: the project's wheel is not the working tree: {', '.join(stale[:5])} differ"

    return check.run("install", argv, verify)


def stale_files(target: Path, repo: Path) -> list[str]:
    """The project's Python files that differ between the installed wheel and the checkout `repo`."""
    stale = []
    for package in ("harness", "trainers", "benchmarks", "results"):
        tree = {p.relative_to(repo) for p in (repo / package).rglob("*.py")}
        wheel = {p.relative_to(target) for p in (target / package).rglob("*.py")}
        for name in sorted(tree | wheel):
            ours, theirs = repo / name, target / name
            if not ours.is_file() or not theirs.is_file() or ours.read_bytes() != theirs.read_bytes():
                stale.append(str(name))
    return stale


DEVICES = ("cuda", "cpu")


@dataclass(frozen=True)
class GpuCheckConfig:
    """The options of `harness gpu-check` and of scripts/gpu_check.py."""

    device: str = setting("cuda", "cuda, or cpu: the same checks on the CPU (CUDA hidden).")
    wheels: Path | None = setting(None, "Install the wheels in this folder first (scripts/gpu_wheels.sh).")
    out: Path | None = setting(None, "Logs and summary.txt [default: a new temporary folder].")
    work: Path | None = setting(None, "Model and run folders, new or empty [default: temporary, removed].")
    timeout: float = setting(300.0, "Seconds each check may take.", exclusive_minimum=0)
    budget: float = setting(3600.0, "Seconds all checks may take.", exclusive_minimum=0)

    def __post_init__(self) -> None:
        check_bounds(GpuCheckConfig, vars(self))
        if self.device not in DEVICES:
            raise HarnessError(f"--device must be cuda or cpu, got {self.device!r}")
        if self.work is not None and self.work.exists() and any(self.work.iterdir()):
            raise HarnessError(f"--work {self.work} is not empty: its runs would resume instead of training")


def run(config: GpuCheckConfig) -> int:
    """Every check in order, one line each; 1 if any failed, else 0."""
    repo = checkout()
    out = (config.out or Path(tempfile.mkdtemp(prefix="gpu-check-"))).resolve()
    out.mkdir(parents=True, exist_ok=True)
    scratch = tempfile.TemporaryDirectory(prefix="gpu-check-work-") if config.work is None else None
    work = Path(scratch.name) if scratch else config.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    print(f"gpu-check: device {config.device}, logs in {out}", flush=True)

    env = dict(os.environ)
    env.update(
        PYTHONUNBUFFERED="1",
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        TOKENIZERS_PARALLELISM="false",
        MPLBACKEND="Agg",
        HARNESS_CACHE=str(work / "cache"),
        HF_HOME=str(work / "hf"),
    )
    if config.device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""  # the CPU even where a GPU is present
    # Without --wheels the checks import the project from the checkout (first on the path) and the rest
    # from this Python; with them, from the wheels.
    paths = [str(repo)]
    checks = Check(out, env, work, config.timeout, config.budget)
    try:
        if config.wheels is not None:
            # a folder named site-packages: dill (datasets' fingerprints) pickles modules elsewhere by value
            target = work / "site-packages"
            if not install(config.wheels.resolve(), target, checks):
                return finish(checks, out)
            paths = [str(target)]
        env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [os.environ.get("PYTHONPATH")] if p])
        run_checks(checks, config.device, work, repo / "configs" / "train")
    finally:
        if scratch is not None:
            scratch.cleanup()
    return finish(checks, out)


def run_checks(check: Check, device: str, work: Path, configs: Path) -> None:
    python = sys.executable
    harness = [python, "-m", "harness"]
    facts: dict = {}

    def verify_env(output: str) -> str:
        line = next((ln for ln in output.splitlines() if ln.startswith("ENV ")), None)
        assert line, "the probe printed nothing"
        facts.update(json.loads(line[4:]))
        if device == "cuda":
            assert facts["cuda"], (
                "torch.cuda.is_available() is False: no usable CUDA GPU here (run with --device cpu "
                "for the CPU)"
            )
            assert facts["bf16_supported"], f"{facts['gpu']} does not support bfloat16"
        where = facts.get("gpu") or "cpu"
        sandbox = "bwrap" if facts["bwrap"] else "none"
        return (
            f"{where}; python {facts['python']} torch {facts['torch']} transformers {facts['transformers']} "
            f"trl {facts['trl']} accelerate {facts['accelerate']} datasets {facts['datasets']}; "
            f"harness from {facts['harness_from']}; azr sandbox {sandbox}"
        )

    if not check.run("env", [python, "-c", ENV_PROBE], verify_env, timeout=180):
        return

    model = work / "tiny"

    def verify_model(_: str) -> str:
        assert (model / "model.safetensors").is_file() and (model / "tokenizer.json").is_file(), model
        config = json.loads((model / "config.json").read_text())
        return f"{config['model_type']}, {config['num_hidden_layers']} layers, hidden {config['hidden_size']}"

    if not check.run("tiny-model", [*harness, "tiny-model", str(model), "--no-thinking"], verify_model):
        return

    evaluation = work / "eval"
    items, n = 4, 2

    def verify_eval(_: str) -> str:
        engine = json.loads((evaluation / "run.json").read_text())["engine"]
        assert engine["dtype"] == "bfloat16", f"weights in {engine['dtype']}"
        assert engine["device"] == device, f"generated on {engine['device']}"
        scores = read_jsonl(evaluation / "scores.jsonl")
        assert len(scores) == items * n, f"{len(scores)} scores, not {items * n}"
        result = json.loads((evaluation / "results.json").read_text())["aime24"]
        assert result["n_items"] == items and result["n_samples"] == items * n, result
        return (
            f"aime24 {items} items x {n}, bf16 on {engine['device']}: avg@{n} {result[f'avg@{n}']:.3f}, "
            f"{result['mean_completion_tokens']:.0f} tokens/sample"
        )

    check.run(
        "eval",
        [*harness, "eval", "--benchmarks", "aime24", "--limit", str(items), "--n", str(n)]
        + ["--max-tokens", "32", "--backend", "hf", "--dtype", "bfloat16", "--model", str(model)]
        + ["--out", str(evaluation)],
        verify_eval,
    )

    for method, extra in trainings(configs):
        run = work / f"train-{method}"
        argv = [*harness, "train", method, "--model", str(model), "--out", str(run), *extra]
        argv += ["--max-steps", str(STEPS), "--save-steps", str(STEPS), *BF16]
        check.run(f"train-{method}", argv, lambda output, run=run: verify_training(run, device, output))


def verify_training(run: Path, device: str, output: str) -> str:
    config = json.loads((run / "train.json").read_text())["config"]
    assert config["trl"].get("bf16") is True, f"trl.bf16 is {config['trl'].get('bf16')}"
    rows = {r["step"]: r for r in read_jsonl(run / "metrics.jsonl") if "loss" in r}
    assert sorted(rows) == list(range(1, STEPS + 1)), f"steps logged: {sorted(rows)}"
    for step, row in rows.items():
        assert math.isfinite(row["loss"]), f"step {step} loss {row['loss']}"
        assert math.isfinite(row.get("grad_norm", 0.0)), f"step {step} grad_norm {row['grad_norm']}"
    checkpoint = run / f"checkpoint-{STEPS}"
    weights = checkpoint / "model.safetensors"
    assert weights.is_file() and (checkpoint / "method_state.json").is_file(), f"{checkpoint} is incomplete"
    steps = "; ".join(
        f"step {s}: loss {r['loss']:.4g} grad_norm {r.get('grad_norm', float('nan')):.3g} "
        f"reward {r.get('reward', float('nan')):.3g}"
        for s, r in sorted(rows.items())
    )
    return f"bf16 on {device}, {steps}; checkpoint-{STEPS} {weights.stat().st_size / 2**20:.1f} MiB"


def finish(check: Check, out: Path) -> int:
    failed = sum(line.startswith("FAIL") for line in check.lines)
    verdict = f"gpu-check: {len(check.lines) - failed} passed, {failed} failed"
    print(verdict, flush=True)
    (out / "summary.txt").write_text("\n".join([*check.lines, verdict]) + "\n")
    return 1 if check.failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """scripts/gpu_check.py's entry: `GpuCheckConfig`'s fields as options, without the CLI's packages."""
    parser = argparse.ArgumentParser(prog="gpu_check.py", description=__doc__.split("\n\n")[0])
    hints = get_type_hints(GpuCheckConfig)
    for f in fields(GpuCheckConfig):
        kind = next((t for t in get_args(hints[f.name]) if t is not type(None)), hints[f.name])
        parser.add_argument(option_name(f.name), type=kind, default=f.default, help=f.metadata["help"])
    try:
        config = GpuCheckConfig(**vars(parser.parse_args(argv)))
    except HarnessError as e:
        parser.error(str(e))
    return run(config)
