"""Forged verdicts in Absolute Zero's executor (issues 37 and 44): proposals that raise, are not
deterministic or detect the validation, and try to report a verdict of their choosing through the
channel, the driver's modules, the builtins, the seal's own guard and hook, or an early exit. Every
one is refused by the language subset with a reason (the first layer) and, with that check turned
off, is still INVALID in the sealed process (the second layer); an abduction answer is checked in
the same sealed environment as the proposal was validated in."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sandbox_helpers import without_subset

from harness.sandbox import Limits, isolated, jobs
from harness.sandbox.codec import encode
from harness.sandbox.exits import BROKEN, RAISED
from trainers.methods.azr.executor import (
    OUTSIDE,
    check_abduction,
    check_deduction,
    check_induction,
    validate,
)

FIND = (
    "    def find(name):\n"
    "        for c in ().__class__.__base__.__subclasses__():\n"
    "            for v in vars(c).values():\n"
    "                g = getattr(v, '__glo' + 'bals__', None)\n"
    "                if isinstance(g, dict) and name in g:\n"
    "                    return g[name]\n"
)
REPLY = "[42, 42]\\n"  # two calls' values, as the sealed driver sends them
# after undoing part of the seal: reach the driver's write and exit through a traceback's frames, or
# open the reply descriptor and write the start of a line; raises if neither works
ESCAPE = (
    "    try:\n"
    "        try:\n            raise ValueError('x')\n        except ValueError as e:\n"
    "            frame = e.__traceback__.tb_frame\n"
    "        while frame is not None:\n"
    "            names = frame.f_locals\n"
    "            if 'write' in names and 'end' in names:\n"
    "                for fd in range(3, 30):\n"
    "                    try: names['write'](fd, b\"[42, 42]\\n\")\n"
    "                    except Exception: pass\n"
    "                names['end'](0)\n"
    "            frame = frame.f_back\n"
    "    except Exception:\n        pass\n"
    "    for fd in range(3, 30):\n"  # a comment swallows the driver's own line that follows
    "        try: open(fd, 'w', closefd=False).write('[42, 42] #')\n"
    "        except Exception: pass\n"
    "    raise ValueError('the real outcome')\n"
)

# each raises, or is not deterministic, unless its forgery works
FORGERIES = {
    "fd writes through the posix module": FIND
    + (
        "    w = getattr(find('sys').modules['po' + 'six'], 'write')\n"
        "    for fd in range(30):\n"
        f'        try: w(fd, b"{REPLY}")\n'
        "        except Exception: pass\n"
        "    raise ValueError('the real outcome')\n"
    ),
    "fd writes through open(fd)": (
        "    for fd in range(30):\n"
        "        try:\n"
        f"            open(fd, 'w', closefd=False).write(\"{REPLY}\")\n"
        "        except Exception: pass\n"
        "    raise ValueError('the real outcome')\n"
    ),
    "fd writes through /proc/self/fd": (
        "    for fd in range(30):\n"
        "        try:\n"
        f"            open('/proc/self/fd/%d' % fd, 'a').write(\"{REPLY}\")\n"
        "        except Exception: pass\n"
        "    raise ValueError('the real outcome')\n"
    ),
    "json.dumps monkeypatched": (
        f'    import json\n    json.dumps = lambda *a, **k: "{REPLY}".strip()\n'
        "    raise ValueError('the real outcome')\n"
    ),
    "builtins patched": FIND
    + (
        "    b = find('sys').modules['bui' + 'ltins']\n"
        f'    b.repr = lambda *a: "{REPLY}".strip()\n'
        "    b.callable = lambda *a: True\n    b.range = lambda *a: iter([])\n"
        "    b.isinstance = lambda *a: True\n"
        "    raise ValueError('the real outcome')\n"
    ),
    "the driver's globals patched": FIND
    + (
        "    main = find('sys').modules['__main__']\n"
        "    for name in list(vars(main)):\n"
        "        if callable(getattr(main, name)):\n"
        "            setattr(main, name, lambda *a, **k: 42)\n"
        "    raise ValueError('the real outcome')\n"
    ),
    "the codec patched": FIND
    + (
        "    codec = find('sys').modules['codec']\n"
        "    codec.encode = lambda *a, **k: 42\n    codec.math.isfinite = lambda x: 1 / 0\n"
        "    import random\n    return random.random()\n"
    ),
    "validation detected by its helper's name": (
        "    if '__azr_arguments__' in globals() or 'validate' in str(globals()):\n"
        "        return 42\n    raise ValueError('outside the validation')\n"
    ),
    "eval of a built import": ("    m = eval('__imp' + 'ort__(\"ti\" + \"me\")')\n    return m.time()\n"),
    "exec of a built import": (
        "    g = {}\n    exec('import ran' + 'dom as r', g)\n    return g['r'].random()\n"
    ),
    "subclasses walk to os": FIND
    + ("    os = find('sys').modules['o' + 's']\n    getattr(os, '_ex' + 'it')(0)\n"),
    "os._exit after a forged line": FIND
    + (f"    p = find('sys').modules['po' + 'six']\n    p.write(4, b\"{REPLY}\")\n    p._exit(0)\n"),
    "kill the driver": FIND
    + (
        "    p = find('sys').modules['po' + 'six']\n    p.kill(p.getppid(), 9)\n    p.kill(1, 9)\n"
        "    raise ValueError('the real outcome')\n"
    ),
    "atexit hook": (
        "    import atexit\n"
        f'    atexit.register(lambda: print("{REPLY}"))\n'
        "    raise ValueError('the real outcome')\n"
    ),
    "sys.exit(0)": FIND + "    find('sys').exit(0)\n",
    "SystemExit raised": "    raise SystemExit(0)\n",
    "KeyboardInterrupt raised": "    raise KeyboardInterrupt\n",
    "fake markers printed": (
        f"    print(\"{REPLY}\")\n    print('ok 42')\n    raise ValueError('the real outcome')\n"
    ),
    "a thread that writes later": FIND
    + (
        "    t = find('_thread')\n"
        "    t.start_new_thread(lambda: None, ())\n"
        "    raise ValueError('the real outcome')\n"
    ),
    "a signal's wakeup fd": FIND
    + ("    s = find('sys').modules['_sig' + 'nal']\n    s.set_wakeup_fd(4)\n    s.raise_signal(10)\n"),
    "frames": (
        "    try:\n        1 / 0\n    except ZeroDivisionError as e:\n"
        "        frame = e.__traceback__.tb_frame.f_back\n"
        "    frame.f_locals['results'].append(['ok', 42])\n"
        "    raise ValueError('the real outcome')\n"
    ),
    "an exception whose message forges the reply": (
        "    class S(str):\n        def __repr__(self):\n"
        "            return \"'x'], ['ok', 42], ['ok', 42]], 'y': ['\"\n"
        "    class E(Exception):\n        def __str__(self):\n            return S('boom')\n"
        "    raise E()\n"
    ),
    "a return value whose repr forges the reply": (
        "    import random\n"
        "    class S(str):\n        def __repr__(self):\n            return '42'\n"
        "    return S(random.random())\n"
    ),
    "code objects replaced": FIND
    + (
        "    main = find('sys').modules['__main__']\n"
        "    main.sealed_call.__code__ = (lambda job, fd: 42).__code__\n"
        "    raise ValueError('the real outcome')\n"
    ),
    "gc walks to the driver's locals": (
        "    import gc\n    for o in gc.get_objects():\n"
        "        if isinstance(o, list) and o and o[0] == 'ok':\n            o[1] = 42\n"
        "    raise ValueError('the real outcome')\n"
    ),
    "ctypes": "    import ctypes\n    ctypes.string_at(0)\n",
    "a forked child": FIND + "    find('sys').modules['po' + 'six'].fork()\n    raise ValueError('x')\n",
    "stdout closed": FIND
    + (
        "    find('sys').stdout.close()\n    find('sys').stderr.close()\n"
        "    raise ValueError('the real outcome')\n"
    ),
    "state across calls": ("    global n\n    n = globals().get('n', 0) + 1\n    return n\n"),
    # issue 44: the seal's own guard and hook undone from inside, then the escape
    "a driver global the hook reads rebound": FIND
    + (
        "    main = find('sys').modules['__main__']\n"
        "    main.DENIED_EVENTS = ('nothing',)\n    main.DENIED_ATTRIBUTES = set()\n"
    )
    + ESCAPE,
    "a set the hook reads cleared": FIND
    + (
        "    main = find('sys').modules['__main__']\n"
        "    for name in ('DENIED_ATTRIBUTES', 'DENIED_MODULES'):\n"
        "        try: getattr(main, name).clear()\n"
        "        except Exception: pass\n"
        "    imp = find('sys').modules['builtins'].__import__\n"
        "    for cell in getattr(imp, '__closure__', None) or ():\n"
        "        try: cell.cell_contents.clear()\n"
        "        except Exception: pass\n"
    )
    + ESCAPE,
    "the builtins the hook calls replaced": FIND
    + (
        "    b = find('sys').modules['builtins']\n"
        "    b.set = lambda *a: frozenset()\n    b.isinstance = lambda *a: True\n"
        "    b.str = lambda *a: 'r'\n"
    )
    + ESCAPE,
    "the hook's closure cells rebound": FIND
    + (
        "    imp = find('sys').modules['builtins'].__import__\n"
        "    for cell in getattr(imp, '__closure__', None) or ():\n"
        "        try:\n"
        "            if callable(cell.cell_contents): cell.cell_contents = lambda *a, **k: False\n"
        "        except Exception: pass\n"
    )
    + ESCAPE,
    "the import guard's banned set cleared": FIND
    + (
        "    imp = find('sys').modules['builtins'].__import__\n"
        "    for cell in getattr(imp, '__closure__', None) or ():\n"
        "        try: cell.cell_contents.clear()\n"
        "        except Exception: pass\n"
        "    for part in getattr(imp, '__self__', ()):\n"
        "        try: part.clear()\n"
        "        except Exception: pass\n"
        "    g = {}\n    exec('import ran' + 'dom as r', g)\n    return g['r'].random()\n"
    ),
    "a traceback's frames": ESCAPE,
    # the third probe's: a fresh posix built by the import machinery, whose write and _exit the seal
    # never removed, writes the reply and ends with status 0
    "a fresh posix module": FIND
    + (
        "    modules = find('sys').modules\n"
        "    spec = modules['_frozen_importlib'].ModuleSpec('po' + 'six', None, origin='built-in')\n"
        "    fresh = modules['_i' + 'mp'].create_builtin(spec)\n"
        "    for fd in range(30):\n"
        f'        try: fresh.write(fd, b"{REPLY}")\n'
        "        except Exception: pass\n"
        "    getattr(fresh, '_ex' + 'it')(0)\n"
    ),
    "a MemoryError of its own": (
        "    class MemoryError(Exception):\n        pass\n    raise MemoryError('42')\n"
    ),
}
# proposals inside the subset, whose forgery fails in the sealed process alone
IN_SUBSET = {"fake markers printed", "an exception whose message forges the reply"}


@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_forging_proposal_is_refused_by_the_subset(name):
    run = validate("def f(x):\n" + FORGERIES[name], "1")
    assert not run.valid, (name, run)
    assert run.output != "42"
    if name not in IN_SUBSET:
        assert run.reason.startswith((OUTSIDE, "forbidden import")), (name, run.reason)


@pytest.mark.parametrize("name", list(FORGERIES))
def test_past_the_subset_a_forging_proposal_is_still_invalid(name, monkeypatch):
    without_subset(monkeypatch)
    run = validate("def f(x):\n" + FORGERIES[name], "1")
    assert not run.valid, (name, run)
    assert run.output != "42" and run.reason != "memory", (name, run)


# the fourth probe's escape: `type` handed to a program's __contains__ by `in`, then a class built with
# a reducer, copy's reconstruction and AttributeError.obj gave object.__dict__, object.__getattribute__
# and the real builtins; validate called it valid with output 42
FOURTH_PROBE = """
import copy
class Box:
    def __init__(self):
        self.got = []
    def __contains__(self, item):
        self.got.append(item)
        return True
