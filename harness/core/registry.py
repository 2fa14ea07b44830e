"""Methods and benchmarks by name, found through Python entry points and loaded on first use.

This project registers its own in its `pyproject.toml` (`[project.entry-points."harness.methods"]` and
`"harness.benchmarks"`), and any installed package can add more the same way: listing the names
imports nothing, and a name's module is imported when that name is first used. A name two installed
packages both register is refused, so a package cannot quietly replace another's method or benchmark.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

from harness import HarnessError

T = TypeVar("T")


@functools.cache
def registered(group: str, kind: str) -> dict[str, EntryPoint]:
    """Each name of entry-point `group` with its entry point, by name, read once per process (nothing is
    imported); a name two packages register differently is refused, naming both (`kind` names one)."""
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=group):
        earlier = found.get(point.name)
        if earlier is not None and earlier.value != point.value:
            raise HarnessError(
                f"{kind} {point.name!r} is registered twice ({_origin(earlier)} and {_origin(point)}); "
                "uninstall one of the packages"
            )
        found[point.name] = point
    return dict(sorted(found.items()))


class Registry(Mapping[str, T], Generic[T]):
    """The names of one entry-point group (`group`), each loaded once and checked by `check(name,
    loaded)`, which returns the value or raises `HarnessError`. `kind` names one entry in messages."""

    def __init__(self, group: str, kind: str, check: Callable[[str, Any], T]):
        self.group = group
        self.kind = kind
        self._check = check
        self._loaded: dict[str, T] = {}

    def points(self) -> dict[str, EntryPoint]:
        return registered(self.group, self.kind)

    def __getitem__(self, name: str) -> T:
        if name not in self._loaded:
            point = self.points()[name]  # KeyError for a name no package registers
            try:
                loaded = point.load()
            except Exception as e:  # a broken package is the user's to fix, named in one line
                raise HarnessError(
                    f"cannot load {self.kind} {name!r} from {_origin(point)}: {type(e).__name__}: {e}"
                ) from None
            self._loaded[name] = self._check(name, loaded)
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.points())

    def __len__(self) -> int:
        return len(self.points())

    def __contains__(self, name: object) -> bool:
        return name in self.points()

    def require(self, name: str) -> T:
        """The entry `name`, or a `HarnessError` that lists the valid names."""
        if name not in self:
            raise HarnessError(f"unknown {self.kind} {name!r}; valid {self.kind}s: {', '.join(self)}")
        return self[name]


def _origin(point: EntryPoint) -> str:
    """Where an entry point comes from: its package and object, e.g. `harness (trainers.methods.grpo:...)`."""
    package = point.dist.name if point.dist is not None else "an unknown package"
    return f"{package} ({point.value})"
