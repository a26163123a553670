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
import pandas as pd

from yoxla.admission.verdict import Verdict
from yoxla.board.prepared import EditionData, group_score
from yoxla.views import plot
from yoxla.views.base import Context, Table, Update, View
from yoxla.views.format import pm, primary_name, task_label
from yoxla.views.texts import md


def block_table(ed: EditionData, block: str) -> pd.DataFrame:
    """Per group (a benchmark block, a suite group): each model's group score and its tasks'
    scores with intervals, and their primary metrics."""
    r = ed.standard
    tids = ed.groups_of_tasks().get(block, [])
    out = []
    for i, v in enumerate(r.models):
        rec: dict[str, Any] = {
            "Rank": r.rank(i),
            "Model": v.name,
            ed.group_name(block): pm(group_score(v, block), *r.block_interval(i, block)),
        }
        for tid in tids:
            t = v.tasks.get(tid)
            if t is None:
                continue
            rec[task_label(ed, tid)] = pm(t.score, *r.task_interval(i, tid))
            rec[f"{task_label(ed, tid)}: {primary_name(ed, tid)}"] = round(t.primary_raw, 4)
        out.append(rec)
    return pd.DataFrame(out)


BLOCK_COLUMNS = 2  # panels per row: wide enough for their titles and ticks on a phone's screen too


def block_figure(ed: EditionData, block: str) -> plot.Figure:
    """Small multiples: the block score and each of its tasks in its own panel, models on rows;
    at most :data:`BLOCK_COLUMNS` panels a row, so no panel is too narrow for its title."""
    r = ed.standard
    title = f"{plot.plain(ed.group_name(block))}: group and task scores"
    if r.empty:
        return plot.empty_figure(title + " with 95% intervals", plot.no_models_message(ed.label))
    keep, cut = plot.top_models(r)
    tids = ed.groups_of_tasks().get(block, [])
    panels = [None, *tids]
    names = [plot.plain(r.models[i].name) for i in keep]
    cols = min(BLOCK_COLUMNS, len(panels))
    n_rows = -(-len(panels) // cols)
    gap, vgap = 0.04, 0.5 / max(1, len(keep))  # between panels; between rows (room for titles)
    vgap = min(0.12, max(0.04, vgap)) if n_rows > 1 else 0.0
    width = (1.0 - gap * (cols - 1)) / cols
    height_each = (1.0 - vgap * (n_rows - 1)) / n_rows
    data, shapes, annotations = [], [], []
    layout: dict[str, Any] = {}
    for c, panel in enumerate(panels):
        row, col = divmod(c, cols)
        label = "Group" if panel is None else task_label(ed, panel)
        if panel is None:
            xs = [group_score(r.models[i], block) for i in keep]
            ivs = [r.block_interval(i, block) for i in keep]
        else:
            xs = [_task_score(r.models[i], panel) for i in keep]
            ivs = [r.task_interval(i, panel) for i in keep]
        ax = "x" if c == 0 else f"x{c + 1}"
        ay = "y" if row == 0 else f"y{row + 1}"
        lo_d = col * (width + gap)
        top = 1.0 - row * (height_each + vgap)
        layout["xaxis" if c == 0 else f"xaxis{c + 1}"] = plot.axis(
            "score", domain=[lo_d, lo_d + width], range=[-3, 103], anchor=ay
        )
        if col == 0:  # long names shortened on the axis (the hover has them whole): room for panels
            yaxis = plot.category_axis(names, "model")
            yaxis.update(
                domain=[top - height_each, top],
                tickmode="array",
                tickvals=names,
                ticktext=[n if len(n) <= 18 else n[:17] + "…" for n in names],
            )
            layout["yaxis" if row == 0 else f"yaxis{row + 1}"] = yaxis
        data.append(
            plot.dots(
                xs,
                names,
                [a for a, _ in ivs],
                [b for _, b in ivs],
                name=label,
                color=plot.OKABE_ITO[c % len(plot.OKABE_ITO)],
                what=label,
                showlegend=False,
                xaxis=ax,
                yaxis=ay,
            )
        )
        heading = plot.panel_title(plot.plain(label), lo_d + width / 2, 13)
        heading["y"] = top
        annotations.append(heading)
        floor = ed.reference.best(panel) if panel else None
        shapes += plot.vline(floor, plot.FLOOR_COLOUR, "dash", xref=ax, yref=f"{ay} domain")
    # One short line each (a phone's width holds about 40 characters of it).
    lines = [title, "with 95% intervals" + cut]
    if ed.reference.available:
        lines.append("dashed: the task's best cue-only floor")
    fig = plot.figure(
        data,
        "<br>".join(lines),
        "score",
        "model",
        height=max(320, n_rows * (plot.ROW_PX * len(keep) + 90) + 110),
        annotations=annotations,
        shapes=shapes,
        margin={"t": 40 + 18 * len(lines) + 40},
    )
    fig["layout"]["title"]["font"] = {"size": 14}
    fig["layout"].update(layout)
    return fig


def _task_score(v: Verdict, task_id: str) -> float:
    t = v.tasks.get(task_id)
    return float(t.score) if t is not None else float("nan")


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
            chart = gr.Plot(label="Group", elem_classes=["yoxla-plot"], elem_id=f"block-plot-{k}")
            table = Table("Scores ± half the 95% interval", f"block-{k}", elem_id=f"block-{k}")
            self.slots.append((heading, table, chart))

    def outputs(self) -> list[Any]:
        return [c for heading, table, chart in self.slots for c in (heading, *table.outputs, chart)]

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        groups = list(ed.groups_of_tasks())
        stem = ed.name.replace(":", "-")
        out: Update = {}
        for k, (heading, table, chart) in enumerate(self.slots):
            if k >= len(groups):
                out[heading] = gr.update(value="", visible=False)
                out[chart] = gr.update(value=None, visible=False)
                out.update(table.update(ctx.downloads, pd.DataFrame()))
                out[table.df] = gr.update(visible=False)
                out[table.csv] = gr.update(value=None, visible=False)
                continue
            g = groups[k]
            name = ed.group_name(g)
            out[heading] = gr.update(value=f"### {md(name)} (`{g}`)", visible=True)
            out[chart] = gr.update(
                value=ctx.plot("block-fig", ed.name, g, make=lambda g=g: block_figure(ed, g)),
                label=f"{name}: group and task scores",
                visible=True,
            )
            frame = ctx.memo("block-table", ed.name, g, make=lambda g=g: block_table(ed, g))
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
