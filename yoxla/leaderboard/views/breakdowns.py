"""Breakdowns: each task's score by its breakdown field (and by class), and answer habits."""

from __future__ import annotations

from typing import Any

import gradio as gr

from yoxla.leaderboard import figures, tables
from yoxla.leaderboard.prepared import EditionData
from yoxla.leaderboard.views.base import Context, Table, TaskPickerView, Update, keep_or_first, plot_data
from yoxla.suite import load_suite

SEP = "|"  # a suite option's value: "<task id>|<field>" (a suite task may name several fields)


def options(ed: EditionData) -> list[tuple[str, str]]:
    """(label, value) per breakdown: a benchmark task, or a suite task and one of its fields."""
    if ed.suite is not None:
        return [
            (f"{tid} · by {f}", f"{tid}{SEP}{f}")
            for tid in tables.breakdown_tasks(ed.standard.task_ids, ed)
            for f in ed.suite.breakdowns.get(tid, [])
        ]
    return [(f"{tables.task_short(t)} · {t}", t) for t in tables.breakdown_tasks(ed.standard.task_ids)]


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
        return [value for _, value in options(ctx.prepared.edition(edition))]

    def page_outputs(self) -> list[Any]:
        return [self.heatmap, *self.table.outputs, self.classes]

    def outputs(self) -> list[Any]:
        return [self.picker, *self.page_outputs(), *self.modal.outputs]

    def page(self, ctx: Context, edition: str, task_id: str | None) -> Update:
        ed = ctx.prepared.edition(edition)
        value = keep_or_first(task_id, options(ed))
        models = ed.standard.models
        if value is None:
            msg = (
                f"No task of {ed.label} names a breakdown field (metadata.breakdowns)."
                if ed.is_suite
                else f"Edition {ed.name} has no task with a breakdown field."
            )
            return {
                self.heatmap: plot_data(figures.empty_figure("Breakdown", msg)),
                self.classes: plot_data(figures.empty_figure("Per-class accuracy", msg)),
                **self.table.update(ctx.downloads, tables.pd.DataFrame(), empty=msg),
            }
        task_id, _, field = str(value).partition(SEP)
        key = tables.breakdown_key(task_id, ed, field) if ed.is_suite else None
        frame = ctx.memo(
            "bd-table", ed.name, value, make=lambda: tables.breakdown_display(models, task_id, key=key)
        )
        return {
            self.heatmap: ctx.plot(
                "bd-fig",
                ed.name,
                value,
                make=lambda: figures.breakdown_heatmap(models, task_id, ed.label, key),
            ),
            self.classes: ctx.plot(
                "bd-class",
                ed.name,
                task_id,
                make=lambda: figures.breakdown_heatmap(models, task_id, ed.label, "per_class_accuracy"),
            ),
            **self.table.update(
                ctx.downloads,
                frame,
                empty=f"No re-checked result file on {ed.label} yet.",
                stem=f"breakdown-{ed.name.replace(':', '-')}-{task_id}",
            ),
        }

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        choices = options(ed)
        wanted = (params or {}).get("task")
        values = [v for _, v in choices]
        task_id = next((v for v in values if v.partition(SEP)[0] == wanted), None) or keep_or_first(
            None, choices
        )
        modal = ctx.memo("modal", ed.name, make=lambda: tables.modal_share_table(ed.standard))
        return {
            self.picker: gr.update(choices=choices, value=task_id),
            **self.page(ctx, ed.name, task_id),
            **self.modal.update(
                ctx.downloads,
                modal,
                empty=f"No re-checked result file on {ed.label} yet.",
                stem=f"modal-{ed.name.replace(':', '-')}",
            ),
        }
