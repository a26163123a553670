"""A benchmark row's gold, as a value of its task's answer mode.

:func:`gold_in` takes plain data (the row, the gold field's name, the answer mode), so a caller
that must not load the benchmark's suite (calibration: see :mod:`yoxla.suites.benchmark`) passes
them in; :func:`gold_value` reads them off any task that names its gold field and answer mode
(:class:`GoldTask`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class AnswerMode(Protocol):
    """What a task's answer description must tell: its mode (``choice``, ``numeric``, ``span``)."""

    @property
    def mode(self) -> str: ...


class GoldTask(Protocol):
    """A task as the gold and the calibration cases read it: its id, gold field and answer mode."""

    @property
    def id(self) -> str: ...

    @property
    def gold(self) -> str: ...

    @property
    def answer(self) -> AnswerMode: ...


def gold_in(row: Mapping[str, Any], field: str, mode: str) -> Any:
    """The row's gold in ``field``: a label as text (None: unanswerable) when ``mode`` is
    ``choice``, a number as a float when ``numeric``, else as stored."""
    gold = row[field]
    if mode == "choice":
        return None if gold is None else str(gold)
    if mode == "numeric":
        return float(gold)
    return gold


def gold_value(task: GoldTask, row: Mapping[str, Any]) -> Any:
    """The row's gold for ``task`` (:func:`gold_in` of its gold field and answer mode)."""
    return gold_in(row, task.gold, task.answer.mode)
