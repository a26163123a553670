"""The ranking order: sorting by a declared list of metrics, and the sentence that explains it."""

from __future__ import annotations

import pytest

from yoxla.score.calibration.ranking import DEFAULT_ORDER, explain_order, rank

MODELS = [
    {
        "name": "a",
        "accuracy": 0.8,
        "group_consistency": 0.5,
        "high_confidence_error_rate": 0.10,
        "mean_gold_p": 0.7,
    },
    {
        "name": "b",
        "accuracy": 0.9,
        "group_consistency": 0.2,
        "high_confidence_error_rate": 0.30,
        "mean_gold_p": 0.6,
    },
    {
        "name": "c",
        "accuracy": 0.8,
        "group_consistency": 0.5,
        "high_confidence_error_rate": 0.05,
        "mean_gold_p": 0.5,
    },
    {
        "name": "d",
        "accuracy": 0.8,
        "group_consistency": None,
        "high_confidence_error_rate": None,
        "mean_gold_p": None,
    },
    {
        "name": "e",
        "accuracy": 0.8,
        "group_consistency": 0.5,
        "high_confidence_error_rate": 0.05,
        "mean_gold_p": 0.9,
    },
    {
        "name": "f",
        "accuracy": 0.8,
        "group_consistency": 0.5,
        "high_confidence_error_rate": 0.05,
        "mean_gold_p": 0.9,
    },
]


@pytest.mark.parametrize(
    "order, expected",
    [
        # accuracy first; then consistency; lower error rate; higher gold p; missing values last; ties keep order
        (DEFAULT_ORDER, ["b", "e", "f", "c", "a", "d"]),
        (("high_confidence_error_rate", "accuracy"), ["c", "e", "f", "a", "b", "d"]),
        (("mean_gold_p",), ["e", "f", "a", "b", "c", "d"]),
    ],
)
def test_rank(order, expected):
    assert [m["name"] for m in rank(MODELS, order)] == expected


def test_explanation_is_one_sentence_in_the_declared_order():
    text = explain_order(DEFAULT_ORDER)
    assert text.count(". ") == 0 and text.endswith(".")
    positions = [
        text.index(w) for w in ("accuracy", "group consistency", "high-confidence error rate", "mean gold")
    ]
    assert positions == sorted(positions)
    assert "(lower first)" in text and "(higher first)" in text


@pytest.mark.parametrize("order", [(), ("accuracy", "accuracy"), ("speed",)])
def test_bad_orders_are_refused(order):
    with pytest.raises(ValueError):
        rank(MODELS, order)


def test_nan_is_refused():
    with pytest.raises(ValueError, match="NaN"):
        rank([{"accuracy": float("nan")}], ("accuracy",))
