"""The app's events hand Gradio a value it can send for every output, whatever they are given.

A view renders through its trigger (a ``gr.State``); a trigger reset to None (a reloaded session)
renders nothing, and "nothing" must be an update Gradio accepts: an empty dict is not one (it
reads as one value for the first output: a Markdown output then shows an error box, the About
tab's did).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from typing import Any

import gradio as gr
import pytest
from leaderboard_helpers import COMMITTED, REPO

from yoxla.admission.gold import DataSource
from yoxla.board.loading import load_board


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("board") / "results"
    shutil.copytree(COMMITTED[0].parent, root / "sample")  # the committed sample files
    sys.path.insert(0, str(REPO))
    import app

    return app.build_app(board=load_board(root, data=DataSource(allow_hub=False), B=50), warm=False)


def _sent(demo: Any, fn: Any, value: Any) -> list[Any]:
    """What Gradio makes of ``value`` returned by ``fn`` (raises as it would in the app)."""
    return asyncio.run(demo.postprocess_data(fn, value, None))


def test_a_reset_trigger_renders_nothing_and_gradio_takes_it(demo: Any) -> None:
    ctx = demo.yoxla_context
    triggers = {id(t) for t in ctx.triggers.values()}
    renders = [
        fn for fn in demo.fns.values() if len(fn.inputs) == 1 and id(fn.inputs[0]) in triggers and fn.outputs
    ]
    with_outputs = [v for v in ctx.views.values() if v.outputs()]
    assert len(renders) == len(with_outputs) > 5  # one render event per view with outputs
    about = ctx.views["about"]
    assert any(len(fn.outputs) == 1 and fn.outputs[0] in about.outputs() for fn in renders)
    for fn in renders:
        _kept_all(fn, _sent(demo, fn, fn.fn(None)))


def _kept_all(fn: Any, sent: list[Any]) -> None:
    """Every output left as it is (a State's value stays server-side: None is sent for it)."""
    assert len(sent) == len(fn.outputs)
    kept = [
        s is None if b.stateful else s == {"__type__": "update"}
        for b, s in zip(fn.outputs, sent, strict=True)
    ]
    assert all(kept), [b for b, k in zip(fn.outputs, kept, strict=True) if not k]


def test_a_click_on_no_row_opens_nothing_and_says_no_error(demo: Any) -> None:
    """A table click that names no row (a header, an empty table) leaves the page as it is."""
    picks = [
        fn
        for fn in demo.fns.values()
        if getattr(fn.fn, "__name__", "") in ("open_row", "open_task", "pick_row")
    ]
    assert len(picks) == 3
    for fn in picks:
        for data in ({"index": None, "value": None}, {"index": [0, 0], "value": "", "row_value": []}):
            evt = gr.SelectData(None, data)
            _kept_all(fn, _sent(demo, fn, fn.fn(*(b.value for b in fn.inputs), evt)))
