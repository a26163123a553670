"""Exact label probabilities of a local Transformers model: each label scored as a continuation.

``log m(l) = Σ_j log p(l_j | x, l_<j) + log Σ_{e ∈ end} p(e | x, l)`` for the chat-templated
prompt ``x`` (the end term left out with ``include_end=False``); the distribution is
``softmax_l(log m(l))`` and ``mass_outside = 1 − Σ_l m(l)``. Tokens at the boundary, the two
modes (``shared`` reuses the prompt's key/value cache, ``full`` does not) and their cost:
docs/calibration.md, "Local Transformers models".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from yoxla.score.calibration.distribution import LabelDistribution

MODES = ("shared", "full")


@dataclass(frozen=True)
class LabelScores:
    """What scoring found: per label its log mass and tokens, and the distribution."""

    logmass: dict[str, float]  # log m(l), see the module docstring
    token_ids: dict[str, tuple[int, ...]]  # the label's tokens as scored
    merged: tuple[str, ...]  # labels whose joint tokenization merged across the boundary
    distribution: LabelDistribution


def label_token_ids(
    tokenizer: Any, prompt: str, label: str, prompt_ids: Sequence[int]
) -> tuple[list[int], bool]:
    """(the label's tokens after ``prompt_ids``, whether the boundary merged)."""
    joint = tokenizer(prompt + label, add_special_tokens=False)["input_ids"]
    n = len(prompt_ids)
    if list(joint[:n]) == list(prompt_ids) and len(joint) > n:
        return list(joint[n:]), False
    alone = tokenizer(label, add_special_tokens=False)["input_ids"]
    return list(alone), True


def default_end_ids(model: Any, tokenizer: Any) -> list[int]:
    """The model's end-of-sequence tokens: generation config first, then the tokenizer's."""
    gen = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    found = [v for v in (gen, getattr(tokenizer, "eos_token_id", None)) if v is not None]
    return list(dict.fromkeys(int(i) for v in found for i in (v if isinstance(v, list | tuple) else [v])))


def _cache_argument(model: Any) -> str:
    """``cache`` (transformers >= 5.x) or ``past_key_values`` (older): the forward's cache argument."""
    import inspect

    params = inspect.signature(model.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def score_labels(
    model: Any,
    tokenizer: Any,
    prompt: str,
    labels: Sequence[str],
    *,
    end_ids: Sequence[int] | None = None,
    include_end: bool = True,
    mode: str = "shared",
) -> LabelScores:
    """Score every label of an answer space as a continuation of ``prompt`` (module docstring).

    ``model`` is a Hugging Face causal LM, ``tokenizer`` its tokenizer, ``prompt`` the chat
    template's output with the generation prompt added (``TransformersProvider.render``).
    """
    import torch

    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    if not labels or len(set(labels)) != len(labels):
        raise ValueError("labels must be non-empty and distinct")
    ends = list(end_ids) if end_ids is not None else default_end_ids(model, tokenizer)
    if include_end and not ends:
        raise ValueError("no end-of-sequence token to score the end of the answer with")
    prompt_ids = list(tokenizer(prompt, add_special_tokens=False)["input_ids"])
    if not prompt_ids:
        raise ValueError("the prompt has no tokens")
    conts: list[list[int]] = []
    merged: list[str] = []
    for label in labels:
        ids, was_merged = label_token_ids(tokenizer, prompt, label, prompt_ids)
        if not ids:
            raise ValueError(f"label {label!r} has no tokens")
        conts.append(ids)
        if was_merged:
            merged.append(label)

    device = next(model.parameters()).device
    width = max(len(c) for c in conts)
    pad = int(getattr(tokenizer, "pad_token_id", None) or 0)
    batch = torch.tensor([c + [pad] * (width - len(c)) for c in conts], device=device)
    n_labels, n_prompt = len(conts), len(prompt_ids)
    with torch.inference_mode():
        if mode == "shared":
            first = model(input_ids=torch.tensor([prompt_ids], device=device), use_cache=True)
            name = _cache_argument(model)
            cache = getattr(first, name)
            cache.batch_repeat_interleave(n_labels)
            rest = model(
                input_ids=batch,
                **{name: cache},
                attention_mask=torch.ones(n_labels, n_prompt + width, dtype=torch.long, device=device),
                use_cache=True,
            )
            # Position j of `before` predicts the label's token j (and, after the last, the end).
            before = torch.cat([first.logits[:, -1:, :].expand(n_labels, -1, -1), rest.logits], dim=1)
        else:
            full = torch.tensor([prompt_ids + row for row in batch.tolist()], device=device)
            mask = torch.zeros_like(full)
            for i, c in enumerate(conts):
                mask[i, : n_prompt + len(c)] = 1
            out = model(input_ids=full, attention_mask=mask)
            before = out.logits[:, n_prompt - 1 :, :]
        logp = torch.log_softmax(before.float(), dim=-1)

    logmass: dict[str, float] = {}
    for i, (label, c) in enumerate(zip(labels, conts, strict=True)):
        steps = logp[i, torch.arange(len(c), device=device), torch.tensor(c, device=device)]
        total = float(steps.sum())
        if include_end:
            total += float(torch.logsumexp(logp[i, len(c), ends], dim=0))
        logmass[label] = total

    top = max(logmass.values())
    weights = {label: math.exp(v - top) for label, v in logmass.items()}
    norm = math.fsum(weights.values())
    found = min(1.0, math.fsum(math.exp(v) for v in logmass.values()))
    dist = LabelDistribution(
        space=tuple(labels),
        probs={label: w / norm for label, w in weights.items()},
        mass_found=found,
        method="label_scoring",
    )
    return LabelScores(
        logmass, {lb: tuple(c) for lb, c in zip(labels, conts, strict=True)}, tuple(merged), dist
    )
