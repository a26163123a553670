"""Calibration: how sure the models are, and whether they know when they are wrong.

Per scope (every task pooled, a block pooled, or one task) a table of every standard model
that has a calibration report there (mean gold probability, high-confidence error rate, Brier
score, ECE, agreement of the answer with the most probable label, each with its 95% bootstrap
interval; group consistency with the number of groups; controls), small multiples of the four
main metrics, and a reliability diagram of one model drawn from its stored 15 ECE bins. The
board's ranking rule is stated above. Deep link: ``?tab=calibration&task=<id>&model=<key>``.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from yoxla.leaderboard import calibration, figures, tables
from yoxla.leaderboard.prepared import EditionData
from yoxla.leaderboard.texts import md
from yoxla.leaderboard.views.base import Context, Table, Update, View, keep_or_first, plot_data
from yoxla.leaderboard.views.common import components
from yoxla.leaderboard.views.model import board_calibration

INTRO = """Where a result file stores the model's probability of every answer of a task's closed answer
space (from an API's token logprobs, or exactly from a local model), these numbers say whether the
model knows when it is wrong. **Mean gold probability**: the probability given to the right answer.
**High-confidence error rate**: wrong answers given with p ≥ 0.90, over all scored examples.
**Brier score** (multi-class, 0–2) and **ECE** (15 equal-width confidence bins): the gap between
confidence and accuracy (lower is better). **Answer = most probable label**: how often the written
answer is the label the model's own distribution prefers. **Group consistency**: the share of declared
groups of minimal edits answered right throughout. **Controls**: rows that are ambiguous by
construction, run but not scored. Intervals: 95% bootstrap over examples (resampled within each task,
B = 1000, fixed seed, the same resamples for every model; a pooled scope resamples each of its tasks);
group consistency and controls have none. Partial distributions (some labels not recoverable) are left
out. Formulas: docs/calibration.md."""


def no_probabilities(ed: EditionData) -> str:
    return (
        f"No result file on {ed.label} stores answer probabilities: they come from providers that return "
        "token logprobs (vLLM, llama.cpp, OpenAI) or from a local Transformers model, in runs without "
        "--no-probabilities."
    )


class CalibrationView(View):
    tab_id = "calibration"
    title = "Calibration"

    def shown_on(self, ed: EditionData) -> bool:
        """Every edition; a suite board when one of its files stores answer probabilities."""
        if not ed.is_suite:
            return True
        return any(t.calibration is not None for v in ed.all_models() for t in v.tasks.values())

    def build(self, ctx: Context) -> None:
        gr.Markdown(INTRO)
        self.rule = gr.Markdown(elem_id="calibration-rule")
        self.scope = gr.Dropdown([], label="Tasks", elem_id="calibration-scope", allow_custom_value=True)
        self.plot = gr.Plot(
            label="Calibration metrics", elem_classes=["yoxla-plot"], elem_id="calibration-plot"
        )
        self.table = Table(
            "Per model (value and 95% interval; ↓ lower is better)",
            "calibration",
            elem_id="calibration-table",
        )
        gr.Markdown(
            "### Reliability diagram\nEach point is one of the 15 confidence bins of the chosen model: the mean "
            "probability of its most probable label (across) against how often that label was right (up), its "
            "size and the grey bars the number of examples. On the diagonal the model is calibrated; below it, "
            "over-confident."
        )
        self.model = gr.Dropdown([], label="Model", elem_id="calibration-model", allow_custom_value=True)
        self.diagram = gr.Plot(
            label="Reliability diagram", elem_classes=["yoxla-plot"], elem_id="reliability-plot"
        )

    def diagram_outputs(self) -> list[Any]:
        return [self.diagram]

    def page_outputs(self) -> list[Any]:
        return components(self.plot, self.table, self.model, self.diagram_outputs())

    def outputs(self) -> list[Any]:
        return [self.rule, self.scope, *self.page_outputs()]

    # Data --------------------------------------------------------------------------------------
    def _data(self, ctx: Context, ed: EditionData) -> calibration.BoardCalibration | None:
        return board_calibration(ctx, ed)

    def show_diagram(self, ctx: Context, edition: str, scope: str | None, key: str | None) -> Update:
        ed = ctx.prepared.edition(edition)
        cal = self._data(ctx, ed)
        title = "Reliability diagram"
        if cal is None:
            return {self.diagram: plot_data(figures.empty_figure(title, no_probabilities(ed)))}
        row = cal.row(scope or calibration.OVERALL, key or "")
        label = {s: lab for lab, s in cal.scopes}.get(scope or "", "")
        if row is None:
            message = (
                no_probabilities(ed) if not cal.any_probabilities else "Pick a model with probabilities."
            )
            return {self.diagram: plot_data(figures.empty_figure(title, message))}
        title = f"Reliability diagram: {row.model.name}, {label.lower() or 'all tasks'}"
        return {
            self.diagram: ctx.plot(
                "reliability",
                ed.name,
                scope,
                row.model.key,
                make=lambda: figures.reliability_figure(
                    calibration.reliability_bins(row.report),
                    title,
                    f"{row.model.name} has no complete answer distribution here.",
                ),
            )
        }

    def page(self, ctx: Context, edition: str, scope: str | None, key: str | None = None) -> Update:
        """The scope's plot and table, the model picker (kept when it has probabilities there) and its diagram."""
        ed = ctx.prepared.edition(edition)
        cal = self._data(ctx, ed)
        title = "Calibration metrics"
        if cal is None or not cal.rows:
            msg = figures.no_models_message(ed.label) if ed.standard.empty else no_probabilities(ed)
            return {
                self.plot: plot_data(figures.empty_figure(title, msg)),
                **self.table.update(ctx.downloads, tables.pd.DataFrame(), empty=msg),
                self.model: gr.update(choices=[], value=None, visible=False),
                self.diagram: plot_data(figures.empty_figure("Reliability diagram", msg)),
            }
        scope = keep_or_first(scope, cal.scopes)
        label = {s: lab for lab, s in cal.scopes}.get(scope, "")
        shown, csv = ctx.memo(
            "calibration-table", ed.name, scope, make=lambda: calibration.scope_table(cal, scope)
        )
        models = calibration.model_choices(cal, scope)
        key = keep_or_first(key, models)
        stem = f"calibration-{ed.name.replace(':', '-')}-{scope.replace(':', '-')}"
        return {
            self.plot: ctx.plot(
                "calibration-fig",
                ed.name,
                scope,
                make=lambda: figures.calibration_figure(cal.rows.get(scope, []), label, ed.label),
            ),
            **self.table.update(ctx.downloads, shown, csv=csv, empty=no_probabilities(ed), stem=stem),
            self.model: gr.update(choices=models, value=key, visible=bool(models)),
            **self.show_diagram(ctx, ed.name, scope, key),
        }

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        p = params or {}
        cal = self._data(ctx, ed)
        scopes = cal.scopes if cal is not None else []
        task = p.get("task")
        scope = keep_or_first(calibration.scope_id("task", task) if task else None, scopes)
        without = len(cal.without) if cal is not None else 0
        rule = f"**Ranking rule of this board.** {md(ed.order_text)}"
        if cal is not None and without:
            rule += (
                f" {without} model(s) of this board have no calibration report (answer probabilities "
                "not available from their provider, and no declared groups or controls)."
            )
        if cal is not None and cal.notes:  # pooled scopes: on the items every model shares, or not at all
            rule += "\n\n" + "\n\n".join(md(n) for n in cal.notes.values())
        return {
            self.rule: rule,
            self.scope: gr.update(choices=scopes, value=scope, visible=bool(scopes)),
            **self.page(ctx, ed.name, scope, p.get("model")),
        }

    def warm(self, ctx: Context, edition: str) -> None:
        ed = ctx.prepared.edition(edition)
        self.render(ctx, edition)
        cal = self._data(ctx, ed)
        for _, scope in cal.scopes if cal is not None else []:
            self.page(ctx, edition, scope)

    # Events ------------------------------------------------------------------------------------
    def wire(self, ctx: Context) -> None:
        self.scope.input(
            lambda ed, scope, key: self.page(ctx, ed, scope, key),
            [ctx.edition, self.scope, self.model],
            self.page_outputs(),
        )
        self.model.input(
            lambda ed, scope, key: self.show_diagram(ctx, ed, scope, key),
            [ctx.edition, self.scope, self.model],
            self.diagram_outputs(),
        )
