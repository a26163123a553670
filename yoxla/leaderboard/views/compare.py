"""Compare two models: A − B per task, block and overall, paired intervals, McNemar's test."""

from __future__ import annotations

from typing import Any

import gradio as gr

from yoxla.leaderboard import figures, tables
from yoxla.leaderboard.views.base import Context, Table, Update, View, keep_or_first
from yoxla.leaderboard.views.common import components

INTRO = (
    "Two models of the standard board (of an edition or a suite). Both were scored on the same examples, "
    "so their difference has a paired bootstrap interval; for choice tasks (and suite tasks scored right "
    "or wrong) McNemar's exact test counts the items one got right and the other wrong."
)
HIDDEN = ["A − B low", "A − B high"]  # the interval's ends: in the CSV, not in the shown table


class CompareView(View):
    tab_id = "compare"
    title = "Compare"

    def build(self, ctx: Context) -> None:
        gr.Markdown(INTRO)
        with gr.Row():
            self.a = gr.Dropdown([], label="Model A", elem_id="compare-a", allow_custom_value=True)
            self.b = gr.Dropdown([], label="Model B", elem_id="compare-b", allow_custom_value=True)
        self.plot = gr.Plot(label="A − B", elem_classes=["yoxla-plot"], elem_id="compare-plot")
        self.table = Table("A − B", "compare", elem_id="compare-table")

    def result_outputs(self) -> list[Any]:
        return components(self.plot, self.table)

    def outputs(self) -> list[Any]:
        return [self.a, self.b, *self.result_outputs()]

    def result(self, ctx: Context, edition: str, a: str | None, b: str | None) -> Update:
        ed = ctx.prepared.edition(edition)
        frame = (
            ctx.memo(
                "compare", ed.name, a, b, make=lambda: tables.compare_table(ed.standard, a or "", b or "")
            )
            if a and b and a != b
            else tables.pd.DataFrame()
        )
        return {
            self.plot: ctx.plot(
                "compare-fig", ed.name, a, b, make=lambda: figures.compare_figure(frame, ed.name)
            ),
            **self.table.update(
                ctx.downloads,
                frame.drop(columns=HIDDEN) if not frame.empty else frame,
                csv=frame,
                empty="Pick two different re-checked models of this board.",
                stem=f"compare-{ed.name.replace(':', '-')}",
            ),
        }

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        choices = tables.ranked_choices(ed.standard)
        keys = [k for _, k in choices]
        a = keep_or_first(None, choices)
        b = keys[1] if len(keys) > 1 else None
        return {
            self.a: gr.update(choices=choices, value=a),
            self.b: gr.update(choices=choices, value=b),
            **self.result(ctx, ed.name, a, b),
        }

    def wire(self, ctx: Context) -> None:
        for comp in (self.a, self.b):
            comp.input(
                lambda ed, a, b: self.result(ctx, ed, a, b),
                [ctx.edition, self.a, self.b],
                self.result_outputs(),
            )
