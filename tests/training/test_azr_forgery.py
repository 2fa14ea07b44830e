"""Forged verdicts in Absolute Zero's executor (issue 37, point 2): proposals that raise, are not
deterministic or detect the validation, and try to report a verdict of their choosing through the
channel, the driver's modules, the builtins or an early exit. Every one must be INVALID, and an
abduction answer is checked in the same sealed environment as the proposal was validated in."""

import pytest

from trainers.methods.azr.executor import check_abduction, check_deduction, check_induction, validate

FIND = (
    "    def find(name):\n"
    "        for c in ().__class__.__base__.__subclasses__():\n"
    "            for v in vars(c).values():\n"
    "                g = getattr(v, '__glo' + 'bals__', None)\n"
    "                if isinstance(g, dict) and name in g:\n"
    "                    return g[name]\n"
)
REPLY = "{'results': [['ok', 42], ['ok', 42]]}\\n"

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
}


@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_forging_proposal_is_invalid(name):
    run = validate("def f(x):\n" + FORGERIES[name], "1")
    assert not run.valid, (name, run)
    assert run.output != "42"


@pytest.mark.parametrize("name", ["fd writes through the posix module", "builtins patched", "frames"])
def test_a_forging_abduction_answer_does_not_pass(name):
    """The program is honest; the answer's own expression tries to forge a pass."""
    code = "def f(x):\n    return x + 1"
    answer = "(lambda: (" + " ".join(FORGERIES[name].split("\n")[:1]) + ", 41)[-1])()"
    assert not check_abduction(code, answer, 100).passed
    assert check_abduction(code, "99", 100).passed


def test_validation_and_abduction_see_the_same_environment():
    """A program that behaves one way when validated and another when an answer is checked is either
    invalid, or gets the same verdict on the proposer's own input in both."""
    program = (
        "def f(x):\n    g = globals()\n    return sorted(k for k in g if not k.startswith('__')) + [x]\n"
    )
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
    """The seal takes nothing an honest program needs: stdlib imports, numpy, classes, recursion."""
    programs = {
        "def f(x):\n    import collections, itertools, math, re\n"
        "    return sorted(collections.Counter(re.findall('.', x)).items())": "'abca'",
        "def f(x):\n    import numpy as np\n    return int(np.arange(x).sum())": "10",
        "class P:\n    def __init__(self, v):\n        self.v = v\n"
        "def f(x):\n    P.count = getattr(P, 'count', 0)\n    return P(x).v * 2": "4",
        "def f(n):\n    return 1 if n < 2 else n * f(n - 1)": "20",
        "def f(x, y=2):\n    x.append(y)\n    return x": "[1], y=3",
        "def f(a):\n    return {tuple(a): frozenset(a), 'c': 1j, 'b': b'x'}": "[1, 2]",
        "def f(s):\n    import string\n    return s.translate(str.maketrans(string.ascii_lowercase, "
        "string.ascii_lowercase[1:] + 'a'))": "'xyz'",
    }
    for program, text in programs.items():
        run = validate(program, text)
        assert run.valid, (program, run)
        assert check_abduction(program, text, run.value).passed
