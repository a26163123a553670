"""Shared by the leaderboard tests (a uniquely named module: several test folders have a conftest)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
COMMITTED = sorted((REPO / "results" / "sample").glob("*.json"))
# The same eight baselines as the built-in engine wrote them (format yoxla-result v2) before every run
# went through the suite engine: kept so that files of that version stay readable and the one-format
# oracle has its "before".
LEGACY = sorted((Path(__file__).parent / "cases" / "legacy-v2" / "sample").glob("*.json"))


def write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def view_context(prepared: Any) -> Any:
    """Every view built (inside a throw-away Blocks) on a Context over ``prepared``, as the app does."""
    import gradio as gr

    from yoxla.views.tabs import VIEWS, Context, Downloads

    ctx = Context(prepared, Downloads())
    views = [cls() for cls in VIEWS]
    ctx.views = {v.tab_id: v for v in views}
    with gr.Blocks():
        ctx.edition = gr.Dropdown([bid for _, bid in prepared.board_choices()])
        ctx.rendered, ctx.current = gr.State({}), gr.State("")
        with gr.Tabs() as ctx.tabs:
            for v in views:
                with gr.Tab(v.title, id=v.tab_id):
                    v.build(ctx)
    return ctx


def value(update: Any) -> Any:
    """What an update sets: a ``gr.update(value=…)``'s value, a table's or a Styler's frame, or the value itself."""
    if isinstance(update, dict) and "__type__" in update:
        update = update.get("value")
    if hasattr(update, "frame") and isinstance(update, dict):  # a table's value: its shown frame
        return update.frame
    return getattr(update, "data", update) if hasattr(update, "hide") else update
