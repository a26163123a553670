"""Blocks: each block's score and its tasks, per model, one panel per task so nothing overlaps."""

from __future__ import annotations

from typing import Any

import gradio as gr

from yoxla.leaderboard import figures, tables
from yoxla.leaderboard.prepared import block_title
from yoxla.leaderboard.views.base import Context, Table, Update, View, plot_data
from yoxla.suite import load_suite


class BlocksView(View):
    tab_id = "blocks"
    title = "Blocks"

    def shown_on(self, ed: Any) -> bool:
        return not ed.is_suite  # a suite has no blocks

    def build(self, ctx: Context) -> None:
        suite = load_suite()
        self.parts: dict[str, tuple[Table, Any]] = {}
        for b in suite.blocks:
            gr.Markdown(f"### {block_title(b)} ({suite.block_names.get(b, b)})")
            plot = gr.Plot(
                label=f"{block_title(b)} block", elem_classes=["yoxla-plot"], elem_id=f"block-plot-{b}"
            )
            table = Table(
                f"{block_title(b)}: scores ± half the 95% interval", f"block-{b}", elem_id=f"block-{b}"
            )
            self.parts[b] = (table, plot)

    def outputs(self) -> list[Any]:
        return [c for table, plot in self.parts.values() for c in (*table.outputs, plot)]

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        out: Update = {}
        for b, (table, plot) in self.parts.items():
            if ed.is_suite:
                msg = f"A suite has no blocks: {ed.label}'s score is the mean of its tasks (see Leaderboard and Tasks)."
                out[plot] = plot_data(figures.empty_figure(f"{block_title(b)} block", msg))
                out.update(table.update(ctx.downloads, tables.pd.DataFrame(), empty=msg))
                continue
            if b not in ed.standard.blocks:
                out[plot] = plot_data(
                    figures.empty_figure(f"{block_title(b)} block", f"Edition {ed.name} has no {b} task.")
                )
                out.update(table.update(ctx.downloads, tables.pd.DataFrame()))
                continue
            out[plot] = ctx.plot("block-fig", ed.name, b, make=lambda b=b: figures.block_figure(ed, b))
            frame = ctx.memo("block-table", ed.name, b, make=lambda b=b: tables.block_table(ed.standard, b))
            out.update(
                table.update(
                    ctx.downloads,
                    frame,
                    empty=f"No re-checked result file on {ed.name} yet.",
                    stem=f"block-{ed.name}-{b}",
                )
            )
        return out
