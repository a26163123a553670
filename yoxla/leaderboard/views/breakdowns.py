"""Breakdowns: each task's score by every field its rows carry (and by class), and answer habits.

A task is picked, then the field to break it down by ("By"); the fields are the board's
(:meth:`EditionData.breakdown_fields`) that some file has cells for.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from yoxla.leaderboard import breakdown, figures, tables
from yoxla.leaderboard.prepared import EditionData
from yoxla.leaderboard.views.base import Context, Table, TaskPickerView, Update, keep_or_first, plot_data


def by_fields(ed: EditionData, task_id: str) -> list[breakdown.Field]:
    """The fields of a task this board has cells for (in declared order)."""
    models = [v for g in ed.boards.values() for v in g.models]
    return breakdown.shown_fields(models, task_id, ed.breakdown_fields(task_id), ed.row_values.get(task_id))


def options(ed: EditionData) -> list[tuple[str, str]]:
    """(label, task id) per task of the board with at least one field to break it down by."""
    return [(tables.task_label(ed, t), t) for t in tables.breakdown_tasks(ed) if by_fields(ed, t)]


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
                self.heatmap: plot_data(figures.empty_figure("Breakdown", msg)),
                self.classes: plot_data(figures.empty_figure("Per-class accuracy", msg)),
                **self.table.update(ctx.downloads, tables.pd.DataFrame(), empty=msg),
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
            make=lambda: tables.breakdown_display(ed, models, task_id, field),
        )
        return {
            self.by: gr.update(choices=[(f.name.replace("_", " "), f.name) for f in found], value=field.name),
            self.heatmap: ctx.plot(
                "bd-fig",
                ed.name,
                task_id,
                field.name,
                make=lambda: figures.breakdown_heatmap(models, task_id, ed.label, field, values),
            ),
            self.classes: ctx.plot(
                "bd-class",
                ed.name,
                task_id,
                make=lambda: figures.breakdown_heatmap(
                    models, task_id, ed.label, breakdown.Field(breakdown.CLASS)
                ),
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
        modal = ctx.memo("modal", ed.name, make=lambda: tables.modal_share_table(ed.standard))
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
