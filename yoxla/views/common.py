"""Helpers the views share for naming what an event updates."""

from __future__ import annotations

from typing import Any

from yoxla.board.prepared import EditionData
from yoxla.views.base import Table


def components(*parts: Any) -> list[Any]:
    """The components of ``parts``, in order, as an event's inputs or outputs: a :class:`Table`
    stands for its Dataframe and its CSV button, a list or tuple for its items (each expanded
    the same way), anything else for itself."""
    out: list[Any] = []
    for part in parts:
        if isinstance(part, Table):
            out.extend(part.outputs)
        elif isinstance(part, list | tuple):
            out.extend(components(*part))
        else:
            out.append(part)
    return out


def model_choices(ed: EditionData) -> list[tuple[str, str]]:
    """(label, key) for the model page's picker: every shown file of the edition."""
    out = []
    for v in ed.all_models():
        where = (
            ""
            if v.rechecked and v.group == "standard"
            else (f" [{v.group}]" if v.rechecked else " [not re-checked]")
        )
        out.append((f"{v.name} · {v.provider}{where}", v.key))
    return out
