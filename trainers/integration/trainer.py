"""`MethodGRPOTrainer`: TRL's `GRPOTrainer` with the batch built by a training method.

Only `_generate_and_score_completions` is replaced (the route TRL's maintainers endorse,
huggingface/trl#4525): the method makes, scores and normalises the rollouts, and the trainer hands
TRL's loss the exact dict it consumes (`CONSUMED_KEYS`; a contract test pins it). TRL's loss, its
`loss_type`s, clipping, KL, vLLM importance sampling, optimisation, DDP/DeepSpeed and checkpointing are
used as they are. Method state is saved in each checkpoint as plain data
(`trainers/integration/checkpoints.py`: JSON and safetensors, never a pickle) and restored on resume.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from accelerate.utils import gather_object
from torch import Tensor
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR
from trl import GRPOTrainer
from trl.trainer.utils import RepeatSampler, get_config_model_id, pad

from harness.core.io.write import write_file
from trainers.integration.checkpoints import load_method_state, save_method_state
from trainers.integration.engines import make_engine
from trainers.masks import completion_mask as make_completion_mask
from trainers.masks import mask_truncated
from trainers.method import IDLE, Batch, Method
from trainers.rollout import Rollout

# What TRL 1.16's `_compute_loss` reads from a batch (tests/test_trainers/integration/test_trainer_core.py
# checks it)
CONSUMED_KEYS = (
    "prompt_ids",
    "prompt_mask",
    "completion_ids",
    "completion_mask",
    "advantages",
    "num_items_in_batch",
    "old_per_token_logps",
    "ref_per_token_logps",
    "importance_sampling_ratio",
    "sampling_per_token_logps",
    "tool_mask",
)


def _scoring_is_the_methods(*args: Any, **kwargs: Any) -> list[float]:
    raise RuntimeError("MethodGRPOTrainer scores through its method; TRL's reward functions are not called")


class MethodGRPOTrainer(GRPOTrainer):
    """`MethodGRPOTrainer(model, args=..., train_dataset=..., method=...)`; dataset rows seed the method."""

    def __init__(self, *args: Any, method: Method, **kwargs: Any):
        if kwargs.get("reward_funcs") is not None:
            raise ValueError("pass rewards through the method, not reward_funcs")
        super().__init__(*args, reward_funcs=[_scoring_is_the_methods], **kwargs)
        self.method = method
        self.engine = make_engine(self)

    def _get_train_sampler(self, dataset: Any = None) -> RepeatSampler:
        sampler = super()._get_train_sampler(dataset)
        sampler.__class__ = EpochSeededSampler  # the same sampler, with set_epoch (no new state)
        return sampler

    # --- the batch -------------------------------------------------------------------------------

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        mode = "train" if self.model.training else "eval"
        group_size = self.num_generations if mode == "train" else self.num_generations_eval
        local = self.method.rollout(inputs[::group_size], self.engine)
        if not local:
            raise ValueError(
                f"method {self.method.name!r} returned no rollouts; return at least one (rollouts that "
                "must not be trained this step can be marked trainable=False)"
            )
        rank = self.accelerator.process_index
        local = [replace(r, group=f"{rank}/{r.group}") for r in local]  # groups never span processes
        local_rewards = self.method.score(local)
        if local_rewards.shape != (len(local),) or not torch.isfinite(local_rewards).all():
            raise ValueError(
                f"method {self.method.name!r} must return {len(local)} finite rewards, got {local_rewards}"
            )
        per_process = gather_object([(local, local_rewards.tolist())])
        rollouts = [r for part, _ in per_process for r in part]
        rewards = torch.tensor([v for _, values in per_process for v in values], dtype=torch.float32)
        advantages = self.method.advantages(rollouts, rewards)
        start = sum(len(part) for part, _ in per_process[:rank])
        mine = range(start, start + len(local))
        self._log_step(mode, rollouts, rewards, advantages)

        trainable = [i for i in mine if rollouts[i].trainable]
        # idle: one masked row per micro-batch alone; with several processes a whole batch, because
        # TRL's loss gathers per-row tensors, which must have the same shape on every process
        several = self.accelerator.num_processes > 1
        step, idle = self.state.global_step, len(inputs) if several else self.args.steps_per_generation
        rows, padded = _fit_rows(trainable, len(inputs), step, filler=mine[0], idle=idle)
        self._metrics[mode]["batch/padded_rows"].append(float(padded.sum()))
        self._metrics[mode]["batch/dropped_rows"].append(float(max(0, len(trainable) - len(inputs))))
        out = self._loss_inputs([rollouts[i] for i in rows], rewards[rows], advantages[rows], padded, mode)
        for key, value in self.method.metrics(rollouts, rewards).items():  # after the loss weights, too
            self._metrics[mode][key].append(float(value))
        return out

    def _loss_inputs(
        self, rollouts: list[Rollout], rewards: Tensor, advantages: Tensor, padded: Tensor, mode: str
    ) -> dict[str, Any]:
        device = self.accelerator.device
        pad_id = self._tokenizer.pad_token_id
        prompts = [torch.tensor(r.prompt_ids) for r in rollouts]
        prompt_ids = pad(prompts, padding_value=pad_id, padding_side="left").to(device)
        prompt_mask = pad([torch.ones_like(p) for p in prompts], padding_value=0, padding_side="left").to(
            device
        )
        completion_ids = pad(
            [torch.tensor(r.completion_ids) for r in rollouts], padding_value=pad_id, padding_side="right"
        ).to(device)
        width = completion_ids.size(1)
        completion_mask = make_completion_mask([len(r.completion_ids) for r in rollouts], width).long()
        completion_mask[padded] = 0
        if self.mask_truncated_completions:
            completion_mask = mask_truncated(completion_mask, [r.truncated for r in rollouts])
        completion_mask = completion_mask.to(device)
        if advantages.dim() == 2:  # per token, over the longest completion of all processes
            advantages = advantages[:, :width]
            advantages = torch.nn.functional.pad(advantages, (0, width - advantages.size(1)))
        advantages = advantages.masked_fill(padded.view(-1, *[1] * (advantages.dim() - 1)), 0.0).to(device)

        input_ids = torch.cat([prompt_ids, completion_ids], dim=1)
        attention_mask = torch.cat([prompt_mask, completion_mask], dim=1)
        batch_size = (
            self.args.per_device_train_batch_size if mode == "train" else self.args.per_device_eval_batch_size
        )

        # as many forward chunks on every process (ZeRO-3 gathers weights in each), idle or not
        chunk = math.ceil(len(rollouts) / self.args.steps_per_generation) if mode == "train" else batch_size

        def policy() -> tuple[Tensor, Tensor]:
            with torch.no_grad():
                logps, entropies, _ = self._get_per_token_logps_and_entropies(
                    self.model, input_ids, attention_mask, width, batch_size=chunk, compute_entropy=True
                )
            return logps, entropies

        batch = Batch(rollouts, rewards, prompt_ids, prompt_mask, completion_ids, completion_mask, policy)
        weights = self.method.advantage_weights(batch)
        if weights is not None:
            advantages = (advantages.unsqueeze(1) if advantages.dim() == 1 else advantages) * weights.to(
                device
            )
        token_mask = self.method.loss_mask(batch)
        loss_mask = completion_mask if token_mask is None else completion_mask * token_mask.to(device)
        out = {
            "prompt_ids": prompt_ids,
            "prompt_mask": prompt_mask,
            "completion_ids": completion_ids,
            "completion_mask": completion_mask,
            "advantages": advantages,
            "num_items_in_batch": self.accelerator.gather(loss_mask.sum()).sum(),
        }
        if token_mask is not None:
            out["tool_mask"] = token_mask.to(device=device, dtype=completion_mask.dtype)
        sampling = None
        if all(r.sampling_logprobs is not None for r in rollouts):
            sampling = pad(
                [torch.tensor(r.sampling_logprobs, dtype=torch.float32) for r in rollouts],
                padding_value=0.0,
                padding_side="right",
            ).to(device)
            out["sampling_per_token_logps"] = sampling
        behaviour = self.method.old_logps(batch)
        if behaviour is not None:
            out["old_per_token_logps"] = behaviour.to(device=device, dtype=torch.float32)
        with torch.no_grad():
            generate_every = self.args.steps_per_generation * self.num_iterations
            is_correction = self.use_vllm and self.vllm_importance_sampling_correction
            if behaviour is not None and is_correction:
                raise ValueError("a method's own old log-probs exclude vLLM importance sampling correction")
            if behaviour is None and (
                self.args.gradient_accumulation_steps % generate_every != 0 or is_correction
            ):
                out["old_per_token_logps"], _, _ = self._get_per_token_logps_and_entropies(
                    self.model, input_ids, attention_mask, width, batch_size=batch_size
                )
            if is_correction:
                if sampling is None:
                    raise ValueError("vLLM importance sampling needs the sampling log-probs of every rollout")
                out["importance_sampling_ratio"] = self._importance_sampling_ratio(
                    out["old_per_token_logps"], sampling, loss_mask
                )
            if self.beta != 0.0:
                out["ref_per_token_logps"] = self._reference_logps(
                    input_ids, attention_mask, width, batch_size
                )
        return out

    def _reference_logps(
        self, input_ids: Tensor, attention_mask: Tensor, width: int, batch_size: int
    ) -> Tensor:
        if self.ref_model is None:
            raise ValueError("beta > 0 with a PEFT model is not supported by MethodGRPOTrainer; use beta=0")
        logps, _, _ = self._get_per_token_logps_and_entropies(
            self.ref_model, input_ids, attention_mask, width, batch_size=batch_size
        )
        return logps

    def _importance_sampling_ratio(self, old: Tensor, sampling: Tensor, mask: Tensor) -> Tensor:
        """TRL's truncated or masked importance sampling between the vLLM sampler and the policy."""
        diff = torch.nan_to_num((old - sampling) * mask, nan=0.0)
        mode = self.vllm_importance_sampling_mode
        if mode.startswith("sequence"):
            diff = diff.sum(dim=-1, keepdim=True)
        ratio = torch.exp(diff)
        low, high = self.vllm_importance_sampling_clip_min, self.vllm_importance_sampling_clip_max
        if mode.endswith("truncate"):
            return torch.clamp(ratio, min=low, max=high)
        low = -math.inf if low is None else low
        high = math.inf if high is None else high
        return ratio.masked_fill((ratio < low) | (ratio > high), 0.0)

    def _log_step(self, mode: str, rollouts: Sequence[Rollout], rewards: Tensor, advantages: Tensor) -> None:
        metrics = self._metrics[mode]
        real = [i for i, r in enumerate(rollouts) if not r.meta.get(IDLE)]
        metrics["rollouts/untrainable"].append(float(sum(not rollouts[i].trainable for i in real)))
        if not real:  # a step with nothing to train: no reward or length to report
            return
        rollouts, rewards, advantages = [rollouts[i] for i in real], rewards[real], advantages[real]
        trained = [r for r in rollouts if r.trainable] or list(rollouts)
        lengths = torch.tensor([len(r.completion_ids) for r in trained], dtype=torch.float32)
        truncated = torch.tensor([r.truncated for r in trained], dtype=torch.float32)
        metrics["reward"].append(rewards.mean().item())
        metrics["reward_std"].append(rewards.std().item() if rewards.numel() > 1 else 0.0)
        metrics["completions/mean_length"].append(lengths.mean().item())
        metrics["completions/max_length"].append(lengths.max().item())
        metrics["completions/clipped_ratio"].append(truncated.mean().item())
        groups: dict[str, list[float]] = defaultdict(list)
        roles: dict[str, list[float]] = defaultdict(list)
        for r, value in zip(rollouts, rewards.tolist(), strict=True):
            groups[r.group].append(value)
            roles[r.role].append(value)
        compared = [g for g in groups.values() if len(g) > 1]  # singletons (n=1 roles) have no spread
        if compared:
            metrics["frac_reward_zero_std"].append(sum(max(g) == min(g) for g in compared) / len(compared))
        for role, values in roles.items():
            metrics[f"rewards/{role}/mean"].append(sum(values) / len(values))
        if advantages.dim() == 2:  # per token: the mean over each rollout's own tokens
            width = advantages.size(1)
            real = make_completion_mask([min(len(r.completion_ids), width) for r in rollouts], width)
            advantages = (advantages.abs() * real).sum(1) / real.sum(1).clamp(min=1)
        metrics["advantages/abs_mean"].append(advantages.abs().mean().item())
        metrics["advantages/nonzero_fraction"].append((advantages != 0).float().mean().item())
        if mode == "train":
            tokens = sum(len(r.prompt_ids) + len(r.completion_ids) for r in trained)
            self.state.num_input_tokens_seen += tokens
        metrics["num_tokens"] = [self.state.num_input_tokens_seen]

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        """TRL's log, with each stage time a method reports (`NAME/seconds/STAGE`) also given as a share of
        TRL's `step_time` over the steps logged together (`NAME/share_of_step/STAGE`: SPAE's probe cost).
        A method's stages run on generating steps only: with `steps_per_generation` > 1, set
        `logging_steps` to a multiple of it for shares of whole generation cycles."""
        metrics = self._metrics["train" if self.model.training else "eval"]
        step = sum(metrics.get("step_time", []))
        if step > 0:
            for key in [k for k in metrics if "/seconds/" in k]:
                metrics[key.replace("/seconds/", "/share_of_step/")] = [sum(metrics[key]) / step]
        super().log(logs, start_time)

    def create_model_card(self, model_name=None, dataset_name=None, tags=None) -> None:
        """TRL's card for a Hub base model; for a local folder (where TRL's would read "fine-tuned from
        [None]") a short card that names the folder."""
        source = get_config_model_id(self.model.config)
        if not source or not os.path.isdir(source):
            super().create_model_card(model_name, dataset_name, tags)
        elif self.is_world_process_zero():
            card = (
                f"# {model_name or 'model'}\n\nFine-tuned from the local model `{source}` by `harness train "
                f"{self.method.name}` (TRL {self._name}).\n"
            )
            write_file(Path(self.args.output_dir) / "README.md", card)  # never through a link

    # --- method state in checkpoints -----------------------------------------------------------------

    def _save_checkpoint(self, model: Any, trial: Any) -> None:
        """Each process saves its own method state: pools and buffers differ between ranks."""
        super()._save_checkpoint(model, trial)
        folder = os.path.join(
            self._get_output_dir(trial=trial), f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
        )
        os.makedirs(folder, exist_ok=True)
        save_method_state(folder, self.accelerator.process_index, self.method.state_dict())

    def _load_optimizer_and_scheduler(self, checkpoint: str | None) -> None:
        super()._load_optimizer_and_scheduler(checkpoint)
        if checkpoint is not None:
            load_method_state(checkpoint, self.accelerator.process_index, self.method)


