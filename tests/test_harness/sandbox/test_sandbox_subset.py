"""The language subset (harness/sandbox/subset.py): what model code may name before the sealed executor
runs it. Generated name, attribute, import and call patterns are checked against a small oracle
written from the rules' wording; the issue's escapes are refused with a reason; every library program
and cold-start demonstration passes; and `run_sealed` refuses before a process starts."""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import keyword
import math
import re
import subprocess
import sys
import types
from collections import Counter, deque
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sandbox_helpers import without_subset

from harness.sandbox import Limits, allowlist, jobs, subset
from harness.sandbox.codec import encode
from harness.sandbox.subset import ATTRIBUTES, BUILTINS, MODULES, NAMES, check_program
from trainers.methods.azr.buffers import Task
from trainers.methods.azr.coldstart import AzrDemonstrations
from trainers.methods.azr.executor import FIG8, FORBIDDEN
from trainers.methods.azr.library import PROGRAMS

# the rules, restated as plainly as possible
ALLOWED_MODULES = {"math", "itertools", "collections", "collections.abc", "functools", "heapq", "bisect"}
ALLOWED_MODULES |= {"string", "re", "operator", "fractions", "decimal", "statistics", "copy", "typing"}
NAMED_IN_THE_ISSUE = {
    "getattr",
    "setattr",
    "delattr",
    "vars",
    "globals",
    "locals",
    "eval",
    "exec",
    "compile",
    "open",
    "__import__",
    "breakpoint",
    "input",
}
FRAME_ATTRIBUTES = ["gi_frame", "f_back", "tb_frame", "tb_next", "f_globals", "f_locals", "cr_frame"]
FRAME_ATTRIBUTES += ["ag_frame", "gi_code", "co_code", "f_code", "f_builtins", "gi_yieldfrom"]


def identifier_refused(name: str) -> bool:
    return name.startswith("_") and name != "_"


def name_refused(name: str) -> bool:
    """As a value: private, a builtin outside the list, or `type` not called with one argument."""
    return identifier_refused(name) or (hasattr(builtins, name) and name not in BUILTINS) or name == "type"


def attribute_refused(name: str, defined: bool = False) -> bool:
    """`defined`: the program assigns or deletes the attribute itself."""
    frame = name.split("_")[0] in ("f", "tb", "gi", "cr", "ag", "co") and "_" in name
    return name.startswith("_") or frame or name in ATTRIBUTES or not defined and name not in NAMES


def module_refused(name: str) -> bool:
    return name not in ALLOWED_MODULES


identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True).filter(str.isidentifier)
keyword_free = identifiers.filter(lambda n: not keyword.iskeyword(n))
names = st.one_of(
    keyword_free,
    st.sampled_from(sorted(set(dir(builtins)) - {"True", "False", "None"})),
    st.sampled_from(["__class__", "__globals__", "__builtins__", "_x", "_", "__", "__import__"]),
)
attributes = st.one_of(
    keyword_free,
    st.sampled_from(FRAME_ATTRIBUTES + sorted(ATTRIBUTES)),
    st.sampled_from(["__class__", "__subclasses__", "__dict__", "_exit", "_getframe", "mro", "append"]),
    st.sampled_from(sorted(NAMES)),
)
modules = st.one_of(
    st.sampled_from(sorted(ALLOWED_MODULES)),
    st.sampled_from(["os", "sys", "io", "inspect", "gc", "builtins", "importlib", "ctypes", "types"]),
    st.sampled_from(["os.path", "collections.abc.x", "random", "numpy", "pickle", "marshal", "string.x"]),
    keyword_free,
)


@settings(max_examples=150, deadline=None)
@given(names)
def test_a_name_is_refused_exactly_when_the_rules_say(name):
    refused = check_program(f"x = {name}") is not None
    assert refused == name_refused(name), name


@settings(max_examples=150, deadline=None)
@given(
    attributes, st.sampled_from(["x.{a}", "x.{a} = 1", "del x.{a}", "f(x).{a}.real", "[x.{a} for x in y]"])
)
def test_an_attribute_is_refused_exactly_when_the_rules_say(attribute, shape):
    refused = check_program(shape.format(a=attribute)) is not None
    defined = shape in ("x.{a} = 1", "del x.{a}")
    assert refused == attribute_refused(attribute, defined), attribute


