"""Label scoring on a tiny local model equals the softmax computed by hand from its logits."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from yoxla.contract.benchmark import prepare_rows  # noqa: E402
from yoxla.score.calibration.label_scoring import default_end_ids, label_token_ids, score_labels  # noqa: E402

ROW = {"id": "r", "premise": "Bakı Azərbaycanın paytaxtıdır.", "hypothesis": "Bakı şəhərdir."}


def chat_prompt(tokenizer, task_id: str, row: dict, thinking: bool | None = None) -> str:
    kwargs = {} if thinking is None else {"enable_thinking": thinking}
    return tokenizer.apply_chat_template(
        list(prepare_rows(task_id, [row]).items[0].messages),
        tokenize=False,
        add_generation_prompt=True,
        **kwargs,
    )


def by_hand(model, tokenizer, prompt: str, labels: list[str], include_end: bool = True) -> dict[str, float]:
    """Each label on its own: the whole sequence through the model, log-softmax, sum, then softmax."""
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    ends = default_end_ids(model, tokenizer)
    logmass = {}
    for label in labels:
        ids = tokenizer(prompt + label, add_special_tokens=False)["input_ids"]
        assert ids[: len(prompt_ids)] == prompt_ids  # no merge at the boundary in these cases
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0].double()
        logp = torch.log_softmax(logits, dim=-1)
        total = sum(float(logp[len(prompt_ids) - 1 + j, t]) for j, t in enumerate(ids[len(prompt_ids) :]))
        if include_end:
            total += float(torch.logsumexp(logp[len(ids) - 1, ends], dim=0))
        logmass[label] = total
    top = max(logmass.values())
    norm = sum(math.exp(v - top) for v in logmass.values())
    return {label: math.exp(v - top) / norm for label, v in logmass.items()} | {
        f"log:{label}": v for label, v in logmass.items()
    }


CASES = [
    ("nli_v1", ROW, ["entailment", "neutral", "contradiction"], True),
    ("nli_v1", ROW, ["entailment", "neutral", "contradiction"], False),
    (
        "minimal_pairs_v1",
        {"sentence_a": "Bu kitab maraqlıdır.", "sentence_b": "Bu kitab maraqlıdir."},
        ["A", "B"],
        True,
    ),
    (
        "rag_verification_v1",
        {"context": "Bakı paytaxtdır.", "claim": "Bakı şəhərdir."},
        ["TƏSDİQ", "ZİDD", "YOXDUR"],
        True,
    ),
    (
        "rag_selection_v1",
        {"question": "Sual?", "passages": ["a", "b", "c", "d", "e", "f"]},
        ["1", "2", "3", "4", "5", "6", "HEÇ BİRİ"],
        True,
    ),
    (
        "knowledge_choice_v1",
        {"question": "Sual?", "candidates": [str(i) for i in range(20)]},
        ["1", "2", "10", "12", "20"],
        True,
    ),
]


# Every case with the shared prompt cache; the full batch on two of them (it is the slower path).
RUNS = [(*c, "shared") for c in CASES] + [(*CASES[0], "full"), (*CASES[-1], "full")]


@pytest.mark.parametrize(
    "task_id, row, labels, include_end, mode", RUNS, ids=[f"{r[0]}-end{r[3]}-{r[4]}" for r in RUNS]
)
def test_label_scoring_equals_softmax_by_hand(tiny_lm, task_id, row, labels, include_end, mode):
    model, tokenizer = tiny_lm
    prompt = chat_prompt(tokenizer, task_id, row)
    got = score_labels(model, tokenizer, prompt, labels, include_end=include_end, mode=mode)
    want = by_hand(model, tokenizer, prompt, labels, include_end)
    for label in labels:
        assert got.distribution.probs[label] == pytest.approx(want[label], abs=1e-5)
        assert got.logmass[label] == pytest.approx(want[f"log:{label}"], abs=1e-3)
    dist = got.distribution
    assert dist.method == "label_scoring" and dist.complete and list(dist.probs) == labels
    assert dist.mass_found == pytest.approx(sum(math.exp(v) for v in got.logmass.values()), rel=1e-9)
    assert got.merged == ()
    for label in labels:
        assert tokenizer.decode(list(got.token_ids[label])) == label


def test_a_label_and_its_extension_are_different_events(tiny_lm):
    model, tokenizer = tiny_lm
    prompt = chat_prompt(tokenizer, "knowledge_choice_v1", CASES[-1][1])
    labels = ["1", "10"]
    starts = score_labels(model, tokenizer, prompt, labels, include_end=False).logmass
    ends = score_labels(model, tokenizer, prompt, labels).logmass
    assert starts["1"] >= starts["10"]  # starting with "1" includes starting with "10"
    assert math.exp(ends["1"]) + math.exp(ends["10"]) <= math.exp(starts["1"]) + 1e-12  # disjoint events


def test_the_thinking_prefill_is_part_of_the_prompt(tiny_lm):
    model, tokenizer = tiny_lm
    labels = ["entailment", "neutral", "contradiction"]
    plain = chat_prompt(tokenizer, "nli_v1", ROW)
    prefilled = chat_prompt(tokenizer, "nli_v1", ROW, thinking=False)
    assert prefilled.endswith("<think>\n\n</think>\n\n") and prefilled != plain
    got = score_labels(model, tokenizer, prefilled, labels)
    want = by_hand(model, tokenizer, prefilled, labels)
    assert [got.distribution.probs[lb] for lb in labels] == pytest.approx(
        [want[lb] for lb in labels], abs=1e-5
    )


def test_a_boundary_merge_falls_back_to_the_label_alone(tiny_lm):
    _, tokenizer = tiny_lm
    prompt = "x "
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    ids, merged = label_token_ids(tokenizer, prompt, "neutral", prompt_ids)
    assert merged and ids == tokenizer("neutral", add_special_tokens=False)["input_ids"]
    ids, merged = label_token_ids(
        tokenizer, "<|assistant|>\n", "neutral", tokenizer("<|assistant|>\n")["input_ids"]
    )
    assert not merged


@pytest.mark.parametrize(
    "labels, kwargs, message",
    [
        ([], {}, "non-empty"),
        (["a", "a"], {}, "distinct"),
        (["a"], {"mode": "fast"}, "unknown mode"),
        (["a"], {"end_ids": []}, "end-of-sequence"),
    ],
)
def test_bad_calls_are_refused(tiny_lm, labels, kwargs, message):
    model, tokenizer = tiny_lm
    with pytest.raises(ValueError, match=message):
        score_labels(model, tokenizer, "<s>", labels, **kwargs)
