"""AZR executor benchmark: validation and answer checking through the sandbox, with and without the cache.

A fixed set of 30 small programs of the kind AZR proposes (10 deduction, 10 abduction, 10 induction with
`--inputs` inputs each) is validated (j = 2 separate sandboxes per input), then `--answers` solver
answers per task are checked, drawn with repeats from three distinct answers (right, right but written
differently, wrong), as Monte-Carlo rollouts repeat themselves. Each phase runs once on an executor
with the answer cache and once on one without; prints calls per second for both, their ratio, and
whether the verdicts agree (goal: always).

    python tests/perf/bench_azr_executor.py [--answers 8] [--inputs 6] [--workers W] [--wall 10]
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from harness.sandbox import Limits
from trainers.methods.azr.executor import Check, Executor

DEDUCTION = [
    ("def f(s):\n    return ''.join(sorted(set(s), key=s.index))", "'mississippi'"),
    ("def f(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a", "20"),
    ("def f(xs):\n    return {x: xs.count(x) for x in set(xs)}", "[3, 1, 3, 2, 3, 1]"),
    ("def f(m):\n    return [list(row) for row in zip(*m)]", "[[1, 2, 3], [4, 5, 6]]"),
    (
        "def f(s):\n    stack = []\n    for c in s:\n        if c == ')' and stack:\n"
        "            stack.pop()\n        elif c == '(':\n            stack.append(c)\n    return len(stack)",
        "'(()(()'",
    ),
    ("def f(words):\n    return sorted(words, key=lambda w: (len(w), w))[::-1]", "['bb', 'a', 'ccc', 'ab']"),
    (
        "def f(n):\n    primes = []\n    for k in range(2, n):\n        if all(k % p for p in primes):\n"
        "            primes.append(k)\n    return tuple(primes)",
        "30",
    ),
    ("def f(d, k):\n    return {v: key for key, v in d.items() if v > k}", "{'a': 1, 'b': 5, 'c': 7}, 2"),
    ("def f(s, n):\n    return s[n:] + s[:n]", "'rotation', 3"),
    (
        "def f(xs):\n    best = cur = xs[0]\n    for x in xs[1:]:\n        cur = max(x, cur + x)\n"
        "        best = max(best, cur)\n    return best",
        "[-2, 1, -3, 4, -1, 2, 1, -5, 4]",
    ),
]
ABDUCTION = [
    ("def f(x):\n    return x % 7 + x // 7", "50"),
    ("def f(s):\n    return s[::-1].upper()", "'abc'"),
    ("def f(xs):\n    return sum(x * x for x in xs)", "[1, 2, 3]"),
    ("def f(a, b):\n    return sorted(set(a) & set(b))", "[1, 2, 3, 4], [3, 4, 5]"),
    ("def f(n):\n    return bin(n).count('1')", "255"),
    ("def f(s):\n    return {c: s.count(c) for c in 'aeiou' if c in s}", "'education'"),
    ("def f(xs):\n    return max(xs) - min(xs)", "[4, 9, 1, 7]"),
    ("def f(t):\n    return t[1:] + t[:1]", "(1, 2, 3)"),
    ("def f(s, k):\n    return ''.join(chr((ord(c) - 97 + k) % 26 + 97) for c in s)", "'hello', 3"),
    (
        "def f(n):\n    out = []\n    while n:\n        out.append(n % 3)\n        n //= 3\n    return out",
        "100",
    ),
]
INDUCTION = [
    ("def f(x):\n    return x * x - 1", [str(n) for n in range(1, 11)]),
    (
        "def f(s):\n    return s.count('a')",
        [repr(w) for w in ("a", "banana", "xyz", "aa", "abracadabra", "", "pizza", "java", "llama", "q")],
    ),
    ("def f(xs):\n    return sorted(xs)[len(xs) // 2]", [str([n, n * 3 % 7, 5]) for n in range(10)]),
    (
        "def f(a, b):\n    return a if a > b else b - a",
        [f"{a}, {b}" for a, b in zip(range(10), range(9, -1, -1), strict=True)],
    ),
    ("def f(n):\n    return sum(int(d) for d in str(n))", [str(n**3) for n in range(2, 12)]),
    (
        "def f(s):\n    return s == s[::-1]",
        [repr(w) for w in ("abba", "abc", "a", "racecar", "ab", "noon", "xyzzy", "level", "kayak", "python")],
    ),
    ("def f(xs):\n    return [x for x in xs if x % 2]", [str(list(range(n, n + 4))) for n in range(10)]),
    ("def f(n):\n    return n // 2 if n % 2 == 0 else 3 * n + 1", [str(n) for n in range(5, 15)]),
    (
        "def f(s):\n    return len(set(s))",
        [
            repr(w)
            for w in ("hello", "aaaa", "abcde", "xyzzy", "moon", "book", "tree", "sky", "apple", "kiwi")
        ],
    ),
    ("def f(a, b):\n    return (a * b) % 10", [f"{a}, {a + 3}" for a in range(10)]),
]


def proposals(inputs: int) -> list[tuple[str, str]]:
    return DEDUCTION + ABDUCTION + [(code, text) for code, texts in INDUCTION for text in texts[:inputs]]


def answers(runs: dict, inputs: int, per_task: int) -> list[Check]:
    """`per_task` answers per task, drawn (seeded) from a right one, a right one written differently
    and a wrong one, with weights 1/2, 1/4, 1/4."""
    draw = random.Random(0)
    checks = []
    for code, text in DEDUCTION:
        gold = runs[code, text].value
        distinct = [runs[code, text].output, f"  {runs[code, text].output} ", "0"]
        checks += [Check("deduction", a, gold=gold) for a in draw.choices(distinct, (2, 1, 1), k=per_task)]
    for code, text in ABDUCTION:
        gold = runs[code, text].value
        distinct = [text, f"{text}  # the same", "0"]
        checks += [
            Check("abduction", a, code=code, gold=gold) for a in draw.choices(distinct, (2, 1, 1), k=per_task)
        ]
    for code, texts in INDUCTION:
        cases = tuple(runs[code, t] for t in texts[:inputs])
        renamed = code.replace("def f(", "def f(*args):\n    return g(*args)\n\ndef g(")
        distinct = [code, renamed, "def f(*args):\n    return 0"]
        checks += [Check("induction", a, cases=cases) for a in draw.choices(distinct, (2, 1, 1), k=per_task)]
    return checks


def timed(fn, *args):
    started = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - started


def parse_options(
    parser: argparse.ArgumentParser, answers: int, inputs: int
) -> tuple[argparse.Namespace, Limits]:
    """The options both executor benchmarks take, parsed, and the sandbox limits they give."""
    parser.add_argument("--answers", type=int, default=answers, help="solver answers per task (n)")
    parser.add_argument(
        "--inputs", type=int, default=inputs, help="inputs per induction program (N, at most 10)"
    )
    parser.add_argument("--workers", type=int, default=None, help="sandboxes at a time (default: CPUs)")
    parser.add_argument("--wall", type=float, default=10.0, help="seconds per run")
    options = parser.parse_args()
    return options, Limits(wall=options.wall, cpu=options.wall, memory_mb=1024, processes=32, output_mb=1)


def main() -> int:
    options, limits = parse_options(argparse.ArgumentParser(description=__doc__.splitlines()[0]), 8, 6)
    todo = proposals(options.inputs)
    results = {}
    for cache in (True, False):
        executor = Executor(limits, cache=cache, workers=options.workers)
        runs, validate_seconds = timed(executor.validate_many, todo)
        invalid = [(p, r.reason) for p, r in zip(todo, runs, strict=True) if not r.valid]
        if invalid:
            print("invalid proposals in the benchmark set:", invalid)
            return 1
        checks = answers(dict(zip(todo, runs, strict=True)), options.inputs, options.answers)
        verdicts, check_seconds = timed(executor.check_many, checks)
        results[cache] = (
            len(todo) / validate_seconds,
            len(checks) / check_seconds,
            verdicts,
            executor.stats(),
        )
        print(
            f"cache {'on ' if cache else 'off'}: validation {len(todo)} proposals in {validate_seconds:.1f}s "
            f"= {results[cache][0]:.1f}/s; checks {len(checks)} answers in {check_seconds:.1f}s "
            f"= {results[cache][1]:.1f}/s; {executor.stats()}"
        )
    on, off = results[True], results[False]
    agree = [a.status for a in on[2]] == [b.status for b in off[2]]
    passed = sum(v.passed for v in on[2])
    print(f"ratio on/off: validation {on[0] / off[0]:.2f}x, checks {on[1] / off[1]:.2f}x")
    print(f"verdicts agree: {agree} ({passed}/{len(on[2])} answers pass)")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
