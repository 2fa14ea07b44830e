"""`harness fetch-data`: benchmark files (and DAPO-Math-17K) put where `--data-dir` reads them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness import HarnessError
from harness.cli.app import app


@app.command("fetch-data")
def fetch_data_command(
    to: Annotated[Path, typer.Option(help="Folder to fill: DIR/<benchmark>/..., as --data-dir DIR reads.")],
    names: Annotated[
        list[str] | None,
        typer.Argument(help="Benchmarks (see `harness list`), or dapo-math-17k (training data)."),
    ] = None,
    from_: Annotated[
        Path | None,
        typer.Option("--from", help="A folder that holds the files already (laid out as --data-dir reads)."),
    ] = None,
    manifest: Annotated[
        Path | None,
        typer.Option(
            help="Instead of benchmarks, the files a manifest lists by URL and sha256 (the test suite's: "
            "tests/data.json), each kept only with its sha256."
        ),
    ] = None,
) -> None:
    """Fetch the pinned files once (Hub revision or release; offline, AIME's shipped copies) into --to DIR,
    checked by loading them and recorded with their sha256 in DIR/checksums.json; then `--data-dir DIR`
    needs no network."""
    from benchmarks.fetch import CHECKSUMS, fetch, fetch_manifest

    if manifest is not None:
        if names:
            raise HarnessError("name benchmarks or give --manifest, not both")
        fetched = fetch_manifest(manifest, to, from_)
        typer.echo(f"{fetched.name}: {len(fetched.files)} files, each with the sha256 {manifest} pins")
        typer.echo(f"sha256 and sources: {to / CHECKSUMS}")
        return
    for fetched in fetch(names or [], to, from_):
        origin = fetched.origin
        where = (
            f"{origin['repo']}@{origin['revision'][:12]}"
            if "repo" in origin and "revision" in origin
            else origin.get("url") or origin.get("from") or origin["kind"]
        )
        files = ", ".join(f["path"] for f in fetched.files)
        note = f"; {fetched.note}" if fetched.note else ""
        typer.echo(f"{fetched.name}: {files} (from {origin['kind']} {where}{note})")
    typer.echo(f"sha256 and sources: {to / CHECKSUMS}; use --data-dir {to}")
