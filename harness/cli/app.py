"""The typer app every command registers on, and the entry point that turns HarnessError into a message.

Exit codes: 0 done; 2 a user error (a bad option, file or run folder: one line on stderr, and click's
own usage errors); 1 only for a bug (with its traceback); 130 interrupted (Ctrl-C) and 143 terminated
(SIGTERM): either unwinds the command, whose engines, workers and shards are stopped, and ends it with
one line that says what was written and stays, and that the same command resumes (`harness.core.terminate`).
`harness regress` gives 0, 1, 2 and 4 its verdicts, so its user errors exit 3 and a bug exits 5 with its
traceback (`GateCommand`), never a verdict's code.
"""

from __future__ import annotations

import sys

import click
import typer
from rich.markup import escape
from typer.core import TyperCommand

from harness import HarnessError
from harness.core.progress import console
from harness.core.terminate import Interrupted, final_line, interrupt_on_signals
from harness.core.threads import configure as configure_threads

USER_ERROR, GATE_USER_ERROR, GATE_CRASH = 2, 3, 5

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,  # help texts are plain: "[default: ...]" is text, not markup
    help="Evaluate reasoning models with trustworthy numbers.",
)


def _print_version(asked: bool) -> None:
    if asked:
        from harness.core.runinfo import version_line

        typer.echo(version_line())
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version (and git commit)."
    ),
) -> None:
    """Evaluate reasoning models with trustworthy numbers."""


class GateError(HarnessError):
    """A user error of a command whose exit codes 0-2 and 4 are verdicts."""

    exit_code = GATE_USER_ERROR


class GateCommand(TyperCommand):
    """A command whose exit codes 0, 1, 2 and 4 are verdicts: its usage and user errors exit 3, and a
    bug (any other exception, which Python would end with exit code 1) exits 5 after its traceback."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except typer.TyperException as e:  # click's usage errors, which exit 2
            e.exit_code = GATE_USER_ERROR  # type: ignore[attr-defined]
            raise

    def invoke(self, ctx: typer.Context):
        try:
            return super().invoke(ctx)
        except GateError:
            raise
        except (HarnessError, OSError) as e:
            error = user_error(e)
            if error is None:
                raise _crash() from e
            raise GateError(str(error)) from None
        except (click.exceptions.ClickException, typer.Exit, typer.Abort, KeyboardInterrupt, SystemExit):
            raise
        except Exception as e:
            raise _crash() from e


def _crash() -> typer.Exit:
    """Print the exception being handled with its traceback, and exit with `GATE_CRASH`."""
    import traceback

    traceback.print_exc()
    return typer.Exit(GATE_CRASH)


def user_error(error: BaseException) -> HarnessError | None:
    """The user's mistake in `error`, if it is one: a HarnessError, or a file the system refused."""
    if isinstance(error, HarnessError):
        return error
    if isinstance(error, OSError) and error.filename is not None:
        return HarnessError(f"{error.filename}: {error.strerror or error}")
    return None


def printable(text: str) -> str:
    """`text` with control characters from the user's files escaped (\\x1c), its own line breaks kept."""
    return "".join(c if c.isprintable() or c == "\n" else repr(c)[1:-1] for c in text)


def main() -> None:
    interrupt_on_signals()
    try:
        configure_threads()  # before anything imports torch: its OpenMP runtime reads the wait policy once
        app()
    except Interrupted as e:
        line = final_line()
        if line is not None:
            console.print(line, highlight=False, soft_wrap=True, markup=False)
        sys.exit(e.exit_code)
    except (HarnessError, OSError) as e:
        error = user_error(e)
        if error is None:
            raise
        # one line (unless the message has several), never read as markup
        console.print(f"[red]error:[/red] {escape(printable(str(error)))}", highlight=False, soft_wrap=True)
        sys.exit(getattr(e, "exit_code", USER_ERROR))