def dunder(s):
    return '_' * 2 + s + '_' * 2
def class_dict(cls):
    b = Box()
    type(int) in b
    R = b.got[0]('R', (object,), {dunder('reduce_ex'): lambda self, proto: (lambda: cls, (), {'a': 1})})
    try:
        copy.copy(R())
    except AttributeError as e:
        return e.obj
def f(x):
    ga = dict(class_dict(object))[dunder('getattribute')]
    real = ga(f, dunder('globals'))[dunder('builtins')]
    return ga(real, 'eval')('x * 6', {'x': x})
"""


def test_the_fourth_probes_escape_is_refused_before_it_runs():
    run = validate(FOURTH_PROBE, "7")
    assert not run.valid and run.output != "42"
    assert run.reason == f"{OUTSIDE}: type is allowed only compared, as in type(x) is int or type(x) == list"


def test_text_on_stderr_chooses_no_status(monkeypatch):
    """A program that writes "MemoryError" and returns is valid; one that raises a MemoryError of its
    own is a raise, not "memory": the status comes from the exit status and the harness's limits."""
    without_subset(monkeypatch)  # the subset has no stderr to write to
    code = FIND + "    print('MemoryError', file=find('sys').stderr)\n    return x + 1\n"
    run = validate("def f(x):\n" + code, "1")
    assert (run.valid, run.value) == (True, 2), run
    own = validate("def f(x):\n" + FORGERIES["a MemoryError of its own"], "1")
    assert own.reason == "raised MemoryError: 42"


