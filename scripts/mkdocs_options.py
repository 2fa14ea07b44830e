"""MkDocs hook: a method page's `<!-- options: NAME -->` line becomes the table of every field of that
method's options dataclass (`options_class` in trainers/methods/NAME/options.py), and `<!-- options:
train -->` the table of the training config's top-level keys (`TrainConfig` in trainers/config.py): each
field's default, its bounds or allowed values and its help, as `setting(default, "help", ...)` declares
them. The modules are imported; they need no torch, so the docs build runs without the training
dependencies. A new option appears in the docs when it appears in the code."""

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


TRAIN = "train"  # the marker's name for the training config's own keys


def options_class(method: str) -> type:
    """The `MethodOptions` dataclass that trainers/methods/METHOD/options.py declares (for `train`, the
    training config, `TrainConfig`)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from trainers.method import MethodOptions

    if method == TRAIN:
        from trainers.config import TrainConfig

        return TrainConfig

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
        if field.metadata.get("choices"):
            allowed = ", ".join(f"`{c}`" for c in field.metadata["choices"])
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
    if method == TRAIN:
        intro = (
            "Every top-level key of a training config (or `--set KEY=VALUE`; most are flags too), read "
            "from `trainers/config.py`:"
        )
    else:
        path = Path("trainers") / "methods" / method / "options.py"
        intro = (
            f"Every option of `{method}` (`options:` in the config, or `--set options.KEY=VALUE`), read "
            f"from `{path}`:"
        )
    out = [
        intro,
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
