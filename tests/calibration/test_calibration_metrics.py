"""Calibration metrics: hand-computed small tables, independent implementations, edge cases."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from yoxla.score.calibration.metrics import (
    Case,
    accuracy,
    answer_agreement,
    brier_score,
    calibration_report,
    control_summary,
    group_consistency,
    high_confidence_error_rate,
    mean_gold_probability,
    reliability,
)

# A small table computed by hand (docs/calibration.md has the formulas):
#   scored A–E, with probabilities A–D; F and G are controls.
TABLE = [
    Case("a", "a", {"a": 0.9, "b": 0.1}, True),  # A: right, sure
    Case("b", "a", {"a": 0.95, "b": 0.05}, False),  # B: wrong with p = 0.95: a high-confidence error
    Case("a", "b", {"a": 0.4, "b": 0.6}, False),  # C: wrong, not sure enough
    Case("b", None, {"a": 0.5, "b": 0.5}, False),  # D: invalid answer; tie → top is "a"
    Case("a", "a", None, True),  # E: right, no probabilities
    Case(None, "a", {"a": 0.7, "b": 0.3}, False, control=True),  # F
    Case(None, None, None, False, control=True),  # G
]


def test_hand_computed_table():
    assert accuracy(TABLE) == pytest.approx(2 / 5)
    assert mean_gold_probability(TABLE) == pytest.approx((0.9 + 0.05 + 0.4 + 0.5) / 4)
    assert high_confidence_error_rate(TABLE) == pytest.approx(1 / 5)  # B over the five scored
    brier = ((0.1**2 + 0.1**2) + (0.95**2 + 0.95**2) + (0.6**2 + 0.6**2) + (0.5**2 + 0.5**2)) / 4
    assert brier_score(TABLE) == pytest.approx(brier)
    # Bins of width 1/15: 0.9 → (13/15, 14/15], 0.95 → (14/15, 1], 0.6 → (8/15, 9/15], 0.5 → (7/15, 8/15].
    assert reliability(TABLE).ece == pytest.approx((0.1 + 0.95 + 0.6 + 0.5) / 4)
    assert answer_agreement(TABLE) == pytest.approx(4 / 5)  # A, B, C, F agree; D is invalid
    controls = control_summary(TABLE)
    assert (controls.n, controls.valid_choice_rate, controls.mean_max_probability, controls.n_with_probs) == (
        2,
        0.5,
        0.7,
        1,
    )


def test_reliability_bins_hold_what_a_diagram_needs():
    rel = reliability(TABLE)
    assert len(rel.bins) == 15 and rel.n == 4
    assert [b.lower for b in rel.bins] == [i / 15 for i in range(15)]
    assert rel.bins[-1].upper == 1.0
    filled = {i: b for i, b in enumerate(rel.bins) if b.count}
    assert sorted(filled) == [7, 8, 13, 14]
    assert filled[13].mean_confidence == pytest.approx(0.9) and filled[13].accuracy == 1.0
    assert filled[14].accuracy == 0.0
    assert all(b.mean_confidence is None and b.accuracy is None for b in rel.bins if not b.count)


@pytest.mark.parametrize(
    "cases, value, n_groups, n_consistent",
    [
        (
            [
                Case("a", "a", None, True, group="g1"),
                Case("b", "b", None, True, group="g1"),
                Case("a", "a", None, True, group="g2"),
                Case("b", "a", None, False, group="g2"),
                Case("a", "a", None, True, group="g3"),  # a group of one is no contrast group
                Case("a", "b", None, False),  # in no group
                Case(None, "b", None, False, control=True, group="g1"),  # controls are not scored
            ],
            0.5,
            2,
            1,
        ),
        ([Case("a", "a", None, True, group="solo")], None, 0, 0),
        ([], None, 0, 0),
    ],
)
def test_group_consistency(cases, value, n_groups, n_consistent):
    got = group_consistency(cases)
    assert (got.value, got.n_groups, got.n_consistent) == (value, n_groups, n_consistent)


def test_empty_and_all_absent():
    for cases in ([], [Case("a", "a", None, True), Case("b", None, None, False)]):
        report = calibration_report(cases)
        assert report.mean_gold_p is None
        assert report.high_confidence_error_rate is None
        assert report.brier is None and report.ece is None and report.answer_agreement is None
        assert report.n_with_probs == 0
        assert all(b.count == 0 for b in report.reliability.bins)
    assert calibration_report([]).accuracy is None
    assert calibration_report([Case("a", "a", None, True)]).accuracy == 1.0


def test_one_class_space():
    cases = [Case("only", "only", {"only": 1.0}, True)] * 3
    assert brier_score(cases) == 0.0
    assert reliability(cases).ece == 0.0
    assert mean_gold_probability(cases) == 1.0
    assert high_confidence_error_rate(cases) == 0.0


@pytest.mark.parametrize(
    "p_wrong, counted",
    [(0.9, True), (0.9 - 1e-13, True), (0.8999, False), (1.0, True), (0.95, True)],
)
def test_high_confidence_boundary_is_inclusive(p_wrong, counted):
    cases = [
        Case("a", "b", {"a": 1.0 - p_wrong, "b": p_wrong}, False),
        Case("a", "a", {"a": 1.0, "b": 0.0}, True),
    ]
    assert high_confidence_error_rate(cases) == (0.5 if counted else 0.0)


def test_ties_break_by_the_spaces_order():
    tie = [Case("b", "a", {"a": 0.5, "b": 0.5}, False)]
    assert answer_agreement(tie) == 1.0  # top is "a", the first label
    assert reliability(tie).bins[7].accuracy == 0.0  # and "a" is not the gold


@pytest.mark.parametrize(
    "probs, message",
    [
        ({"a": float("nan"), "b": 0.5}, "finite"),
        ({"a": float("inf"), "b": 0.0}, "finite"),
        ({"a": 0.7, "b": 0.7}, "sum to"),
        ({"a": 1.5, "b": -0.5}, "outside"),
        ({"x": 1.0}, "gold label"),
        ({}, "empty distribution"),
    ],
)
def test_malformed_probabilities_are_refused(probs, message):
    with pytest.raises(ValueError, match=message):
        calibration_report([Case("a", None, probs, False)])


def test_an_answer_outside_the_distribution_and_a_nan_threshold_are_refused():
    with pytest.raises(ValueError, match="answer 'c'"):
        brier_score([Case("a", "c", {"a": 0.5, "b": 0.5}, False)])
    with pytest.raises(ValueError, match="NaN"):
        high_confidence_error_rate(TABLE, threshold=float("nan"))


# Independent implementations ----------------------------------------------------------------


def _random_binary(n: int, seed: int) -> tuple[list[Case], np.ndarray, np.ndarray]:
    rng = random.Random(seed)
    cases, y, p = [], [], []
    for _ in range(n):
        pos = rng.random()
        gold = "pos" if rng.random() < pos else "neg"  # roughly calibrated
        cases.append(Case(gold, None, {"neg": 1.0 - pos, "pos": pos}, False))
        y.append(int(gold == "pos"))
        p.append(pos)
    return cases, np.array(y), np.array(p)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_brier_matches_scikit_learn_in_the_binary_case(seed):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    cases, y, p = _random_binary(200, seed)
    # The multi-class score sums over both labels: twice the binary score.
    assert brier_score(cases) == pytest.approx(2 * sklearn_metrics.brier_score_loss(y, p), rel=1e-12)


def _reference_ece(conf: np.ndarray, correct: np.ndarray, bins: int = 15) -> float:
    """ECE written differently: numpy digitize over the inner edges, right-closed bins."""
    idx = np.digitize(conf, np.linspace(0.0, 1.0, bins + 1)[1:-1], right=True)
    total = 0.0
    for b in range(bins):
        sel = idx == b
        if sel.any():
            total += abs(correct[sel].sum() - conf[sel].sum())
    return total / len(conf)


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_ece_matches_a_reference_implementation(seed):
    rng = random.Random(seed)
    labels = ["x", "y", "z"]
    cases, conf, correct = [], [], []
    for _ in range(300):
        w = [rng.random() ** 3 for _ in labels]
        probs = {lb: v / sum(w) for lb, v in zip(labels, w, strict=True)}
        gold = rng.choice(labels)
        top = max(labels, key=lambda lb: (probs[lb], -labels.index(lb)))
        cases.append(Case(gold, top, probs, top == gold))
        conf.append(probs[top])
        correct.append(float(top == gold))
    ours = reliability(cases).ece
    assert ours == pytest.approx(_reference_ece(np.array(conf), np.array(correct)), rel=1e-9, abs=1e-12)


def test_report_serialises_to_json():
    import json

    doc = calibration_report(TABLE).to_dict()
    again = json.loads(json.dumps(doc, allow_nan=False))
    assert again["groups"]["n_groups"] == 0 and len(again["reliability"]["bins"]) == 15
    assert math.isclose(again["high_confidence_error_rate"], 0.2)
