"""No CSV the project writes has a cell a spreadsheet would run (yoxla/safe/csvcells.py, one helper)."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pandas as pd
import pytest
from leaderboard_helpers import COMMITTED, view_context, write

from yoxla.admission.gold import DataSource
from yoxla.admission.verdict import ADMITTED
from yoxla.board.loading import load_board
from yoxla.board.prepared import prepare
from yoxla.safe import csvcells as csvsafe
from yoxla.testing.synthetic import planted_answers
from yoxla.testing.synthetic_v3 import sample_result
from yoxla.views.base import Downloads

CALC = "+1 +cmd|' /C calc'!A0"

# (cell, as written): every formula start is escaped; plain numbers and other text are not.
CELLS = [
    ("=1+1", "'=1+1"),
    (CALC, "'" + CALC),
    ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
    ('-1+HYPERLINK("http://x")', '\'-1+HYPERLINK("http://x")'),
    ("-1 +cmd|' /C calc'!A0", "'-1 +cmd|' /C calc'!A0"),  # a number first is no excuse
    ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"),
    ("-1.5", "-1.5"),
    ("+3", "+3"),
    ("-2e-3", "-2e-3"),
    ("-.5", "-.5"),
    ("0", "0"),
    ("TƏSDİQ", "TƏSDİQ"),
    ("a=b", "a=b"),
    ("'=already", "'=already"),  # starts with an apostrophe: not run
    ("", ""),
]


@pytest.mark.parametrize(("cell", "written"), CELLS)
def test_safe_cell(cell, written):
    assert csvsafe.safe_cell(cell) == written
    assert csvsafe.unescape_cell(written) == cell or not csvsafe.runnable(cell)


def test_non_text_cells_are_left_as_they_are():
    assert [csvsafe.safe_cell(v) for v in (-1.5, 3, None, True)] == [-1.5, 3, None, True]


def test_downloads_escape_cells_and_headers_and_keep_numbers(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"Model": [CALC, "ok"], "Score": [-1.5, 61.2], "Diff": ["-1.5", "=2"], "=HEADER()": ["x", "y"]}
    )
    rows = list(
        csv.reader(io.StringIO(Path(Downloads(tmp_path).csv("t", frame)).read_text(encoding="utf-8")))
    )
    assert rows[0] == ["Model", "Score", "Diff", "'=HEADER()"]
    assert rows[1:] == [["'" + CALC, "-1.5", "-1.5", "x"], ["ok", "61.2", "'=2", "y"]]


def test_an_admitted_model_name_reaches_the_leaderboard_csv_escaped(tmp_path: Path) -> None:
    root = tmp_path / "results"
    (root / "sample").mkdir(parents=True)
    shutil.copy(COMMITTED[0], root / "sample" / COMMITTED[0].name)
    write(root / "sample" / "calc.json", sample_result(planted_answers, provider="evil", model=CALC))
    board = load_board(root, data=DataSource(allow_hub=False), B=50)
    verdict = next(v for v in board.verdicts if v.name == CALC)
    assert verdict.status == ADMITTED, verdict.reasons
    ctx = view_context(prepare(board, floors=False))
    view = ctx.views["leaderboard"]
    path = view.refresh(ctx, "sample", "standard")[view.table.csv]
    text = Path(path).read_text(encoding="utf-8")
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    assert "'" + CALC in cells
    assert not any(csvsafe.runnable(c) for c in cells), [c for c in cells if csvsafe.runnable(c)]


def test_safe_frame_escapes_a_copy_and_leaves_the_shown_frame_as_it_is() -> None:
    import pandas as pd

    frame = pd.DataFrame({"Model": ["=1+1", "ok"], "Note": ["plain", "text"], "n": [1, 2]})
    out = csvsafe.safe_frame(frame)
    assert list(out["Model"]) == ["'=1+1", "ok"] and list(out["Note"]) == ["plain", "text"]
    assert list(frame["Model"]) == ["=1+1", "ok"]  # the frame a table shows is never written into
    assert out.to_csv(index=False).splitlines()[1] == "'=1+1,plain,1"
