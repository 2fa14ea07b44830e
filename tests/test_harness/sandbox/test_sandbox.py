"""Functional tests of harness.sandbox: programs, served calls, out-of-process tests, the codec, cleanup.

Hostile programs are in test_sandbox_adversarial.py; these check that legitimate code gets the right
answers and that every call cleans up after itself (processes, cgroups, work directories).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import Counter, OrderedDict, namedtuple
from pathlib import Path

import pytest
from sandbox_helpers import own_cgroups, survivors

from harness.sandbox import (
    CallFailed,
    Exit,
    Limits,
    Served,
    Verdict,
    cgroup,
    facts,
    isolated,
    isolation,
    run_program,
    run_tests,
)
from harness.sandbox.codec import MAX_DEPTH, CodecError, decode, encode

LIMITS = Limits(wall=5.0, cpu=5.0, memory_mb=512, processes=16)


# ---------------------------------------------------------------------------------------------
# run_program


def test_program_reads_stdin_and_writes_stdout():
    code = "import sys\nnums = list(map(int, sys.stdin.read().split()))\nprint(sum(nums), max(nums))\n"
    exit = run_program(code, "3 4\n5\n", LIMITS)
    assert isinstance(exit, Exit)
    assert (exit.status, exit.reason, exit.returncode) == ("ok", "", 0)
    assert exit.stdout == b"12 5\n"
    assert exit.seconds < LIMITS.wall


def test_program_large_stdin_and_stdout_round_trip():
    data = "".join(f"{i}\n" for i in range(200_000))  # ~1.3 MB each way: the pipes are pumped both ways
    exit = run_program("import sys\nsys.stdout.write(sys.stdin.read())\n", data, LIMITS)
    assert exit.status == "ok"
    assert exit.stdout == data.encode()


def test_program_binary_stdout_kept_as_bytes():
    exit = run_program("import sys\nsys.stdout.buffer.write(bytes(range(256)))\n", "", LIMITS)
    assert exit.status == "ok"
    assert exit.stdout == bytes(range(256))


def test_program_runs_as_main_in_work_directory():
    code = "import os\nif __name__ == '__main__':\n    print(os.getcwd())\n"
    exit = run_program(code, "", LIMITS)
    assert exit.status == "ok"
    if isolated():
        assert exit.stdout == b"/work\n"


def test_program_exception_is_an_error_with_its_last_stderr_line():
    exit = run_program("print('partial')\nraise ValueError('bad input 42')\n", "", LIMITS)
    assert exit.status == "error"
    assert exit.returncode != 0
    assert exit.reason == "ValueError: bad input 42"
    assert exit.stdout == b"partial\n"
    assert "Traceback" in exit.stderr


def test_program_nonzero_exit_code_is_an_error():
    exit = run_program("import sys\nsys.exit(3)\n", "", LIMITS)
    assert exit.status == "error"
    assert exit.returncode == 3


def test_program_syntax_error_is_an_error():
    exit = run_program("def broken(:\n", "", LIMITS)
    assert exit.status == "error"
    assert "SyntaxError" in exit.reason


def test_program_timeout():
    limits = Limits(wall=1.0, cpu=5.0)
    started = time.monotonic()
    exit = run_program("import time\ntime.sleep(60)\n", "", limits)
    assert exit.status == "timeout"
    assert "wall-clock" in exit.reason
    assert time.monotonic() - started < limits.wall + 2.0


def test_program_memory_limit():
    exit = run_program("x = b'a' * (600 << 20)\n", "", Limits(wall=5.0, memory_mb=256))
    assert exit.status == "memory"


def test_text_on_stderr_chooses_no_status():
    """The status comes from the exit status and the harness's limits: a program that writes
    "MemoryError" and ends normally is ok, and one that ends with an error is an error."""
    said = "import sys\nsys.stderr.write('MemoryError\\nKilled\\n')\nprint(1)\n"
    exit = run_program(said, "", LIMITS)
    assert (exit.status, exit.stdout) == ("ok", b"1\n")
    exit = run_program(said + "raise ValueError('MemoryError')\n", "", LIMITS)
    assert (exit.status, exit.reason) == ("error", "ValueError: MemoryError")


def test_concurrent_programs_from_threads():
    results: dict[int, Exit] = {}

    def work(i: int) -> None:
        results[i] = run_program(f"print({i} * int(input()))", "7\n", LIMITS)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert {i: (e.status, e.stdout) for i, e in results.items()} == {
        i: ("ok", f"{7 * i}\n".encode()) for i in range(6)
    }


# ---------------------------------------------------------------------------------------------
# Served

SERVED_CODE = """
import math