@settings(max_examples=150, deadline=None)
@given(modules, keyword_free, st.sampled_from(["import {m}", "import {m} as {n}", "from {m} import {n}"]))
def test_an_import_is_refused_exactly_when_the_rules_say(module, name, shape):
    code = shape.format(m=module, n=name)
    expected = module_refused(module)
    if shape == "import {m} as {n}":
        expected = expected or identifier_refused(name)
    elif shape == "from {m} import {n}" and not expected:
        listed = name in allowlist.MODULES[module] or f"{module}.{name}" in ALLOWED_MODULES
        expected = attribute_refused(name, defined=True) or not listed
    assert (check_program(code) is not None) == expected, code


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["f", "print", "len", "type", "getattr", "eval", "sorted", "exec", "vars", "hasattr"]),
    st.integers(0, 3),
    st.booleans(),
)
def test_a_call_is_refused_exactly_when_the_rules_say(function, count, keyword):
    arguments = ", ".join(["a"] * count + (["key=b"] if keyword else []))
    plain = ("y = {call} is int", "y = a is {call} is not int", "y = int != {call}", "y = {call} == list")
    others = (
        "y = {call}",
        "y = {call} in (int, str)",
        "y = {call} < b",
        "y = {call} is a == b",
        "y = {call} == k",
    )
    for shape in plain + others:
        refused = check_program(shape.format(call=f"{function}({arguments})")) is not None
        if function == "type":  # one argument, compared with no method of the program's: never a value
            assert refused == (count != 1 or keyword or shape in others), shape
        else:
            assert refused == name_refused(function), function


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(
        ["object", "ValueError", "KeyError", "A", "dict", "int", "type", "typing.Generic", "f()"]
    ),
    st.sampled_from(
        ["", "A = dict\n", "object = dict\n", "ValueError = KeyError\n", "def g(A):\n    pass\n"]
    ),
)
def test_a_class_base_is_refused_exactly_when_the_rules_say(base, rebinding):
    """A base is object, a builtin exception or a class the program defined, under a name it binds
    nowhere else: a rebound name could stand for anything."""
    code = f"import typing\nclass A:\n    pass\n{rebinding}class B({base}):\n    pass\n"
    rebound = rebinding.split(" = ")[0].split("(")[-1].split(")")[0] if rebinding else None
    allowed = base in {"object", "ValueError", "KeyError", "A"} and base != rebound
    assert (check_program(code) is None) == allowed, code


FORMAT_PARTS = ["{}", "{0}", "{name}", "{0:>3}", "{:{1}}", "text", "{{", "}}", "{0!r}"]
FORMAT_LOOKUPS = ["{0.real}", "{0[0]}", "{a.__class__}", "{:{0.x}}", "{name[key]}"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(FORMAT_PARTS + FORMAT_LOOKUPS), max_size=4))
def test_a_literal_format_string_passes_exactly_when_its_fields_are_plain(parts):
    text = "".join(parts)
    looks_up = any(part in FORMAT_LOOKUPS for part in parts)
    assert (check_program(f"y = {text!r}.format(a, b, name=c)") is None) == (not looks_up), text
    assert check_program(f"s = {text!r}\ny = s.format(a)") == "attribute format is not allowed"


EXPRESSION_WRAPPERS = ["(lambda: {e})", "[{e} for q in r]", 'f"{{ {e} }}"', "g({e})", "d[{e}]", "{{1: {e}}}"]
STATEMENT_WRAPPERS = [
    "def f(a={e}):\n    return 1",
    "@{e}\ndef g():\n    pass",
    "class C:\n    v = {e}",
    "def g():\n    def h():\n        return {e}\n    return h",
    "try:\n    pass\nexcept ValueError as err:\n    {e}",
    "with {e} as w:\n    pass",
    "x = {e}",
]


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["__class__", "__dict__", "__globals__", "f_back", "gi_frame", "format", "sys"]),
    st.lists(st.sampled_from(EXPRESSION_WRAPPERS), max_size=3, unique=True),
    st.sampled_from(STATEMENT_WRAPPERS),
)
def test_a_forbidden_attribute_is_refused_wherever_it_is_nested(attribute, around, statement):
    """However deep the access sits (a lambda, a comprehension, an f-string, a default, a decorator,
    a class body, a nested function, an except or with block), the program is refused."""
    expression = f"x.{attribute}"
    for wrapper in around:
        expression = wrapper.format(e=expression)
    code = statement.format(e=expression)
    assert check_program(code) is not None, code
    assert check_program(code.replace(f".{attribute}", ".real")) is None, code


# --- the escapes of issue 44 and the design's list of tricks, each refused with its reason --------------

