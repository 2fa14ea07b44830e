"""Sandbox benchmark: our code scorer against evalplus's own evaluator on the same MBPP+ programs.

Each MBPP+ task gets its canonical solution and one wrong program (cycling through: a solution that
goes wrong after a few calls, one that raises, one that returns None, and, on every tenth task, one
that never returns). Both evaluators check every program on base and plus inputs with evalplus's
time limits (max(1 s, 4 x ground-truth time)) and the same number of parallel workers:

- evalplus: ground truth by `trusted_exec` in this process, then `check_correctness` in a
  ProcessPoolExecutor, as `evalplus.evaluate` does by default (fast_check: stop at the first failed
  input; fork, rlimits, no isolation); warm, its expected outputs come from its pickle cache;
- ours: `CodeScorer`, ground truth and candidates each in a bubblewrap sandbox with a cgroup; warm, the
  expected outputs come from the harness cache (a fresh HARNESS_CACHE for this run, filled cold).

Prints the start-up of one program (a bubblewrap sandbox against a forked process), then the wall times
(ground truth, checks, total) cold and warm, each with the ratio ours / evalplus, and how often the
pass/fail verdicts agree (goal: always).

    python tests/perf/bench_sandbox.py [--tasks N] [--workers W] [--data-dir ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import pickle
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

WRONG = {
    "drifts": (
        "{code}\n\n_right = {entry}\n_calls = [0]\n\ndef {entry}(*args):\n"
        "    _calls[0] += 1\n    out = _right(*args)\n    return out if _calls[0] < 3 else [out]\n"
    ),
    "raises": "def {entry}(*args):\n    raise ValueError('not implemented')\n",
    "returns_none": "def {entry}(*args):\n    return None\n",
    "hangs": "def {entry}(*args):\n    while True:\n        pass\n",
}


def programs(rows: list[dict]) -> list[tuple[str, str, str]]:
    """(task_id, label, code): each task's canonical solution and one wrong program."""
    out = []
    for i, row in enumerate(rows):
        code = row["prompt"] + row["canonical_solution"]
        out.append((row["task_id"], "canonical", code))
        label = "hangs" if i % 10 == 9 else ("drifts", "raises", "returns_none")[i % 3]
        out.append((row["task_id"], label, WRONG[label].format(code=code, entry=row["entry_point"])))
    return out


def load_rows(data_dir: Path, tasks: int | None) -> list[dict]:
    path = data_dir / "mbpp_plus" / "MbppPlus.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows[:tasks]


def run_evalplus(rows: list[dict], progs, workers: int) -> tuple[dict, float, float]:
    from evalplus.data.mbpp import mbpp_deserialize_inputs
    from evalplus.eval._special_oracle import MBPP_OUTPUT_NOT_NONE_TASKS
    from evalplus.evaluate import check_correctness
    from evalplus.gen.util import trusted_exec

    problems = {}
    for row in rows:
        problem = dict(row)
        for key in ("base_input", "plus_input"):
            problem[key] = mbpp_deserialize_inputs(row["task_id"], row[key])
        problems[row["task_id"]] = problem

    started = time.perf_counter()
    expected = {}
    for task_id, p in problems.items():  # cold: what evalplus computes before its cache has the task
        code, not_none = p["prompt"] + p["canonical_solution"], p["entry_point"] in MBPP_OUTPUT_NOT_NONE_TASKS
        truth = {}
        for which in ("base", "plus"):
            truth[which], truth[f"{which}_time"] = trusted_exec(
                code, p[f"{which}_input"], p["entry_point"], record_time=True, output_not_none=not_none
            )
        expected[task_id] = truth
    truth_seconds = time.perf_counter() - started
    with tempfile.TemporaryFile() as cached:  # warm: evalplus's cache is a pickle of these
        pickle.dump(expected, cached)
        started = time.perf_counter()
        cached.seek(0)
        expected = pickle.load(cached)
        warm_seconds = time.perf_counter() - started

    started = time.perf_counter()
    verdicts = {}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {
            pool.submit(check_correctness, "mbpp", n, problems[t], code, expected[t], fast_check=True): (
                t,
                label,
            )
            for n, (t, label, code) in enumerate(progs)
        }
        for future, key in futures.items():
            result = future.result()
            (base, _), (plus, details) = result["base"], result["plus"]
            verdicts[key] = (base == plus == "pass", f"base {base}, plus {plus} after {len(details)} inputs")
    return verdicts, (truth_seconds, warm_seconds), time.perf_counter() - started


