"""Diagnostics: every metric the evaluators compute, invalid outputs, and why span scores move."""

from __future__ import annotations

from typing import Any

import gradio as gr

from yoxla.leaderboard import figures, tables
from yoxla.leaderboard.views.base import Context, Table, TaskPickerView, Update, keep_or_first
from yoxla.suite import load_suite

WHY = """### Why did the score move? Span recall against token F1
The span tasks are scored by **span recall** on character offsets, with 0 when the quote reaches
outside the sentences the gold occupies. **Token F1** (the usual SQuAD measure) credits any shared
word, so it forgives a quote that runs on into the next sentence and punishes a long quote that
still covers the gold. A model above the diagonal gains under F1 what the score refuses it (usually
over-long quotes); one below it quotes the right words with extra ones (precision lowers F1, not
recall). Quotes not found in the passage (rewritten or invented) score 0 under both. The table gives
each model's numbers and, from them, the main reason the two differ.
"""


class DiagnosticsView(TaskPickerView):
    tab_id = "diagnostics"
    title = "Diagnostics"

    def build(self, ctx: Context) -> None:
        tids = list(load_suite().tasks)
        self.picker = gr.Dropdown(
            [(f"{tables.task_short(t)} · {t}", t) for t in tids],
            value=tids[0],
            label="Task",
            elem_id="diagnostics-task",
            allow_custom_value=True,
        )
        self.metrics = Table(
            "Every metric of this task (n/a: not defined, e.g. no valid answer)",
            "diagnostics",
            elem_id="diag-metrics",
        )
        self.outcomes = Table("Outcomes (items)", "outcomes", elem_id="diag-outcomes")
        self.near_miss_plot = gr.Plot(
            label="Near misses", elem_classes=["yoxla-plot"], elem_id="near-miss-plot"
        )
        self.near_miss = Table("Invalid outputs by near-miss kind", "near-miss", elem_id="diag-near-miss")
        gr.Markdown(WHY)
        self.span_plot = gr.Plot(
            label="Span recall vs token F1", elem_classes=["yoxla-plot"], elem_id="span-plot"
        )
        self.span = Table("Span recall, token F1 and what moves them apart", "span-why", elem_id="span-table")

    def page_outputs(self) -> list[Any]:
        return [*self.metrics.outputs, *self.outcomes.outputs, self.near_miss_plot, *self.near_miss.outputs]

    def outputs(self) -> list[Any]:
        return [self.picker, *self.page_outputs(), self.span_plot, *self.span.outputs]

    def page(self, ctx: Context, edition: str, task_id: str | None) -> Update:
        ed = ctx.prepared.edition(edition)
        task_id = keep_or_first(task_id, ed.standard.task_ids)
        models = ed.standard.models
        none = f"No re-checked result file on {ed.label} yet."
        stem = f"{ed.name.replace(':', '-')}-{task_id}"
        return {
            **self.metrics.update(
                ctx.downloads,
                ctx.memo("diag", ed.name, task_id, make=lambda: tables.diagnostics_table(models, task_id)),
                empty=none,
                stem=f"diagnostics-{stem}",
            ),
            **self.outcomes.update(
                ctx.downloads, tables.outcomes_table(models, task_id), empty=none, stem=f"outcomes-{stem}"
            ),
            self.near_miss_plot: ctx.plot(
                "nm-fig", ed.name, task_id, make=lambda: figures.near_miss_figure(models, task_id, ed.label)
            ),
            **self.near_miss.update(
                ctx.downloads, tables.near_miss_table(models, task_id), empty=none, stem=f"near-miss-{stem}"
            ),
        }

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        task_id = keep_or_first((params or {}).get("task"), ed.standard.task_ids)
        models = ed.standard.models
        span = ctx.memo("span", ed.name, make=lambda: tables.span_table(models, ed.standard.task_ids))
        from yoxla.leaderboard.views.tasks import task_choices

        return {
            self.picker: gr.update(choices=task_choices(ed), value=task_id),
            **self.page(ctx, ed.name, task_id),
            self.span_plot: ctx.plot(
                "span-fig", ed.name, make=lambda: figures.span_figure(models, ed.standard.task_ids, ed.label)
            ),
            **self.span.update(
                ctx.downloads,
                span,
                empty=f"No re-checked result file on {ed.label} yet."
                if not models
                else f"{ed.label} has no span task.",
                stem=f"span-{ed.name.replace(':', '-')}",
            ),
        }