class EpochSeededSampler(RepeatSampler):
    """TRL's sampler, its order for epoch e drawn from seed + e. TRL draws each epoch's order from one
    generator, which a run resumed in epoch e > 0 restarts at epoch 0's order; the trainer calls
    `set_epoch` at every epoch, so a resumed run now sees the rows the run it continues would have."""

    def set_epoch(self, epoch: int) -> None:
        if self.shuffle and self.seed is not None:  # unshuffled, TRL keeps no generator
            self.generator.manual_seed(self.seed + epoch)


def _fit_rows(rows: list[int], budget: int, step: int, filler: int, idle: int) -> tuple[list[int], Tensor]:
    """`budget` row indices (TRL splits a generation batch evenly and drops any remainder), or `idle`.

    Extra rows are sub-sampled (seeded by the step); missing ones repeat the first of `rows`, with
    their loss masked out (`padded`). With no trainable row the step trains on nothing: `idle` masked
    copies of `filler` (one per micro-batch) rather than a full batch whose gradient would be zero
    anyway (AdamW's momentum still moves the weights, as in any zero-gradient step). With several
    processes the caller passes `idle=budget`: TRL's loss gathers per-row metrics (`clip_ratio/*`), and
    a process with fewer rows than the others would break that collective (gloo aborts on the sizes).
    """
    if not rows:
        return [filler] * idle, torch.ones(idle, dtype=torch.bool)
    if len(rows) > budget:
        keep = torch.randperm(len(rows), generator=torch.Generator().manual_seed(step))[:budget]
        rows = [rows[i] for i in sorted(keep.tolist())]
    padded = torch.zeros(budget, dtype=torch.bool)
    padded[len(rows) :] = True
    return rows + [rows[0]] * (budget - len(rows)), padded
