"""The language subset that model-written code must keep to before the sealed executor runs it.

`check_program(code)` returns None for code inside the subset, else a one-line reason. It reads the
syntax tree only (nothing runs) and allows, rather than forbids: node types from `NODES`, builtin
names from `BUILTINS`, imports from `MODULES`. On top of that allowlist it refuses

- every name, identifier and attribute that starts with ``_`` (a bare ``_`` is an ordinary variable),
  except the method names in `DUNDER_METHODS` when defined directly in a class body;
- `type` except as a one-argument call compared by identity (``type(x) is int``), or by ``==`` and
  ``!=`` with such calls and builtin type names the program never binds (``type(x) == list``): as a
  value, ``type(type(0))`` is the class builder under another spelling, and any other comparison
  (``in``, ``<``, ``==`` with another operand) would hand it to the other side's ``__contains__``,
  ``__gt__`` or ``__eq__``, which a program may define (``type(int) in box`` gave a program the class
  builder);
- class bases other than ``object``, the builtin exceptions and the program's own classes (a base
  from a module brings its machinery: metaclasses, ``__class_getitem__``...);
- attributes that reach frames, code objects or tracebacks (``f_``, ``tb_``, ``gi_``, ``cr_``,
  ``ag_``, ``co_`` prefixes) and the names in `ATTRIBUTES`: string-driven attribute lookups
  (`str.format`, whose ``{0.attr}`` fields look attributes up, except on a string literal whose
  fields are plain; `operator.attrgetter`, `functools.update_wrapper`...),
  evaluation of annotation strings (`typing.get_type_hints`) and modules that the allowed modules
  hold as attributes (``statistics.sys``);
- dunder-shaped string constants (``"__class__"``), a second line of defence for the above;
- attributes named in no list of `allowlist.py` (the public methods of the plain value types, the
  public names of each allowed module) that the program does not define itself (``self.count = 0``, a
  method of its class), and names imported from a module that its list lacks.

`add_guards(code)` then rewrites the checked code for the sealed executor: every attribute read
``obj.name`` becomes ``GET(obj, "name")``, which reads it only if the list of obj's real type (or
module) has the name, or obj is the program's own; every attribute write or deletion ``obj.name = v``
becomes ``OWN(obj).name = v``, which only the program's own classes and their instances pass; every
subscript ``obj[key]`` (read, write or deletion, by a string or any other key) becomes
``ITEM(obj)[key]``, which only objects of a listed type, the program's own, classes (``list[int]``)
and typing's forms pass (driver.attribute_guard).

So the code can name nothing of the interpreter's internals: no frame, module, code object or
builtin that reaches the process it runs in. docs/evaluating/sandbox.md says what this layer
guarantees and what the sandbox's seal adds under it.
"""

from __future__ import annotations

import ast
import builtins
import re
import string
from collections import Counter

from harness.core.threadsafe_ast import parse
from harness.sandbox import allowlist

