"""Whether a run was made under a paper's evaluation protocol (its preset: samples, temperature, top-p,
top-k, output tokens; every item), so that `harness table --with-paper` may rank it beside the paper's
published rows."""

from __future__ import annotations

from typing import Any

from harness import HarnessError
from harness.papers import PaperProfile, get_preset

FIELDS = (
    ("n", "n"),
    ("temperature", "T"),
    ("top_p", "top-p"),
    ("top_k", "top-k"),
    ("max_tokens", "max tokens"),
)


def expected_sampling(benchmark: str, preset_name: str) -> dict[str, Any] | None:
    """The sampling the preset gives `benchmark` (None for a benchmark this harness does not have)."""
    from benchmarks import get_benchmark

    try:
        bench = get_benchmark(benchmark)
    except HarnessError:
        return None
    preset = get_preset(preset_name)
    chosen = vars(bench.sampling).copy()
    chosen.update(preset.sampling)
    chosen.update(preset.per_benchmark.get(bench.name.split(":")[0], {}))
    return chosen


def differences(profile: PaperProfile, group: str, info: dict[str, Any], benchmarks: list[str]) -> list[str]:
    """How one run differs from the paper's protocol on the layout's `benchmarks` it holds: phrases such
    as "aime24: n=4 (paper 16)", or [] where it matches one of the layout's presets."""
    best: list[str] | None = None
    for preset in profile.protocol(group):
        found = _against(preset, info, benchmarks)
        if best is None or len(found) < len(best):
            best = found
    return best or []


def _against(preset: str, info: dict[str, Any], benchmarks: list[str]) -> list[str]:
    config = info["config"]
    found = []
    for benchmark in benchmarks:
        expected = expected_sampling(benchmark, preset)
        ours = config.get("sampling", {}).get(benchmark)
        if expected is None or ours is None:
            continue
        ours = {"top_k": -1, **ours}
        changed = [
            f"{label}={ours.get(key)} (paper {expected[key]})"
            for key, label in FIELDS
            if ours.get(key) != expected[key]
        ]
        total = info.get("datasets", {}).get(benchmark, {}).get("n_items")
        limit = config.get("limit")
        if limit and total and limit < total:
            changed.append(f"{limit} of {total} items")
        if changed:
            found.append(f"{benchmark}: {', '.join(changed)}")
    return found
