"""A declared ranking order: sort models by a list of metrics, and say the rule in one sentence.

A metric a model does not have (``None``) ranks after every model that has it, at that step;
models equal on every step keep their given order (docs/calibration.md, "Ranking order").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar


@dataclass(frozen=True)
class RankKey:
    metric: str
    higher_is_better: bool
    words: str  # how the sentence names it


KEYS: dict[str, RankKey] = {
    k.metric: k
    for k in (
        RankKey("yoxla", True, "YOXLA score"),
        RankKey("score", True, "score"),
        RankKey("accuracy", True, "accuracy"),
        RankKey("group_consistency", True, "group consistency"),
        RankKey("high_confidence_error_rate", False, "high-confidence error rate"),
        RankKey("mean_gold_p", True, "mean gold probability"),
        RankKey("brier", False, "Brier score"),
        RankKey("ece", False, "expected calibration error"),
        RankKey("answer_agreement", True, "agreement of the answer with the most probable label"),
    )
}
DEFAULT_ORDER = ("accuracy", "group_consistency", "high_confidence_error_rate", "mean_gold_p")
# What an eval suite may rank by (its manifest's ``metadata.ranking``): the suite score (named
# ``yoxla`` or ``score``) and group consistency. A suite file may store answer probabilities
# (closed answer spaces), but a suite board does not rank by them yet.
SUITE_KEYS = ("yoxla", "score", "group_consistency")
SUITE_ORDER = ("score",)  # a suite that declares no order ranks by its suite score
SUITE_WORDS = {
    "yoxla": "the suite score, the mean of its task scores",
    "score": "the suite score, the mean of its task scores",
    "group_consistency": "group consistency, the mean over the tasks that declare groups",
}

T = TypeVar("T", bound=Mapping[str, Any])


def check_order(order: Sequence[str]) -> tuple[str, ...]:
    """The order as a tuple; ValueError on an unknown or repeated metric, or an empty order."""
    if not order:
        raise ValueError("a ranking order needs at least one metric")
    for metric in order:
        if metric not in KEYS:
            raise ValueError(f"unknown ranking metric {metric!r}; known: {', '.join(KEYS)}")
    if len(set(order)) != len(order):
        raise ValueError("a ranking order names a metric twice")
    return tuple(order)


def check_suite_order(order: Sequence[str]) -> tuple[str, ...]:
    """:func:`check_order` for an eval suite: only :data:`SUITE_KEYS` (ValueError otherwise)."""
    for metric in order:
        if metric not in SUITE_KEYS:
            raise ValueError(f"unknown ranking metric {metric!r} for a suite; known: {', '.join(SUITE_KEYS)}")
    return check_order(order)


def suite_order(metadata: Mapping[str, str]) -> tuple[str, ...] | None:
    """A suite manifest's ``metadata.ranking`` (comma-separated metric names), checked with
    :func:`check_suite_order`; None when the suite declares no order."""
    text = metadata.get("ranking")
    if text is None:
        return None
    return check_suite_order(tuple(name.strip() for name in text.split(",") if name.strip()))


def rank(entries: Sequence[T], order: Sequence[str] = DEFAULT_ORDER) -> list[T]:
    """``entries`` (mappings of metric → value or None) sorted best first by ``order``."""
    keys = [KEYS[m] for m in check_order(order)]

    def sort_key(entry: T) -> tuple[tuple[int, float], ...]:
        out = []
        for k in keys:
            value = entry.get(k.metric)
            if value is None:
                out.append((1, 0.0))
            else:
                v = float(value)
                if v != v:
                    raise ValueError(f"{k.metric} is NaN")
                out.append((0, -v if k.higher_is_better else v))
        return tuple(out)

    return sorted(entries, key=sort_key)


def explain_order(order: Sequence[str] = DEFAULT_ORDER, words: Mapping[str, str] | None = None) -> str:
    """One sentence that states the rule, for the board's caption (``words``: how to name a
    metric where the default words do not fit, e.g. :data:`SUITE_WORDS` on a suite board)."""
    keys = [KEYS[m] for m in check_order(order)]
    named = words or {}
    parts = [
        f"{named.get(k.metric, k.words)} ({'higher' if k.higher_is_better else 'lower'} first)" for k in keys
    ]
    rule = parts[0] if len(parts) == 1 else parts[0] + ", then " + ", then ".join(parts[1:])
    return (
        f"Ranked by {rule}; a model without a value ranks below those with one at that step, "
        "and ties keep the listed order."
    )
