"""The command line run in this process (`harness.cli.main`), for tests that call it many times."""

import io
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

# two arithmetic items in the custom jsonl format, for tests that need a small dataset
TWO_ITEMS = '{"id": "a", "problem": "1+1?", "answer": "2"}\n{"id": "b", "problem": "2+2?", "answer": "4"}\n'


@dataclass(frozen=True)
class Done:
    code: int
    stdout: str
    stderr: str


def harness(*args: str) -> Done:
    """`harness ARGS` as the entry point runs it: an exception other than a user error propagates."""
    from harness.cli import main

    out, err, argv = io.StringIO(), io.StringIO(), sys.argv
    sys.argv = ["harness", *args]
    try:
        with redirect_stdout(out), redirect_stderr(err):
            main()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else int(e.code is not None)
    finally:
        sys.argv = argv
    return Done(code, out.getvalue(), err.getvalue())


def one_line_error(done: Done) -> str:
    """The single line a refused command printed on stderr, after "error: "."""
    assert done.code != 0, done
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0].removeprefix("error: ")
