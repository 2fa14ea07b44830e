"""MkDocs hook: a method page's `<!-- options: NAME -->` line becomes the table of every field of that
method's options dataclass (`options_class` in trainers/methods/NAME/options.py): its default, its bounds
or allowed values and its help, as `setting(default, "help", ...)` declares them. The module is imported;
it needs no torch, so the docs build runs without the training dependencies. A new option appears in
the docs when it appears in the code."""

from __future__ import annotations

import dataclasses
import importlib
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^<!-- options: (\w+) -->$", re.MULTILINE)
BOUNDS = {"at least": "≥", "greater than": ">", "at most": "≤"}  # harness.core.settings' bound names


def options_class(method: str) -> type:
    """The `MethodOptions` dataclass that trainers/methods/METHOD/options.py declares."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from trainers.method import MethodOptions

    module = importlib.import_module(f"trainers.methods.{method}.options")
    declared = [v for v in vars(module).values() if isinstance(v, type) and v.__module__ == module.__name__]
    found = [v for v in declared if issubclass(v, MethodOptions)]
    if len(found) != 1:
        raise ValueError(f"{module.__name__} declares {len(found)} MethodOptions classes, not one")
    return found[0]


def shown(value: Any) -> str:
    """A value as the table shows it, a long float to 6 significant digits (0.5 / 3 is 0.166667)."""
    text = repr(value)
    return format(value, ".6g") if isinstance(value, float) and len(text) > 10 else text


def _default(field: dataclasses.Field) -> str:
    if field.default is not dataclasses.MISSING:
        return shown(field.default)
    if field.default_factory is not dataclasses.MISSING:
        return shown(field.default_factory())
    return ""


def rows(method: str) -> list[dict[str, Any]]:
    """One row per option field: name, default, allowed values or bounds, meaning."""
    cls = options_class(method)
    found = []
    for field in dataclasses.fields(cls):
        if field.name in cls.choices:
            allowed = ", ".join(f"`{c}`" for c in cls.choices[field.name])
        else:
            bounds = field.metadata.get("bounds", {})
            allowed = ", ".join(f"{BOUNDS[kind]} {shown(bound)}" for kind, bound in bounds.items())
        found.append(
            {
                "name": field.name,
                "default": _default(field),
                "allowed": allowed,
                "meaning": field.metadata.get("help", ""),
            }
        )
    return found


def table(method: str) -> str:
    path = Path("trainers") / "methods" / method / "options.py"
    out = [
        f"Every option of `{method}` (`options:` in the config, or `--set options.KEY=VALUE`), read from "
        f"`{path}`:",
        "",
        "| option | default | values | meaning |",
        "|---|---|---|---|",
    ]
    for row in rows(method):
        meaning = row["meaning"].replace("|", "\\|")
        default = row["default"].replace("|", "\\|")
        out.append(f"| `{row['name']}` | `{default}` | {row['allowed']} | {meaning} |")
    return "\n".join(out)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs' hook: each marker line replaced by its method's options table."""
    return MARKER.sub(lambda m: table(m.group(1)), markdown)
