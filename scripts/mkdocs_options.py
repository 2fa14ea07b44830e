"""MkDocs hook: a method page's `<!-- options: NAME -->` line becomes the table of every field of that
method's options dataclass (the `MethodOptions` subclass in trainers/methods/NAME/method.py), with its
default, its bounds or allowed values and the comment the code gives it. The source is read, not
imported, so the docs build needs neither torch nor TRL; a new option appears in the docs when it
appears in the code."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^<!-- options: (\w+) -->$", re.MULTILINE)
BOUNDS = {"minimum": "≥", "exclusive_minimum": ">", "maximum": "≤", "exclusive_maximum": "<"}


def options_class(tree: ast.Module) -> ast.ClassDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(
            isinstance(b, ast.Name) and b.id == "MethodOptions" for b in node.bases
        ):
            return node
    raise ValueError("no MethodOptions subclass")


def _strings(node: ast.AST | None, constants: dict[str, ast.AST]) -> list[str]:
    """The strings of a tuple literal, or of the module constant it names."""
    if isinstance(node, ast.Name) and node.id in constants:
        node = constants[node.id]
    if isinstance(node, ast.Tuple | ast.List):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def comment(lines: list[str], field: ast.AnnAssign) -> str:
    """The comment on the field's line, or the comment lines just above it."""
    line = lines[field.lineno - 1]
    if "  # " in line:
        return line.split("  # ", 1)[1].strip()
    above = []
    for text in reversed(lines[: field.lineno - 1]):
        if not text.strip().startswith("#"):
            break
        above.insert(0, text.strip().lstrip("#").strip())
    return " ".join(above)


def rows(source: str) -> list[dict[str, Any]]:
    """One row per option field: name, default, allowed values or bounds, meaning."""
    tree = ast.parse(source)
    lines = source.splitlines()
    constants = {
        t.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    cls = options_class(tree)
    choices: dict[str, list[str]] = {}
    found = []
    for node in cls.body:
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        if "ClassVar" in ast.unparse(node.annotation):
            if node.target.id == "choices" and isinstance(node.value, ast.Dict):
                for key, value in zip(node.value.keys, node.value.values, strict=True):
                    if isinstance(key, ast.Constant):
                        choices[key.value] = _strings(value, constants)
            continue
        value, allowed = node.value, ""
        if isinstance(value, ast.Call) and ast.unparse(value.func) == "setting":
            allowed = ", ".join(
                f"{BOUNDS[k.arg]} {ast.unparse(k.value)}" for k in value.keywords if k.arg in BOUNDS
            )
            value = value.args[0] if value.args else None
        if isinstance(value, ast.Name) and value.id in constants:  # a module constant: its value
            value = constants[value.id]
        default = ast.unparse(value) if value is not None else ""
        found.append(
            {"name": node.target.id, "default": default, "allowed": allowed, "meaning": comment(lines, node)}
        )
    for row in found:
        if row["name"] in choices:
            row["allowed"] = ", ".join(f"`{c}`" for c in choices[row["name"]])
    return found


def table(method: str) -> str:
    path = REPO / "trainers" / "methods" / method / "method.py"
    out = [
        f"Every option of `{method}` (`options:` in the config, or `--set options.KEY=VALUE`), read from "
        f"`{path.relative_to(REPO)}`:",
        "",
        "| option | default | values | meaning |",
        "|---|---|---|---|",
    ]
    for row in rows(path.read_text()):
        meaning = row["meaning"].replace("|", "\\|")
        default = row["default"].replace("|", "\\|")
        out.append(f"| `{row['name']}` | `{default}` | {row['allowed']} | {meaning} |")
    return "\n".join(out)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs' hook: each marker line replaced by its method's options table."""
    return MARKER.sub(lambda m: table(m.group(1)), markdown)
