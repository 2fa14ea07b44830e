"""`harness eval ... --ray ADDRESS --shards N`: one run's N shards as Ray tasks, then `harness merge`.

Each task is `harness eval --shard K/N` into a run folder of its own (OUT.shards/K-of-N), asking Ray
for the GPUs its engine needs. Ray places the tasks on the cluster's machines and, when a task's worker
dies, runs it again (up to `RETRIES` times): the shard's folder resumes as any run does, keeping the
samples it had written. The split and the merge are the harness's own (`--shard`, `harness merge`), so
the merged run is the one a single machine writes. The cluster's machines must see the same paths
(the model, --data-dir and OUT) and have the harness installed; Ray carries nothing else.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harness import HarnessError
from harness.backends import BACKENDS, EngineConfig
from harness.config import EvalConfig
from harness.core.progress import console
from harness.runs.evaluate import default_out
from harness.runs.merge import merge
from harness.stages.plan import plan

RETRIES = 3  # runs of a task whose worker died (a killed process, a lost machine), after the first


def shard_folders(out: Path, count: int) -> list[Path]:
    """Where shard K of N writes: OUT.shards/K-of-N, beside the merged run."""
    return [out.with_name(out.name + ".shards") / f"{k}-of-{count}" for k in range(1, count + 1)]


def gpus_per_shard(engine: EngineConfig, cluster_gpus: float) -> float:
    """What one shard's engine needs, as the engine declares it: vLLM its tensor x data parallel GPUs;
    transformers one GPU where the cluster has any (else it runs on a CPU); a served endpoint none."""
    return BACKENDS.require(engine.backend).gpus(engine, cluster_gpus)


def evaluate_shard(cfg: EvalConfig) -> str:
    """One Ray task: the shard's `harness eval`, resumed if its folder holds part of it."""
    from harness.runs.evaluate import run_eval

    out, _ = run_eval(cfg)
    return str(out)


def eval_on_ray(cfg: EvalConfig, count: int, address: str) -> tuple[Path, dict]:
    """Evaluate `cfg` as `count` shards on the Ray cluster at `address` ("local" starts one on this
    machine, "auto" joins the one running here) and merge them; the merged run's folder and results."""
    if cfg.shard is not None:
        raise HarnessError("--ray runs every shard itself: give --shards N, not --shard K/N")
    if count < 1:
        raise HarnessError(f"--shards must be at least 1, got {count}")
    try:
        import ray
    except ImportError:
        raise HarnessError("--ray needs Ray: pip install 'harness[ray]'") from None
    out = cfg.out or default_out(cfg.engine.model, plan(cfg).run_info["config_hash"])
    if out.exists() and any(out.iterdir()):
        raise HarnessError(f"{out} is not empty: the merged run goes to a new folder (name another --out)")
    folders = shard_folders(out, count)
    ray.init(address=address, log_to_driver=True, include_dashboard=False, configure_logging=False)
    try:
        gpus = gpus_per_shard(cfg.engine, ray.cluster_resources().get("GPU", 0.0))
        task = ray.remote(evaluate_shard)
        pending = {
            task.options(
                name=f"harness eval shard {k}/{count}", num_cpus=1, num_gpus=gpus, max_retries=RETRIES
            ).remote(replace(cfg, shard=f"{k}/{count}", out=folder)): k
            for k, folder in enumerate(folders, 1)
        }
        console.print(
            f"ray: {count} shards submitted to {address}, {gpus:g} GPU each; folders {folders[0].parent}",
            soft_wrap=True,
        )
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            k = pending.pop(done[0])
            try:
                ray.get(done[0])
            except Exception as e:  # the shard's own error (a bad config), or a worker lost RETRIES times
                raise HarnessError(
                    f"shard {k}/{count} failed ({_reason(e)}); its folder {folders[k - 1]} resumes: run "
                    "the same command again"
                ) from None
            console.print(f"ray: shard {k}/{count} done")
    finally:
        ray.shutdown()
    return out, merge(folders, out)


def _reason(error: Exception) -> str:
    """The first line of the shard's own error, without Ray's traceback."""
    cause = getattr(error, "cause", None) or error
    return (str(cause).strip().splitlines() or [type(cause).__name__])[-1][:300]
