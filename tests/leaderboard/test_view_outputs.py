"""What the views' events name as inputs and outputs: flat lists of components, tables expanded."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import gradio as gr
import pytest
from leaderboard_helpers import COMMITTED, view_context

from yoxla.admission.gold import DataSource
from yoxla.board.loading import load_board
from yoxla.board.prepared import Prepared, prepare
from yoxla.data.editions import load_edition
from yoxla.views.base import Table
from yoxla.views.common import components

# Every method a view has that names a part of its components (the subsets its events update).
PARTS = (
    "outputs",
    "page_outputs",
    "result_outputs",
    "example_outputs",
    "filters",
    "filter_inputs",
    "table_outputs",
    "apart_outputs",
    "calibration_outputs",
    "diagram_outputs",
)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Prepared:
    root = tmp_path_factory.mktemp("results")
    shutil.copytree(COMMITTED[0].parent, root / "sample")  # the committed files, read from a copy
    board = load_board(
        root, data=DataSource(allow_hub=False), B=50, editions={"sample": load_edition("sample")}
    )
    return prepare(board)


def ids(items: list[Any]) -> list[int]:
    return [id(x) for x in items]


def test_components_expands_tables_and_nested_lists() -> None:
    with gr.Blocks():
        a, b, c = gr.Markdown(), gr.Textbox(), gr.Plot()
        t, u = Table("T", "t"), Table("U", "u")
    assert ids(components()) == []
    assert ids(components(a, t, b)) == ids([a, t.df, t.csv, b])
    assert ids(components([a, t], (b, [u, c]))) == ids([a, t.df, t.csv, b, u.df, u.csv, c])


def test_every_views_parts_are_distinct_components_within_its_outputs(prepared: Prepared) -> None:
    ctx = view_context(prepared)
    for view in ctx.views.values():
        everything = view.outputs()
        for name in PARTS:
            part = getattr(view, name, None)
            if part is None:
                continue
            items = part()
            where = (view.tab_id, name)
            assert all(isinstance(x, gr.blocks.Block) for x in items), where  # no Table left whole
            if name != "outputs":  # a union of parts, which may share one (the explorer's page)
                assert len(set(ids(items))) == len(items), where
            assert set(ids(items)) <= set(ids(everything)), where


def test_every_table_a_view_keeps_is_among_its_outputs(prepared: Prepared) -> None:
    """A table's Dataframe and its CSV button are updated together, so both are outputs."""
    ctx = view_context(prepared)
    for view in ctx.views.values():
        out = set(ids(view.outputs()))
        for name, table in vars(view).items():
            if isinstance(table, Table):
                assert {id(table.df), id(table.csv)} <= out, (view.tab_id, name)


def test_model_page_names_each_tables_csv_after_the_table(prepared: Prepared) -> None:
    ctx = view_context(prepared)
    model = ctx.views["model"]
    key = prepared.edition("sample").standard.models[0].key
    page = model.page(ctx, key)
    named = 0
    for table in vars(model).values():
        if isinstance(table, Table) and page[table.csv] is not None:
            assert Path(page[table.csv]).name.startswith(f"yoxla-{table.stem}-sample-"), table.stem
            named += 1
    assert named >= 4  # scores, facts, weakest, diagnostics at least: a sample model has them
    empty = model.page(ctx, "no/such/file.json")
    assert all(empty[t.csv] is None for t in vars(model).values() if isinstance(t, Table))
