"""The one reader of files that come from outside: configs, datasets, run folders, checkpoints and
generations.

A file is read only as a regular file reached without a symbolic link: each folder between the root
(the folder the user named) and the file is opened with O_NOFOLLOW, and so is the file, which is opened
without blocking and checked with fstat before a byte is read (a FIFO or a device never hangs a command).
Its size is bounded, and so is what it holds: nesting depth, integer digits, value kinds. YAML anchors
and aliases are refused (an alias bomb is refused at its first anchor), and so are keys that are lists,
mappings or of mixed types. Every refusal is one line, `HarnessError("PATH: problem")`.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from harness import HarnessError

MAX_DEPTH = 64  # lists and mappings inside each other; nothing the harness writes comes close
MAX_INT_DIGITS = 40  # beyond any count, seed or step (2**64 has 20 digits)
DATA_INT_DIGITS = 1000  # a benchmark's own numbers (MBPP+ tests hold integers of 101 digits)
CONFIG_BYTES = 1 << 20
JSON_BYTES = 512 << 20
RUN_JSON_BYTES = 64 << 20  # run.json and results.json: a config and its aggregates, kilobytes to megabytes
RECORDS_BYTES = 8 << 30  # a run's generations.jsonl; bounded by memory before this
FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
KINDS = (str, int, float, bool, type(None), list, dict)  # what JSON holds, and all a YAML config may


class Missing(HarnessError):
    """The file is not there (callers that allow an absent file catch this one)."""


class Linked(HarnessError):
    """A link on the way to a file from outside: refused, never followed (callers that skip a broken copy
    of something still stop at this one)."""


class Unfit(ValueError):
    """Why parsed text is refused, in a few words (the caller names the file)."""


def open_regular(path: Path, root: Path | None = None) -> int:
    """A read-only descriptor of the regular file `path`, reached from `root` (default: its folder)
    without following a link: neither the folders between `root` and the file nor the file itself may
    be links, and a FIFO, a device or a folder is refused without blocking."""
    path = Path(path)
    root, parts = _parts(path, root)
    folder = _walk(root, parts[:-1])
    try:
        fd = os.open(parts[-1], FILE, dir_fd=folder)
    except OSError as e:
        raise _opening(path, e) from None
    finally:
        os.close(folder)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
        raise HarnessError(f"{path}: {kind}, not a regular file")
    return fd


def is_folder(path: Path, root: Path) -> bool:
    """Whether `path` is a folder reached from `root` without a link on the way or at its end."""
    root, parts = _parts(Path(path), root)
    try:
        os.close(_walk(root, parts))
    except HarnessError:
        return False
    return True


def _parts(path: Path, root: Path | None) -> tuple[Path, tuple[str, ...]]:
    """`root` (default: the folder of `path`) and the names that lead from it to `path`."""
    root = Path(root) if root is not None else path.parent
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        parts = ()
    if not parts or any(part in (".", "..") for part in parts):
        raise HarnessError(f"{path}: not a file inside {root}")
    return root, parts


def _walk(root: Path, parts: tuple[str, ...]) -> int:
    """A descriptor of the folder `root/parts...`, each of `parts` opened with O_NOFOLLOW."""
    try:
        folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise _opening(root, e) from None
    for index, part in enumerate(parts):
        try:
            inner = os.open(part, FOLDER, dir_fd=folder)
        except OSError as e:
            raise _opening(root.joinpath(*parts[: index + 1]), e) from None
        finally:
            os.close(folder)
        folder = inner
    return folder


def _opening(path: Path, error: OSError) -> HarnessError:
    if error.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path):
        return Linked(
            f"{path}: a symbolic link; files from outside are read only as regular files, never through "
            "a link (replace the link with what it points to)"
        )
    if error.errno == errno.ENOENT:
        return Missing(f"{path}: not found")
    return HarnessError(f"{path}: cannot read it ({error.strerror})")


def check_regular(path: Path, root: Path | None = None) -> None:
    """Refuse `path` unless `read_bytes(path, root)` would find a regular file there."""
    os.close(open_regular(path, root))


def is_regular(path: Path, root: Path | None = None) -> bool:
    """Whether `read_bytes(path, root)` would find a regular file (a link or a FIFO is not one)."""
    try:
        os.close(open_regular(path, root))
    except HarnessError:
        return False
    return True


def read_bytes(path: Path, root: Path | None = None, limit: int = JSON_BYTES) -> bytes:
    """The whole file, refused beyond `limit` bytes. Memory is sized by the file, never by the limit: a
    8 GiB limit must not reserve 8 GiB of address space to read a file of kilobytes."""
    fd = open_regular(path, root)
    with open(fd, "rb") as f:
        size = os.fstat(fd).st_size
        if size > limit:
            raise HarnessError(f"{path}: larger than {_size(limit)}, more than this file ever holds")
        data = f.read(size + 1)  # one byte more sees a file that grows while it is read
        while size < len(data) <= limit:
            more = f.read(min(1 << 20, limit + 1 - len(data)))
            if not more:
                break
            data += more
    if len(data) > limit:
        raise HarnessError(f"{path}: larger than {_size(limit)}, more than this file ever holds")
    return data


def _size(limit: int) -> str:
    return (
        f"{limit >> 30} GiB"
        if limit >= 1 << 30
        else f"{limit >> 20} MiB"
        if limit >= 1 << 20
        else f"{limit} bytes"
    )


def read_text(path: Path, root: Path | None = None, limit: int = JSON_BYTES) -> str:
    """The file as UTF-8 text."""
    try:
        return text_of(read_bytes(path, root, limit))
    except Unfit as e:
        raise HarnessError(f"{path}: {e}") from None


def text_of(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Unfit(f"not UTF-8 text (byte {e.start})") from None


def _bounded_int(digits: int) -> Callable[[str], int]:
    """json's `parse_int` that refuses an integer of more than `digits` digits before converting it."""

    def parse(text: str) -> int:
        if len(text.lstrip("-")) > digits:
            raise Unfit(f"an integer of {len(text.lstrip('-'))} digits (at most {digits})")
        return int(text)

    return parse