TYPE_COMPARED = "type is allowed only compared, as in type(x) is int or type(x) == list"
ESCAPES = {
    "().__class__.__base__.__subclasses__()": "attribute __subclasses__ is not allowed",
    "sys.modules['__main__'].DENIED_EVENTS = ()": "string '__main__' is not allowed",
    "import sys\nsys.modules": "import of sys is not allowed",
    "import builtins": "import of builtins is not allowed",
    "__builtins__['set'] = frozenset": "name __builtins__ is not allowed",
    "g = (i for i in [1])\ng.gi_frame.f_back.f_locals['end'](0)": "attribute f_locals is not allowed",
    "try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__": "attribute __traceback__ is not allowed",
    "open(4, 'w').write('[42]')": "open is not allowed",
    "import os\nos.write(4, b'[42]')": "import of os is not allowed",
    "'{0.__class__}'.format(1)": "format fields with attribute or index access are not allowed",
    "'{0[0]}'.format([1])": "format fields with attribute or index access are not allowed",
    "'{:{0.real}}'.format(1)": "format fields with attribute or index access are not allowed",
    "s = '{0.__class__}'\ns.format(1)": "attribute format is not allowed",
    "str.format('{}', 1)": "attribute format is not allowed",
    "'{x.y}'.format_map({})": "attribute format_map is not allowed",
    "import string\nstring.Formatter().get_field('0.x', [1], {})": "attribute get_field is not allowed",
    "from operator import attrgetter": "attribute attrgetter is not allowed",
    "import operator\noperator.methodcaller('x')": "attribute methodcaller is not allowed",
    "import functools\nfunctools.update_wrapper(a, b, ('x',))": "attribute update_wrapper is not allowed",
    "import typing\ntyping.get_type_hints(f)": "attribute get_type_hints is not allowed",
    "import typing\ntyping.sys": "attribute sys is not allowed",
    "from statistics import random": "attribute random is not allowed",
    "import re\nre.enum": "attribute enum is not allowed",
    "type('X', (), {})": TYPE_COMPARED,
    "t = type": TYPE_COMPARED,
    # the third probe's: the class builder as type(type(0)), copy's reducers, a name-driven lookup
    "B = type(type(0))\nB('X', (), {})": TYPE_COMPARED,
    "t = type(0)": TYPE_COMPARED,
    "import copy\ncopy.dispatch_table[C] = r": "attribute dispatch_table is not allowed",
    "from functools import cached_property": "attribute cached_property is not allowed",
    "import functools\nfunctools.partialmethod(f)": "attribute partialmethod is not allowed",
    "import typing\nclass C(typing.NamedTuple):\n    pass": "base typing.NamedTuple is not allowed",
    "class A:\n    pass\nA = dict\nclass B(A):\n    pass": "base A is not allowed",
    "object = dict\nclass A(object):\n    pass": "base object is not allowed",
    "class C(metaclass=M):\n    pass": "class keywords (metaclass=...) are not allowed",
    "class C:\n    def __del__(self):\n        pass": "name __del__ is not allowed",
    "class C:\n    __slots__ = ()": "name __slots__ is not allowed",
    "memoryview(b'x')": "memoryview is not allowed",
    "breakpoint()": "breakpoint is not allowed",
    "input()": "input is not allowed",
    "help(1)": "help is not allowed",
    "exit(0)": "exit is not allowed",
    "raise SystemExit(0)": "SystemExit is not allowed",
    "raise MemoryError": "MemoryError is not allowed",
    "from . import x": "relative imports are not allowed",
    "from math import *": "from ... import * is not allowed",
    "import os.path": "import of os.path is not allowed",
    "import collections.abc.x": "import of collections.abc.x is not allowed",
    "async def g():\n    await h()": "AsyncFunctionDef is not allowed",
    "match x:\n    case C(attr=y):\n        pass": "Match is not allowed",
    "def f():\n    global __builtins__": "name __builtins__ is not allowed",
    "f(**{'a': 1}, __x=2)": "name __x is not allowed",
    "x = eval": "eval is not allowed",
    "def f(x):\n    return x.__code__": "attribute __code__ is not allowed",
    "def f(_a):\n    return _a": "name _a is not allowed",
    "\uff47etattr(x, 'y')": "getattr is not allowed",  # a fullwidth g: identifiers are NFKC-normalised
    "x.\uff46_back": "attribute f_back is not allowed",
    # the fourth probe's: type handed to a method of the other operand (a program's __contains__, __eq__
    # or __gt__ received the class builder), and AttributeError.obj (a class's __dict__)
    "class B:\n    def __contains__(self, x):\n        return True\ntype(int) in B()": TYPE_COMPARED,
    "type(int) == k": TYPE_COMPARED,
    "type(int) < k": TYPE_COMPARED,
    "type(int) == g(k)": TYPE_COMPARED,
    "list = k\ntype(int) == list": TYPE_COMPARED,
    "try:\n    pass\nexcept AttributeError as e:\n    d = e.obj": (
        "attribute obj is on no allowed type or module"
    ),
    "import typing, string\ntyping.no_type_check(string.Template)": (
        "attribute no_type_check is on no allowed type or module"
    ),
    "from typing import final": "typing.final is not allowed",
    # found after it: class builders typing holds and hands out
    "import typing\nC = typing.ABCMeta('C', (dict,), {})": (
        "attribute ABCMeta is on no allowed type or module"
    ),
    "import typing\nT = typing.get_origin(typing.Type)": (
        "attribute get_origin is on no allowed type or module"
    ),
    "from typing import NamedTupleMeta": "typing.NamedTupleMeta is not allowed",
}


