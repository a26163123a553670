"""Calibration: how sure the models are, and whether they know when they are wrong.

Per scope (every task pooled, a block pooled, or one task) a table of every standard model
that has a calibration report there (mean gold probability, high-confidence error rate, Brier
score, ECE, agreement of the answer with the most probable label, each with its 95% bootstrap
interval; group consistency with the number of groups; controls), small multiples of the four
main metrics, and a reliability diagram of one model drawn from its stored 15 ECE bins. The
board's ranking rule is stated above. Deep link: ``?tab=calibration&task=<id>&model=<key>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gradio as gr
import numpy as np
import pandas as pd

from yoxla.board import calibration
from yoxla.board.prepared import EditionData
from yoxla.views import plot
from yoxla.views.base import Context, Table, Update, View, keep_or_first, plot_data
from yoxla.views.common import components
from yoxla.views.texts import md

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


def board_calibration(ctx: Context, ed: EditionData) -> calibration.BoardCalibration:
    """The board's calibration (reports and intervals), computed once per board."""
    return ctx.memo(  # type: ignore[no-any-return]
        "calibration", ed.name, make=lambda: calibration.board_calibration(ed, ctx.prepared.board.B)
    )


def no_probabilities(ed: EditionData) -> str:
    return (
        f"No result file on {ed.label} stores answer probabilities: they come from providers that return "
        "token logprobs (vLLM, llama.cpp, OpenAI) or from a local Transformers model, in runs without "
        "--no-probabilities."
    )


CALIBRATION_PANELS = (
    ("mean_gold_p", "mean gold probability", (0.0, 1.0)),
    ("high_confidence_error_rate", "high-confidence error rate", (0.0, None)),
    ("brier", "Brier score (multi-class)", (0.0, None)),
    ("ece", "expected calibration error", (0.0, None)),
)


def calibration_figure(rows: Sequence[Any], scope_label: str, board: str) -> plot.Figure:
    """Small multiples: per model (rows) mean gold p, high-confidence error rate, Brier and ECE
    with their 95% intervals; only models with probabilities at this scope."""
    title = f"How sure, and how right: {plot.plain(scope_label)} ({plot.plain(board)})"
    shown = [r for r in rows if int(r.report.get("n_with_probs") or 0) > 0][: plot.MAX_PLOT_MODELS]
    if not shown:
        return plot.empty_figure(
            title, f"No model on {board} has answer probabilities here: nothing to plot."
        )
    names = [plot.plain(r.model.name) for r in shown]
    gap = 0.03
    width = (1.0 - gap * (len(CALIBRATION_PANELS) - 1)) / len(CALIBRATION_PANELS)
    data, annotations = [], []
    layout: dict[str, Any] = {}
    for c, (key, label, (lo_r, hi_r)) in enumerate(CALIBRATION_PANELS):
        xs = [r.report.get(key) for r in shown]
        ivs = [r.intervals.get(key) for r in shown]
        ax = "x" if c == 0 else f"x{c + 1}"
        lo_d = c * (width + gap)
        top = max([x for x in xs if x is not None] + [b[1] for b in ivs if b] + [0.05])
        rng = [lo_r, hi_r if hi_r is not None else min(2.0, top * 1.1)]
        layout["xaxis" if c == 0 else f"xaxis{c + 1}"] = plot.axis(
            label, domain=[lo_d, lo_d + width], range=rng, anchor="y"
        )
        data.append(
            plot.dots(
                [np.nan if x is None else x for x in xs],
                names,
                [b[0] if b else (np.nan if x is None else x) for x, b in zip(xs, ivs, strict=True)],
                [b[1] if b else (np.nan if x is None else x) for x, b in zip(xs, ivs, strict=True)],
                name=label,
                color=plot.OKABE_ITO[c % len(plot.OKABE_ITO)],
                what=label,
                showlegend=False,
                xaxis=ax,
            )
        )
        better = "lower is better" if c else "higher is better"
        annotations.append(plot.panel_title(f"{plot.plain(label)}<br>({better})", lo_d + width / 2, 12))
    cut = f" (first {plot.MAX_PLOT_MODELS} in the board's order)" if len(rows) > plot.MAX_PLOT_MODELS else ""
    fig = plot.figure(
        data,
        title + cut,
        "value",
        "model",
        height=max(320, plot.ROW_PX * len(names) + 190),
        yaxis=plot.category_axis(names, "model"),
        annotations=annotations,
        margin={"t": 100},
    )
    fig["layout"].update(layout)
    return fig


