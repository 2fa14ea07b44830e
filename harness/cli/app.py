"""The typer app every command registers on, and the entry point that turns HarnessError into a message."""

from __future__ import annotations

import sys

import typer

from harness import HarnessError
from harness.progress import console

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,  # help texts are plain: "[default: ...]" is text, not markup
    help="Evaluate reasoning models with trustworthy numbers.",
)


def main() -> None:
    try:
        app()
    except HarnessError as e:
        console.print(f"[red]error:[/red] {e}", highlight=False, markup=True)
        sys.exit(2)
