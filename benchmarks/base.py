"""What a benchmark declares (source, fields, prompt, scorer, sampling) and how its items are loaded."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.core.cache import cache_root
from harness.core.data import read_rows, sha256_file
from harness.core.io.read import Linked
from harness.core.progress import console
from harness.core.types import Item, Sampling
from harness.scoring import kind
from harness.scoring.latex import has_corrupted_escape

PACKAGED_DIR = Path(__file__).parent / "data"  # copies shipped in the package (data/SOURCES.md)
MATH_PROMPT = "{problem}\n\nPlease reason step by step, and put your final answer within \\boxed{}."
REASONING_SAMPLING = Sampling(n=16, temperature=0.6, top_p=0.95, max_tokens=32768)

RowMapper = Callable[[dict[str, Any], Path, int], Item]


@dataclass(frozen=True)
class FileLayout:
    """A set of files (relative to the benchmark folder) and how each row becomes an Item."""

    files: tuple[str, ...]
    to_item: RowMapper


@dataclass(frozen=True)
class HubSource:
    """A Hugging Face dataset pinned to a revision; `layout.files` are paths inside the repo."""

    repo: str
    revision: str
    layout: FileLayout
    gated: bool = False  # downloads need accepted terms and a token

    @property
    def url(self) -> str:
        return f"https://huggingface.co/datasets/{self.repo}/tree/{self.revision}"

    def download(self, name: str) -> tuple[list[Path], dict[str, str]]:
        """The layout's files, downloaded once into the Hugging Face cache, for the dataset `name`, and
        the origin to record: the repo and revision, and the commit a branch or tag resolved to, so a
        run on an unpinned revision still says exactly which files it read."""
        from huggingface_hub import hf_hub_download

        paths, commits = [], set()
        for file in self.layout.files:
            try:
                path = Path(hf_hub_download(self.repo, file, repo_type="dataset", revision=self.revision))
                commits.add(path.parents[len(Path(file).parts) - 1].name)  # .../snapshots/COMMIT/FILE
                paths.append(path.resolve())  # the cache's blob: its snapshot entry is a link
            except Exception as e:  # offline, gated, moved: all end the same way for the user
                gated = (
                    f"This dataset is gated: accept its terms at https://huggingface.co/datasets/"
                    f"{self.repo}, then log in (`huggingface-cli login`) or set HF_TOKEN.\n"
                    if self.gated
                    else ""
                )
                raise HarnessError(
                    f"could not download {self.repo}/{file}@{self.revision[:12]} for {name!r} "
                    f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}).\n"
                    f"{gated}Offline? Pass --data-dir DIR (or set HARNESS_DATA_DIR) with the files under "
                    f"DIR/{name}/ (`harness fetch-data {name} --from FOLDER --to DIR` copies a folder that "
                    "has them), and --model with a local model folder."
                ) from None
        origin = {"kind": "hub", "repo": self.repo, "revision": self.revision}
        if commits != {self.revision}:
            origin["commit"] = ",".join(sorted(commits))
        return paths, origin


@dataclass(frozen=True)
class Loaded:
    items: list[Item]
    source: dict[str, Any]  # recorded in run.json


@dataclass(frozen=True)
class Benchmark:
    name: str
    hub: HubSource | None
    local_layouts: tuple[FileLayout, ...] = ()  # other copies --data-dir accepts, in their own schemas
    folders: tuple[str, ...] = ()  # folder names under --data-dir besides `name`
    prompt: str = MATH_PROMPT
    system_prompt: str | None = None  # a system message before the prompt (--system-prompt replaces it)
    scorer: str = "math"
    sampling: Sampling = REASONING_SAMPLING
    description: str = ""
    path: Path | None = None  # a custom benchmark's own file, read with local_layouts[0]
    pass_k: tuple[int, ...] = ()  # pass@k values the paper reports, besides 1, 2, 4, ... n
    group_by: tuple[str, ...] = ()  # item meta fields results are also broken down by
    max_input_tokens: int | None = None  # longer prompts are cut in the middle (long-context sets)
    keep: Callable[[Item], bool] | None = None  # which loaded items belong (e.g. a date window)
    release: str | None = None  # a pinned release file's URL, read with local_layouts[0], when not on the Hub
    packaged: dict[str, str] | None = None  # origin of the copy under PACKAGED_DIR/<name>/, if shipped
    measured: bool = False  # golds are measured quantities: the math scorer accepts them rounded (Minerva)

    @property
    def math_text(self) -> bool:
        """Whether problems and answers are math text, where a LaTeX escape decoded by JSON (TAB+"riangle"
        for \\triangle) is looked for. Documents (long-context sets, code) hold real tabs and are not."""
        return kind(self.scorer).math_text

    def load(self, data_dir: Path | None = None) -> Loaded:
        """Items from `data_dir` when one is given (Hub layout first, then known local copies; a folder
        without them is an error, for every benchmark), else from the Hub, else a shipped copy (the Hub
        is probed first, so offline costs about a second).

        Math items whose text has a LaTeX escape decoded by JSON are loaded, named in a warning and
        listed in the source (`corrupted_escapes`, kept in run.json); a clean copy is preferred."""
        loaded = self._load(data_dir)
        _warn_corrupted(self.name, loaded.source)
        return loaded

    def _load(self, data_dir: Path | None) -> Loaded:
        if self.path is not None:
            source = {"kind": "file", "path": str(self.path)}
            return self._build([self.path], [self.path.name], self.local_layouts[0], source)
        data_dir = data_dir or _env_data_dir()
        if data_dir is not None:  # a named folder is read, or is an error: never silently replaced
            return self._load_local(Path(data_dir))
        if self.packaged is None:
            return self._load_hub()
        from harness.core.hub import hub_unreachable

        why = hub_unreachable()
        if why is None:
            try:
                return self._load_hub()
            except HarnessError as e:
                why = str(e).splitlines()[0]
        loaded = self._load_local(PACKAGED_DIR)
        loaded.source.update(kind="packaged", origin=self.packaged, why=why)
        del loaded.source["dir"]
        return loaded

    def _load_local(self, data_dir: Path) -> Loaded:
        """The first complete layout that loads cleanly; a broken copy, or one with corrupted LaTeX
        escapes, is skipped (and noted) if another loads. The source names the folder (not the Hub repo
        a folder may be laid out like) and each file read with its sha256."""
        layouts = ((self.hub.layout,) if self.hub else ()) + self.local_layouts
        tried: list[str] = []
        broken: list[str] = []
        suspect: Loaded | None = None  # the first copy that loaded with corrupted escapes
        for folder in (self.name, *self.folders):
            for layout in layouts:
                paths = [data_dir / folder / f for f in layout.files]
                tried.append(" + ".join(str(p) for p in paths))
                if not all(os.path.lexists(p) for p in paths):
                    continue
                source: dict[str, Any] = {"kind": "local", "dir": str((data_dir / folder).absolute())}
                if self.hub and layout is self.hub.layout:  # the layout, not the origin of the bytes
                    source["laid_out_as"] = f"{self.hub.repo}@{self.hub.revision}"
                try:  # every file reached from the named folder: a link below it refuses the command
                    loaded = self._build(paths, list(layout.files), layout, source, root=data_dir)
                except Linked:
                    raise
                except HarnessError as e:
                    broken.append(str(e))
                    continue
                if "corrupted_escapes" in loaded.source:
                    suspect = suspect or loaded
                    continue
                skipped = broken + ([_corrupted_note(suspect.source)] if suspect else [])
                if skipped:
                    loaded.source["skipped"] = skipped
                return loaded
        if suspect is not None:  # no clean copy: the suspect rows are reported, the others kept
            if broken:
                suspect.source["skipped"] = broken
            return suspect
        if broken:
            raise HarnessError("\n".join(broken))
        raise HarnessError(
            f"no data for benchmark {self.name!r} under {data_dir} (`harness fetch-data {self.name} --to "
            f"{data_dir}` puts it there); expected one of:\n  " + "\n  ".join(tried)
        )

    def _load_hub(self) -> Loaded:
        files, source = self.pinned_files()
        layout = self.hub.layout if self.hub else self.local_layouts[0]
        return self._build([p for p, _ in files], [n for _, n in files], layout, source)

    def pinned_files(self) -> tuple[list[tuple[Path, str]], dict[str, Any]]:
        """The pinned source's files, downloaded once into a cache, each with its path under the
        benchmark's folder of a --data-dir; and the source to record."""
        if self.hub is not None:
            paths, source = self.hub.download(self.name)
            return list(zip(paths, self.hub.layout.files, strict=True)), source
        if self.release is not None:
            path = _download(self.release, self.name)
            return [(path, path.name)], {"kind": "release", "url": self.release}
        raise HarnessError(f"benchmark {self.name!r} has no Hub source; pass --data-dir")

    def _build(
        self,
        paths: list[Path],
        names: list[str],
        layout: FileLayout,
        source: dict[str, Any],
        root: Path | None = None,
    ) -> Loaded:
        return _build(paths, layout, source, self.keep, names=names, math_text=self.math_text, root=root)