@functools.cache
def _digit_run(digits: int) -> re.Pattern[str]:
    return re.compile(f"[0-9]{{{digits + 1}}}")


def loads(data: bytes | str, digits: int = MAX_INT_DIGITS) -> Any:
    """Parsed JSON text, with its depth and integer digits bounded; `Unfit` says why not.

    The bounds cost nothing on ordinary text: integers are parsed by the bounding hook only where a run
    of more than `digits` digits appears, and the depth is walked only where the text holds more
    brackets than MAX_DEPTH."""
    text = text_of(data) if isinstance(data, bytes) else data
    long_digits = _digit_run(digits).search(text) is not None
    try:
        value = json.loads(text, parse_int=_bounded_int(digits) if long_digits else None)
    except json.JSONDecodeError as e:
        raise Unfit(f"invalid JSON at line {e.lineno} column {e.colno} ({e.msg})") from None
    except RecursionError:
        raise Unfit(f"nested deeper than {MAX_DEPTH} levels") from None
    if text.count("[") + text.count("{") > MAX_DEPTH:
        check_plain(value)  # JSON holds only plain kinds and string keys: this bounds its depth
    if _SURROGATE_ESCAPE.search(text) or (isinstance(data, str) and _SURROGATE.search(text)):
        check_text(value)  # only text that could hold one is walked
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def check_text(value: Any) -> None:
    """Refuse a string (or key) holding a lone surrogate: JSON's `\\ud800` escape decodes to one, and
    no UTF-8 file can hold it, so every writer would fail on it later (after overwriting its file)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found:
                raise Unfit(f"a lone surrogate (\\u{ord(found.group()):04x}) in a string: not text")
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def read_json(path: Path, root: Path | None = None, limit: int = JSON_BYTES) -> Any:
    """The JSON value in the file; a one-line error naming the file for anything else."""
    data = read_bytes(path, root, limit)
    try:
        return loads(data)
    except Unfit as e:
        raise HarnessError(f"{path}: {e}") from None


def json_lines(data: bytes) -> Iterator[tuple[int, Any]]:
    """(line number, value or `Unfit`) of each non-blank line of JSONL text."""
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip(b" \t\r"):
            continue
        try:
            yield number, loads(line)
        except Unfit as e:
            yield number, e


def check_plain(value: Any) -> None:
    """Refuse a value deeper than MAX_DEPTH, of a kind JSON does not hold (a date, bytes, a set), or
    holding a mapping whose keys are of more than one kind (`{1: a, b: c}`)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, KINDS):
            raise Unfit(
                f"a value of kind {type(item).__name__} ({str(item)[:40]!r}); quote it to make it text"
            )
        if isinstance(item, list | dict):
            if depth > MAX_DEPTH:
                raise Unfit(f"nested deeper than {MAX_DEPTH} levels")
            if isinstance(item, dict):
                kinds = {type(key) for key in item}
                if len(kinds) > 1:
                    names = ", ".join(sorted(k.__name__ for k in kinds))
                    raise Unfit(f"a mapping whose keys are of mixed kinds ({names})")
                stack.extend((v, depth + 1) for v in item.values())
            else:
                stack.extend((v, depth + 1) for v in item)


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader without anchors or aliases, with keys that are scalars and integers of
    at most MAX_INT_DIGITS characters; its depth is bounded while it composes."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self.depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise Unfit("a YAML alias (*name); write the value out instead")
        if getattr(self.peek_event(), "anchor", None):
            raise Unfit("a YAML anchor (&name); write the value out instead")
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Unfit(f"nested deeper than {MAX_DEPTH} levels")
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        for key, _ in node.value:
            if not isinstance(key, yaml.ScalarNode):
                raise Unfit(f"line {key.start_mark.line + 1}: a key that is a list or a mapping")
        return super().construct_mapping(node, deep)

    def construct_yaml_int(self, node: Any) -> int:
        if len(str(node.value)) > MAX_INT_DIGITS:
            raise Unfit(f"line {node.start_mark.line + 1}: an integer of more than {MAX_INT_DIGITS} digits")
        return super().construct_yaml_int(node)


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)
# YAML 1.2 reads `1e-4` as a number, PyYAML's YAML 1.1 as the string "1e-4": a learning rate written so
# would be refused as "not a number". A float without a point is read as one here.
_BoundedLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$"), list("-+0123456789")
)


