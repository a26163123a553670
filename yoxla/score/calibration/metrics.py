"""Calibration and consistency metrics over examples with (or without) a label distribution.

Each example is a :class:`Case`. *Scored* cases are all cases that are not controls: the
accuracy denominator, where generation errors and invalid answers stay and count as wrong.
A case *has probabilities* when it carries a complete distribution over its answer space
(a partial or absent one is ``None`` here: absent is not zero). Cases may come from several
tasks; each carries its own space. The formulas: docs/calibration.md, "Metrics". A metric
with nothing to average over is ``None``, never 0.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from yoxla.score.calibration.distribution import SUM_TOLERANCE

HIGH_CONFIDENCE = 0.90
ECE_BINS = 15
ROUNDING = 1e-12  # p = 0.9 computed as 0.8999999999999999 still counts as ≥ 0.90


@dataclass(frozen=True)
class Case:
    """One example as the metrics see it."""

    gold: str | None  # the gold label; None for a control
    answer: str | None  # the generated answer when it is a valid label; None when invalid or an error
    probs: Mapping[str, float] | None  # a complete distribution over the case's answer space
    correct: bool  # the evaluator's verdict
    control: bool = False  # run but not scored (ambiguous by construction)
    group: Hashable | None = None  # rows with the same group id are minimal edits of each other


def _check(case: Case) -> None:
    if case.probs is None:
        return
    if not case.probs:
        raise ValueError("an empty distribution: use None for 'no probabilities'")
    for label, p in case.probs.items():
        if isinstance(p, bool) or not isinstance(p, int | float) or not math.isfinite(p):
            raise ValueError(f"probability of {label!r} is not a finite number: {p!r}")
        if p < -SUM_TOLERANCE or p > 1 + SUM_TOLERANCE:
            raise ValueError(f"probability of {label!r} is outside [0, 1]: {p!r}")
    total = math.fsum(case.probs.values())
    if abs(total - 1.0) > SUM_TOLERANCE:
        raise ValueError(f"probabilities sum to {total!r}, not 1")
    if not case.control and case.gold not in case.probs:
        raise ValueError(f"gold label {case.gold!r} is not in the distribution's answer space")
    if case.answer is not None and case.answer not in case.probs:
        raise ValueError(f"answer {case.answer!r} is not in the distribution's answer space")


def _checked(cases: Sequence[Case]) -> list[Case]:
    """The cases, each checked once: a case that passed is marked (cases are frozen), so the
    several metrics of one report do not check the same distributions again."""
    for case in cases:
        if not case.__dict__.get("_checked_ok"):
            _check(case)
            object.__setattr__(case, "_checked_ok", True)
    return list(cases)


def top_label(probs: Mapping[str, float]) -> str:
    """The most probable label; ties go to the label that comes first (the space's order)."""
    best = max(probs.values())
    return next(label for label, p in probs.items() if p == best)


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _scored(cases: Sequence[Case]) -> list[Case]:
    return [c for c in cases if not c.control]


def _with_probs(cases: Sequence[Case]) -> list[tuple[Case, Mapping[str, float]]]:
    return [(c, c.probs) for c in _scored(cases) if c.probs is not None]


def accuracy(cases: Sequence[Case]) -> float | None:
    """Share of scored cases that are correct."""
    return _mean([float(c.correct) for c in _scored(cases)])


def mean_gold_probability(cases: Sequence[Case]) -> float | None:
    """Mean probability of the gold label over scored cases with probabilities."""
    return _mean([probs[c.gold] for c, probs in _with_probs(_checked(cases)) if c.gold is not None])


def high_confidence_error_rate(cases: Sequence[Case], threshold: float = HIGH_CONFIDENCE) -> float | None:
    """Wrong valid answers with p(answer) ≥ threshold, over all scored cases.

    None when no scored case has probabilities (the rate would say nothing).
    """
    if math.isnan(threshold):
        raise ValueError("threshold is NaN")
    scored = _scored(_checked(cases))
    if not any(c.probs is not None for c in scored):
        return None
    errors = sum(
        1
        for c in scored
        if c.probs is not None
        and c.answer is not None
        and c.answer != c.gold
        and c.probs[c.answer] >= threshold - ROUNDING
    )
    return errors / len(scored)


def brier_score(cases: Sequence[Case]) -> float | None:
    """Multi-class Brier score over the answer space, mean over scored cases with probabilities."""
    terms = [
        math.fsum((p - (1.0 if label == c.gold else 0.0)) ** 2 for label, p in probs.items())
        for c, probs in _with_probs(_checked(cases))
    ]
    return _mean(terms)


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of the reliability diagram: confidences in (lower, upper]."""

    lower: float
    upper: float
    count: int
    mean_confidence: float | None  # None for an empty bin
    accuracy: float | None


@dataclass(frozen=True)
class Reliability:
    """ECE and the bins a reliability diagram is drawn from."""

    ece: float | None
    n: int
    bins: tuple[ReliabilityBin, ...]


def reliability(cases: Sequence[Case], bins: int = ECE_BINS) -> Reliability:
    """Equal-width confidence bins of the most probable label, and the ECE over them."""
    if bins < 1:
        raise ValueError("at least one bin")
    edges = [i / bins for i in range(bins + 1)]
    members: list[list[tuple[float, bool]]] = [[] for _ in range(bins)]
    for c, probs in _with_probs(_checked(cases)):
        top = top_label(probs)
        conf = probs[top]
        index = min(bins - 1, max(0, bisect_left(edges, conf) - 1))
        members[index].append((conf, top == c.gold))
    n = sum(len(m) for m in members)
    out = []
    ece_terms = []
    for i, m in enumerate(members):
        mean_conf = _mean([x for x, _ in m])
        mean_acc = _mean([float(ok) for _, ok in m])
        out.append(ReliabilityBin(edges[i], edges[i + 1], len(m), mean_conf, mean_acc))
        if mean_conf is not None and mean_acc is not None:
            ece_terms.append(len(m) / n * abs(mean_acc - mean_conf))
    return Reliability(math.fsum(ece_terms) if n else None, n, tuple(out))


def answer_agreement(cases: Sequence[Case]) -> float | None:
    """Share of cases with probabilities whose generated answer is their most probable label."""
    checked = _checked(cases)
    return _mean(
        [
            float(c.answer is not None and c.answer == top_label(c.probs))
            for c in checked
            if c.probs is not None
        ]
    )


@dataclass(frozen=True)
class GroupConsistency:
    value: float | None  # share of consistent groups; None without any group of two or more
    n_groups: int
    n_consistent: int
    n_rows: int  # scored rows in those groups


def group_consistency(cases: Sequence[Case]) -> GroupConsistency:
    """Share of groups of scored rows (two or more per group) answered correctly throughout."""
    groups: dict[Hashable, list[bool]] = {}
    for c in _scored(cases):
        if c.group is not None:
            groups.setdefault(c.group, []).append(c.correct)
    real = [g for g in groups.values() if len(g) >= 2]
    consistent = sum(all(g) for g in real)
    return GroupConsistency(
        consistent / len(real) if real else None, len(real), consistent, sum(len(g) for g in real)
    )


@dataclass(frozen=True)
class ControlSummary:
    n: int
    valid_choice_rate: float | None
    mean_max_probability: float | None
    n_with_probs: int


def control_summary(cases: Sequence[Case]) -> ControlSummary:
    """Controls: how often a valid label was chosen, and how sure the model was (max p)."""
    controls = [c for c in _checked(cases) if c.control]
    maxima = [max(c.probs.values()) for c in controls if c.probs is not None]
    return ControlSummary(
        len(controls), _mean([float(c.answer is not None) for c in controls]), _mean(maxima), len(maxima)
    )


@dataclass(frozen=True)
class CalibrationReport:
    """Every metric of one set of cases (a task, a block, or all), JSON-ready via to_dict."""

    n: int
    n_scored: int
    n_with_probs: int  # scored cases with a complete distribution
    accuracy: float | None
    mean_gold_p: float | None
    high_confidence_error_rate: float | None
    brier: float | None
    ece: float | None
    answer_agreement: float | None
    reliability: Reliability
    groups: GroupConsistency
    controls: ControlSummary

    @property
    def group_consistency(self) -> float | None:
        return self.groups.value

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def calibration_report(cases: Sequence[Case]) -> CalibrationReport:
    """All metrics of the module docstring for ``cases``; ValueError on malformed probabilities."""
    checked = _checked(cases)
    rel = reliability(checked)
    return CalibrationReport(
        n=len(checked),
        n_scored=len(_scored(checked)),
        n_with_probs=len(_with_probs(checked)),
        accuracy=accuracy(checked),
        mean_gold_p=mean_gold_probability(checked),
        high_confidence_error_rate=high_confidence_error_rate(checked),
        brier=brier_score(checked),
        ece=rel.ece,
        answer_agreement=answer_agreement(checked),
        reliability=rel,
        groups=group_consistency(checked),
        controls=control_summary(checked),
    )
