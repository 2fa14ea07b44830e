"""`harness merge SHARD... --out RUN`: the N shard folders of one `harness eval --shard K/N` run, checked
and joined into the run folder one machine would have written.

The checks, each a one-line refusal naming the first problem: every folder is a finished shard (its
results.json written, every planned sample generated and scored); all name the same whole run (the hash
of their configuration without the shard, recomputed here, not only read) and the same shard count and
scorer versions; every index 1..N is there exactly once; and every sample lies in the shard that its
key hashes to (so no sample is counted twice). The merged run.json is the whole run's configuration,
with the per-item records joined in the whole run's item order; its results are aggregated as any run's.
"""

from __future__ import annotations

from pathlib import Path

from harness import HarnessError
from harness.core.runinfo import stable_hash
from harness.core.store import GENERATIONS, RESULTS, RUN, SCORES, RunDir, record_key
from harness.stages.plan import shard_of
from harness.stages.score import finalize

PER_ITEM = ("answers", "questions")


def merge(shards: list[Path], out: Path) -> dict:
    """Check the shards and write the merged run to `out` (a new or empty folder); its results."""
    if not shards:
        raise HarnessError("name the shard folders to merge")
    runs = [(Path(path), RunDir(path).read_json(RUN)) for path in shards]
    first_path, first = runs[0]
    count, whole = _shard_of_run(first_path, first)["count"], _whole_hash(first_path, first)
    by_index: dict[int, Path] = {}
    for path, info in runs:
        shard = _shard_of_run(path, info)
        theirs = _whole_hash(path, info)
        if theirs != whole:
            raise HarnessError(
                f"{path} is a shard of another run (config hash {theirs[:12]}, not {whole[:12]})"
            )
        if shard["count"] != count:
            raise HarnessError(f"{path} is shard {shard['index']}/{shard['count']}, not one of {count}")
        if info.get("scorer_versions") != first.get("scorer_versions"):
            raise HarnessError(
                f"{path} was scored with other scorer versions than {first_path}; rescore both"
            )
        if shard["index"] in by_index:
            raise HarnessError(
                f"shard {shard['index']}/{count} is given twice: {by_index[shard['index']]} and {path}"
            )
        by_index[shard["index"]] = path
    missing = [k for k in range(1, count + 1) if k not in by_index]
    if missing:
        raise HarnessError(f"shard {missing[0]}/{count} is missing ({len(missing)} of {count} not given)")

    generations, scores = [], []
    for path, info in runs:
        mine, scored = _finished(path, info)
        generations += mine
        scores += scored
    target = RunDir(out)
    if target.file(RUN).exists() or (target.path.is_dir() and any(target.path.iterdir())):
        raise HarnessError(f"{out} is not empty: merge into a new folder")
    merged = _whole_info(runs)
    with target.locked():
        target.start(merged)
        target.rewrite(GENERATIONS, generations)
        target.rewrite(SCORES, scores)
        return finalize(
            target, merged, merged.get("scorer_versions", {}), [record_key(g) for g in generations]
        )


def _shard_of_run(path: Path, info: dict) -> dict:
    shard = info.get("shard")
    if not isinstance(shard, dict) or "shard" not in info["config"]:
        raise HarnessError(f"{path} is not a shard (its run.json has no shard: evaluate with --shard K/N)")
    return shard


def _whole_hash(path: Path, info: dict) -> str:
    """The whole run's config hash, recomputed from the shard's configuration without its shard."""
    config = {k: v for k, v in info["config"].items() if k != "shard"}
    recomputed = stable_hash(config)
    if info["shard"].get("whole_config_hash") != recomputed:
        raise HarnessError(f"{path}: run.json's whole_config_hash does not match its configuration")
    return recomputed


def _finished(path: Path, info: dict) -> tuple[list[dict], list[dict]]:
    """The shard's records, once it is finished and every sample belongs to it."""
    run, shard = RunDir(path), info["shard"]
    if not run.file(RESULTS).exists():
        raise HarnessError(
            f"{path}: shard {shard['index']}/{shard['count']} is not finished (no results.json); "
            "rerun its command"
        )
    generations, scores = run.records(GENERATIONS), run.records(SCORES)
    keys = [record_key(g) for g in generations]
    if len(set(keys)) != shard["samples"] or {record_key(s) for s in scores} != set(keys):
        raise HarnessError(
            f"{path}: shard {shard['index']}/{shard['count']} holds {len(set(keys))} generated and "
            f"{len(scores)} scored samples of {shard['samples']} planned; rerun its command"
        )
    for b, item, k in keys:
        if shard_of(b, item, k, shard["count"]) != shard["index"] - 1:
            raise HarnessError(f"{path}: {b} item {item} sample {k} belongs to another shard")
    return generations, scores


def _whole_info(runs: list[tuple[Path, dict]]) -> dict:
    """run.json of the whole run, keys in their usual order: the shared configuration without the shard,
    the per-item records joined in the whole run's item order, the first shard's other records (its
    machine and engine)."""
    first = runs[0][1]
    order = first["shard"]["item_order"]
    config = {k: v for k, v in first["config"].items() if k != "shard"}
    joined: dict[str, dict] = {"config": config, "config_hash": stable_hash(config)}
    for name in PER_ITEM:
        found: dict[str, dict] = {}
        for _, shard in runs:
            for b, values in shard.get(name, {}).items():
                found.setdefault(b, {}).update(values)
        joined[name] = {
            b: {i: found[b][i] for i in ids if i in found[b]} for b, ids in order.items() if b in found
        }
    groups: dict[str, dict] = {}
    for _, shard in runs:
        for b, fields in shard.get("groups", {}).items():
            for field, values in fields.items():
                groups.setdefault(b, {}).setdefault(field, {}).update(values)
    joined["groups"] = {
        b: {f: {i: v[i] for i in order[b] if i in v} for f, v in fields.items()}
        for b, fields in groups.items()
    }
    return {key: joined.get(key, value) for key, value in first.items() if key != "shard"}