def _download(url: str, benchmark: str) -> Path:
    """A release file, downloaded once into the harness cache."""
    import httpx

    cache = cache_root() / "releases"
    path = cache / url.split("/")[-3] / url.split("/")[-2] / url.split("/")[-1]
    if path.is_file():
        return path
    try:
        response = httpx.get(url, follow_redirects=True, timeout=60)
        response.raise_for_status()
    except httpx.HTTPError as e:
        raise HarnessError(
            f"could not download {url} for benchmark {benchmark!r} ({type(e).__name__}).\n"
            f"Offline? Pass --data-dir DIR with the file under DIR/{benchmark}/."
        ) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_bytes(response.content)
    partial.replace(path)
    return path


def _env_data_dir() -> Path | None:
    value = os.environ.get("HARNESS_DATA_DIR")
    return Path(value) if value else None


def _build(
    paths: list[Path],
    layout: FileLayout,
    source: dict[str, Any],
    keep: Callable[[Item], bool] | None = None,
    *,
    names: list[str] | None = None,
    math_text: bool = False,
    root: Path | None = None,
) -> Loaded:
    """The items of `paths` (recorded under `names`: paths in the repo or in the source's folder). With
    `math_text`, items whose row has a LaTeX escape decoded by JSON in its text (problem, answer,
    solution...) are listed in the source's `corrupted_escapes` (item, file:line, fields); they stay
    loaded. Each file is reached from `root` (default: its own folder) without following a link."""
    names = names or [p.name for p in paths]
    items: list[Item] = []
    seen: dict[str, str] = {}
    corrupted: list[dict[str, Any]] = []
    for path, name in zip(paths, names, strict=True):
        for number, row in read_rows(path, root):
            item = layout.to_item(row, path, number)
            if item.id in seen:
                raise HarnessError(
                    f"{path}:{number}: duplicate item id {item.id!r} (first at {seen[item.id]})"
                )
            seen[item.id] = f"{path.name}:{number}"
            if keep is None or keep(item):
                items.append(item)
                fields = _corrupted_fields(row) if math_text else []
                if fields:
                    corrupted.append({"item": item.id, "at": f"{name}:{number}", "fields": fields})
    if not items:
        raise HarnessError(f"{', '.join(map(str, paths))}: no items")
    source = {
        **source,
        "files": [{"path": n, "sha256": sha256_file(p, root)} for p, n in zip(paths, names, strict=True)],
        "content_hash": content_hash(items),
        "n_items": len(items),
        **({"corrupted_escapes": corrupted} if corrupted else {}),
    }
    return Loaded(items=items, source=source)