def run_ours(data_dir: Path, tasks: int | None, progs, workers: int) -> tuple[dict, tuple, float]:
    from benchmarks import get_benchmark
    from harness.scoring import evalplus
    from harness.scoring.code import CodeScorer

    items = get_benchmark("mbpp_plus").load(data_dir).items[:tasks]
    golds = {item.id: item.answer for item in items}

    from harness.core.cache import Cache
    from harness.scoring.code import TRUTHS

    cache = Cache(TRUTHS)  # HARNESS_CACHE is a fresh folder (main)
    seconds = []
    for _ in ("cold", "warm"):  # what the scorer does lazily, as a phase of its own
        evalplus._truth.clear()  # this process's memory: warm reads the harness cache
        started = time.perf_counter()
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(lambda gold: evalplus.ground_truth(json.loads(gold), cache), golds.values()))
        seconds.append(time.perf_counter() - started)

    started = time.perf_counter()
    answers = [f"```python\n{code}\n```" for _, _, code in progs]
    scores = dict(CodeScorer(workers=workers).score(answers, [golds[t] for t, _, _ in progs]))
    checks_seconds = time.perf_counter() - started
    verdicts = {
        (t, label): (
            scores[i].value == 1.0,
            f"{scores[i].details['verdict']} {scores[i].details.get('reason', '')}",
        )
        for i, (t, label, _) in enumerate(progs)
    }
    return verdicts, tuple(seconds), checks_seconds


def noop() -> None:
    pass


def start_up(count: int = 20) -> tuple[float, float]:
    """Seconds to start and end one program: a bubblewrap sandbox (ours), a forked process (evalplus)."""
    from harness.sandbox import Limits, Served

    started = time.perf_counter()
    for _ in range(count):
        with Served("def f():\n    return 1", Limits()) as served:
            served.call("f", [])
    ours = (time.perf_counter() - started) / count
    fork = multiprocessing.get_context("fork")
    started = time.perf_counter()
    for _ in range(count):
        process = fork.Process(target=noop)
        process.start()
        process.join()
    return ours, (time.perf_counter() - started) / count


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=None, help="first N MBPP+ tasks [default: all]")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    args = parser.parse_args()

    from harness import sandbox

    rows = load_rows(args.data_dir, args.tasks)
    progs = programs(rows)
    print(
        f"{len(rows)} MBPP+ tasks, {len(progs)} programs, {args.workers} workers, sandbox {sandbox.facts()}"
    )

    ours_start, their_start = start_up()
    ms = f"ours {1000 * ours_start:.0f} ms, evalplus (fork) {1000 * their_start:.0f} ms"
    print(f"start-up of one program: {ms} ({ours_start / their_start:.0f}x)")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["HARNESS_CACHE"] = cache
        ours, ours_truth, ours_checks = run_ours(args.data_dir, args.tasks, progs, args.workers)
    theirs, their_truth, their_checks = run_evalplus(rows, progs, args.workers)

    print(f"{'':14} {'truth s':>9} {'checks s':>9} {'total s':>9}")
    for k, phase in enumerate(("cold", "warm")):
        for name, truth, checks in (
            ("evalplus", their_truth, their_checks),
            ("ours", ours_truth, ours_checks),
        ):
            print(f"{name + ' ' + phase:14} {truth[k]:9.2f} {checks:9.1f} {truth[k] + checks:9.1f}")
    print(f"checks ratio ours/evalplus:      {ours_checks / their_checks:.2f}")
    for k, phase in enumerate(("cold", "warm")):
        total = (ours_truth[k] + ours_checks) / (their_truth[k] + their_checks)
        print(f"{phase} total ratio ours/evalplus: {total:.2f}")

    disagree = sorted(k for k in theirs if theirs[k][0] != ours[k][0])
    agree = len(theirs) - len(disagree)
    print(f"verdict agreement: {agree}/{len(theirs)} ({100 * agree / len(theirs):.1f}%)")
    for label in ("canonical", *WRONG):
        keys = [k for k in theirs if k[1] == label]
        if keys:
            print(
                f"  {label:13} pass ours {sum(ours[k][0] for k in keys):4d}  evalplus "
                f"{sum(theirs[k][0] for k in keys):4d}  of {len(keys)}"
            )
    for key in disagree:
        print(f"  disagree: {' '.join(key)}: ours {ours[key][1]!r}; evalplus {theirs[key][1]!r}")


if __name__ == "__main__":
    main()