def ident(x):
    return x

def pair(a, b):
    return (a, b)

def shapes():
    return {
        "tuple": (1, "two", 3.0),
        "set": {1, 2, 3},
        "frozenset": frozenset({"a", "b"}),
        "bytes": b"\\x00\\xffabc",
        "inf": math.inf,
        "ninf": -math.inf,
        "complex": 1.5 - 2j,
        "none": None,
        "bools": [True, False],
        "big": 10 ** 40,
        (1, 2): [{"nested": ({1}, frozenset({(2, 3)}))}],
    }

def nan():
    return float("nan")

def fail(message):
    raise ValueError(message)

def custom():
    class Oops(Exception):
        pass
    raise Oops("custom")

def unpassable():
    return object()

class Counter:
    def __init__(self):
        self.n = 0

    def add(self, k):
        self.n += k
        return self.n

CONSTANT = 41
"""


@pytest.fixture(scope="module")
def served():
    with Served(SERVED_CODE, LIMITS) as s:
        yield s


def test_served_names(served):
    assert set(served.names) == {"ident", "pair", "shapes", "nan", "fail", "custom", "unpassable", "Counter"}


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        -(10**30),
        2.5,
        math.inf,
        -math.inf,
        "héllo\n\u2028",
        b"\x00\x01",
        (1, (2, (3,))),
        [1, [2, [3, []]]],
        {1, "a", (2, 3)},
        frozenset({1, 2}),
        {"k": [1, {"n": (None,)}], 3: b"v", (1, 2): frozenset()},
        3 + 4j,
        [],
        (),
        {},
    ],
)
def test_served_values_round_trip(served, value):
    result = served.call("ident", [value])
    assert result == value
    assert type(result) is type(value)


def test_served_structures(served):
    result = served.call("shapes", [])
    assert result == {
        "tuple": (1, "two", 3.0),
        "set": {1, 2, 3},
        "frozenset": frozenset({"a", "b"}),
        "bytes": b"\x00\xffabc",
        "inf": math.inf,
        "ninf": -math.inf,
        "complex": 1.5 - 2j,
        "none": None,
        "bools": [True, False],
        "big": 10**40,
        (1, 2): [{"nested": ({1}, frozenset({(2, 3)}))}],
    }
    assert type(result["tuple"]) is tuple and type(result["set"]) is set
    assert served.call("pair", [1, [2]]) == (1, [2])
    assert math.isnan(served.call("nan", []))


def test_served_eval_and_methods(served):
    assert served.eval("CONSTANT + 1") == 42
    assert served.call("Counter.add", [2]) == 2
    assert served.call("Counter.add", [3]) == 5  # one instance per class, kept between calls


def test_served_reload_gives_fresh_state():
    code = """
seen = []
def remember(x, acc=[]):
    acc.append(x)
    seen.append(x)
    return len(acc), len(seen)
"""
    with Served(code, LIMITS) as s:
        assert s.call("remember", [1]) == (1, 1)
        assert s.call("remember", [2]) == (2, 2)
        s.reload()
        assert s.names == ["remember"]
        assert s.call("remember", [3]) == (1, 1)  # fresh globals and default arguments


def test_served_reload_that_raises_is_call_failed():
    code = """
import builtins
if hasattr(builtins, "loaded_once"):  # process state outlives a reload
    raise RuntimeError("second load")
builtins.loaded_once = True
def f():
    return 1
