"""Breakdowns: each task's score by every field its rows carry (and by class), and answer habits.

A task is picked, then the field to break it down by ("By"); the fields are the board's
(:meth:`EditionData.breakdown_fields`) that some file has cells for.
"""

from __future__ import annotations

from typing import Any

import gradio as gr
import numpy as np
import pandas as pd

from yoxla.admission.verdict import Verdict
from yoxla.board import breakdown
from yoxla.board.prepared import EditionData, Ranked
from yoxla.views import plot
from yoxla.views.base import Context, Table, TaskPickerView, Update, keep_or_first, plot_data
from yoxla.views.format import task_kind, task_label, task_short


def by_fields(ed: EditionData, task_id: str) -> list[breakdown.Field]:
    """The fields of a task this board has cells for (in declared order)."""
    models = [v for g in ed.boards.values() for v in g.models]
    return breakdown.shown_fields(models, task_id, ed.breakdown_fields(task_id), ed.row_values.get(task_id))


def options(ed: EditionData) -> list[tuple[str, str]]:
    """(label, task id) per task of the board with at least one field to break it down by."""
    return [(task_label(ed, t), t) for t in breakdown_tasks(ed) if by_fields(ed, t)]


BREAKDOWN_MIN_N = breakdown.MIN_N


def breakdown_tasks(ed: EditionData) -> list[str]:
    """The board's tasks with a breakdown field (:meth:`EditionData.breakdown_fields`)."""
    return [t for t in ed.standard.task_ids if ed.breakdown_fields(t)]


def stored_field(models: list[Verdict], task_id: str) -> str | None:
    """The field the files store a task's breakdown by, other than its classes (a benchmark
    file stores one, or none); None when they store none."""
    for v in models:
        rec = v.tasks.get(task_id)
        for key in rec.metrics if rec is not None else ():
            field = breakdown.metric_field(key)
            if field is not None and field != breakdown.CLASS:
                return field
    return None


def breakdown_display(
    ed: EditionData, models: list[Verdict], task_id: str, by: breakdown.Field
) -> pd.DataFrame:
    """Text cells ``"72.5 (n=40)"`` per model and value of ``by`` (``*``: fewer than the minimum n)."""
    return breakdown.display(models, task_id, by, ed.row_values.get(task_id))


def modal_share_table(r: Ranked) -> pd.DataFrame:
    """Share of a model's valid answers that are its most frequent answer, per choice task."""
    tids = [
        t
        for t in r.task_ids
        if task_kind(t) in ("classification", None)
        and any("modal_answer_share" in v.tasks[t].metrics for v in r.models if t in v.tasks)
    ]
    out = []
    for v in r.models:
        rec: dict[str, Any] = {"Model": v.name}
        for tid in tids:
            m = v.tasks[tid].metrics if tid in v.tasks else {}
            share = m.get("modal_answer_share")
            rec[task_short(tid)] = (
                "" if share is None else f"{100 * share:.0f}% {m.get('modal_answer') or ''}".strip()
            )
        out.append(rec)
    return pd.DataFrame(out, columns=["Model", *[task_short(t) for t in tids]])


def breakdown_heatmap(
    models: list[Verdict],
    task_id: str,
    edition: str,
    by: breakdown.Field | str | None = None,
    values: breakdown.RowValues | None = None,
) -> plot.Figure:
    """Models x the values of one field (``by``: a field, or a stored metric's key; default the
    field the files store (:func:`stored_field`), else its classes), coloured by score; few-item
    cells keep their colour and get a *. ``values``: the rows' values by id, for fields no file stores."""
    if by is None:
        by = breakdown.Field(stored_field(models, task_id) or breakdown.CLASS)
    field = by if isinstance(by, breakdown.Field) else breakdown.Field(breakdown.metric_field(by) or by)
    what = field.name.replace("_", " ")
    title = f"{plot.plain(task_id)}: score by {plot.plain(what)}"
    if not models:
        return plot.empty_figure(title, plot.no_models_message(edition))
    acc, cnt = breakdown.frames(models[: plot.MAX_PLOT_MODELS], task_id, field, values)
    if acc.empty or acc.shape[1] == 0:
        return plot.empty_figure(title, f"{task_id} records no breakdown by {what}.")
    z = acc.to_numpy(dtype=float)
    n = cnt.fillna(0).to_numpy()
    few = breakdown.few(cnt)
    text = [
        [("—" if np.isnan(a) else f"{a:.0f}") + ("*" if f else "") for a, f in zip(ra, rf, strict=True)]
        for ra, rf in zip(z, few, strict=True)
    ]
    ys = [plot.plain(m) for m in acc.index]
    xs = [plot.plain(c) for c in acc.columns]
    data = [
        {
            "type": "heatmap",
            "z": [plot.json_numbers(row) for row in z],
            "x": xs,
            "y": ys,
            "text": text,
            "customdata": [[int(k) for k in row] for row in n],
            "texttemplate": "%{text}",
            "colorscale": plot.HEATMAP_SCALE,
            "zmin": 0,
            "zmax": 100,
            "colorbar": {"title": {"text": "score %"}},
            "hoverongaps": False,
            "hovertemplate": "%{y} · %{x}<br>score %{z:.1f}% on %{customdata} item(s)<extra></extra>",
        }
    ]
    cut = f" (best {plot.MAX_PLOT_MODELS} of {len(models)})" if len(models) > plot.MAX_PLOT_MODELS else ""
    note = f"<br><sup>* fewer than {BREAKDOWN_MIN_N} items: read with care</sup>" if few.any() else ""
    return plot.figure(
        data,
        title + cut + note,
        plot.plain(what),
        "model",
        height=max(320, 26 * len(ys) + 190),
        xaxis=plot.axis(plot.plain(what), type="category"),
        yaxis=plot.axis("model", type="category", autorange="reversed"),
    )


