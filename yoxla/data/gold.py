"""A benchmark row's gold, as a value of its task's answer mode.

:func:`gold_in` takes plain data (the row, the gold field's name, the answer mode), so a caller
that must not load the benchmark's suite (see :mod:`yoxla.contract.benchmark`) passes them in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def gold_in(row: Mapping[str, Any], field: str, mode: str) -> Any:
    """The row's gold in ``field``: a label as text (None: unanswerable) when ``mode`` is
    ``choice``, a number as a float when ``numeric``, else as stored."""
    gold = row[field]
    if mode == "choice":
        return None if gold is None else str(gold)
    if mode == "numeric":
        return float(gold)
    return gold