# the pure modules a program may import (and from which it may import names)
MODULES = frozenset(
    {
        "math",
        "itertools",
        "collections",
        "collections.abc",
        "functools",
        "heapq",
        "bisect",
        "string",
        "re",
        "operator",
        "fractions",
        "decimal",
        "statistics",
        "copy",
        "typing",
    }
)
# the modules built from C that importing `MODULES` loads (tests/test_harness/sandbox/test_sandbox_subset.py
# keeps the list complete), and those that allowed code loads on demand: the codecs of str.encode and
# bytes.decode ("shift_jis", "hex"...). The sealed executor loads them before it seals, as nothing builds
# a module from C after that (driver.seal); one missing from a build is skipped
EXTENSIONS = (
    "_bisect",
    "_decimal",
    "_heapq",
    "_random",
    "_sha512",
    "_statistics",
    "_string",
    "_typing",
    "math",
    "_multibytecodec",
    "_codecs_cn",
    "_codecs_hk",
    "_codecs_iso2022",
    "_codecs_jp",
    "_codecs_kr",
    "_codecs_tw",
    "binascii",
    "unicodedata",
    "zlib",
)
_EXCEPTIONS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, Exception) and value is not MemoryError
}
# MemoryError is left out: a program that runs out of memory is told apart by its exit status, and
# one that raised MemoryError itself would look like it
BUILTINS = frozenset(
    {
        *_EXCEPTIONS,
        "Ellipsis",
        "NotImplemented",
        "abs",
        "all",
        "any",
        "ascii",
        "bin",
        "bool",
        "bytearray",
        "bytes",
        "callable",
        "chr",
        "classmethod",
        "complex",
        "dict",
        "divmod",
        "enumerate",
        "filter",
        "float",
        "format",
        "frozenset",
        "hash",
        "hex",
        "id",
        "int",
        "isinstance",
        "issubclass",
        "iter",
        "len",
        "list",
        "map",
        "max",
        "min",
        "next",
        "object",
        "oct",
        "ord",
        "pow",
        "print",
        "property",
        "range",
        "repr",
        "reversed",
        "round",
        "set",
        "slice",
        "sorted",
        "staticmethod",
        "str",
        "sum",
        "super",
        "tuple",
        "type",
        "zip",
    }
)
# the classes a program's class may derive from, besides its own
BASES = frozenset({"object", *_EXCEPTIONS})
# the builtin classes `type(x)` may be compared with by `==` (their metaclass is type: equality is identity)
TYPE_NAMES = frozenset(
    {"int", "float", "complex", "bool", "str", "bytes", "list", "tuple", "dict", "set", "frozenset", "range"}
)
# every other builtin (getattr, vars, eval, exec, compile, open, input, breakpoint, memoryview...)
REFUSED_BUILTINS = frozenset(name for name in dir(builtins) if name not in BUILTINS)
FRAME_PREFIXES = ("f_", "tb_", "gi_", "cr_", "ag_", "co_")
ATTRIBUTES = frozenset(
    {
        # attribute lookups by a string
        "format",
        "format_map",
        "vformat",
        "get_field",
        "Formatter",
        "attrgetter",
        "methodcaller",
        "update_wrapper",
        "wraps",
        "cached_property",  # looks its attribute up by the name it is assigned to
        "partialmethod",
        # object building: copy's reducers (copyreg's table, reachable as copy.dispatch_table)
        "dispatch_table",
        # strings evaluated as code
        "get_type_hints",
        "ForwardRef",
        "singledispatch",
        "singledispatchmethod",
        # modules the allowed modules hold (tests/test_harness/sandbox/test_sandbox_subset.py checks this list
        # is complete)
        "builtins",
        "contextlib",
        "copyreg",
        "enum",
        "gc",
        "importlib",
        "inspect",
        "io",
        "numbers",
        "os",
        "posix",
        "random",
        "stdlib_re",
        "sys",
        "types",
        "warnings",
    }
)
# every attribute name some allowed type or module has (allowlist.py)
NAMES = frozenset(n for names in (*allowlist.TYPES.values(), *allowlist.MODULES.values()) for n in names)
DUNDER_METHODS = frozenset(
    {
        "__init__",
        "__repr__",
        "__str__",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__hash__",
        "__len__",
        "__bool__",
        "__iter__",
        "__next__",
        "__contains__",
        "__getitem__",
        "__setitem__",
        "__call__",
        "__add__",
        "__sub__",
        "__mul__",
    }
)
NODES = frozenset(
    {
        # statements
        ast.Module,
        ast.Expression,
        ast.FunctionDef,
        ast.ClassDef,
        ast.Return,
        ast.Delete,
        ast.Assign,
        ast.AugAssign,
        ast.AnnAssign,
        ast.For,
        ast.While,
        ast.If,
        ast.With,
        ast.Raise,
        ast.Try,
        ast.Assert,
        ast.Import,
        ast.ImportFrom,
        ast.Global,
        ast.Nonlocal,
        ast.Expr,
        ast.Pass,
        ast.Break,
        ast.Continue,
        # expressions
        ast.BoolOp,
        ast.NamedExpr,
        ast.BinOp,
        ast.UnaryOp,
        ast.Lambda,
        ast.IfExp,
        ast.Dict,
        ast.Set,
        ast.ListComp,
        ast.SetComp,
        ast.DictComp,
        ast.GeneratorExp,
        ast.Yield,
        ast.YieldFrom,
        ast.Compare,
        ast.Call,
        ast.FormattedValue,
        ast.JoinedStr,
        ast.Constant,
        ast.Attribute,
        ast.Subscript,
        ast.Starred,
        ast.Name,
        ast.List,
        ast.Tuple,
        ast.Slice,
        # parts
        ast.Load,
        ast.Store,
        ast.Del,
        ast.comprehension,
        ast.ExceptHandler,
        ast.arguments,
        ast.arg,
        ast.keyword,
        ast.alias,
        ast.withitem,
        *(c for c in vars(ast).values() if isinstance(c, type) and issubclass(c, ast.boolop | ast.operator)),
        *(c for c in vars(ast).values() if isinstance(c, type) and issubclass(c, ast.unaryop | ast.cmpop)),
    }
)
_DUNDER_STRING = re.compile(r"__\w+__")
_FIELD = re.compile(r"\w*")  # a format field's name: a position or a keyword, never `.attr` or `[key]`


