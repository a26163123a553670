"""Distributions from OpenAI-style token logprobs: table-driven cases, malformed input, storage."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from yoxla.contract.benchmark import choice_space
from yoxla.score.calibration import (
    LabelDistribution,
    LogprobsError,
    distribution_from_logprobs,
    parse_logprobs,
)

CASES = yaml.safe_load((Path(__file__).parent / "cases" / "logprob_cases.yaml").read_text(encoding="utf-8"))


def entry(text: str, p: float, raw: list[int] | None = None) -> dict[str, Any]:
    return {"token": text, "logprob": math.log(p), "bytes": raw}


def content(tokens: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The server's JSON from a case's compact token list."""
    out = []
    for t in tokens:
        item = entry(t["t"], t["p"], t.get("b"))
        item["top_logprobs"] = [entry(*alt) for alt in t.get("top", [])]
        out.append(item)
    return out


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_logprob_case(case):
    space = tuple(str(s) for s in case["space"])
    dist = distribution_from_logprobs(parse_logprobs({"content": content(case["tokens"])}), space)
    expect = case["expect"]
    if expect.get("none"):
        assert dist is None
        return
    assert dist is not None
    masses = {str(k): v for k, v in expect["masses"].items()}
    zero = [str(z) for z in expect.get("zero", [])]
    missing = [str(m) for m in expect.get("missing", [])]
    total = sum(masses.values())
    assert set(dist.probs) == set(masses) | set(zero)
    for label, mass in masses.items():
        assert dist.probs[label] == pytest.approx(mass / total, abs=1e-9), label
    for label in zero:
        assert dist.probs[label] == 0.0 and dist.p(label) == 0.0
    assert list(dist.missing) == [s for s in space if s in missing]
    for label in missing:
        assert dist.p(label) is None  # absent, not zero
        assert dist.missing[label] > 0.0
    assert dist.partial == bool(missing)
    assert dist.mass_found == pytest.approx(total, abs=1e-9)
    assert dist.mass_outside == pytest.approx(1.0 - total, abs=1e-9)
    assert list(dist.assumed) == [str(a) for a in expect.get("assumed", [])]
    if "unlisted" in expect:
        assert dist.unlisted == pytest.approx(expect["unlisted"], abs=1e-9)
    assert dist.top == max(masses, key=lambda k: (masses[k], -space.index(k)))
    assert dist.method == "token_logprobs"


def test_cases_cover_every_rule():
    names = " ".join(c["name"] for c in CASES)
    for needle in ("share a first token", "neytral", "bytes", "wrappers", "think", "no label", "end token"):
        assert needle in names


@pytest.mark.parametrize(
    "bad, message",
    [
        ([{"token": "a", "logprob": float("nan"), "top_logprobs": []}], "nan"),
        ([{"token": "a", "logprob": 0.5, "top_logprobs": []}], "above 0"),
        ([{"token": "a", "logprob": "-1", "top_logprobs": []}], "must be a number"),
        ([{"token": "a", "logprob": -1.0, "bytes": [300], "top_logprobs": []}], "byte values"),
        ([{"token": 5, "logprob": -1.0, "top_logprobs": []}], "'token' must be text"),
        ([{"token": "a", "logprob": -1.0, "top_logprobs": [{"token": "b", "logprob": float("inf")}]}], "inf"),
        ("not a list", "list of tokens"),
    ],
)
def test_malformed_logprobs_are_refused(bad, message):
    with pytest.raises(LogprobsError, match=message):
        parse_logprobs(bad)


def test_rounding_above_zero_is_clamped_and_minus_infinity_is_zero_probability():
    toks = parse_logprobs(
        [
            {
                "token": "A",
                "logprob": 1e-9,
                "top_logprobs": [{"token": "A", "logprob": 1e-9}, {"token": "B", "logprob": float("-inf")}],
            }
        ]
    )
    assert toks[0].logprob == 0.0
    dist = distribution_from_logprobs(toks, ("A", "B"))
    assert dist is not None and dist.probs == {"A": 1.0, "B": 0.0}


@pytest.mark.parametrize("empty", [None, [], {"content": None}, {"content": []}])
def test_no_logprobs_means_no_distribution(empty):
    assert distribution_from_logprobs(parse_logprobs(empty), ("A", "B")) is None


def test_a_benchmark_rows_closed_space_is_its_choice_space():
    assert choice_space("nli_v1", {}) == ("entailment", "neutral", "contradiction")
    assert choice_space("rag_selection_v1", {"passages": ["a"] * 6}) == (
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
        "HEÇ BİRİ",
    )
    assert choice_space("knowledge_choice_v1", {"candidates": ["x"] * 20})[-1] == "20"
    assert choice_space("knowledge_choice_v1", None) == ()  # no options: an empty space, never an error
    for open_task in ("sts_v1", "extractive_qa_v1", "qa_abstention_v1"):
        assert choice_space(open_task, {}) is None
    with pytest.raises(KeyError):
        choice_space("no_such_task_v1", {})


