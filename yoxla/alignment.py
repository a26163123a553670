"""Stored predictions lined up with what they answer, by id: one rule for rows and items.

The result file (``yoxla.record``) and the replay (``yoxla.rescoring``) both import this module
and it imports neither, so the two make no import circle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def align_by_id(by_id: Mapping[str, Any], ids: Sequence[str], owner: str) -> list[Any]:
    """``by_id``'s values in the order of ``ids``; ValueError on an unknown or repeated id."""
    seen: set[str] = set()
    out = []
    for pid in ids:
        if pid in seen:
            raise ValueError(f"{owner}: prediction for id {pid!r} appears twice")
        if pid not in by_id:
            raise ValueError(f"{owner}: prediction for unknown id {pid!r}")
        seen.add(pid)
        out.append(by_id[pid])
    return out