class _Refused(Exception):
    """Carries the reason out of the walk."""


def check_program(code: str, mode: str = "exec") -> str | None:
    """None when `code` (a module, or with mode="eval" an expression) keeps to the subset; else why
    not, in one line ("attribute __class__ is not allowed", "import of os is not allowed")."""
    try:
        tree = parse(code, mode)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "syntax error"
    walk = _Walk(tree)
    try:
        walk.visit(tree, in_class=False)
    except _Refused as e:
        return str(e)
    except RecursionError:
        return "nested too deeply"
    if walk.unknown:  # after the walk: any other rule's reason comes first
        return f"attribute {walk.unknown[0]} is on no allowed type or module"
    return None


class _Walk:
    """One check's walk over a tree: every node's type is allowed and its own rule holds."""

    def __init__(self, tree: ast.AST):
        self.type_calls: set[int] = set()  # the `type` names called with one argument in a comparison
        self.classes: set[str] = set()  # the classes the program has defined so far, by unrebound names
        self.bindings = Counter(_bound_names(tree))
        self.own = set(_own_attributes(tree))
        self.unknown: list[str] = []  # attributes read that no allowed type or module has

    def visit(self, node: ast.AST, in_class: bool) -> None:
        if type(node) not in NODES:
            raise _Refused(f"{type(node).__name__} is not allowed")
        self.rule(node, in_class)
        for child in ast.iter_child_nodes(node):
            self.visit(child, isinstance(node, ast.ClassDef))

    def runs_no_method(self, node: ast.Compare) -> bool:
        """Whether the comparison calls no method a program may define: by identity only, or `==` and
        `!=` between `type(x)` calls (plain classes, whose `__eq__` is type's) and builtin type names
        the program never binds (`type(x) == list`)."""
        if all(isinstance(op, ast.Is | ast.IsNot) for op in node.ops):
            return True
        return all(isinstance(op, ast.Is | ast.IsNot | ast.Eq | ast.NotEq) for op in node.ops) and all(
            self.plain_class(operand) for operand in (node.left, *node.comparators)
        )

    def plain_class(self, node: ast.AST) -> bool:
        if _one_argument_call(node):
            return node.func.id == "type"
        return isinstance(node, ast.Name) and node.id in TYPE_NAMES and not self.bindings[node.id]

    def rule(self, node: ast.AST, in_class: bool) -> None:
        if isinstance(node, ast.Name):
            _identifier(node.id)
            if node.id in REFUSED_BUILTINS:
                raise _Refused(f"{node.id} is not allowed")
            if node.id == "type" and id(node) not in self.type_calls:
                raise _Refused("type is allowed only compared, as in type(x) is int or type(x) == list")
        elif isinstance(node, ast.Attribute):
            if not _literal_format(node):
                _attribute(node.attr)
                if node.attr not in NAMES and node.attr not in self.own:
                    self.unknown.append(node.attr)
        elif isinstance(node, ast.Compare) and self.runs_no_method(node):
            for operand in (node.left, *node.comparators):
                if _one_argument_call(operand):
                    self.type_calls.add(id(operand.func))
        elif isinstance(node, ast.FunctionDef):
            if not (in_class and node.name in DUNDER_METHODS):
                _identifier(node.name)
        elif isinstance(node, ast.ClassDef):
            _identifier(node.name)
            if node.keywords:
                raise _Refused("class keywords (metaclass=...) are not allowed")
            for base in node.bases:
                builtin = isinstance(base, ast.Name) and base.id in BASES and not self.bindings[base.id]
                if not (builtin or isinstance(base, ast.Name) and base.id in self.classes):
                    raise _Refused(f"base {ast.unparse(base)[:60]} is not allowed")
            if self.bindings[node.name] == 1:  # a name bound once: it stays this class
                self.classes.add(node.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                _module(alias.name)
        elif isinstance(node, ast.ImportFrom):
            _import_from(node)
        elif isinstance(node, ast.alias) and node.asname is not None:
            _identifier(node.asname)
        elif isinstance(node, ast.arg | ast.keyword) and node.arg is not None:
            _identifier(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name is not None:
            _identifier(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                _identifier(name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _DUNDER_STRING.fullmatch(node.value):
                raise _Refused(f"string {node.value!r} is not allowed")


def _bound_names(tree: ast.AST):
    """Every name each binding in `tree` binds (assignments, deletions, parameters, imports, handlers,
    definitions), once per binding."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            yield node.id
        elif isinstance(node, ast.arg):
            yield node.arg
        elif isinstance(node, ast.alias):
            yield node.asname or node.name.split(".")[0]
        elif isinstance(node, ast.ExceptHandler | ast.FunctionDef | ast.ClassDef) and node.name:
            yield node.name


def _own_attributes(tree: ast.AST):
    """The attribute names the program defines: those it assigns or deletes (``self.count = 0``) and
    the names bound directly in its class bodies (methods, class attributes)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            yield node.attr
        elif isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, ast.FunctionDef | ast.ClassDef):
                    yield statement.name
                for target in getattr(statement, "targets", [getattr(statement, "target", None)]):
                    if isinstance(target, ast.Name):
                        yield target.id


def add_guards(code: str, mode: str = "exec") -> str:
    """`code` (checked by `check_program`) with every attribute read and write and every subscript
    routed through the sealed executor's guards (`allowlist.GET`, `OWN`, `ITEM`); ``"...".format`` on
    a plain literal is left as it is (its fields were checked)."""
    return ast.unparse(ast.fix_missing_locations(_Guard().visit(parse(code, mode))))


class _Guard(ast.NodeTransformer):
    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        node.value = ast.Call(ast.Name(allowlist.ITEM, ast.Load()), [node.value], [])
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            if _literal_format(node):
                return node
            guard = ast.Name(allowlist.GET, ast.Load())
            return ast.copy_location(ast.Call(guard, [node.value, ast.Constant(node.attr)], []), node)
        node.value = ast.Call(ast.Name(allowlist.OWN, ast.Load()), [node.value], [])
        return node


def _one_argument_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
    )


def _literal_format(node: ast.Attribute) -> bool:
    """Whether `node` is ``"...".format`` on a string literal whose fields are positions or names only
    ("{}", "{0:>{1}}", "{name}"): the one `str.format` that cannot reach an attribute."""
    if node.attr != "format" or not (
        isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    ):
        return False
    if not _plain_fields(node.value.value):
        raise _Refused("format fields with attribute or index access are not allowed")
    return True


def _plain_fields(text: str) -> bool:
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError:
        return False
    return all(
        (field is None or _FIELD.fullmatch(field)) and (not spec or _plain_fields(spec))
        for _, field, spec, _ in fields
    )


def _import_from(node: ast.ImportFrom) -> None:
    if node.level or node.module is None:
        raise _Refused("relative imports are not allowed")
    _module(node.module)
    for alias in node.names:
        if alias.name == "*":
            raise _Refused("from ... import * is not allowed")
        _attribute(alias.name)
        if alias.name not in allowlist.MODULES[node.module] and f"{node.module}.{alias.name}" not in MODULES:
            raise _Refused(f"{node.module}.{alias.name} is not allowed")


def _identifier(name: str) -> None:
    if name.startswith("_") and name != "_":
        raise _Refused(f"name {name} is not allowed")


def _attribute(name: str) -> None:
    if name.startswith(("_", *FRAME_PREFIXES)) or name in ATTRIBUTES:
        raise _Refused(f"attribute {name} is not allowed")


def _module(name: str) -> None:
    if name not in MODULES:
        raise _Refused(f"import of {name} is not allowed")
