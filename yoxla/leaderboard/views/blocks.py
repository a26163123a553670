"""Blocks: each group of tasks (a benchmark block, a suite's declared group), its score and its
tasks, per model, one panel per task so nothing overlaps.

The groups, their names and their tasks come from the board's suite definition
(:meth:`EditionData.groups_of_tasks`); the tab is hidden on a board whose suite declares none.
The view has one slot per group of the board with the most groups; a board fills the first
ones and hides the rest.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from yoxla.leaderboard import figures, tables
from yoxla.leaderboard.texts import md
from yoxla.leaderboard.views.base import Context, Table, Update, View


class BlocksView(View):
    tab_id = "blocks"
    title = "Blocks"

    def shown_on(self, ed: Any) -> bool:
        return bool(ed.groups_of_tasks())

    def build(self, ctx: Context) -> None:
        n = max((len(ed.groups_of_tasks()) for ed in ctx.prepared.editions.values()), default=0)
        self.slots: list[tuple[Any, Table, Any]] = []
        for k in range(n):
            heading = gr.Markdown(elem_id=f"block-heading-{k}")
            plot = gr.Plot(label="Group", elem_classes=["yoxla-plot"], elem_id=f"block-plot-{k}")
            table = Table("Scores ± half the 95% interval", f"block-{k}", elem_id=f"block-{k}")
            self.slots.append((heading, table, plot))

    def outputs(self) -> list[Any]:
        return [c for heading, table, plot in self.slots for c in (heading, *table.outputs, plot)]

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        groups = list(ed.groups_of_tasks())
        stem = ed.name.replace(":", "-")
        out: Update = {}
        for k, (heading, table, plot) in enumerate(self.slots):
            if k >= len(groups):
                out[heading] = gr.update(value="", visible=False)
                out[plot] = gr.update(value=None, visible=False)
                out.update(table.update(ctx.downloads, tables.pd.DataFrame()))
                out[table.df] = gr.update(visible=False)
                out[table.csv] = gr.update(value=None, visible=False)
                continue
            g = groups[k]
            name = ed.group_name(g)
            out[heading] = gr.update(value=f"### {md(name)} (`{g}`)", visible=True)
            out[plot] = gr.update(
                value=ctx.plot("block-fig", ed.name, g, make=lambda g=g: figures.block_figure(ed, g)),
                label=f"{name}: group and task scores",
                visible=True,
            )
            frame = ctx.memo("block-table", ed.name, g, make=lambda g=g: tables.block_table(ed, g))
            shown = table.update(
                ctx.downloads,
                frame,
                empty=f"No re-checked result file on {ed.label} yet.",
                stem=f"block-{stem}-{g}",
            )
            shown[table.df] = {
                **shown[table.df],
                "visible": True,
                "label": f"{name}: scores ± half the 95% interval",
            }
            csv = shown[table.csv]
            shown[table.csv] = gr.update(value=csv, visible=True)
            out.update(shown)
        return out
