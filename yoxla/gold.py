"""A benchmark row's gold, as a value of its task's answer mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from yoxla.suite import Task


def gold_value(task: Task, row: Mapping[str, Any]) -> Any:
    """The row's gold: a label as text (None: unanswerable), a number as a float, else as stored."""
    gold = row[task.gold]
    if task.answer.mode == "choice":
        return None if gold is None else str(gold)
    if task.answer.mode == "numeric":
        return float(gold)
    return gold