@pytest.mark.parametrize("code", list(ESCAPES))
def test_each_escape_is_refused_with_its_reason(code):
    assert check_program(code) == ESCAPES[code]


def test_expressions_and_syntax():
    assert check_program("f(1, [2], k=3)", "eval") is None
    assert check_program("(lambda *a, **k: [list(a), k])(1, x=2\n)", "eval") is None
    assert check_program("f(1).__class__", "eval") == "attribute __class__ is not allowed"
    assert check_program("def f(:") == "syntax error"
    assert check_program("x = " + "(" * 500 + ")" * 500) in ("syntax error", "nested too deeply")


def test_the_paper_forbidden_list_is_a_subset_of_what_is_refused():
    assert set(FIG8) <= set(FORBIDDEN)
    for name in FORBIDDEN:
        assert check_program(f"import {name}") is not None, name
        assert check_program(f"x = {name}") is not None or name.split(".")[0] not in dir(builtins), name
        assert name.split(".")[0] not in MODULES, name


# ordinary programs the fourth probe found refused at run time (their types had no list)
LISTED_SINCE = {
    "from collections import UserList\ndef f():\n    u = UserList([3, 1])\n    u.append(2)\n    u.sort()\n"
    "    return list(u)": [1, 2, 3],
    "from collections import UserDict\ndef f():\n    d = UserDict(a=1)\n    d['b'] = 2\n"
    "    return sorted(d.keys()) + [d['a']]": ["a", "b", 1],
    "from collections import UserString\ndef f():\n    return str(UserString('ab').upper())": "AB",
    "import statistics\ndef f():\n    n = statistics.NormalDist(2, 1)\n"
    "    return [n.mean, n.stdev, n.cdf(2)]": [2.0, 1.0, 0.5],
    "from decimal import Decimal\ndef f():\n    t = Decimal('-1.25').as_tuple()\n"
    "    return [t.sign, list(t.digits), t.exponent]": [1, [1, 2, 5], -2],
    "import functools\n@functools.lru_cache(maxsize=None)\ndef g(n):\n"
    "    return n if n < 2 else g(n - 1) + g(n - 2)\n"
    "def f():\n    v = g(20)\n    info = g.cache_info()\n    g.cache_clear()\n"
    "    return [v, info.hits, info.misses, g.cache_info().currsize]": [6765, 18, 21, 0],
    "import string\ndef f():\n    t = string.Template('$who likes $what')\n"
    "    return [t.substitute(who='tim', what='pie'), t.safe_substitute(who='x')]": [
        "tim likes pie",
        "x likes $what",
    ],
}


@pytest.mark.parametrize("code", list(LISTED_SINCE))
def test_ordinary_library_types_run_sealed(code):
    assert sealed(code) == jobs.Sealed("ok", (LISTED_SINCE[code],))


def test_honest_code_passes():
    code = (
        "from collections import Counter, deque\nimport math\nfrom typing import List\n"
        "P = deque([1, 2], maxlen=3)\n"
        "class Stack:\n    def __init__(self):\n        self.items = []\n"
        "    def __len__(self):\n        return len(self.items)\n"
        "def f(xs: List[int], k=2) -> int:\n    total = 0\n    for _ in range(k):\n"
        "        total += sum(x * x for x in xs if x % 2)\n"
        "    seen = {x: i for i, x in enumerate(xs)}\n"
        "    try:\n        q = xs[0] // total\n    except ZeroDivisionError as e:\n        q = str(e)\n"
        "    return f'{total}:{q!r}' + str(type(q) is int) + '_'.join(sorted(Counter('ab')))\n"
        "class Error(ValueError):\n    pass\nclass Base:\n    pass\nclass Leaf(Base, object):\n    pass\n"
        "def g(a, b):\n    return '{} and {:>{w}}, {name}'.format(a, b, w=3, name='x')\n"
    )
    assert check_program(code) is None


