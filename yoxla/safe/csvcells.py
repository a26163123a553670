"""Cells a spreadsheet would run, made inert: the one helper every CSV the project writes uses.

A spreadsheet program that opens a CSV runs a cell beginning with ``=``, ``+``, ``-`` or ``@``
(``=1+1``, ``+cmd|' /C calc'!A0``, ``@SUM(A1)``, ``-1+HYPERLINK(…)``), and some also treat a
leading tab or carriage return that way. Such a text cell is written with a leading apostrophe
(``'=1+1``), which spreadsheets show as text. A plain number (``-1.5``, ``+3``, ``1e-3``) is
not a formula and stays as it is, so numbers stay numbers. Readers of the project's own sheets
undo the apostrophe with :func:`unescape_cell`.

Writers: the leaderboard's CSV downloads (:class:`yoxla.views.base.Downloads`) and
annotation sheets (:func:`yoxla.annotation.sheets.export_sheet`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def runnable(text: str) -> bool:
    """Would a spreadsheet run this cell (a formula start that is not a plain number)?"""
    return text.startswith(FORMULA_START) and _PLAIN_NUMBER.fullmatch(text) is None


def safe_cell(value: Any) -> Any:
    """``value`` as a CSV cell: a runnable text gets a leading apostrophe; anything else as is."""
    return "'" + value if isinstance(value, str) and runnable(value) else value


def safe_row(values: Iterable[Any]) -> list[Any]:
    """A row for ``csv.writer`` with every cell made safe."""
    return [safe_cell(v) for v in values]


def unescape_cell(text: str) -> str:
    """What :func:`safe_cell` wrote, read back: ``'=1+1`` is ``=1+1``; other text unchanged."""
    return text[1:] if text.startswith("'") and runnable(text[1:]) else text


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` for ``to_csv``: its text cells made safe (numeric columns untouched)."""
    import pandas as pd

    out = frame.copy(deep=False)  # columns are replaced, never written into: ``frame`` is untouched
    out.columns = [safe_cell(c) for c in out.columns]  # a header can be a model's name
    for col in out.columns:
        cells = out[col]
        if cells.dtype == object or pd.api.types.is_string_dtype(cells):
            if any(isinstance(x, str) and runnable(x) for x in cells):  # else the column stays as is
                out[col] = [safe_cell(x) for x in cells]
    return out