@pytest.mark.parametrize("name", ["fd writes through the posix module", "builtins patched", "frames"])
def test_a_forging_abduction_answer_does_not_pass(name):
    """The program is honest; the answer's own expression tries to forge a pass."""
    code = "def f(x):\n    return x + 1"
    answer = "(lambda: (" + " ".join(FORGERIES[name].split("\n")[:1]) + ", 41)[-1])()"
    assert not check_abduction(code, answer, 100).passed
    assert check_abduction(code, "99", 100).passed


def test_validation_and_abduction_see_the_same_environment(monkeypatch):
    """A program that behaves one way when validated and another when an answer is checked is either
    invalid, or gets the same verdict on the proposer's own input in both (the subset has no
    `globals()`; past it, the sealed process still looks the same to both)."""
    program = (
        "def f(x):\n    g = globals()\n    return sorted(k for k in g if not k.startswith('__')) + [x]\n"
    )
    assert validate(program, "1").reason == f"{OUTSIDE}: globals is not allowed"
    without_subset(monkeypatch)
    run = validate(program, "1")
    assert run.valid
    assert check_abduction(program, "1", run.value).passed


def test_forged_deduction_and_induction_answers_fail():
    forged = '(lambda: [print("' + REPLY + '"), 41][-1])()'
    assert not check_deduction(forged, 42).passed
    run = validate("def f(x):\n    return x * 2", "21")
    assert run.valid and run.value == 42
    cheat = "def f(x):\n" + FORGERIES["fd writes through the posix module"]
    assert not check_induction(cheat, (run, run)).passed
    assert check_induction("def f(x):\n    return 2 * x", (run, run)).passed