def test_refused_attributes_cover_every_module_the_allowed_modules_hold():
    """Every module that an attribute chain from an allowed module reaches, through names the subset
    allows, is itself allowed: the others' names (statistics.random, typing.sys...) are refused."""
    seen, todo = set(), [importlib.import_module(m) for m in MODULES]
    while todo:
        module = todo.pop()
        for name in dir(module):
            value = getattr(module, name, None)
            if not isinstance(value, types.ModuleType) or attribute_refused(name) or value in seen:
                continue
            seen.add(value)
            assert value.__name__ in MODULES, (module.__name__, name)
            todo.append(value)
    assert {m.__name__ for m in seen} <= MODULES


def test_every_library_program_and_cold_start_demonstration_passes():
    """The 36 library programs, their inputs, and every program, input and answer the cold start's
    demonstrations hold (outputs stand for the executor's: any plain value's repr is a literal)."""
    assert len(PROGRAMS) == 36
    for program in PROGRAMS:
        assert check_program(program.code) is None, program.code
        for text in program.inputs:
            assert check_program(f"f({text}\n)", "eval") is None, text
    from trainers.methods.azr.method import AzrOptions

    tasks = [(p, [Task(p.code, text, repr(len(text))) for text in p.inputs]) for p in PROGRAMS]
    options = AzrOptions.from_mapping({"num_inputs": 4})
    demos = AzrDemonstrations(tasks, options, seed=0).build(len(tasks))
    fences = 0
    for demo in demos:
        for label, body in _fences(demo.completion):
            fences += 1
            if label == "python":
                assert check_program(body) is None, body
            elif label == "input":
                assert check_program(f"f({body}\n)", "eval") is None, body
            elif label == "output":
                assert check_program(body, "eval") is None, body
    assert fences >= 6 * len(PROGRAMS)


def _fences(text: str) -> list[tuple[str, str]]:
    out, parts = [], text.split("```")
    for k in range(1, len(parts), 2):
        label, _, body = parts[k].partition("\n")
        out.append((label.strip(), body.strip()))
    return out


def test_a_sealed_run_outside_the_subset_starts_no_process(monkeypatch):
    def no_process(*args, **kwargs):
        raise AssertionError("a process was started")

    monkeypatch.setattr(jobs, "Proc", no_process)
    sealed = jobs.run_sealed({"code": "def f():\n    return ().__class__"}, Limits())
    assert (sealed.ending, sealed.reason) == ("refused", "attribute __class__ is not allowed")
    sealed = jobs.run_sealed({"code": "", "expression": "vars()"}, Limits())
    assert (sealed.ending, sealed.reason) == ("refused", "vars is not allowed")
    assert subset.check_program is check_program


@pytest.mark.parametrize(
    "received, expected, values",
    [
        (b"[1, [2, 3]]\n", 2, (1, [2, 3])),
        (b"[{'t': [1, 2]}]\n", 1, ((1, 2),)),
        (b"[42, 42] #[7, 7]\n", 2, None),  # text written before the driver's own line
        (b" [42, 42]\n", 2, None),
        (b"[42,42]\n", 2, None),
        (b"[42]\n[7]\n", 1, None),
        (b"[42]", 1, None),
        (b"[42]\n", 2, None),
        (b"{'results': [['ok', 42]]}\n", 1, None),
        (b"[{'x': 1}]\n", 1, None),  # not an encoding
        (b"[" * 100 + b"]" * 100 + b"\n", 1, None),
    ],
)
def test_a_sealed_reply_is_one_canonical_line_of_values(received, expected, values):
    assert jobs.reply_values(received, expected) == values


