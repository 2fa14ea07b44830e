"""`harness view --bundle OUT RUN_DIR...`: the page and every answer it can ask for as static files.

Data lies in `OUT/data/PATH.js`, one script per path that hands its JSON to the page
(`harnessData(PATH, DATA)`): pages opened from disk may load scripts but not fetch files, so the same
folder works from file:// and from any static host, and the page loads only what it shows.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness import HarnessError
from harness.view.server import MODE, POLICY, STATIC
from harness.view.site import Site

MARK = "harness-view-bundle.txt"  # a folder with it is a bundle this command may replace


def write_bundle(site: Site, out: Path) -> int:
    """Write the bundle of `site` into `out` (new, empty, or an earlier bundle); the number of data files."""
    out = Path(out)
    target = out.resolve()
    for entry in site.entries:
        if target.is_relative_to(entry.run.path):
            raise HarnessError(
                f"{out} is inside the run folder {entry.run.path}: nothing is written into runs"
            )
    if out.exists() and any(out.iterdir()) and not (out / MARK).is_file():
        raise HarnessError(f"{out} exists and is not an earlier bundle: choose a new or empty folder")
    for old in ("data", "static"):
        shutil.rmtree(out / old, ignore_errors=True)
    shutil.copytree(STATIC, out / "static", ignore=shutil.ignore_patterns("index.html", "__pycache__"))
    (out / "static" / MODE).write_text('window.HARNESS_MODE = "bundle";\n')
    page = (STATIC / "index.html").read_text()
    policy = f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
    (out / "index.html").write_text(
        page.replace('<meta charset="utf-8">', f'<meta charset="utf-8">\n{policy}', 1)
    )
    count = 0
    for path in site.paths():
        try:
            data = site.get(path)
        except (KeyError, HarnessError, OSError, ValueError) as e:
            data = {"error": str(e)}
        if path == "index":  # a shared bundle names each run by its folder, not where it lay on this machine
            data["runs"] = [{**run, "path": run["name"]} for run in data["runs"]]
        file = out / "data" / f"{path}.js"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(f"harnessData({json.dumps(path)}, {json.dumps(data)});\n")
        count += 1
    (out / MARK).write_text("Written by `harness view --bundle`; open index.html.\n")
    return count
