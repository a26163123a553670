"""Methodology: how scores, intervals and ranks are computed; every file's admission verdict."""

from __future__ import annotations

from typing import Any

import gradio as gr

from yoxla.leaderboard import tables, texts
from yoxla.leaderboard.views.base import Context, Table, Update, View


class MethodologyView(View):
    tab_id = "methodology"
    title = "Methodology"

    def build(self, ctx: Context) -> None:
        gr.Markdown(texts.METHODOLOGY)
        self.line = gr.Markdown(elem_id="admission-line")
        gr.Markdown("### Admitted files of this edition")
        self.admitted = Table("Admitted", "admitted", elem_id="admitted-table")
        gr.Markdown("### Excluded and superseded files (all editions)")
        self.excluded = Table(
            "Excluded and superseded, with every reason", "excluded", elem_id="excluded-table"
        )

    def outputs(self) -> list[Any]:
        return [self.line, *self.admitted.outputs, *self.excluded.outputs]

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        board = ctx.prepared.board
        return {
            self.line: f"**Edition `{ed.name}`:** {board.admission_line(ed.name)}.",
            **self.admitted.update(
                ctx.downloads,
                tables.admitted_table(ed),
                empty=f"No admitted file on {ed.name}.",
                stem=f"admitted-{ed.name}",
            ),
            **self.excluded.update(
                ctx.downloads,
                ctx.memo("excluded", make=lambda: tables.excluded_table(board)),
                empty="Every file was admitted.",
                stem="excluded",
            ),
        }