"""
    with Served(code, LIMITS) as s:
        assert s.call("f", []) == 1
        with pytest.raises(CallFailed) as info:
            s.reload()
        assert info.value.verdict.status == "fail"
        assert "second load" in info.value.verdict.reason


def test_served_exception_is_call_failed_fail(served):
    with pytest.raises(CallFailed) as info:
        served.call("fail", ["nope 7"])
    assert info.value.verdict.status == "fail"
    assert info.value.verdict.details == {"exception": "ValueError"}
    assert "nope 7" in info.value.verdict.reason
    with pytest.raises(CallFailed) as info:
        served.call("custom", [])
    assert info.value.verdict.status == "fail"
    assert info.value.verdict.details == {"exception": "Oops"}
    assert served.call("ident", [5]) == 5  # still serving after exceptions


def test_served_unpassable_value_fails(served):
    with pytest.raises(CallFailed) as info:
        served.call("unpassable", [])
    assert info.value.verdict.status == "fail"
    assert "cannot pass a value of type object" in info.value.verdict.reason


def test_served_missing_name_fails(served):
    with pytest.raises(CallFailed) as info:
        served.call("no_such_function", [])
    assert info.value.verdict.status == "fail"


def test_served_call_timeout_then_closed():
    with Served("import time\ndef slow():\n    time.sleep(60)\n", LIMITS) as s:
        started = time.monotonic()
        with pytest.raises(CallFailed) as info:
            s.call("slow", [], timeout=1.0)
        assert info.value.verdict.status == "timeout"
        assert time.monotonic() - started < 3.0


def test_served_import_error_is_call_failed():
    with pytest.raises(CallFailed) as info:
        Served("raise RuntimeError('at import')\n", LIMITS)
    assert info.value.verdict.status != "pass"


def test_served_import_error_is_reported_as_an_error():
    with pytest.raises(CallFailed) as info:
        Served("raise RuntimeError('at import')\n", LIMITS)
    assert info.value.verdict.status == "error"
    assert "RuntimeError: at import" in info.value.verdict.reason


def test_served_process_exit_in_a_call_is_reported_as_an_error():
    with Served("import os\ndef f():\n    os._exit(3)\n", LIMITS) as s:
        with pytest.raises(CallFailed) as info:
            s.call("f", [])
    assert info.value.verdict.status == "error"


def test_served_many_calls():
    with Served("def sq(x):\n    return x * x\n", LIMITS) as s:
        assert [s.call("sq", [i]) for i in range(200)] == [i * i for i in range(200)]


def test_served_call_after_the_process_ended_is_call_failed():
    s = Served("import time\ndef slow():\n    time.sleep(60)\ndef one():\n    return 1\n", LIMITS)
    try:
        with pytest.raises(CallFailed):
            s.call("slow", [], timeout=0.5)
        with pytest.raises(CallFailed):
            s.call("one", [])
    finally:
        s.close()


def test_served_made_in_a_thread_outlives_the_thread():
    """bwrap --die-with-parent follows the *thread* that started the sandbox (PR_SET_PDEATHSIG): warm
    sandboxes are started from one long-lived thread, so a scorer's short-lived thread is not one."""
    box: dict[str, Served] = {}
    thread = threading.Thread(target=lambda: box.setdefault("s", Served("def g():\n    return 5\n", LIMITS)))
    thread.start()
    thread.join()
    time.sleep(0.3)
    try:
        assert box["s"].call("g", []) == 5
    finally:
        box["s"].close()


# ---------------------------------------------------------------------------------------------
# codec

Point = namedtuple("Point", "x y")


@pytest.mark.parametrize(
    "value",
    [
        None,
        False,
        7,
        -1.25,
        "",
        "ünïcode",
        b"",
        bytes(range(256)),
        (1, [2, {3: (4,)}]),
        {frozenset({1}): {"x": {2}}},
        complex(math.inf, -0.5),
        [math.inf, -math.inf],
        [[[[[[1]]]]]],
    ],
    ids=repr,
)
def test_codec_round_trip(value):
    import json

    decoded = decode(json.loads(json.dumps(encode(value))))
    assert decoded == value
    assert type(decoded) is type(value)


def test_codec_nan_round_trip():
    assert math.isnan(decode(encode(math.nan)))


def test_codec_subclasses_become_builtin_types():
    class Sneaky(int):
        def __eq__(self, other):
            return True

        __hash__ = int.__hash__

    assert type(decode(encode(Sneaky(3)))) is int and decode(encode(Sneaky(3))) == 3
    assert type(decode(encode(OrderedDict(a=1)))) is dict
    assert decode(encode(Counter("aab"))) == {"a": 2, "b": 1}
    assert type(decode(encode(Point(1, 2)))) is tuple and decode(encode(Point(1, 2))) == (1, 2)


