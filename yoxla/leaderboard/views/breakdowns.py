"""Breakdowns: each task's score by its breakdown field (and by class), and answer habits."""

from __future__ import annotations

from typing import Any

import gradio as gr

from yoxla.leaderboard import figures, tables
from yoxla.leaderboard.views.base import Context, Table, TaskPickerView, Update, keep_or_first, plot_data
from yoxla.suite import load_suite


class BreakdownsView(TaskPickerView):
    tab_id = "breakdowns"
    title = "Breakdowns"

    def build(self, ctx: Context) -> None:
        tids = tables.breakdown_tasks(load_suite().tasks)
        self.picker = gr.Dropdown(
            [(f"{tables.task_short(t)} · {t}", t) for t in tids],
            value=tids[0] if tids else None,
            label="Task (the tasks with a breakdown field)",
            elem_id="breakdown-task",
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
        return tables.breakdown_tasks(ctx.prepared.edition(edition).standard.task_ids)

    def page_outputs(self) -> list[Any]:
        return [self.heatmap, *self.table.outputs, self.classes]

    def outputs(self) -> list[Any]:
        return [self.picker, *self.page_outputs(), *self.modal.outputs]

    def page(self, ctx: Context, edition: str, task_id: str | None) -> Update:
        ed = ctx.prepared.edition(edition)
        tids = tables.breakdown_tasks(ed.standard.task_ids)
        task_id = keep_or_first(task_id, tids)
        models = ed.standard.models
        if task_id is None:
            msg = f"Edition {ed.name} has no task with a breakdown field."
            return {
                self.heatmap: plot_data(figures.empty_figure("Breakdown", msg)),
                self.classes: plot_data(figures.empty_figure("Per-class accuracy", msg)),
                **self.table.update(ctx.downloads, tables.pd.DataFrame(), empty=msg),
            }
        frame = ctx.memo("bd-table", ed.name, task_id, make=lambda: tables.breakdown_display(models, task_id))
        return {
            self.heatmap: ctx.plot(
                "bd-fig", ed.name, task_id, make=lambda: figures.breakdown_heatmap(models, task_id, ed.name)
            ),
            self.classes: ctx.plot(
                "bd-class",
                ed.name,
                task_id,
                make=lambda: figures.breakdown_heatmap(models, task_id, ed.name, "per_class_accuracy"),
            ),
            **self.table.update(
                ctx.downloads,
                frame,
                empty=f"No re-checked result file on {ed.name} yet.",
                stem=f"breakdown-{ed.name}-{task_id}",
            ),
        }

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        tids = tables.breakdown_tasks(ed.standard.task_ids)
        task_id = keep_or_first((params or {}).get("task"), tids)
        modal = ctx.memo("modal", ed.name, make=lambda: tables.modal_share_table(ed.standard))
        return {
            self.picker: gr.update(
                choices=[(f"{tables.task_short(t)} · {t}", t) for t in tids], value=task_id
            ),
            **self.page(ctx, ed.name, task_id),
            **self.modal.update(
                ctx.downloads,
                modal,
                empty=f"No re-checked result file on {ed.name} yet.",
                stem=f"modal-{ed.name}",
            ),
        }
