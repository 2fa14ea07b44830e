"""`harness view`: look at runs in a browser, served locally or written as a static bundle."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from harness.cli.app import app
from harness.core.terminate import INTERRUPTED, Interrupted


@app.command("view")
def view_command(
    run_dirs: Annotated[
        list[Path], typer.Argument(help="Run folders: evaluations and `harness train` outputs.")
    ],
    port: Annotated[int, typer.Option(help="Port to serve on (0: any free port).")] = 8765,
    host: Annotated[
        str, typer.Option(help="Address to bind; anything but 127.0.0.1 exposes the runs to the network.")
    ] = "127.0.0.1",
    bundle: Annotated[
        Path | None, typer.Option(help="Write a static site to this folder instead of serving (no server).")
    ] = None,
) -> None:
    """Samples, verdicts, two runs side by side and training runs step by step, in a browser. The run
    folders are only read. Ctrl-C stops the server."""
    os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")  # prompts come from local data only
    from harness.view.site import Site

    site = Site(run_dirs)
    if bundle is not None:
        from harness.view.bundle import write_bundle

        count = write_bundle(site, bundle)
        typer.echo(f"wrote {bundle} ({count} data files): open {bundle / 'index.html'}")
        return
    from harness.view.server import make_server, url

    server = make_server(site, host, port)
    if host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(f"warning: listening on {host}: whoever reaches this machine reads these runs", err=True)
    typer.echo(f"serving {len(site.entries)} run(s) at {url(server)}  (Ctrl-C stops)", nl=True)
    try:
        server.serve_forever()
    except Interrupted as e:  # how a server stops: not a command whose work was cut short
        typer.echo("stopped")
        if e.exit_code != INTERRUPTED:  # SIGTERM: exit 143, as a shell reports it
            raise SystemExit(e.exit_code) from None
    finally:
        server.server_close()
