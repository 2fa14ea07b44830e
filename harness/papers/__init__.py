"""Each seed paper's facts in one profile, keyed by its method's name: its evaluation presets (`--preset
NAME`), the main table it publishes (`harness table --layout NAME`, its columns, groups and averages,
exactly as the paper defines them), the published CSV those numbers are kept in (results/paper/PAPER.csv,
or the profile's own package's paper/ folder) and, per column group, the presets a run must follow to be
ranked beside them.

Profiles register as entry points in group `harness.papers` (pyproject.toml), as methods and benchmarks
do, so a package that adds a method adds its paper the same way; `PAPERS` loads each on first use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness import HarnessError
from harness.core.registry import Registry

GROUP = "harness.papers"
MATH = ("aime24", "aime25", "amc23", "math500", "minerva", "olympiadbench")


@dataclass(frozen=True)
class Preset:
    """A paper's evaluation protocol in one flag: its benchmarks (used when --benchmarks is not given),
    sampling, input length and scoring. Flags given explicitly still win."""

    description: str
    benchmarks: tuple[str, ...]
    sampling: dict = field(default_factory=dict)  # n, temperature, top_p, top_k, max_tokens
    per_benchmark: dict = field(default_factory=dict)  # benchmark -> sampling overrides
    max_input_tokens: int | None = None
    judge: bool = False  # needs --judge-model: free-text benchmarks score max(rule, judge)


@dataclass(frozen=True)
class Column:
    """A table column. `parts` are benchmark names, or earlier columns' keys in the same group; a
    column with several parts is their mean. `metric`: "score" (avg@N, or pass@1, with its CI),
    "pass@K", or "len" (mean completion tokens)."""

    key: str  # the benchmark name in results/paper/*.csv
    label: str
    parts: tuple[str, ...]
    metric: str = "score"
    paper_metric: str = ""  # the metric as the paper CSV names it

    @property
    def is_average(self) -> bool:
        return self.parts != (self.key,)


def single(key: str, label: str, paper_metric: str, metric: str = "score") -> Column:
    return Column(key, label, (key,), metric, paper_metric)


@dataclass(frozen=True)
class Layout:
    """A paper's main table (results/paper/README.md names the average columns)."""

    table: str  # as the paper numbers it: "Table 1"
    columns: tuple[Column, ...]
    groups: tuple[str, ...] = ("",)  # column groups: settings (SPELL's 16K / 100K input)
    digits: int = 1  # decimals the paper prints


@dataclass(frozen=True)
class PaperProfile:
    method: str  # the method's registered name, and this profile's: `--layout azr`
    paper: str  # the published CSV's name: {published_in}/paper/{paper}.csv
    layout: Layout
    presets: dict[str, Preset]
    # column group -> the presets that evaluate as the paper did (default: every preset, one group)
    protocols: dict[str, tuple[str, ...]] = field(default_factory=dict)
    published_in: str = "results"  # the package whose paper/ folder holds the CSV (another package's own)

    def protocol(self, group: str) -> tuple[str, ...]:
        return self.protocols.get(group, tuple(self.presets))


def _profile(name: str, loaded: Any) -> PaperProfile:
    if not isinstance(loaded, PaperProfile):
        raise HarnessError(f"paper {name!r} is registered as {loaded!r}, not a PaperProfile")
    if loaded.method != name:
        raise HarnessError(f"paper {name!r} is registered with a profile for {loaded.method!r}")
    unknown = {p for group in loaded.protocols.values() for p in group} - set(loaded.presets)
    if unknown or set(loaded.protocols) - set(loaded.layout.groups):
        raise HarnessError(f"paper {name!r}: its protocols name presets or groups it does not define")
    return loaded


PAPERS: Registry[PaperProfile] = Registry(GROUP, "paper", _profile)


def presets() -> dict[str, Preset]:
    """Every paper's presets by name; a name two papers define is refused."""
    found: dict[str, Preset] = {}
    for name in PAPERS:
        for preset, value in PAPERS[name].presets.items():
            if preset in found:
                raise HarnessError(f"preset {preset!r} is defined by two papers; rename one")
            found[preset] = value
    return found


def get_preset(name: str) -> Preset:
    known = presets()
    if name not in known:
        raise HarnessError(f"unknown preset {name!r}; available: {', '.join(known)}")
    return known[name]