def test_honest_programs_stay_valid():
    """Neither layer takes what an honest program needs: the allowed imports, classes with their
    methods, recursion, keyword arguments, plain values; numpy is outside the subset."""
    programs = {
        "def f(x):\n    import collections, itertools, math, re\n"
        "    return sorted(collections.Counter(re.findall('.', x)).items())": "'abca'",
        "class P:\n    count = 0\n    def __init__(self, v):\n        self.v = v\n"
        "    def __eq__(self, other):\n        return self.v == other.v\n"
        "def f(x):\n    P.count += 1\n    return P(x).v * 2 + (P(x) == P(x))": "4",
        "def f(n):\n    return 1 if n < 2 else n * f(n - 1)": "20",
        "def f(x, y=2):\n    x.append(y)\n    return x": "[1], y=3",
        "def f(a):\n    return {tuple(a): frozenset(a), 'c': 1j, 'b': b'x'}": "[1, 2]",
        "def f(s):\n    import string\n    return s.translate(str.maketrans(string.ascii_lowercase, "
        "string.ascii_lowercase[1:] + 'a'))": "'xyz'",
        "from fractions import Fraction\nfrom functools import reduce\n"
        "def f(xs):\n    return str(reduce(lambda a, b: a + Fraction(1, b), xs, Fraction(0)))": "[2, 3, 6]",
        "from typing import List, TypeVar\nT = TypeVar('T')\n"
        "def f(x: int) -> List[int]:\n    return [x, 2]": "1",
        "def f(n):\n    total = 0\n    for _ in range(n):\n        total += len(type(n).__name__)\n"
        "    return total": "3",
    }
    for program, text in programs.items():
        run = validate(program, text)
        if "__name__" in program:
            assert run.reason == f"{OUTSIDE}: attribute __name__ is not allowed"
            continue
        assert run.valid, (program, run)
        assert check_abduction(program, text, run.value).passed
    # class builders that run generated code are not part of it
    built = validate(
        "from collections import namedtuple\nP = namedtuple('P', 'a b')\ndef f(x):\n    return x", "1"
    )
    assert built.reason == f"{OUTSIDE}: collections.namedtuple is not allowed"
    numpy = validate("def f(x):\n    import numpy as np\n    return int(np.arange(x).sum())", "10")
    assert numpy.reason == f"{OUTSIDE}: import of numpy is not allowed"


CODECS = ["shift_jis", "euc_kr", "gb2312", "big5", "iso2022_jp", "idna", "utf_16"]


@pytest.mark.parametrize("encoding", CODECS)
def test_codecs_load_on_demand_though_no_module_is_built_once_sealed(encoding):
    """The seal leaves the import machinery unable to build a module (a fresh posix would hold what it
    took), so the codecs' extension modules are loaded before it: str.encode still finds them."""
    run = validate("def f(text, encoding):\n    return text.encode(encoding)\n", f"'abc', {encoding!r}")
    assert run.valid and run.output == repr("abc".encode(encoding)), run


