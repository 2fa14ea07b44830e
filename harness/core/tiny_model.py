"""A deterministic tiny random Qwen2-style causal LM with a byte-level BPE tokenizer, built offline."""

from __future__ import annotations

from pathlib import Path

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
THINK_TOKENS = ["<think>", "</think>"]

# R1/Qwen3-style: the generation prompt opens a think block unless enable_thinking is false;
# earlier assistant turns keep only their answer.
CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- set content = message['content'] -%}"
    "{%- if message['role'] == 'assistant' and '</think>' in content -%}"
    "{%- set content = content.split('</think>')[-1].lstrip() -%}"
    "{%- endif -%}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + content + '<|im_end|>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}"
    "{%- if enable_thinking is defined and enable_thinking is false -%}"
    "{{ '<|im_start|>assistant\\n<think>\\n\\n</think>\\n\\n' }}"
    "{%- else -%}{{ '<|im_start|>assistant\\n<think>\\n' }}{%- endif -%}"
    "{%- endif -%}"
)
# Plain ChatML: the assistant answers directly (`harness tiny-model --no-thinking`, the demo's model)
PLAIN_CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}"
)

# Generic maths prose for the BPE merges; no benchmark problem or answer appears in it.
_CORPUS = [
    "Please reason step by step, and put your final answer within \\boxed{}.",
    "Find the number of ordered pairs $(x, y)$ of integers such that $x^2 + y^2 = r^2$.",
    "Let $\\triangle ABC$ have sides $AB = c$, $BC = a$ and $CA = b$. Find the area.",
    "We have $\\frac{1}{a} + \\frac{1}{b} = \\frac{a + b}{ab}$, so the answer is $\\boxed{x}$.",
    "Digits and symbols: 0 1 2 3 4 5 6 7 8 9 + - * / = ( ) [ ] { } \\sqrt \\pi \\cdot",
]


def build_tiny_model(out_dir: Path, vocab_size: int = 512, thinking: bool = True) -> Path:
    """Write config, weights, tokenizer and chat template to `out_dir`; same bytes every time.

    `thinking=False` gives a plain ChatML template with no <think> block (same weights).
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GenerationConfig, PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(_CORPUS * 4, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
    )
    tokenizer.add_tokens(THINK_TOKENS)  # ordinary added tokens: they survive skip_special_tokens
    tokenizer.chat_template = CHAT_TEMPLATE if thinking else PLAIN_CHAT_TEMPLATE
    tokenizer.model_max_length = 32768

    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=64,  # vLLM's CPU backend rejects smaller heads
        max_position_embeddings=32768,
        tie_word_embeddings=False,  # untied: greedy text follows the prompt instead of repeating it
        initializer_range=0.1,
        bos_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config).to(torch.float32)
    model.generation_config = GenerationConfig(
        bos_token_id=config.bos_token_id, eos_token_id=config.eos_token_id, pad_token_id=config.pad_token_id
    )
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir
