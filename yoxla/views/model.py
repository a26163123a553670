"""A page per model: scores with intervals and floors, diagnostics, provenance, its result file.

Deep link: ``?model=<key>`` (the file's path under the results folder). Every string that
comes from the file is shown in a table or a text box; the Markdown line above the tables
holds only numbers and our own words.
"""

from __future__ import annotations

import hashlib
from typing import Any

import gradio as gr
import pandas as pd

from yoxla.admission.rules import MAX_BYTES
from yoxla.admission.verdict import Verdict
from yoxla.board import calibration
from yoxla.board.loading import headline
from yoxla.board.prepared import GROUP_TITLES, EditionData
from yoxla.safe.strictjson import read_regular_file
from yoxla.views import model_tables, plot
from yoxla.views.base import (
    NOTHING,
    Context,
    Table,
    Update,
    View,
    keep_or_first,
    plot_data,
    set_param_js,
)
from yoxla.views.calibration import board_calibration, reliability_figure
from yoxla.views.common import components, model_choices

PICK = "Pick a model to see its page."


def calibration_line(ed: EditionData, v: Verdict, cal: calibration.BoardCalibration | None) -> str:
    """One sentence (our words and numbers) on what the model page can say about calibration."""
    if cal is None:
        return (
            "**How sure the model is:** shown for models of the standard board, whose scores were re-checked."
        )
    row = cal.row(calibration.OVERALL, v.key)
    n = int(row.report.get("n_with_probs") or 0) if row is not None else 0
    if row is None or n == 0:
        extra = " Group consistency and controls are in the table below." if row is not None else ""
        return f"**Answer probabilities:** {calibration.NO_PROBS_PROVIDER}.{extra}"
    return (
        f"**Answer probabilities** for {n} of {int(row.report.get('n_scored') or 0)} scored examples "
        "(values with 95% bootstrap intervals; ↓: lower is better). The diagram pools every task."
    )


