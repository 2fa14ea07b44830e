"""The package's structure: imports point down the layers of docs/architecture.md, and none form a cycle.

Every import counts, including those inside functions (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "benchmarks", "trainers", "results")

# Lowest first. A module may import its own layer and the layers below it, never one above.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("harness=", "harness.core", "results")),  # harness= : the package's own __init__ (HarnessError)
    ("engines and sandbox", ("harness.backends", "harness.sandbox")),
    ("probing", ("harness.probing",)),
    ("scoring", ("harness.scoring",)),
    ("benchmarks", ("benchmarks", "harness.papers")),
    ("run config", ("harness.config",)),
    ("stages", ("harness.stages",)),
    ("runs", ("harness.runs",)),
    ("readers and the method API", ("harness.report", "harness.analysis", "harness.view", "trainers")),
    ("TRL integration", ("trainers.integration",)),
    ("studies", ("trainers.studies",)),
    ("command line", ("harness.cli", "harness.__main__")),
]


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(known: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the project modules it imports anywhere in its file."""
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                # `from pkg import mod` depends on pkg.mod; `from pkg import name` on pkg itself
                targets.update(
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                    for alias in node.names
                )
        graph[name] = {t for t in (_owner(t, known) for t in targets) if t and t != name}
    return graph


def _owner(target: str, known: dict[str, Path]) -> str | None:
    """The project module an import name refers to (`a.b.func` -> `a.b`), or None outside the project."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def layer_of(module: str) -> int:
    best, best_length = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            exact = prefix.endswith("=")
            prefix = prefix.rstrip("=")
            matches = module == prefix or (not exact and module.startswith(prefix + "."))
            if matches and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    assert best is not None, f"{module} is in no layer: add it to LAYERS (and docs/architecture.md)"
    return best


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_cycles_and_only_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"f"}, "f": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_relative_and_lazy_imports_are_seen():
    graph = imports(modules())
    assert "harness.stages.plan" in graph["harness.runs.evaluate"]
    assert "harness.backends.chat" in graph["harness.backends"]  # inside check_model


def test_no_import_cycles():
    assert cycles(imports(modules())) == []


def test_imports_point_down_the_layers():
    upward = [
        f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for module, targets in sorted(imports(modules()).items())
        for target in sorted(targets)
        if layer_of(target) > layer_of(module)
    ]
    assert upward == []


def test_trainers_and_readers_do_not_import_each_other():
    """Both sit on the machinery below them (probing, stages, scoring); neither reaches into the other."""
    readers = ("harness.report", "harness.analysis", "harness.view")
    crossing = [
        f"{module} imports {target}"
        for module, targets in sorted(imports(modules()).items())
        for target in sorted(targets)
        if (module.startswith("trainers") and target.startswith(readers))
        or (module.startswith(readers) and target.startswith("trainers"))
    ]
    assert crossing == []


# tests/ mirrors the code: tests/test_PACKAGE/X holds the tests of PACKAGE/X
MIRRORS = {"test_harness": "harness", "test_trainers": "trainers", "test_benchmarks": "benchmarks"}
TIERS = {"engines", "multiproc", "perf", "golden"}  # a tier's tests or expected files, not a package's
WHOLE_PROJECT = {  # the only test files at the top level: each crosses the whole project
    "test_architecture.py",
    "test_bad_input.py",
    "test_demo.py",
    "test_docs.py",
    "test_eval_e2e.py",
    "test_eval_without_train_extra.py",
    "test_hostile_input.py",
    "test_readme_tour.py",
    "test_registry_wide.py",
    "test_results_e2e.py",
}


def test_tests_mirror_the_code():
    tests = REPO / "tests"
    folders = {p.name for p in tests.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == set(MIRRORS) | TIERS
    orphans = [
        str(folder.relative_to(tests))
        for mirror, package in MIRRORS.items()
        for folder in [tests / mirror, *(tests / mirror).rglob("*")]
        if folder.is_dir()
        and folder.name != "__pycache__"
        and not (REPO / package / folder.relative_to(tests / mirror) / "__init__.py").is_file()
    ]
    assert orphans == []
    assert {p.name for p in tests.glob("test_*.py")} == WHOLE_PROJECT
