"""A declared ranking order: sort models by a list of metrics, and say the rule in one sentence.

The default follows the Turkish decision benchmark: accuracy, then group consistency, then
the high-confidence error rate (lower is better), then mean gold probability. A metric a
model does not have (``None``: no probabilities, no groups) ranks after every model that
has it, at that step of the order; models equal on every step keep their given order.
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


def explain_order(order: Sequence[str] = DEFAULT_ORDER) -> str:
    """One sentence that states the rule, for the board's caption."""
    keys = [KEYS[m] for m in check_order(order)]
    parts = [f"{k.words} ({'higher' if k.higher_is_better else 'lower'} first)" for k in keys]
    rule = parts[0] if len(parts) == 1 else parts[0] + ", then " + ", then ".join(parts[1:])
    return (
        f"Ranked by {rule}; a model without a value ranks below those with one at that step, "
        "and ties keep the listed order."
    )
