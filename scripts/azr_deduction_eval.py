"""Held-out AZR deduction: CRUXEval-O items asked in Absolute Zero's own deduction-solver format.

    python scripts/azr_deduction_eval.py --model DIR [--data ../shared/data] [--limit 100]
        [--max-tokens 96] [--template chat] [--batch 8] --out FILE.jsonl

Why: at 135M parameters CRUXEval's standard few-shot prompt scores 0/100 (the model keeps writing the
few-shot pattern until it is cut), so it cannot tell whether self-play helped. AZR trains its solver on
`prompts.solve_prompt(DEDUCTION, program, input)` in the R1 format (<think>/<answer>), so this asks the
first `--limit` CRUXEval-O items (program = `code`, input = `input`) exactly as the method asks a buffered
deduction task (`AzrMethod._solver_items`: the same text, wrapped by `--template` as `_encode` does;
`chat`, the tokenizer's own chat template, is what configs/train/azr-cpu.yaml uses), reads the reply
with the method's `extract_solution` and scores it with the executor's `check_deduction` against the
gold `output` read as a literal (answers that are literals never run; others are evaluated in the
sandbox, as in training). Greedy, CPU, float32. Writes one JSON line per item and prints a summary with
the best-constant baseline (always answering the most common gold output of these items).
"""

from __future__ import annotations

import argparse
import ast
import json
from collections import Counter
from pathlib import Path
from typing import Any

from harness.core.thinking import prompt_opens_think
from trainers.methods.azr import prompts
from trainers.methods.azr.executor import check_deduction
from trainers.methods.azr.parsing import extract_solution, format_ok


def read_items(data: Path, limit: int) -> list[dict[str, str]]:
    lines = (data / "cruxeval" / "cruxeval.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()][:limit]


def prompt_ids(tokenizer: Any, program: str, given: str, template: str = "chat") -> list[int]:
    """The deduction solver's prompt for (program, input), tokenised as `AzrMethod._encode` does with
    the trainer's engine (the tokenizer's chat template, no template kwargs, as azr-cpu.yaml runs)."""
    text = prompts.solve_prompt(prompts.DEDUCTION, program, input=given)
    if template == "chat":
        rendered = tokenizer.apply_chat_template(
            prompts.chat_messages(text), add_generation_prompt=True, tokenize=True, return_dict=True
        )
        return list(rendered["input_ids"])
    return list(tokenizer.encode(prompts.r1_prompt(text), add_special_tokens=False))


def opens_think(tokenizer: Any, ids: list[int], template: str) -> bool:
    """Whether the completion starts inside `<think>` (`AzrMethod._opens`)."""
    return template == "r1" or prompt_opens_think(tokenizer.decode(ids))


def score(text: str, gold: str) -> tuple[str | None, bool, str]:
    """AZR's reading of a deduction reply and its verdict against the gold literal: (answer, correct,
    verdict), the answer None when the reply has no `<answer>` block."""
    answer = extract_solution(text, prompts.DEDUCTION)
    if answer is None:
        return None, False, "no answer"
    verdict = check_deduction(answer, ast.literal_eval(gold))
    return answer, verdict.status == "pass", verdict.status


def best_constant(golds: list[str]) -> tuple[str, int]:
    """The gold output which, answered to every item, scores most under the same comparison."""
    hits = {c: sum(score(f"<answer>{c}</answer>", g)[1] for g in golds) for c in dict.fromkeys(golds)}
    best = max(hits, key=hits.get)
    return best, hits[best]


def generate(model: Any, tokenizer: Any, batch: list[list[int]], max_tokens: int, eos: set[int]) -> list:
    """Greedy, left-padded; each completion cut after its first EOS: (ids, truncated)."""
    import torch

    width = max(len(ids) for ids in batch)
    pad = tokenizer.pad_token_id
    input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids in batch])
    mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in batch])
    with torch.no_grad():
        out = model.generate(
            input_ids=input_ids,
            attention_mask=mask,
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            max_new_tokens=max_tokens,
            eos_token_id=sorted(eos),
            pad_token_id=pad,
        )
    results = []
    for row in out[:, width:].tolist():
        stop = next((i for i, t in enumerate(row) if t in eos), None)
        results.append((row, True) if stop is None else (row[: stop + 1], False))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--max-tokens", type=int, default=96)  # azr-cpu.yaml's solve_max_tokens
    parser.add_argument("--template", choices=("chat", "r1"), default="chat")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32).eval()
    eos = model.generation_config.eos_token_id  # the trainer's stop tokens: these and the tokenizer's EOS
    eos = {tokenizer.eos_token_id, *([] if eos is None else [eos] if isinstance(eos, int) else eos)}

    items = read_items(args.data, args.limit)
    rows = []
    for start in range(0, len(items), args.batch):
        chunk = items[start : start + args.batch]
        ids = [prompt_ids(tokenizer, it["code"], it["input"], args.template) for it in chunk]
        for item, prompt, (completion, truncated) in zip(
            chunk, ids, generate(model, tokenizer, ids, args.max_tokens, eos), strict=True
        ):
            text = tokenizer.decode(completion, skip_special_tokens=True)
            answer, correct, verdict = score(text, item["output"])
            rows.append(
                {
                    "id": item["id"],
                    "prompt_tokens": len(prompt),
                    "completion_tokens": len(completion),
                    "completion": text,
                    "answer": answer,
                    "gold": item["output"],
                    "correct": correct,
                    "verdict": verdict,
                    "format_ok": format_ok(text, opens_think(tokenizer, prompt, args.template)),
                    "truncated": truncated,
                }
            )
        print(f"{len(rows)}/{len(items)}: {sum(r['correct'] for r in rows)} correct", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")

    n = len(rows)
    answers = Counter(r["answer"] for r in rows if r["answer"] is not None)
    top = answers.most_common(1)
    constant, hits = best_constant([r["gold"] for r in rows])
    print(f"{args.out}: {n} items, template {args.template}, max tokens {args.max_tokens}")
    print(f"accuracy {sum(r['correct'] for r in rows)}/{n}")
    print(f"answer extracted {sum(r['answer'] is not None for r in rows) / n:.2f}")
    print(f"R1 format (think then answer) {sum(r['format_ok'] for r in rows) / n:.2f}")
    print(f"truncated {sum(r['truncated'] for r in rows) / n:.2f}")
    share = f", most common {top[0][0]!r} on {top[0][1] / n:.2f} of items" if top else ""
    print(f"distinct answers {len(answers)}{share}")
    print(f"best constant {constant!r}: {hits}/{n}")


if __name__ == "__main__":
    main()
