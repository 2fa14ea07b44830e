"""`harness view --bundle OUT RUN_DIR...`: the page and every answer it can ask for as static files.

Data lies in `OUT/data/PATH.js`, one script per path that hands its JSON to the page
(`harnessData(PATH, DATA)`): pages opened from disk may load scripts but not fetch files, so the same
folder works from file:// and from any static host, and the page loads only what it shows.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path

from harness import HarnessError
from harness.core.io.write import OutDir
from harness.view.server import MODE, POLICY, STATIC
from harness.view.site import Site

MARK = "harness-view-bundle.txt"  # a folder with it is a bundle this command may replace


def write_bundle(site: Site, out: Path) -> int:
    """Write the bundle of `site` into `out` (new, empty, or an earlier bundle); the number of data files.

    Everything goes through the one writer (`harness.core.io.write.OutDir`): a folder that holds anything
    but an earlier bundle is refused, and a link in it is replaced, never followed."""
    out = Path(out)
    target = out.resolve()
    for entry in site.entries:
        if target.is_relative_to(entry.run.path):
            raise HarnessError(
                f"{out} is inside the run folder {entry.run.path}: nothing is written into runs"
            )
    note = "Written by `harness view --bundle`; open index.html.\n"
    with OutDir.open(out, mark=MARK, note=note) as folder, ExitStack() as stack:
        for old in ("data", "static", "index.html"):
            folder.remove(old)
        for source in sorted(STATIC.rglob("*")):
            relative = source.relative_to(STATIC)
            if source.is_file() and source.name != "index.html" and "__pycache__" not in relative.parts:
                folder.write(Path("static") / relative, source.read_bytes())
        folder.write(Path("static") / MODE, 'window.HARNESS_MODE = "bundle";\n')
        page = (STATIC / "index.html").read_text()
        policy = f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        folder.write(
            "index.html", page.replace('<meta charset="utf-8">', f'<meta charset="utf-8">\n{policy}', 1)
        )
        count, opened = 0, {}  # each data folder opened once (thousands of files share a few)
        for path in site.paths():
            try:
                data = site.get(path)
            except (KeyError, HarnessError, OSError, ValueError) as e:
                data = {"error": str(e)}
            if path == "index":  # a shared bundle names each run by its folder, not where it lay here
                data["runs"] = [{**run, "path": run["name"]} for run in data["runs"]]
            # the paths are the site's own (numbers and fixed words); the writer refuses '..' in any
            text = f"harnessData({json.dumps(path)}, {json.dumps(data)});\n"
            parent, _, name = f"data/{path}.js".rpartition("/")
            if parent not in opened:
                opened[parent] = stack.enter_context(folder.folders(parent))
            opened[parent].write(name, text, sync=False)
            count += 1
    return count
