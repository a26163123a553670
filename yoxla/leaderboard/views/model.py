"""A page per model: scores with intervals and floors, diagnostics, provenance, its result file.

Deep link: ``?model=<key>`` (the file's path under the results folder). Every string that
comes from the file is shown in a table or a text box; the Markdown line above the tables
holds only numbers and our own words.
"""

from __future__ import annotations

import hashlib
from typing import Any

import gradio as gr

from yoxla.leaderboard import figures, tables
from yoxla.leaderboard.admission import MAX_BYTES
from yoxla.leaderboard.prepared import GROUP_TITLES
from yoxla.leaderboard.views.base import Context, Table, Update, View, keep_or_first, plot_data, set_param_js
from yoxla.strictjson import read_regular_file

PICK = "Pick a model to see its page."


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
        self.scores = Table("Scores: YOXLA, blocks and tasks", "model-scores", elem_id="model-scores")
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

    def outputs(self) -> list[Any]:
        return [
            self.picker,
            self.download,
            self.summary,
            *self.scores.outputs,
            *self.facts.outputs,
            self.plot,
            *self.weakest.outputs,
            *self.diagnostics.outputs,
            *self.breakdowns.outputs,
            *self.near_miss.outputs,
        ]

    def page_outputs(self) -> list[Any]:
        return [c for c in self.outputs() if c is not self.picker]

    # Data --------------------------------------------------------------------------------------
    def page(self, ctx: Context, key: str | None) -> Update:
        """This model's page (everything but the picker); an empty page when the key is unknown."""
        hit = ctx.prepared.locate(key) if key else None
        tables_ = (self.scores, self.facts, self.weakest, self.diagnostics, self.breakdowns, self.near_miss)
        if hit is None:
            out: Update = {self.summary: PICK, self.download: gr.update(value=None, interactive=False)}
            out[self.plot] = plot_data(figures.empty_figure("Task scores", PICK))
            for t in tables_:
                out.update(t.update(ctx.downloads, tables.pd.DataFrame(), empty=PICK))
            return out
        edition, board, v = hit
        ed = ctx.prepared.edition(edition)
        i = board.index(v.key) if board is not None else None
        if board is not None and i is not None:
            summary = (
                f"**Rank {board.rank(i)} of {len(board.models)}** on the "
                f"*{GROUP_TITLES.get(board.group, board.group).lower()}* board of `{edition}` · "
                f"YOXLA **{float(v.scores['yoxla']):.1f}** (95% interval {board.yoxla_lo[i]:.1f}–"
                f"{board.yoxla_hi[i]:.1f})"
            )
        else:
            summary = (
                f"**Not ranked: scores not re-checked** on `{edition}` · YOXLA as stored "
                f"**{float(v.scores['yoxla']):.1f}** (no interval)"
            )
        ref = ed.reference.summary(ed.block_tasks())
        if ref is not None:
            summary += f" · best cue-only floor {ref['yoxla']:.1f}"
        if v.generation_errors:
            summary += f" · ⚠ {v.generation_errors} generation error(s)"
        slug = f"{edition}-{hashlib.sha256(v.key.encode()).hexdigest()[:8]}"
        out = {
            self.summary: summary,
            self.download: gr.update(value=self._file(ctx, v), interactive=True),
            self.plot: ctx.plot("model-fig", v.key, make=lambda: figures.model_figure(v, board, ed)),
        }
        out.update(
            self.scores.update(ctx.downloads, tables.model_scores(v, board, ed), stem=f"model-scores-{slug}")
        )
        out.update(self.facts.update(ctx.downloads, tables.model_facts(v, ed), stem=f"model-facts-{slug}"))
        out.update(
            self.weakest.update(ctx.downloads, tables.weakest_tasks(v, ed), stem=f"model-weakest-{slug}")
        )
        out.update(
            self.diagnostics.update(
                ctx.downloads, tables.model_diagnostics(v), stem=f"model-diagnostics-{slug}"
            )
        )
        out.update(
            self.breakdowns.update(ctx.downloads, tables.model_breakdowns(v), stem=f"model-breakdowns-{slug}")
        )
        out.update(
            self.near_miss.update(
                ctx.downloads,
                tables.model_near_miss(v),
                empty="No invalid output: every answer parsed.",
                stem=f"model-near-miss-{slug}",
            )
        )
        return out

    def _file(self, ctx: Context, v: Any) -> str | None:
        """The admitted bytes of the file, copied for download (never bytes that were not admitted)."""

        def make() -> str | None:
            raw, _ = read_regular_file(v.path, MAX_BYTES, ctx.prepared.board.results_dir or None)
            if raw is None or "sha256:" + hashlib.sha256(raw).hexdigest() != v.sha256:
                return None
            name = v.key.rsplit("/", 1)[-1].removesuffix(".json")
            return ctx.downloads.copy(f"{v.edition}-{name}", raw, ".json")

        return ctx.memo("model-file", v.key, make=make)  # type: ignore[no-any-return]

    def show(self, ctx: Context, edition: str, key: str | None) -> Update:
        """Picker (this edition's models, ``key`` selected) and the page."""
        ed = ctx.prepared.edition(edition)
        choices = tables.model_choices(ed)
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
        from yoxla.leaderboard.views.explorer import ExplorerView

        explorer = ctx.views["explorer"]
        assert isinstance(explorer, ExplorerView)

        def open_task(key: str | None, rendered: dict[str, str], evt: gr.SelectData) -> Update:
            hit = ctx.prepared.locate(key) if key else None
            row = evt.row_value if isinstance(evt.row_value, list) else None
            if hit is None or not row or row[0] not in hit[2].tasks:
                return {}
            return ctx.goto("explorer", hit[0], rendered, explorer.open(ctx, hit[0], row[0], key, "wrong"))

        open_task.__annotations__["evt"] = gr.SelectData
        self.weakest.df.select(open_task, [self.picker, ctx.rendered], ctx.goto_outputs("explorer")).then(
            None, js=set_param_js("tab", value="explorer")
        )
