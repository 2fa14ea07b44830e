"""Run the cold start: demonstrations -> contamination check -> TRL `SFTTrainer` -> OUT/cold-start/.

OUT/cold-start/ is a Hugging Face model folder (`harness eval --model` loads it) with:
`demonstrations.jsonl` (what was trained on), `log.jsonl` (SFTTrainer's logged losses) and
`report.json` (the settings, counts per role and task, the contamination check, seconds), written last:
a folder without it is an interrupted cold start, redone from scratch on the next run.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from harness import HarnessError
from trainers.coldstart.contamination import decontaminate, evaluation_ngrams
from trainers.coldstart.demos import Demonstration
from trainers.coldstart.options import ColdStartOptions

FOLDER, REPORT = "cold-start", "report.json"


def check_cold_start(config: Any, method: type) -> None:
    """Refuse, before anything is written, a cold start the method cannot build or bad settings."""
    if config.cold_start is None:
        return
    ColdStartOptions.from_mapping(config.cold_start)
    from trainers.method import Method

    if method.demonstrations.__func__ is Method.demonstrations.__func__:
        raise HarnessError(f"method {method.name!r} has no cold-start demonstrations; remove cold_start:")


def cold_start_model(config: Any, method: type) -> str | None:
    """The model self-play starts from: OUT/cold-start (trained now unless a finished one is there), or
    None when the config has no `cold_start:`."""
    if config.cold_start is None:
        return None
    options = ColdStartOptions.from_mapping(config.cold_start)
    folder = Path(config.out) / FOLDER
    if (folder / REPORT).is_file():
        return str(folder)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(config.model, trust_remote_code=config.trust_remote_code)
    demos = method.demonstrations(config, tokenizer, options.examples)
    sets = list(dict.fromkeys([*config.eval_benchmarks, *options.decontaminate]))
    kept, contamination = decontaminate(demos, evaluation_ngrams(sets, config.data_dir))
    if not kept:
        raise HarnessError("cold start: every demonstration overlaps an evaluation set; nothing to train on")
    if folder.exists():
        shutil.rmtree(folder)  # an interrupted cold start
    started = time.perf_counter()
    log = train_sft(config, options, tokenizer, kept, folder)
    _write_jsonl(folder / "demonstrations.jsonl", [d.record() for d in kept])
    _write_jsonl(folder / "log.jsonl", log)
    report = {
        "settings": asdict(options),
        "base_model": config.model,
        "demonstrations": len(kept),
        "per_role_task": {
            f"{r}/{t}": n for (r, t), n in sorted(Counter((d.role, d.task) for d in kept).items())
        },
        "contamination": contamination.record(),
        "sft_steps": max((e.get("step", 0) for e in log), default=0),
        "final_loss": next((e["loss"] for e in reversed(log) if "loss" in e), None),
        "seconds": round(time.perf_counter() - started, 1),
    }
    (folder / REPORT).write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"cold start: {len(kept)} demonstrations ({sum(contamination.dropped.values())} dropped as "
        f"contaminated), {report['sft_steps']} SFT steps, loss {report['final_loss']}, "
        f"{report['seconds']:.0f} s -> {folder}",
        flush=True,
    )
    return str(folder)


def tokenized(demo: Demonstration, tokenizer: Any, chat_template_kwargs: dict) -> dict[str, list[int]]:
    """input_ids and completion_mask, the prompt rendered as the method renders it (chat template with
    its generation header, or the raw string; then the prefill), the completion ended by EOS."""
    from harness.backends.chat import middle_truncate

    if isinstance(demo.prompt, str):
        prompt = tokenizer.encode(demo.prompt, add_special_tokens=False)
    else:
        prompt = list(
            tokenizer.apply_chat_template(
                list(demo.prompt),
                add_generation_prompt=True,
                tokenize=True,
                return_dict=True,
                **chat_template_kwargs,
            )["input_ids"]
        )
    if demo.max_prompt_tokens:
        prompt = middle_truncate(prompt, demo.max_prompt_tokens)
    prompt += tokenizer.encode(demo.prefill, add_special_tokens=False) if demo.prefill else []
    completion = tokenizer.encode(demo.completion, add_special_tokens=False) + [tokenizer.eos_token_id]
    return {"input_ids": prompt + completion, "completion_mask": [0] * len(prompt) + [1] * len(completion)}


def train_sft(
    config: Any, options: ColdStartOptions, tokenizer: Any, demos: list[Demonstration], folder: Path
) -> list[dict]:
    """TRL's SFTTrainer on the demonstrations (loss on the completions only); the model is saved to
    `folder`; returns the logged history."""
    import torch
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    from trainers.integration.quiet import quiet_libraries

    on_cpu = not torch.cuda.is_available()
    rows = [tokenized(d, tokenizer, dict(config.chat_template_kwargs)) for d in demos]
    args = SFTConfig(
        output_dir=str(folder),
        num_train_epochs=options.epochs,
        per_device_train_batch_size=options.batch_size,
        learning_rate=options.learning_rate,
        lr_scheduler_type="cosine",
        warmup_steps=0.05,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        seed=config.seed,
        completion_only_loss=True,
        max_length=None,
        use_cpu=on_cpu,
        bf16=bool(config.trl.get("bf16", not on_cpu)),  # the run's precision: one process has one
        fp16=bool(config.trl.get("fp16", False)),  # accelerator state, and self-play's comes next
        gradient_checkpointing=bool(config.trl.get("gradient_checkpointing", False)),
        disable_tqdm=True,
        trust_remote_code=config.trust_remote_code,  # only ever from --trust-remote-code
    )
    with quiet_libraries():
        trainer = SFTTrainer(
            model=config.model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer
        )
        trainer.train()
        trainer.save_model(str(folder))
    if trainer.accelerator.is_main_process:
        tokenizer.save_pretrained(str(folder))
        (folder / "training_args.bin").unlink(missing_ok=True)  # a pickle; nothing reads it
    return [e for e in trainer.state.log_history if "loss" in e or "train_loss" in e]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
