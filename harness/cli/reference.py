"""The click command behind the typer app, for the command-line reference generated into the docs
(`docs/cli.md`, rendered by mkdocs-click from the same objects `--help` prints)."""

import typer

from harness.cli import app

command = typer.main.get_command(app)