@pytest.mark.parametrize("value", [object(), len, Exception("x"), range(3), [1, object()], {"k": print}])
def test_codec_refuses_other_types(value):
    with pytest.raises(CodecError):
        encode(value)


def test_codec_refuses_deep_values():
    value: list = []
    for _ in range(MAX_DEPTH + 5):
        value = [value]
    with pytest.raises(CodecError):
        encode(value)


def _deep_list(levels: int) -> list:
    data: list = []
    for _ in range(levels):
        data = [data]
    return data


def _deep(levels: int) -> object:
    data: object = 1
    for _ in range(levels):
        data = {"t": [data]}
    return data


@pytest.mark.parametrize(
    "data",
    [
        {"t": 5},
        {"t": "abc"},
        {"s": {"x": 1}},
        {"zzz": []},
        {"eval": "__import__('os')"},
        {"t": [], "s": []},
        {},
        {"f": "1.0"},
        {"f": 1.0},
        {"c": [1, 2]},
        {"c": [1.0]},
        {"b": "zz"},
        {"b": 5},
        {"d": [[1]]},
        {"d": [[1, 2, 3]]},
        {"d": "ab"},
        {"s": [[1]]},
        {"d": [[[1], 2]]},
        {"fs": [{"d": []}]},
        (1, 2),
        {1, 2},
        b"raw",
        _deep(MAX_DEPTH + 10),
        _deep_list(MAX_DEPTH + 10),
    ],
    ids=lambda d: repr(d)[:40],
)
def test_codec_decode_refuses_malformed(data):
    with pytest.raises(CodecError):
        decode(data)


def test_codec_decode_builds_only_builtin_types():
    import json

    for text in ['{"t": [1, {"s": [2]}]}', '{"d": [[{"t": [1]}, {"b": "ff"}]]}', '{"c": [1.0, 2.0]}']:
        value = decode(json.loads(text))
        stack = [value]
        while stack:
            item = stack.pop()
            assert type(item) in (int, float, str, bytes, complex, tuple, list, set, frozenset, dict)
            if isinstance(item, dict):
                stack += [*item.keys(), *item.values()]
            elif isinstance(item, (tuple, list, set, frozenset)):
                stack += list(item)


# ---------------------------------------------------------------------------------------------
# run_tests


def test_run_tests_pass():
    code = "def add(a, b):\n    return a + b\n"
    verdict = run_tests(code, "assert add(1, 2) == 3\nassert add('a', 'b') == 'ab'\n", LIMITS)
    assert isinstance(verdict, Verdict)
    assert verdict.status == "pass" and verdict.passed


def test_run_tests_fail_names_the_assertion():
    code = "def add(a, b):\n    return a - b\n"
    verdict = run_tests(code, "assert add(1, 1) == 0\nassert add(1, 2) == 3\n", LIMITS)
    assert verdict.status == "fail" and not verdict.passed
    assert "AssertionError" in verdict.reason
    assert "assert add(1, 2) == 3" in verdict.reason


def test_run_tests_candidate_exception_fails():
    verdict = run_tests("def f(x):\n    return 1 // x\n", "assert f(0) == 0\n", LIMITS)
    assert verdict.status == "fail"
    assert "ZeroDivisionError" in verdict.reason


def test_run_tests_builtin_exceptions_can_be_expected():
    code = "def parse(s):\n    if not s.isdigit():\n        raise ValueError(s)\n    return int(s)\n"
    tests = "try:\n    parse('x')\n    raise AssertionError('no error')\nexcept ValueError:\n    pass\n"
    assert run_tests(code, tests + "assert parse('12') == 12\n", LIMITS).status == "pass"


def test_run_tests_candidate_syntax_error_does_not_pass():
    assert run_tests("def f(:\n", "assert f() == 1\n", LIMITS).status != "pass"


def test_run_tests_candidate_syntax_error_is_an_error():
    verdict = run_tests("def f(:\n", "assert f() == 1\n", LIMITS)
    assert verdict.status == "error"
    assert "SyntaxError" in verdict.reason


def test_run_tests_candidate_timeout():
    limits = Limits(wall=1.5, cpu=5.0)
    started = time.monotonic()
    verdict = run_tests("def f():\n    while True:\n        pass\n", "assert f() == 1\n", limits)
    assert verdict.status == "timeout"
    assert time.monotonic() - started < limits.wall + 2.0