class BreakdownsView(TaskPickerView):
    tab_id = "breakdowns"
    title = "Breakdowns"

    def build(self, ctx: Context) -> None:
        with gr.Row():
            self.picker = gr.Dropdown(
                [],
                label="Task (the tasks with a breakdown field)",
                elem_id="breakdown-task",
                allow_custom_value=True,
            )
            # a stale or unknown field falls back to the task's first (page), never an error
            self.by = gr.Dropdown(
                [],
                label="By (a field of the task's rows)",
                elem_id="breakdown-field",
                allow_custom_value=True,
            )
        self.heatmap = gr.Plot(label="Breakdown", elem_classes=["yoxla-plot"], elem_id="breakdown-plot")
        self.table = Table(
            "Score % and items per cell (* fewer than 10 items)", "breakdown", elem_id="breakdown-table"
        )
        self.classes = gr.Plot(label="Per-class accuracy", elem_classes=["yoxla-plot"], elem_id="class-plot")
        gr.Markdown(
            "### Modal answer share\nThe share of a model's valid answers that are its most frequent answer, "
            "and that answer. A share far above the gold's own class balance means the model leans on one label."
        )
        self.modal = Table("Modal answer share per choice task", "modal-share", elem_id="modal-table")

    def task_ids(self, ctx: Context, edition: str) -> list[str]:
        return [
            value
            for _, value in ctx.memo(
                "bd-options", edition, make=lambda: options(ctx.prepared.edition(edition))
            )
        ]

    def page_outputs(self) -> list[Any]:
        return [self.by, self.heatmap, *self.table.outputs, self.classes]

    def outputs(self) -> list[Any]:
        return [self.picker, *self.page_outputs(), *self.modal.outputs]

    def wire(self, ctx: Context) -> None:
        super().wire(ctx)
        self.by.input(
            lambda ed, t, f: self.page(ctx, ed, t, f),
            [ctx.edition, self.picker, self.by],
            self.page_outputs(),
        )

    def page(self, ctx: Context, edition: str, task_id: str | None, by: str | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        task_id = keep_or_first(task_id, self.task_ids(ctx, ed.name))
        if task_id is None:
            msg = f"No task of {ed.label} has a field to break it down by."
            return {
                self.by: gr.update(choices=[], value=None),
                self.heatmap: plot_data(plot.empty_figure("Breakdown", msg)),
                self.classes: plot_data(plot.empty_figure("Per-class accuracy", msg)),
                **self.table.update(ctx.downloads, pd.DataFrame(), empty=msg),
            }
        found = ctx.memo("bd-fields", ed.name, task_id, make=lambda: by_fields(ed, task_id))
        field = next((f for f in found if f.name == by), found[0])
        models = ed.standard.models
        values = ed.row_values.get(task_id)
        frame = ctx.memo(
            "bd-table",
            ed.name,
            task_id,
            field.name,
            make=lambda: breakdown_display(ed, models, task_id, field),
        )
        return {
            self.by: gr.update(choices=[(f.name.replace("_", " "), f.name) for f in found], value=field.name),
            self.heatmap: ctx.plot(
                "bd-fig",
                ed.name,
                task_id,
                field.name,
                make=lambda: breakdown_heatmap(models, task_id, ed.label, field, values),
            ),
            self.classes: ctx.plot(
                "bd-class",
                ed.name,
                task_id,
                make=lambda: breakdown_heatmap(models, task_id, ed.label, breakdown.Field(breakdown.CLASS)),
            ),
            **self.table.update(
                ctx.downloads,
                frame,
                empty=f"No re-checked result file on {ed.label} yet.",
                stem=f"breakdown-{ed.name.replace(':', '-')}-{task_id}-{field.name}",
            ),
        }

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        choices = ctx.memo("bd-options", ed.name, make=lambda: options(ed))
        task_id = keep_or_first((params or {}).get("task"), choices)
        modal = ctx.memo("modal", ed.name, make=lambda: modal_share_table(ed.standard))
        return {
            self.picker: gr.update(choices=choices, value=task_id),
            **self.page(ctx, ed.name, task_id, (params or {}).get("by")),
            **self.modal.update(
                ctx.downloads,
                modal,
                empty=f"No re-checked result file on {ed.label} yet.",
                stem=f"modal-{ed.name.replace(':', '-')}",
            ),
        }
