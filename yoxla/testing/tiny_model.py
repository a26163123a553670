"""A tiny random-weight chat model, built locally, for tests and benches (no downloads).

A byte-level BPE tokenizer trained on a few Azerbaijani sentences and the suite's own system
prompts (so real prompts tokenize without unknown tokens), and a small Llama with seeded random
weights, saved with ``save_pretrained`` so it loads through the path a user's model takes.
Needs the local extras (``requirements-local.txt``); never imported by ``import yoxla``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PAD, BOS, EOS = "<pad>", "<s>", "</s>"
ROLE_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>")

# Turns end with EOS; the generation prompt opens an assistant turn. Like Qwen3's template,
# ``enable_thinking=false`` pre-fills an empty think block; templates that never mention the
# variable ignore it.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>' }}\n{{ message['content'] }}{{ eos_token }}\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}"
    "{% endif %}"
)

SENTENCES = (
    "Bakı Azərbaycanın paytaxtıdır və Xəzər dənizinin sahilində yerləşir.",
    "Müəllim şagirdlərə yeni dərsi izah etdi, onlar isə diqqətlə qulaq asdılar.",
    "Bu gün hava çox isti olduğuna görə uşaqlar parkda oynamadılar.",
    "Kitabxanada minlərlə kitab, jurnal və qəzet saxlanılır.",
    "Nizami Gəncəvi Azərbaycan ədəbiyyatının ən böyük şairlərindən biridir.",
    "Qardaşım universitetdə kompüter elmləri üzrə təhsil alır.",
    "Səhər tezdən yola düşdük və günorta Şəkiyə çatdıq.",
    "Bazarda alma, armud, üzüm və nar satılırdı.",
    "Həkim xəstəyə bir həftə evdə istirahət etməyi məsləhət gördü.",
    "Şirkət ötən il gəlirini iki dəfə artırdığını bildirdi.",
    "Müddəa doğrudursa, fərziyyə də mütləq doğrudur.",
    "Cavab olaraq yalnız etiketi yaz, başqa heç nə yazma.",
    "Qız çiçəkləri suladı, oğlan isə ev tapşırığını yazdı.",
    "Yağış yağdığı üçün futbol oyunu təxirə salındı.",
    "Azərbaycan dili türk dilləri ailəsinin oğuz qrupuna daxildir.",
    "Entailment, neutral, contradiction: 0 1 2 3 4 5 6 7 8 9.",
)


def _corpus() -> list[str]:
    """The sentences above, and each benchmark task's instructions and prompt template (its package suite's)."""
    from yoxla.contract.benchmark import benchmark_manifest

    texts = list(SENTENCES)
    for task in benchmark_manifest().tasks.values():
        texts.append(task.instructions or "")
        texts.append(task.spec.prompt_template)
    return texts


def build_tokenizer(vocab_size: int = 512, chat_template: str | None = CHAT_TEMPLATE) -> Any:
    """A ``PreTrainedTokenizerFast`` with pad/bos/eos, role tokens and (by default) a chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD, BOS, EOS, *ROLE_TOKENS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        additional_special_tokens=list(ROLE_TOKENS),
        padding_side="left",
    )
    if chat_template is not None:
        fast.chat_template = chat_template
    return fast


def build_tiny_model(
    path: str | Path,
    *,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    intermediate_size: int | None = None,
    vocab_size: int = 512,
    seed: int = 0,
    chat_template: str | None = CHAT_TEMPLATE,
) -> Path:
    """Write a tiny random Llama chat model (weights, config, tokenizer) to ``path``."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(vocab_size, chat_template)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size or 2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=max(1, num_heads // 2),
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).float().eval()
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