def test_run_tests_missing_function_fails():
    verdict = run_tests("def g():\n    return 1\n", "assert f() == 1\n", LIMITS)
    assert verdict.status == "fail"
    assert "NameError" in verdict.reason


HUMANEVAL_PROMPT = '''
from typing import List


def helper(xs: List[int]) -> int:
    """Trusted code from the prompt."""
    return len(xs)


def total_length(xs: List[List[int]]) -> int:
    """Sum of the lengths of the lists."""
'''

HUMANEVAL_TEST = """
METADATA = {}


def check(candidate):
    assert candidate([[1, 2], [3]]) == 3
    assert candidate([]) == 0
    assert helper([1, 2, 3]) == 3
"""


def test_run_tests_humaneval_style_pass():
    completion = HUMANEVAL_PROMPT + "    return sum(helper(x) for x in xs)\n"
    verdict = run_tests(
        completion, HUMANEVAL_TEST, LIMITS, entry_point="total_length", prelude=HUMANEVAL_PROMPT
    )
    assert verdict.status == "pass", verdict.reason


def test_run_tests_humaneval_style_fail():
    completion = HUMANEVAL_PROMPT + "    return len(xs)\n"
    verdict = run_tests(
        completion, HUMANEVAL_TEST, LIMITS, entry_point="total_length", prelude=HUMANEVAL_PROMPT
    )
    assert verdict.status == "fail"
    assert "assert candidate([[1, 2], [3]]) == 3" in verdict.reason


def test_run_tests_check_not_called_without_entry_point():
    verdict = run_tests("def f():\n    return 1\n", "def check(candidate):\n    assert False\n", LIMITS)
    assert verdict.status == "pass"


def test_run_tests_prelude_helpers_stay_trusted():
    # The candidate redefines the prompt's helper; the tests must still call the prompt's version.
    completion = HUMANEVAL_PROMPT + "    return sum(len(x) for x in xs)\n\n\ndef helper(xs):\n    return 99\n"
    verdict = run_tests(
        completion, HUMANEVAL_TEST, LIMITS, entry_point="total_length", prelude=HUMANEVAL_PROMPT
    )
    assert verdict.status == "pass", verdict.reason


# ---------------------------------------------------------------------------------------------
# isolation facts and cleanup


def test_facts():
    info = facts()
    assert info["isolation"] == ("bwrap" if isolated() else "none")
    if isolated():
        assert "warning" not in info
        assert info["bwrap"]
        assert info["user"] == (
            "nobody (own user namespace)" if os.geteuid() == 0 else f"uid {os.geteuid()} (as nobody)"
        )
    else:
        assert "NO ISOLATION" in info["warning"]
    version, _ = cgroup.available()
    assert info["cgroup"] == version or str(info["cgroup"]).startswith("unavailable")


def test_bwrap_is_used_here():
    """This machine has bubblewrap; if it stops working the suite must say so, not silently degrade."""
    import shutil

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    assert isolated(), isolation._bwrap_problem()
    assert facts()["isolation"] == "bwrap"


def test_no_processes_or_cgroups_left_after_each_api(mark):
    daemon = (
        "import os\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    os.execv('/bin/sleep', ['sleep', '{mark}'])\n"
        "import time\n"
        "time.sleep(0.2)\n"
        "def f():\n"
        "    return 1\n"
    )
    before = set(own_cgroups())
    assert run_program(daemon, "", LIMITS).status == "ok"
    assert survivors(mark) == []
    with Served(daemon, LIMITS) as s:
        assert s.call("f", []) == 1
        if isolated():
            assert survivors(mark), "the daemon should be running while the Served is open"
    assert survivors(mark) == []
    assert run_tests(daemon, "assert f() == 1\n", LIMITS).status == "pass"
    assert survivors(mark) == []
    assert set(own_cgroups()) <= before