def _reached_by_allowed_reads(depth: int):
    """Every (chain, object) that up to `depth` attribute reads allowed by the subset reach, from the
    allowed modules, the allowed builtins and a literal of each value type."""
    allowed = [importlib.import_module(m) for m in sorted(MODULES)] + [getattr(builtins, b) for b in BUILTINS]
    literals = [0, 1.5, 1j, "s", b"b", bytearray(b"b"), [1], (1,), {1: 2}, {1}, frozenset(), range(3), ...]
    frontier = [(getattr(v, "__name__", type(v).__name__), v) for v in allowed + literals]
    kept = {id(v): v for _, v in frontier}  # held, so that no id is reused by a later object
    for _ in range(depth):
        following = []
        for chain, value in frontier:
            for name in dir(value):
                if attribute_refused(name):
                    continue
                try:
                    reached = getattr(value, name)
                except Exception:
                    continue
                yield f"{chain}.{name}", reached
                if id(reached) not in kept:
                    kept[id(reached)] = reached
                    following.append((f"{chain}.{name}", reached))
        frontier = following


def test_no_chain_of_allowed_attribute_reads_reaches_the_interpreter():
    """Attribute reachability (issue 52): no chain of up to 4 attribute reads that the subset allows
    reaches a module outside the list, a frame, code object or traceback, a class's __dict__ or a builtin
    function outside the list. Reads only: what a call returns is the seal's and the sandbox's concern."""
    refused_builtins = {id(getattr(builtins, n)) for n in dir(builtins) if n not in BUILTINS}
    found, reached = [], 0
    for chain, value in _reached_by_allowed_reads(4):
        reached += 1
        if isinstance(value, types.ModuleType) and value.__name__ not in MODULES:
            found.append(f"{chain}: module {value.__name__}")
        elif isinstance(value, types.FrameType | types.CodeType | types.TracebackType):
            found.append(f"{chain}: {type(value).__name__}")
        elif isinstance(value, types.MappingProxyType) and "__module__" in value:
            found.append(f"{chain}: a class's __dict__")
        elif callable(value) and id(value) in refused_builtins:
            found.append(f"{chain}: builtin {value!r}")
        elif _class_builder(value):
            found.append(f"{chain}: class builder {value!r}")
    assert reached > 2_000 and found == []  # 4,229 reads on Python 3.11


def _class_builder(value: object) -> bool:
    """`type` or another metaclass: called with three arguments, it builds a class with any base and
    any dunder method, past the subset's rules on both."""
    return isinstance(value, type) and issubclass(value, type)


# every listed function of the allowed modules called on every listed value of theirs, each call under
# a 0.2 s timer, in a process of its own (some calls write on what they are given)
CALLS = """
import importlib, signal
from harness.sandbox import allowlist

def builder(value):
    return isinstance(value, type) and issubclass(value, type)

def stop(*_):
    raise TimeoutError

signal.signal(signal.SIGALRM, stop)
modules = allowlist.MODULES.items()
values = {f"{m}.{n}": getattr(importlib.import_module(m), n) for m, names in modules for n in names}
for name, function in values.items():
    if not callable(function) or isinstance(function, type):
        continue
    for argument, value in values.items():
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        try:
            result = function(value)
        except BaseException:
            continue
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if any(builder(x) for x in (result if isinstance(result, tuple | list) else (result,))):
            print(f"{name}({argument})")
"""


def test_no_listed_function_hands_out_a_class_builder():
    """Calls (issue 52, part 8): typing.get_origin(typing.Type) was the class builder `type`, and
    typing.ABCMeta one; no listed function of the allowed modules returns one (or a tuple or list
    holding one) for any listed value of theirs. copy.copy and copy.deepcopy return what they are given."""
    ended = subprocess.run([sys.executable, "-c", CALLS], capture_output=True, text=True, timeout=600)
    assert ended.returncode == 0, ended.stderr[-2000:]
    assert ended.stdout.splitlines() == []


