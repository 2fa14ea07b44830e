"""LiveCodeBench scored as its runner scores: the prelude, the sandbox's Python and per-test limits."""

from __future__ import annotations

import json

import pytest

from harness.sandbox import facts
from harness.scoring.code import CodeScorer
from harness.scoring.lcb import PRELUDE

# LiveCodeBench's `import_string` (lcb_runner/evaluation/testing_util.py), for comparison
UPSTREAM_PRELUDE = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\n"
    "from random import *\nfrom statistics import *\nfrom itertools import *\nfrom functools import *\n"
    "from operator import *\nfrom io import *\nfrom sys import *\nfrom json import *\n"
    "from builtins import *\nfrom typing import *\nimport string\nimport re\nimport datetime\n"
    "import collections\nimport heapq\nimport bisect\nimport copy\nimport math\nimport random\n"
    "import statistics\nimport itertools\nimport functools\nimport operator\nimport io\nimport sys\n"
    "import json\nsys.setrecursionlimit(50000)\n"
)

TOP_K = """Here is my solution.

```python
class Solution:
    def topKFrequent(self, nums: List[int], k: int) -> List[int]:
        counts: Dict[int, int] = Counter(nums)
        heap: List[Tuple[int, int]] = [(-c, x) for x, c in counts.items()]
        heapify(heap)
        return sorted(heappop(heap)[1] for _ in range(k))
```"""

TREE_DEPTH = """```python
class Solution:
    def maxDepth(self, parents: List[int]) -> int:
        children: DefaultDict[int, List[int]] = defaultdict(list)
        for child, parent in enumerate(parents):
            children[parent].append(child)

        @lru_cache(maxsize=None)
        def depth(node: int) -> int:
            return 1 + max((depth(c) for c in children[node]), default=0)

        return depth(-1) - 1

    def unused(self, x: Optional[int] = None) -> Optional[int]:
        return x
```"""

STDIN_EXIT = """```python
n = int(input())
if n == 0:
    print("zero")
    exit()
print(n * 2)
exit()
```"""

STDIN_SYS_EXIT_1 = """```python
import sys
print(sum(map(int, sys.stdin.read().split())))
sys.exit(1)
```"""

STDIN_QUIT = """```python
print(int(input()) * 2)
quit()
```"""

STDIN_NUMPY = """```python
import numpy as np
a = np.array(input().split(), dtype=np.int64)
print(int(a.sum()), int(a.max()))
```"""

CALL_NUMPY = """```python
import numpy as np
class Solution:
    def dot(self, a: List[int], b: List[int]) -> int:
        return int(np.dot(np.array(a), np.array(b)))
```"""

NUMPY_HOG = """```python
import numpy as np
block = np.ones(2**33, dtype=np.uint8)  # 8 GiB, over the 4 GiB cap
print(int(block[0]))
```"""

BUSY = """```python
import time
class Solution:
    def wait(self, seconds: float) -> int:
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass
        return 1
```"""


def functional(name: str, cases: list[tuple[list, object]]) -> str:
    tests = [
        {"input": "\n".join(json.dumps(a) for a in args), "output": json.dumps(out), "testtype": "functional"}
        for args, out in cases
    ]
    return json.dumps({"kind": "lcb", "tests": tests, "private": "", "func_name": name})


def stdin(cases: list[tuple[str, str]]) -> str:
    tests = [{"input": i, "output": o, "testtype": "stdin"} for i, o in cases]
    return json.dumps({"kind": "lcb", "tests": tests, "private": "", "func_name": None})


TOP_K_GOLD = functional("topKFrequent", [([[1, 1, 1, 2, 2, 3], 2], [1, 2]), ([[4], 1], [4])])
DEPTH_GOLD = functional("maxDepth", [([[-1, 0, 0, 1]], 3), ([[-1]], 1)])
DOUBLE_GOLD = stdin([("0\n", "zero\n"), ("21\n", "42\n")])
SUM_GOLD = stdin([("1 2 3\n", "6\n")])
NUMPY_GOLD = stdin([("3 9 4\n", "16 9\n")])
DOT_GOLD = functional("dot", [([[1, 2, 3], [4, 5, 6]], 32)])

# (id, answer, gold, verdict, failed test or None)
CASES = [
    ("typing_and_heapq_without_imports", TOP_K, TOP_K_GOLD, "pass", None),
    ("defaultdict_lru_cache_optional", TREE_DEPTH, DEPTH_GOLD, "pass", None),
    ("stdin_exit", STDIN_EXIT, DOUBLE_GOLD, "pass", None),
    ("stdin_sys_exit_1_keeps_output", STDIN_SYS_EXIT_1, SUM_GOLD, "pass", None),
    ("stdin_quit_is_an_error", STDIN_QUIT, DOUBLE_GOLD, "error", 0),
    ("stdin_numpy", STDIN_NUMPY, NUMPY_GOLD, "pass", None),
    ("call_numpy", CALL_NUMPY, DOT_GOLD, "pass", None),
    ("three_tests_of_2.5s", BUSY, functional("wait", [([2.5], 1)] * 3), "pass", None),
    ("a_test_over_its_limit", BUSY, functional("wait", [([0.1], 1), ([7.0], 1)]), "timeout", 1),
    ("numpy_over_the_memory_cap", NUMPY_HOG, stdin([("\n", "1\n")]), "memory", 0),
    ("empty_code_block", "```python\n```", TOP_K_GOLD, "fail", None),
    ("no_code_block", "I would use a heap.", TOP_K_GOLD, "fail", None),
]


@pytest.fixture(scope="module")
def scored():
    scores = dict(CodeScorer(workers=2).score([c[1] for c in CASES], [c[2] for c in CASES]))
    return {CASES[i][0]: s for i, s in scores.items()}


@pytest.mark.parametrize(("case", "answer", "gold", "verdict", "failing"), CASES, ids=[c[0] for c in CASES])
def test_verdict(scored, case, answer, gold, verdict, failing):
    score = scored[case]
    assert score.details["verdict"] == verdict, score.details
    assert score.value == (1.0 if verdict == "pass" else 0.0)
    assert score.details.get("failed_test") == failing, score.details


def test_the_prelude_is_livecodebenchs():
    assert PRELUDE == UPSTREAM_PRELUDE


def test_no_code_is_said_so(scored):
    assert scored["empty_code_block"].details["reason"] == "the last code block is empty"
    assert scored["no_code_block"].details["reason"] == "no fenced code block in the answer"


def test_quit_fails_as_upstream(scored):
    # LiveCodeBench sets builtins.quit = None, so quit() raises there too
    assert "quit" in scored["stdin_quit_is_an_error"].details["reason"]


def test_the_environment_is_recorded():
    import numpy

    info = facts()
    assert info["packages"] == {"numpy": numpy.__version__}
    assert info["python"].count(".") == 2
