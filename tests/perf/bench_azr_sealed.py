"""AZR executor before and after the sealed verdict channel (issue 37): the same programs, one session.

The old executor (serve mode: a driver loop answering on a pipe in the proposal's own interpreter) is
read from git at `--old` (default 21d7fd5^, the parent of the commit that sealed it) and loaded as a
module beside the current one; the sandbox package is today's (its serve mode is unchanged since).
Both validate the same proposals (bench_azr_executor.py's set, j = 2 runs each) and check the same
answers, without the cache, alternating old and new `--repeats` times; prints seconds per validation
and per check for each, their ratio (new / old: above 1 is slower), the sandbox processes each
started, and whether the two agree on every verdict.

Then the sandbox itself (issue 54): this checkout's executor and sandbox against the whole tree at
`--against` (default 9ffbf0f, the last tree that started one bubblewrap sandbox per program, before
the warm sandboxes), each validating the same proposals in a process of its own (the tree put first
on sys.path), alternating `--repeats` times: proposals validated per second for each, their ratio, and
whether the outputs agree.

    python tests/perf/bench_azr_sealed.py [--inputs 2] [--answers 2] [--repeats 2] [--workers W]
        [--against REV]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_azr_executor import answers, parse_options, proposals

from harness.sandbox import Limits, process
from trainers.methods.azr import executor as new

ROOT = Path(__file__).resolve().parents[2]


def old_executor(revision: str):
    """trainers/methods/azr/executor.py as it was at `revision`, as the module `old_executor`."""
    source = subprocess.run(
        ["git", "show", f"{revision}:trainers/methods/azr/executor.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("old_executor", loader=None))
    sys.modules["old_executor"] = module  # dataclasses look their module up
    exec(compile(source, f"{revision}:executor.py", "exec"), module.__dict__)
    return module


class Counted:
    """Counts the sandbox processes started (process.Proc), for both executors alike."""

    def __init__(self):
        self.count = 0
        original = process.Proc.__init__

        def counting(proc, *args, **kwargs):
            self.count += 1
            original(proc, *args, **kwargs)

        process.Proc.__init__ = counting


def one_pass(module, limits: Limits, todo: list, workers: int | None, options, started: Counted) -> dict:
    executor = module.Executor(limits, cache=False, workers=workers)
    before = started.count
    t0 = time.perf_counter()
    runs = executor.validate_many(todo)
    t1 = time.perf_counter()
    validation_procs = started.count - before
    invalid = [(p, r.reason) for p, r in zip(todo, runs, strict=True) if not r.valid]
    if invalid:
        raise SystemExit(f"{module.__name__}: invalid proposals in the benchmark set: {invalid}")
    checks = [
        module.Check(c.kind, c.answer, c.code, c.gold, c.cases)
        for c in answers(dict(zip(todo, runs, strict=True)), options.inputs, options.answers)
    ]
    t2 = time.perf_counter()
    verdicts = executor.check_many(checks)
    t3 = time.perf_counter()
    return {
        "validate": (t1 - t0) / len(todo),
        "check": (t3 - t2) / len(checks),
        "validation_procs": validation_procs / len(todo),
        "check_procs": (started.count - before - validation_procs) / len(checks),
        "outputs": [r.output for r in runs],
        "verdicts": [v.status for v in verdicts],
        "n": (len(todo), len(checks)),
    }


RATE = """
import json, sys, time
sys.path[:0] = [{tree!r}, {tree!r} + "/tests/perf"]
from bench_azr_executor import proposals
from harness.sandbox import Limits
from trainers.methods.azr.executor import Executor
todo = proposals({inputs})
executor = Executor(Limits(**{limits!r}), cache=False, workers={workers!r})
started = time.perf_counter()
runs = executor.validate_many(todo)
seconds = time.perf_counter() - started
print(json.dumps({{"rate": len(todo) / seconds, "outputs": [r.output for r in runs]}}))
"""


def validation_rate(tree: Path, options, limits: Limits) -> dict:
    """Proposals validated per second by the executor and sandbox of `tree`, in a process of its own."""
    script = RATE.format(tree=str(tree), inputs=options.inputs, limits=vars(limits), workers=options.workers)
    ended = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(ended.stdout.splitlines()[-1])


def against_tree(revision: str, options, limits: Limits) -> bool:
    """This checkout's validations per second against the tree at `revision`; whether outputs agree."""
    with tempfile.TemporaryDirectory() as folder:
        archive = subprocess.run(["git", "archive", revision], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
        rates: dict[str, list[float]] = {revision: [], "this tree": []}
        outputs = []
        for _ in range(options.repeats):
            for name, tree in ((revision, Path(folder)), ("this tree", ROOT)):
                result = validation_rate(tree, options, limits)
                rates[name].append(result["rate"])
                outputs.append(result["outputs"])
                print(f"{name}: {result['rate']:.1f} proposals validated per second", flush=True)
    before, after = (statistics.median(rates[name]) for name in (revision, "this tree"))
    agree = all(o == outputs[0] for o in outputs)
    print(f"median validations/s: {revision} {before:.1f}, this tree {after:.1f}, {after / before:.2f}x")
    print(f"{revision} and this tree agree on every output: {agree}")
    return agree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="21d7fd5^", help="git revision of the old executor")
    parser.add_argument("--repeats", type=int, default=2, help="old/new passes, alternating")
    parser.add_argument("--against", default="9ffbf0f", help="git revision of the sandbox to compare")
    options, limits = parse_options(parser, 2, 2)
    old = old_executor(options.old)
    started = Counted()
    todo = proposals(options.inputs)
    passes: dict[str, list[dict]] = {"old": [], "new": []}
    for _ in range(options.repeats):
        for name, module in (("old", old), ("new", new)):
            result = one_pass(module, limits, todo, options.workers, options, started)
            passes[name].append(result)
            print(
                f"{name}: {result['n'][0]} validations {result['validate'] * 1000:.0f} ms each "
                f"({result['validation_procs']:.1f} processes), {result['n'][1]} checks "
                f"{result['check'] * 1000:.0f} ms each ({result['check_procs']:.2f} processes)",
                flush=True,
            )
    median = {
        name: {key: statistics.median(p[key] for p in runs) for key in ("validate", "check")}
        for name, runs in passes.items()
    }
    agree = all(
        o["outputs"] == n["outputs"] and o["verdicts"] == n["verdicts"]
        for o, n in zip(passes["old"], passes["new"], strict=True)
    )
    for key, what in (("validate", "validation"), ("check", "check")):
        before, after = median["old"][key], median["new"][key]
        print(
            f"median per {what}: old {before * 1000:.0f} ms, new {after * 1000:.0f} ms, "
            f"new/old {after / before:.2f}x"
        )
    print(f"old and new agree on every output and verdict: {agree}")
    same_outputs = against_tree(options.against, options, limits)
    return 0 if agree and same_outputs else 1


if __name__ == "__main__":
    sys.exit(main())