def test_every_module_built_from_c_that_the_allowed_modules_load_is_loaded_before_the_seal():
    """Once sealed, nothing builds a module from C (driver.seal): whatever such module importing the
    allowed modules loads, in the sandbox's own Python, must be in `EXTENSIONS`, which the driver loads
    first. Then the CRUXEval-style codecs, loaded on demand by str.encode."""
    import subprocess

    from harness.sandbox import isolation

    probe = (
        "import importlib, sys\n"
        "before = set(sys.modules)\n"
        f"for name in {sorted(MODULES)!r}: importlib.import_module(name)\n"
        "'x'.encode('shift_jis'); 'x'.encode('idna')\n"
        "for name in sorted(set(sys.modules) - before):\n"
        "    origin = getattr(sys.modules[name].__spec__, 'origin', None) or ''\n"
        "    if origin == 'built-in' or origin.endswith('.so'): print(name)\n"
    )
    python, _ = isolation.interpreter()
    done = subprocess.run([python, "-I", "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    assert "_decimal" in loaded and "_codecs_jp" in loaded  # the probe saw what it should
    assert loaded <= set(subset.EXTENSIONS), loaded - set(subset.EXTENSIONS)


def test_every_listed_attribute_exists_on_its_type_or_module():
    """allowlist.py names real attributes only, none starting with an underscore, none refused."""
    for key, names in allowlist.TYPES.items():
        module, _, qualname = key.partition(".")
        kind = {
            "dict_keys": type({}.keys()),
            "dict_values": type({}.values()),
            "dict_items": type({}.items()),
            "generator": types.GeneratorType,
            "CacheInfo": type(functools.lru_cache(min).cache_info()),  # functools holds it as _CacheInfo
        }.get(qualname) or getattr(importlib.import_module(module), qualname)
        assert f"{kind.__module__}.{kind.__qualname__}" == key
        for name in names:
            assert hasattr(kind, name) and not name.startswith("_") and name not in ATTRIBUTES, (key, name)
    assert set(allowlist.MODULES) == set(MODULES)  # every allowed module has its list
    for module, names in allowlist.MODULES.items():
        for name in names:
            value = getattr(importlib.import_module(module), name)
            assert not isinstance(value, types.ModuleType) and name not in ATTRIBUTES, (module, name)


def sealed(code: str, *args):
    return jobs.run_sealed({"code": code, "cases": [encode([list(args), {}])]}, Limits())


# receivers whose real type decides what may be read, and how a program makes each
RECEIVERS = {
    "'abc'": "abc",
    "[3, 1]": [3, 1],
    "{'a': 1}": {"a": 1},
    "7": 7,
    "2.5": 2.5,
    "frozenset({1})": frozenset({1}),
    "range(3)": range(3),
    "Counter('aab')": Counter("aab"),
    "deque([1])": deque([1]),
    "Fraction(1, 3)": Fraction(1, 3),
    "re.compile('a')": re.compile("a"),
    "re.match('a', 'a')": re.match("a", "a"),
    "math": math,
    "str": str,
    "ValueError('x')": ValueError("x"),
    "(x for x in [1])": (x for x in [1]),
    "len": len,
}
PRELUDE = "import math, re\nfrom collections import Counter, deque\nfrom fractions import Fraction\n"


def listed(value, name: str) -> bool:
    """The runtime rule, restated: the module's list, the class's own list, or the lists of the classes in
    the type's MRO."""
    if isinstance(value, types.ModuleType):
        return name in allowlist.MODULES.get(value.__name__, ())
    kinds = [value] if isinstance(value, type) else type(value).__mro__
    return any(name in allowlist.TYPES.get(f"{k.__module__}.{k.__qualname__}", ()) for k in kinds)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(RECEIVERS)), st.sampled_from(sorted(NAMES)))
def test_an_attribute_read_runs_exactly_when_the_receivers_type_lists_it(receiver, name):
    """Layer 1 at run time: every listed name passes the static check, and the sealed program reads it
    only from an object whose real type (or module) lists it."""
    value = RECEIVERS[receiver]
    run = sealed(f"{PRELUDE}def f():\n    v = {receiver}\n    w = v.{name}\n    return 1")
    if listed(value, name) and hasattr(value, name):
        assert run.ending == "ok", (receiver, name, run)
    else:
        assert run.ending == "raised" and "AttributeError" in run.reason, (receiver, name, run)
        assert ("is not allowed" in run.reason) == (not listed(value, name)), (receiver, name, run)


def test_the_programs_own_objects_take_any_public_attribute_and_nothing_else_takes_one():
    own = (
        "class A:\n    def __init__(self):\n        self.total = 1\n"
        "    def get(self):\n        return self.total\n"
        "class B(A):\n    def more(self):\n        return super().get() + 1\n"
        "def f():\n    b = B()\n    b.extra = 2\n    A.shared = 3\n    del b.extra\n"
        "    return b.more() + b.shared"
    )
    assert sealed(own).values == (5,)
    for target in ("math", "f", "[]", "str", "Counter()", "ValueError()"):
        run = sealed(f"{PRELUDE}def f():\n    v = {target}\n    v.note = 1\n    return 1")
        assert run.ending == "raised" and "only the program's own" in run.reason, (target, run)