def reliability_figure(bins: Sequence[dict[str, Any]], title: str, empty: str) -> plot.Figure:
    """Reliability diagram from stored ECE bins: accuracy against confidence per non-empty bin
    (marker area by its count), the bin counts as bars on a second axis, and the diagonal."""
    title = plot.plain(title)
    filled = [b for b in bins if int(b.get("count") or 0) > 0 and b.get("mean_confidence") is not None]
    if not filled:
        return plot.empty_figure(title, empty)
    counts = [int(b["count"]) for b in bins]
    biggest = max(counts) or 1
    centres = [(float(b["lower"]) + float(b["upper"])) / 2 for b in bins]
    width = [float(b["upper"]) - float(b["lower"]) for b in bins]
    data: list[dict[str, Any]] = [
        {
            "type": "bar",
            "x": centres,
            "y": counts,
            "width": width,
            "name": "examples in the bin (right axis)",
            "yaxis": "y2",
            "marker": {"color": "#bbbbbb", "opacity": 0.45},
            "customdata": [[float(b["lower"]), float(b["upper"])] for b in bins],
            "hovertemplate": "confidence in (%{customdata[0]:.3f}, %{customdata[1]:.3f}]: %{y} example(s)"
            "<extra></extra>",
        },
        plot.line_trace([0, 1], "perfect calibration", {"color": "#000000", "dash": "dot", "width": 1.5}),
        {
            "type": "scatter",
            "x": [float(b["mean_confidence"]) for b in filled],
            "y": [float(b["accuracy"]) for b in filled],
            "mode": "lines+markers",
            "name": "this model (one point per bin)",
            "line": {"color": plot.OKABE_ITO[0], "width": 2},
            "marker": {
                "color": plot.OKABE_ITO[0],
                "size": [8 + 22 * (int(b["count"]) / biggest) ** 0.5 for b in filled],
            },
            "customdata": [[int(b["count"]), float(b["lower"]), float(b["upper"])] for b in filled],
            "hovertemplate": "bin (%{customdata[1]:.3f}, %{customdata[2]:.3f}], %{customdata[0]} example(s)"
            "<br>mean confidence %{x:.3f}, accuracy %{y:.3f}<extra></extra>",
        },
    ]
    return plot.figure(
        data,
        title + "<br><sup>above the diagonal: under-confident; below: over-confident</sup>",
        "confidence: probability of the most probable label",
        "accuracy of the most probable label",
        height=460,
        xaxis=plot.axis("confidence: probability of the most probable label", range=[0, 1.0]),
        yaxis=plot.axis("accuracy of the most probable label", range=[0, 1.02]),
        yaxis2={
            "title": {"text": "examples in the bin"},
            "overlaying": "y",
            "side": "right",
            "showgrid": False,
            "rangemode": "tozero",
            "automargin": True,
        },
        margin={"t": 90, "r": 60},
    )


class CalibrationView(View):
    tab_id = "calibration"
    title = "Calibration"

    def shown_on(self, ed: EditionData) -> bool:
        """A board that knows its tasks' answer spaces (chance levels: the benchmark's editions), or
        one of whose files stores answer probabilities (a suite's)."""
        if ed.has_reference:
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
            return {self.diagram: plot_data(plot.empty_figure(title, no_probabilities(ed)))}
        row = cal.row(scope or calibration.OVERALL, key or "")
        label = {s: lab for lab, s in cal.scopes}.get(scope or "", "")
        if row is None:
            message = (
                no_probabilities(ed) if not cal.any_probabilities else "Pick a model with probabilities."
            )
            return {self.diagram: plot_data(plot.empty_figure(title, message))}
        title = f"Reliability diagram: {row.model.name}, {label.lower() or 'all tasks'}"
        return {
            self.diagram: ctx.plot(
                "reliability",
                ed.name,
                scope,
                row.model.key,
                make=lambda: reliability_figure(
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
            msg = plot.no_models_message(ed.label) if ed.standard.empty else no_probabilities(ed)
            return {
                self.plot: plot_data(plot.empty_figure(title, msg)),
                **self.table.update(ctx.downloads, pd.DataFrame(), empty=msg),
                self.model: gr.update(choices=[], value=None, visible=False),
                self.diagram: plot_data(plot.empty_figure("Reliability diagram", msg)),
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
                make=lambda: calibration_figure(cal.rows.get(scope, []), label, ed.label),
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
