"""The one checker of settings that make a dependency run code from a model folder or the Hub.

transformers runs a folder's own Python with `trust_remote_code` (also at a pinned `code_revision`,
through a config's `auto_map`, or with a generation's `custom_generate`); it downloads and runs Hub
kernels with `use_kernels`, `kernel_config`, `allow_all_kernels`, or an `attn_implementation` /
`experts_implementation` naming a Hub repository ("kernels-community/flash-attn"); TRL and vLLM pass
`trust_remote_code` on to it. None of them may come from a config file, `--set`, a judge's settings or
`--model-arg`: only the command line's `--trust-remote-code` allows a model's code to run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from harness import HarnessError

FLAG = "--trust-remote-code"
# keys that run code whatever their value (a false one is refused too: it has no business in a config)
CODE_KEYS = frozenset(
    {
        "trust_remote_code",
        "code_revision",
        "auto_map",
        "custom_generate",
        "use_kernels",
        "kernel_config",
        "allow_all_kernels",
    }
)
# keys that run code when their value names a Hub repository (transformers' `is_kernel` pattern)
KERNEL_KEYS = frozenset({"attn_implementation", "experts_implementation"})
HUB_KERNEL = re.compile(r"^[^/:]+/[^/:]+(?:@[^/:]+)?(?::[^/:]+)?$")
MAX_DEPTH = 64  # deeper nesting is refused rather than walked


def code_settings(value: Any) -> Iterator[str]:
    """The dotted path of every setting in `value` (mappings and lists at any depth, JSON text included:
    TRL reads `model_init_kwargs` from a JSON string) that would run a model's or the Hub's code."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        node, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            yield f"{where} (nested deeper than {MAX_DEPTH})"
            continue
        if isinstance(node, str):
            parsed = _json_container(node)
            if parsed is not None:
                stack.append((parsed, where, depth + 1))
            continue
        if isinstance(node, dict):
            for key, child in node.items():
                name = f"{where}.{key}" if where else str(key)
                if _runs_code(key, child):
                    yield name
                stack.append((child, name, depth + 1))
        elif isinstance(node, list | tuple):
            stack.extend((child, f"{where}[{i}]", depth + 1) for i, child in enumerate(node))


def refuse_code_settings(
    value: Any,
    source: str,
    instead: str = f"a config cannot allow that: pass {FLAG} on the command line instead",
) -> None:
    """Refuse `value` (read from `source`: "config file x.yaml", "--set") if it holds a code setting."""
    found = sorted(set(code_settings(value)))
    if found:
        raise HarnessError(
            f"{source}: {', '.join(found)} would run code from a model folder or the Hub; {instead}"
        )


def _runs_code(key: Any, value: Any) -> bool:
    name = str(key).strip().lower().replace("-", "_").rsplit(".", 1)[-1]  # `--set trl.KEY` names KEY
    if name in CODE_KEYS:
        return True
    return name in KERNEL_KEYS and isinstance(value, str) and HUB_KERNEL.match(value.strip()) is not None


def _json_container(text: str) -> Any:
    """`text` read as JSON when it is a JSON object or array, else None."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        parsed = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict | list) else None


def warn_remote_code(model: str) -> None:
    """The line `--trust-remote-code` prints before the model loads."""
    from harness.core.progress import console

    console.print(
        f"[bold yellow]{FLAG}: the Python code in {model} (or its Hub repository) will run "
        f"in this process, unsandboxed[/bold yellow]",
        soft_wrap=True,
        highlight=False,
    )