def _corrupted_fields(row: dict[str, Any]) -> list[str]:
    """The row's fields with a LaTeX escape decoded by JSON, read before any stripping (which would
    drop the FF of a leading \\frac)."""

    def texts(value: Any) -> list[str]:
        if isinstance(value, str):
            return [value]
        return [t for v in value for t in texts(v)] if isinstance(value, list) else []

    return [str(k) for k, v in row.items() if any(has_corrupted_escape(t) for t in texts(v))]


CORRUPTED = "a control character where JSON decoding ate a LaTeX backslash (TAB+'riangle' for \\triangle)"


def _corrupted_note(source: dict[str, Any]) -> str:
    """Why a copy with corrupted escapes was passed over for a clean one (the source's `skipped`)."""
    rows = source["corrupted_escapes"]
    where = source.get("dir", source.get("path", ""))
    return (
        f"{where}: {' + '.join(f['path'] for f in source['files'])}: {len(rows)} items have {CORRUPTED} "
        f"(first: item {rows[0]['item']} at {rows[0]['at']}); a clean copy was read instead"
    )


def _warn_corrupted(benchmark: str, source: dict[str, Any]) -> None:
    """A warning naming the items whose text has corrupted escapes (the model sees them garbled)."""
    rows = source.get("corrupted_escapes")
    if not rows:
        return
    shown = ", ".join(f"{r['item']} ({r['at']}, {'+'.join(r['fields'])})" for r in rows[:5])
    more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
    console.print(
        f"warning: {benchmark}: {len(rows)} of {source['n_items']} items have {CORRUPTED}: {shown}{more}. "
        f"They are evaluated as they are (listed in run.json, datasets.{benchmark}.corrupted_escapes); "
        "a clean copy avoids it.",
        style="yellow",
        soft_wrap=True,
        markup=False,
        highlight=False,
    )


def content_hash(items: list[Item]) -> str:
    """What a run's results depend on in the data: every item's id, problem and answer."""
    canonical = json.dumps([[i.id, i.problem, i.answer] for i in items], ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def answer_text(value: Any) -> str:
    """A gold answer as text: 27.0 -> "27", lists joined by ", "."""
    if isinstance(value, list):
        return ", ".join(answer_text(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def columns(
    problem: str,
    answer: str | Callable[[dict[str, Any], Path, int], str],
    id: str | None = None,
    meta: tuple[str, ...] = (),
) -> RowMapper:
    """A RowMapper reading the named fields; without `id`, the row number (from 0) is the id."""
    from harness.core.data import require

    def to_item(row: dict[str, Any], path: Path, number: int) -> Item:
        gold = (
            answer(row, path, number) if callable(answer) else answer_text(require(row, answer, path, number))
        )
        return Item(
            id=str(require(row, id, path, number)) if id else str(number - 1),
            problem=str(require(row, problem, path, number)),
            answer=gold,
            meta={k: row[k] for k in meta if k in row},
        )

    return to_item