# Storage -------------------------------------------------------------------------------------


def _partial() -> LabelDistribution:
    toks = parse_logprobs({"content": content(CASES[6]["tokens"])})
    dist = distribution_from_logprobs(toks, ("1", "2", "10", "12", "17"))
    assert dist is not None and dist.partial
    return dist


def test_a_stored_distribution_reads_back_identically():
    for dist in (_partial(), LabelDistribution.from_masses(("a", "b"), {"a": 0.3, "b": 0.3}, assumed=["b"])):
        assert dist is not None
        stored = dist.to_dict()
        again = LabelDistribution.from_dict(stored, dist.space)
        assert again == dist
        assert again.to_dict() == stored


def test_stored_form_says_what_is_absent():
    stored = _partial().to_dict()
    assert stored["probs"] == {"2": 1.0}
    assert set(stored["missing"]) == {"1", "10", "12", "17"}
    assert stored["top"] == "2"
    assert stored["mass_outside"] == pytest.approx(0.3)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"top": "a"}, "not the most probable"),
        ({"probs": {"a": 0.5, "b": 0.6}}, "sum to"),
        ({"probs": {"a": float("nan"), "b": 1.0}}, "finite"),
        ({"probs": {"a": 0.5, "c": 0.5}}, "not in the answer space"),
        ({"probs": {"a": 1.0}}, "neither recovered nor missing"),
        ({"mass_outside": -0.5}, r"\[0, 1\]"),
        ({"method": "guess"}, "unknown method"),
        ({"extra": 1}, "unknown distribution fields"),
    ],
)
def test_inconsistent_stored_distributions_are_refused(change, message):
    stored = {"method": "token_logprobs", "probs": {"a": 0.25, "b": 0.75}, "top": "b", "mass_outside": 0.2}
    with pytest.raises(ValueError, match=message):
        LabelDistribution.from_dict({**stored, **change}, ("a", "b"))


def test_top_ties_go_to_the_earlier_label_and_no_mass_is_no_distribution():
    dist = LabelDistribution.from_masses(("x", "y", "z"), {"x": 0.1, "y": 0.4, "z": 0.4})
    assert dist is not None and dist.top == "y"
    assert LabelDistribution.from_masses(("x", "y"), {"x": 0.0, "y": 0.0}) is None


@pytest.mark.parametrize("tolerance", [-0.1, 1.0, float("nan")])
def test_a_bad_tolerance_is_refused(tolerance):
    with pytest.raises(ValueError, match="tolerance"):
        distribution_from_logprobs([], ("a",), tolerance=tolerance)


# What the run folder keeps: compact_logprobs -----------------------------------------------


def _t(text: str, p: float, top: list[tuple[str, float]] | None = None) -> dict:
    def one(t: str, q: float) -> dict:
        return {"token": t, "logprob": math.log(q), "bytes": list(t.encode("utf-8"))}

    return {**one(text, p), "top_logprobs": [one(t, q) for t, q in (top or [(text, p)])]}


def test_compact_logprobs_keeps_what_the_distribution_reads():
    from yoxla.score.calibration.token_logprobs import MAX_ANSWER_TOKENS, compact_logprobs

    space = ("entailment", "neutral", "contradiction")
    reasoning = [_t(f" söz{i}", 0.5, [(f" söz{i}", 0.5), (" x", 0.1)]) for i in range(300)]
    close = [_t("</", 0.9), _t("think", 0.9), _t(">\n", 0.9)]
    answer = [_t("neutral", 0.6, [("neutral", 0.6), ("entailment", 0.3), ("contradiction", 0.05)])]
    tail = [_t(".", 0.5) for _ in range(200)]
    full = [_t("<think>", 1.0), *reasoning, *close, *answer, *tail]
    kept = compact_logprobs(full)
    assert len(kept) == len(close) + MAX_ANSWER_TOKENS and kept[0]["token"] == "</"
    want = distribution_from_logprobs(parse_logprobs(full), space)
    assert want is not None and want.probs["neutral"] == pytest.approx(0.6 / 0.95)
    assert distribution_from_logprobs(parse_logprobs(kept), space) == want
    # Without a reasoning block: the first tokens only.
    plain = [*answer, *tail]
    assert len(compact_logprobs(plain)) == MAX_ANSWER_TOKENS
    assert distribution_from_logprobs(
        parse_logprobs(compact_logprobs(plain)), space
    ) == distribution_from_logprobs(parse_logprobs(plain), space)
    # Unclosed reasoning stays unclosed (no answer: no distribution).
    unclosed = [_t("<think>", 1.0), *reasoning]
    assert distribution_from_logprobs(parse_logprobs(compact_logprobs(unclosed)), space) is None
    # Plain JSON only: what a predictions.jsonl line can hold.
    assert json.loads(json.dumps(kept)) == kept