def test_the_runtime_guard_holds_where_the_static_check_is_fooled():
    """A name the program defines on its own class passes the static check anywhere; at run time only
    the program's own objects have it. A method of one type is not read from another."""
    run = sealed(
        "class A:\n    def __init__(self):\n        self.append = 1\ndef f():\n    return (7).append"
    )
    assert run.ending == "raised" and "attribute append of int is not allowed" in run.reason
    run = sealed("def f():\n    return [].maketrans")
    assert run.ending == "raised" and "attribute maketrans of list is not allowed" in run.reason
    assert sealed("def f():\n    return str.maketrans('a', 'b')").values == ({97: 98},)


@pytest.mark.parametrize(
    "code",
    [
        "from typing import NamedTuple",
        "from typing import TypedDict",
        "from typing import NewType",
        "from collections import namedtuple",
        "import collections\nP = collections.namedtuple('P', 'a')",
        "import functools\nP = functools.namedtuple('P', 'a')",
    ],
)
def test_class_builders_that_run_generated_code_are_refused(code):
    assert check_program(code) is not None


def test_every_subscript_goes_through_the_item_guard():
    """Reads, writes and deletions, by a string, an int, a slice or a name: each receiver is ITEM(x)."""
    code = "def f(d, k):\n    d['a'] = d[k][1:]\n    del d[0]\n    return d.get(k)[-1], list[int]"
    guarded = subset.add_guards(code)
    subscripts = sum(isinstance(node, ast.Subscript) for node in ast.walk(ast.parse(code)))
    assert guarded.count(f"{allowlist.ITEM}(") == subscripts == 6, guarded
    assert guarded.count(f"{allowlist.ITEM}(d)[") == 3 and f"{allowlist.ITEM}(list)[int]" in guarded


@pytest.mark.parametrize(
    "code",
    [
        "import operator\ndef f(x):\n    return operator.getitem(x, 'a')",
        "from operator import setitem",
        "from operator import delitem",
        "import operator\nkey = operator.itemgetter('a')",
    ],
)
def test_operators_subscripts_that_would_bypass_the_item_guard_are_refused(code):
    assert check_program(code) is not None


def test_plain_subscripts_run_guarded():
    code = (
        f"{PRELUDE}import typing\n"
        "class Grid:\n    def __getitem__(self, k):\n        return k * 2\n"
        "def f(d):\n"
        "    d['b'] = d['a'][1:] + 'abc'[0] + [9, 8][-1:][0].__str__()\n"
        "    del d['a']\n"
        "    c = Counter('aab')\n    q = deque([4, 5])\n    m = re.match('(a)', 'a')\n"
        "    hints = (list[int], dict[str, int], typing.Optional[int], typing.Dict[str, int])\n"
        "    return d, c['a'], q[1], m[1], Grid()[3], (1, 2)[0], b'ab'[0], range(5)[2], len(hints)"
    )
    assert check_program(code) is not None  # the dunder read: the first layer refuses it
    code = code.replace("[9, 8][-1:][0].__str__()", "str([9, 8][-1:][0])")
    assert sealed(code, {"a": "xyz"}).values == (({"b": "yza8"}, 2, 5, "a", 6, 1, 97, 2, 4),)


# objects a program could only reach past the first layer (a class's namespace, a view of memory)
UNLISTED = {"str.__dict__": vars(str), "memoryview(b'ab')": memoryview(b"ab")}


def subscriptable(value) -> bool:
    """The guard's rule, restated: a class, one of typing's forms, or a listed type in its type's MRO."""
    kinds = type(value).__mro__
    listed_type = any(f"{k.__module__}.{k.__qualname__}" in allowlist.TYPES for k in kinds)
    return isinstance(value, type) or type(value).__module__ == "typing" or listed_type


@pytest.mark.parametrize("receiver", sorted(RECEIVERS) + sorted(UNLISTED))
def test_a_subscript_runs_exactly_when_the_receivers_type_is_listed(receiver, monkeypatch):
    """The guard itself, in the sealed process, with the first layer off (sandbox_helpers.without_subset)
    so that receivers no allowed name reaches can be made: ITEM passes an object of a listed type (or
    the program's, a class, typing's), and refuses the rest."""
    without_subset(monkeypatch)
    code = f"import sys\n{PRELUDE}def f():\n    v = {receiver}\n    return {allowlist.ITEM}(v) is v"
    run = sealed(code)
    if not subscriptable(RECEIVERS.get(receiver, UNLISTED.get(receiver))):
        assert run.ending == "raised" and "cannot be subscripted here" in run.reason, (receiver, run)
    else:
        assert run.values == (True,), (receiver, run)