class ModelView(View):
    tab_id = "model"
    title = "Model"

    def build(self, ctx: Context) -> None:
        with gr.Row(equal_height=True):
            self.picker = gr.Dropdown(
                [], label="Model", elem_id="model-picker", allow_custom_value=True, scale=4, filterable=True
            )
            self.download = gr.DownloadButton(
                "Download this result file", elem_id="model-download", interactive=False, scale=1, size="md"
            )
        self.summary = gr.Markdown(PICK, elem_id="model-summary")
        self.scores = Table("Scores: overall, blocks and tasks", "model-scores", elem_id="model-scores")
        with gr.Row():
            with gr.Column(scale=3):
                self.plot = gr.Plot(label="Task scores", elem_classes=["yoxla-plot"], elem_id="model-plot")
            with gr.Column(scale=2):
                self.facts = Table(
                    "About the model and the run", "model-facts", elem_id="model-facts", max_height=560
                )
        gr.Markdown(
            "#### Weakest tasks\nThe tasks with the smallest margin over their best cue-only floor. "
            "Click a row to open this model's wrong answers on that task in the error explorer."
        )
        self.weakest = Table("Weakest tasks", "model-weakest", elem_id="model-weakest", max_height=220)
        with gr.Accordion("Diagnostics: every metric the evaluators compute", open=False):
            self.diagnostics = Table("Metrics per task", "model-diagnostics", elem_id="model-diagnostics")
        with gr.Accordion("Breakdowns: per class and per breakdown field", open=False):
            self.breakdowns = Table("Breakdowns", "model-breakdowns", elem_id="model-breakdowns")
        with gr.Accordion("Invalid outputs by near-miss kind", open=False):
            self.near_miss = Table("Near misses", "model-near-miss", elem_id="model-near-miss")
        with gr.Accordion("How sure: answer probabilities and calibration", open=True):
            self.cal_line = gr.Markdown(elem_id="model-calibration-line")
            self.cal_table = Table(
                "Calibration per scope", "model-calibration", elem_id="model-calibration", max_height=360
            )
            self.cal_plot = gr.Plot(
                label="Reliability diagram (all tasks)",
                elem_classes=["yoxla-plot"],
                elem_id="model-reliability",
            )

    def tables(self) -> tuple[Table, ...]:
        return (self.scores, self.facts, self.weakest, self.diagnostics, self.breakdowns, self.near_miss)

    def outputs(self) -> list[Any]:
        return [self.picker, *self.page_outputs()]

    def page_outputs(self) -> list[Any]:
        return components(self.download, self.summary, self.plot, self.tables(), self.calibration_outputs())

    def calibration_outputs(self) -> list[Any]:
        return components(self.cal_line, self.cal_table, self.cal_plot)

    # Data --------------------------------------------------------------------------------------
    def page(self, ctx: Context, key: str | None) -> Update:
        """This model's page (everything but the picker); an empty page when the key is unknown."""
        hit = ctx.prepared.locate(key) if key else None
        if hit is None:
            out: Update = {self.summary: PICK, self.download: gr.update(value=None, interactive=False)}
            out[self.plot] = plot_data(plot.empty_figure("Task scores", PICK))
            out[self.cal_plot] = plot_data(plot.empty_figure("Reliability diagram", PICK))
            out[self.cal_line] = ""
            for t in (*self.tables(), self.cal_table):
                out.update(t.update(ctx.downloads, pd.DataFrame(), empty=PICK))
            return out
        edition, board, v = hit
        ed = ctx.prepared.edition(edition)
        i = board.index(v.key) if board is not None else None
        where = ed.label
        score = headline(v)
        score_text = f"{score:.1f}" if score == score else "n/a"
        if board is not None and i is not None:
            iv = (
                f" (95% interval {board.yoxla_lo[i]:.1f}–{board.yoxla_hi[i]:.1f})"
                if board.yoxla_lo[i] == board.yoxla_lo[i]
                else ""
            )
            summary = (
                f"**Rank {board.rank(i)} of {len(board.models)}** on the "
                f"*{GROUP_TITLES.get(board.group, board.group).lower()}* board of `{where}` · "
                f"{ed.headline} **{score_text}**{iv}"
            )
        else:
            summary = (
                f"**Not ranked: scores not re-checked** on `{where}` · {ed.headline} as stored "
                f"**{score_text}** (no interval)"
            )
        ref = ed.reference.summary(ed.groups_of_tasks())
        if ref is not None:
            summary += f" · best cue-only floor {ref['yoxla']:.1f}"
        if v.generation_errors:
            summary += f" · ⚠ {v.generation_errors} generation error(s)"
        slug = f"{edition.replace(':', '-')}-{hashlib.sha256(v.key.encode()).hexdigest()[:8]}"
        out = {
            self.summary: summary,
            self.download: gr.update(value=self._file(ctx, v), interactive=True),
            self.plot: ctx.plot("model-fig", v.key, make=lambda: model_tables.model_figure(v, board, ed)),
        }
        frames = {
            self.scores: model_tables.model_scores(v, board, ed),
            self.facts: model_tables.model_facts(v, ed),
            self.weakest: model_tables.weakest_tasks(v, ed),
            self.diagnostics: model_tables.model_diagnostics(v),
            self.breakdowns: model_tables.model_breakdowns(v),
            self.near_miss: model_tables.model_near_miss(v),
        }
        for table, frame in frames.items():
            empty = "No invalid output: every answer parsed." if table is self.near_miss else NOTHING
            out.update(table.update(ctx.downloads, frame, empty=empty, stem=f"{table.stem}-{slug}"))
        out.update(self.calibration(ctx, ed, v, board is not None and board.group == "standard", slug))
        return out

    def calibration(self, ctx: Context, ed: EditionData, v: Verdict, on_standard: bool, slug: str) -> Update:
        """The model's calibration: every scope's metrics with intervals, the pooled reliability diagram."""
        cal = board_calibration(ctx, ed) if on_standard else None
        line = calibration_line(ed, v, cal)
        frame = calibration.model_table(cal, v.key) if cal is not None else pd.DataFrame()
        row = cal.row(calibration.OVERALL, v.key) if cal is not None else None
        title = f"Reliability diagram: {v.name}, all tasks"
        empty = f"Answer probabilities: {calibration.NO_PROBS_PROVIDER}."
        fig = ctx.plot(
            "model-reliability",
            v.key,
            make=lambda: reliability_figure(
                calibration.reliability_bins(row.report) if row is not None else [], title, empty
            ),
        )
        return {
            self.cal_line: line,
            self.cal_plot: fig,
            **self.cal_table.update(
                ctx.downloads,
                frame,
                empty="No calibration report for this model: " + calibration.NO_PROBS_PROVIDER + ".",
                stem=f"model-calibration-{slug}",
            ),
        }

    def _file(self, ctx: Context, v: Any) -> str | None:
        """The admitted bytes of the file, copied for download (never bytes that were not admitted)."""

        def make() -> str | None:
            raw, _ = read_regular_file(v.path, MAX_BYTES, ctx.prepared.board.results_dir or None)
            if raw is None or "sha256:" + hashlib.sha256(raw).hexdigest() != v.sha256:
                return None
            name = v.key.rsplit("/", 1)[-1].removesuffix(".json")
            return ctx.downloads.copy(f"{v.edition or v.suite}-{name}", raw, ".json")

        return ctx.memo("model-file", v.key, make=make)  # type: ignore[no-any-return]

    def show(self, ctx: Context, edition: str, key: str | None) -> Update:
        """Picker (this edition's models, ``key`` selected) and the page."""
        ed = ctx.prepared.edition(edition)
        choices = model_choices(ed)
        value = keep_or_first(key, choices)
        return {self.picker: gr.update(choices=choices, value=value), **self.page(ctx, value)}

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        return self.show(ctx, edition, (params or {}).get("model"))

    def warm(self, ctx: Context, edition: str) -> None:
        ed = ctx.prepared.edition(edition)
        models = ed.all_models()
        if models:  # the first page a visitor opens; the others are cheap slices
            self.page(ctx, models[0].key)

    # Events ------------------------------------------------------------------------------------
    def wire(self, ctx: Context) -> None:
        self.picker.input(lambda key: self.page(ctx, key), self.picker, self.page_outputs())
        self.picker.change(None, self.picker, None, js=set_param_js("model"))
        from yoxla.views.explorer import ExplorerView

        explorer = ctx.views["explorer"]
        assert isinstance(explorer, ExplorerView)

        def open_task(key: str | None, rendered: dict[str, str], evt: gr.SelectData) -> Update:
            hit = ctx.prepared.locate(key) if key else None
            row = evt.row_value if isinstance(evt.row_value, list) else None
            if hit is None or not row or row[0] not in hit[2].tasks:
                return gr.skip()  # nothing to open: every output as it is
            return ctx.goto("explorer", hit[0], rendered, explorer.open(ctx, hit[0], row[0], key, "wrong"))

        open_task.__annotations__["evt"] = gr.SelectData
        self.weakest.df.select(open_task, [self.picker, ctx.rendered], ctx.goto_outputs("explorer")).then(
            None, js=set_param_js("tab", value="explorer")
        )