sandboxed = pytest.mark.skipif(not isolated(), reason="bubblewrap isolation unavailable: not running code")


# Layer 2 by capability (issue 52, part 2): the reply and the exit status belong to a process that runs
# no candidate code (driver.held_reply). A candidate that got every power of its own process, which no
# payload above reaches, is played here by a function put in place of the sealed call.
SANDBOX = Path(jobs.__file__).parent
HOSTILE = {  # the body of sealed_call(job, fd) after a full escape -> (exit status, what the harness reads)
    "writes on the reply's descriptor": (
        "    for n in range(3, 30):\n        if n != fd:\n"
        "            try: os.write(n, b'[42]\\n')\n            except OSError: pass\n    os._exit(0)",
        BROKEN,
        b"",
    ),
    "its own line, then a raise's status": (
        "    os.write(fd, b'[42]\\n')\n    os._exit(RAISED)",
        BROKEN,
        b"",
    ),
    "a status of its own": ("    os._exit(7)", BROKEN, b""),
    "two lines": ("    os.write(fd, b'[42]\\n[43]\\n')\n    os._exit(0)", BROKEN, b""),
    "half a line": ("    os.write(fd, b'[42]')\n    os._exit(0)", BROKEN, b""),
    "a raise": ("    os._exit(RAISED)", RAISED, b""),
    "killed": ("    os.kill(os.getpid(), 9)", 128 + 9, b""),
    # what layer 2 cannot stop: the values of its own calls, as a program returning them would
    "its own values": ("    os.write(fd, b'[42]\\n')\n    os._exit(0)", 0, b"[42]\n"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_fully_escaped_call_holds_neither_the_reply_nor_the_status(name, tmp_path):
    body, status, reply = HOSTILE[name]
    read, write = os.pipe()
    script = tmp_path / "hostile.py"
    script.write_text(
        f"import os, sys\nsys.path.insert(0, {str(SANDBOX)!r})\nimport driver\n"
        "from exits import RAISED\n"
        f"def escaped(job, fd):\n{body}\n"
        "driver.sealed_call = escaped\n"
        f"driver.held_reply({{'limits': {{'output_mb': 1}}}}, {write})\n"
    )
    try:
        ended = subprocess.run([sys.executable, str(script)], pass_fds=(write,), timeout=30)
    finally:
        os.close(write)
    with os.fdopen(read, "rb") as received:
        assert (ended.returncode, received.read()) == (status, reply), name


@sandboxed
def test_the_sealed_code_runs_without_the_reply_descriptor():
    """While f runs, the process running it holds no descriptor of the reply pipe, and its parent (the
    driver that holds it) is another process: read from the host's /proc."""
    code = "def f():\n    n = 0\n    for i in range(10 ** 9):\n        n += i\n    return n"
    limits = Limits(wall=6.0, cpu=6.0)
    worker = threading.Thread(
        target=jobs.run_sealed, args=({"code": code, "cases": [encode([[], {}])]}, limits)
    )
    worker.start()
    try:
        drivers = {}
        for _ in range(100):  # up to 5 s for both processes to start
            drivers = {pid: argv for pid, argv in _processes() if _a_driver_of_ours(pid, argv)}
            if len(drivers) == 2:
                break
            time.sleep(0.05)
        assert len(drivers) == 2, drivers
        parents = {pid: _parent(pid) for pid in drivers}
        (holder,) = [pid for pid in drivers if parents[pid] not in drivers]
        (runner,) = [pid for pid in drivers if parents[pid] == holder]
        reply = os.readlink(f"/proc/{holder}/fd/{drivers[holder][-1]}")
        assert reply.startswith("pipe:")
        assert reply not in _descriptors(runner).values()
    finally:
        worker.join()


def _processes():
    for entry in os.listdir("/proc"):
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().decode().split("\0")[:-1]
        except (OSError, ValueError):
            continue
        if entry.isdigit():
            yield int(entry), argv


def _a_driver_of_ours(pid: int, argv: list[str]) -> bool:
    """A sandbox driver's Python (not the bwrap that starts it) that this test process started."""
    if len(argv) < 3 or not argv[-3].endswith("driver.py") or argv[0].endswith("bwrap"):
        return False
    while pid > 1:
        try:
            pid = _parent(pid)
        except (OSError, ValueError):
            return False
        if pid == os.getpid():
            return True
    return False


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _descriptors(pid: int) -> dict[str, str]:
    return {fd: os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