@pytest.fixture
def no_bwrap(monkeypatch, tmp_path):
    """bubblewrap hidden from PATH, as on a machine without it (and no opt-in)."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(isolation.UNSAFE, raising=False)
    isolation._bwrap_problem.cache_clear()
    yield
    monkeypatch.undo()
    isolation._bwrap_problem.cache_clear()


@pytest.fixture
def unisolated(no_bwrap, monkeypatch):
    """The explicit opt-in to run without bubblewrap, for legitimate programs only (undone after the
    test: setenv first, so that undoing it removes what allow_unisolated sets)."""
    monkeypatch.setenv(isolation.UNSAFE, "")
    isolation.allow_unisolated()


def test_without_root_only_the_scratch_folders_stay_writable():
    """As another user, bubblewrap's own root and /dev belong to the sandbox's user: the command remounts
    both read-only after /tmp and /work are mounted and before anything runs (the tests run as root, so
    this checks the command line; the layout was checked by hand with bwrap as nobody)."""
    argv = isolation._as_user("/usr/bin/bwrap", LIMITS, "zygote.py")
    command = argv.index("--")
    scratch = max(argv.index("/tmp"), argv.index("/work"))
    for folder in ("/", "/dev"):
        at = [i for i in range(len(argv) - 1) if argv[i : i + 2] == ["--remount-ro", folder]]
        assert len(at) == 1 and scratch < at[0] < command, folder
    assert argv[command + 1 :][-1] == "/sandbox/zygote.py"


def test_without_bwrap_code_is_refused_before_anything_runs(no_bwrap, mark):
    started = f"import os\nif os.fork() == 0:\n    os.execv('/bin/sleep', ['sleep', '{mark}'])\n"
    before = set(own_cgroups())
    for run in (
        lambda: run_program(started, "", LIMITS),
        lambda: Served(started, LIMITS),
        lambda: run_tests(started, "assert True\n", LIMITS),
    ):
        with pytest.raises(isolation.Unavailable) as info:
            run()
        message = str(info.value)
        assert "\n" not in message and "bubblewrap (bwrap) is not installed" in message
        assert "install the 'bubblewrap' package" in message.lower() and "--unsafe-no-sandbox" in message
    assert survivors(mark) == []
    assert set(own_cgroups()) <= before
    assert facts()["isolation"] == "none" and facts()["unsafe_opt_in"] is False


def test_without_bwrap_facts_warn_and_workdir_is_removed(unisolated):
    assert not isolated()
    assert "NO ISOLATION" in facts()["warning"] and facts()["unsafe_opt_in"] is True
    exit = run_program("import os\nopen('scratch.txt', 'w').write('x')\nprint(os.getcwd())\n", "", LIMITS)
    assert exit.status == "ok"
    workdir = Path(exit.stdout.decode().strip())
    assert workdir.name.startswith("harness-sandbox-")
    assert not workdir.exists()
    s = Served("import os\ndef cwd():\n    return os.getcwd()\n", LIMITS)
    served_dir = Path(s.call("cwd", []))
    assert served_dir.is_dir() and served_dir.name.startswith("harness-sandbox-")
    s.close()
    assert not served_dir.exists()
    assert run_tests("def f():\n    return 2\n", "assert f() == 2\n", LIMITS).status == "pass"


PACKAGE_PROBE = (
    "import numpy, sys\n"
    "print(int(numpy.arange(5).sum()))\n"
    "try:\n"
    "    import yaml\n"
    "except ImportError:\n"
    "    print('no yaml')\n"
    "try:\n"
    "    open(numpy.__file__, 'a')\n"
    "except OSError as e:\n"
    "    print(type(e).__name__)\n"
)


def test_numpy_is_importable_and_read_only_but_nothing_else_installed():
    exit = run_program(PACKAGE_PROBE, "", LIMITS)
    assert exit.status == "ok", exit.stderr
    assert exit.stdout.decode().split("\n")[:2] == ["10", "no yaml"]  # pyyaml is installed here
    assert exit.stdout.decode().split("\n")[2] in ("OSError", "PermissionError")


def test_without_bwrap_numpy_is_importable_but_nothing_else_installed(unisolated):
    exit = run_program(PACKAGE_PROBE.split("try:\n    open")[0], "", LIMITS)
    assert exit.status == "ok", exit.stderr
    assert exit.stdout.decode().split("\n")[:2] == ["10", "no yaml"]


def test_isolated_mode_makes_no_host_workdir():
    if not isolated():
        pytest.skip("bubblewrap isolation unavailable")
    exit = run_program("import os\nprint(os.getcwd(), sorted(os.listdir('.')))\n", "", LIMITS)
    assert exit.stdout == b"/work []\n"