def load_yaml(text: str) -> Any:
    """Parsed YAML text (one document), bounded as `check_plain` says; `Unfit` says why not."""
    try:
        loader = _BoundedLoader(text)  # checks the characters first
        try:
            value = loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        raise Unfit(" ".join(str(e).split())[:300]) from None
    except RecursionError:
        raise Unfit(f"nested deeper than {MAX_DEPTH} levels") from None
    check_plain(value)
    check_text(value)
    return value


def read_yaml(path: Path, limit: int = CONFIG_BYTES) -> Any:
    """The YAML value in the file; a one-line error naming the file for anything else."""
    data = read_bytes(path, limit=limit)
    try:
        return load_yaml(text_of(data))
    except Unfit as e:
        raise HarnessError(f"{path}: {e}") from None


def validate(schema: Any, value: Any, where: str) -> Any:
    """`value` checked, strictly, against a pydantic model: the model, or a one-line error naming
    `where` and the first field that does not fit ("PATH: field config.benchmarks.0: ...")."""
    from pydantic import ValidationError

    try:
        return schema.model_validate(value, strict=True)
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(map(str, first["loc"])) or "(the whole file)"
        raise HarnessError(f"{where}: field {field}: {first['msg']}"[:400]) from None


PICKLED_WEIGHTS = ("pytorch_model*.bin", "*.pkl", "*.pickle", "*.ckpt")  # torch.save's, and other pickles


def refuse_pickled_weights(folder: Path) -> None:
    """Refuse a model folder that holds weights as a pickle (`pytorch_model.bin`), which loading would
    unpickle: only safetensors are read. Shards are followed as transformers follows them: every
    `*.index.json`'s weight map must name safetensors files only (a `pytorch_model.bin.index.json` may
    name its pickled shards anything)."""
    folder = Path(folder)
    for pattern in PICKLED_WEIGHTS:
        for path in sorted(folder.glob(pattern)):
            raise HarnessError(f"{path}: {_PICKLE}")
    for index in sorted(folder.glob("*.index.json")):
        value = read_json(index, folder) if is_regular(index, folder) else None
        weight_map = value.get("weight_map") if isinstance(value, dict) else None
        if not isinstance(weight_map, dict):
            raise HarnessError(f"{index}: not a weights index (no weight_map); remove it")
        for shard in sorted({str(v) for v in weight_map.values()}):
            if not shard.endswith(".safetensors"):
                raise HarnessError(f"{index} names the shard {shard!r}, not a safetensors file: {_PICKLE}")


_PICKLE = (
    "weights saved as a pickle, which loading would unpickle (a pickle can run code); convert them to "
    "safetensors (save_pretrained(..., safe_serialization=True)) and delete them"
)
