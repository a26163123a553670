"""The error explorer: one model's answers on one task, filtered and paged on the server.

Deep link: ``?tab=explorer&task=<id>&model=<key>&verdict=wrong``. Every answer is shown in
text components (a table, text boxes, highlighted text), never rendered.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import gradio as gr
import pandas as pd

from yoxla.board import explorer
from yoxla.views.base import Context, Table, Update, View, keep_or_first, set_param_js
from yoxla.views.common import components, model_choices
from yoxla.views.format import task_short

HIGHLIGHT_COLORS = {"gold": "#ffd54f", "model": "#90caf9", "both": "#a5d6a7"}
NONE = ""
PICK = "Pick a task and a model."


@dataclass(frozen=True)
class Query:
    """The explorer's filters, in the order of :meth:`ExplorerView.filters`."""

    task: str | None = None
    a: str | None = None
    b: str | None = None
    verdict: str = "all"
    pair: str = "any"
    bval: str | None = None
    nm: str | None = None
    search: str = ""
    page: Any = 1

    @classmethod
    def of(cls, values: tuple[Any, ...]) -> Query:
        return cls(*values)


class ExplorerView(View):
    tab_id = "explorer"
    title = "Error explorer"

    def build(self, ctx: Context) -> None:
        with gr.Row():
            self.task = gr.Dropdown([], label="Task", elem_id="explorer-task", allow_custom_value=True)
            self.a = gr.Dropdown([], label="Model A", elem_id="explorer-model-a", allow_custom_value=True)
            self.b = gr.Dropdown(
                [], label="Model B (optional)", elem_id="explorer-model-b", allow_custom_value=True
            )
        with gr.Row():
            self.verdict = gr.Radio(
                list(explorer.VERDICTS), value="all", label="A's verdict", elem_id="explorer-verdict"
            )
            self.pair = gr.Radio(list(explorer.PAIRS), value="any", label="A vs B")
        with gr.Row():
            self.bval = gr.Dropdown([NONE], value=NONE, label="Breakdown value", allow_custom_value=True)
            self.nm = gr.Dropdown([NONE], value=NONE, label="Near-miss kind", allow_custom_value=True)
            self.search = gr.Textbox(label="Text search (answers and inputs)", elem_id="explorer-search")
            self.page = gr.Number(value=1, precision=0, label="Page", elem_id="explorer-page", min_width=90)
            self.prev = gr.Button("◀ Previous", size="sm", min_width=90)
            self.next = gr.Button("Next ▶", size="sm", min_width=90)
        self.info = gr.Textbox(label="Matches", interactive=False, elem_id="explorer-info")
        self.table = Table("Examples (click a row to open it)", "explorer", elem_id="explorer-table")
        self.example = gr.Dropdown(
            [], label="Open example", elem_id="explorer-example", allow_custom_value=True
        )
        with gr.Row():
            with gr.Column():
                self.inputs_box = gr.Textbox(
                    label="Inputs", lines=6, interactive=False, elem_id="example-inputs"
                )
                self.passage = gr.HighlightedText(
                    label="Passage: gold span and the model's quote",
                    color_map=HIGHLIGHT_COLORS,
                    show_legend=True,
                )
            with gr.Column():
                self.gold = gr.Textbox(label="Gold", interactive=False)
                self.answer = gr.Textbox(
                    label="A: raw answer", lines=3, interactive=False, elem_id="example-answer"
                )
                with gr.Accordion("A: reasoning (folded)", open=False):
                    self.reasoning = gr.Textbox(show_label=False, lines=6, interactive=False)
                self.parsed = gr.Textbox(label="A: parsed value", interactive=False)
                self.verdict_box = gr.Textbox(label="A: verdict", interactive=False)
                # shown only when a model B is picked (no empty boxes otherwise)
                self.b_answer = gr.Textbox(label="B: raw answer", lines=2, interactive=False, visible=False)
                self.b_verdict = gr.Textbox(label="B: verdict", interactive=False, visible=False)

    def filters(self) -> list[Any]:
        return components(
            self.task, self.a, self.b, self.verdict, self.pair, self.bval, self.nm, self.search, self.page
        )

    def example_outputs(self) -> list[Any]:
        boxes_a = [self.inputs_box, self.gold, self.answer, self.reasoning, self.parsed, self.verdict_box]
        return [*boxes_a, self.passage, self.b_answer, self.b_verdict]

    def result_outputs(self) -> list[Any]:
        return components(self.table, self.info, self.example, self.page, self.example_outputs())

    def outputs(self) -> list[Any]:
        return [*self.filters(), *self.result_outputs()]

    # Data --------------------------------------------------------------------------------------
    def show_example(
        self,
        ctx: Context,
        edition: str,
        task_id: str | None,
        key_a: str | None,
        key_b: str | None,
        example_id: str | None,
    ) -> Update:
        blank: Update = {c: "" for c in self.example_outputs()}
        blank[self.passage] = None
        for box in (self.b_answer, self.b_verdict):
            blank[box] = gr.update(value="", visible=bool(key_b))
        board = ctx.prepared.board
        if not (task_id and key_a and example_id) or task_id not in board.task_ids(edition):
            return blank
        va = explorer.example_view(board, edition, task_id, key_a, example_id)
        if va is None:
            return blank
        out = {
            self.inputs_box: va.inputs,
            self.gold: va.gold,
            self.answer: va.answer,
            self.reasoning: va.reasoning,
            self.parsed: va.parsed,
            self.verdict_box: va.verdict,
            self.passage: va.highlight,
            self.b_answer: gr.update(value="", visible=bool(key_b)),
            self.b_verdict: gr.update(value="", visible=bool(key_b)),
        }
        if key_b:
            vb = explorer.example_view(board, edition, task_id, key_b, example_id)
            if vb is not None:
                out[self.b_answer] = gr.update(value=vb.answer, visible=True)
                out[self.b_verdict] = gr.update(value=vb.verdict, visible=True)
        return out

    def results(self, ctx: Context, edition: str, q: Query) -> Update:
        """Filter and page, then open the first example of the page."""
        board = ctx.prepared.board
        task_id, key_a = q.task, q.a
        valid = task_id in board.task_ids(edition) and explorer.model_of(board, edition, key_a) is not None
        if not valid:
            ed = ctx.prepared.edition(edition)
            why = PICK if model_choices(ed) else f"No re-checked result file on {ed.label} yet."
            return {
                **self.table.update(ctx.downloads, pd.DataFrame(), empty=why),
                self.info: why,
                self.example: gr.update(choices=[], value=None),
                self.page: 1,
                **self.show_example(ctx, edition, None, None, None, None),
            }
        key_b = q.b if q.b and explorer.model_of(board, edition, q.b) is not None else None
        df = explorer.filter_examples(
            board,
            edition,
            str(task_id),
            str(key_a),
            key_b,
            q.verdict or "all",
            q.bval or None,
            q.nm or None,
            q.search or "",
            q.pair or "any",
        )
        try:
            wanted = int(q.page or 1)
        except (TypeError, ValueError, OverflowError):
            wanted = 1
        part, shown_page, info = explorer.page_of(df, wanted)
        ids = part["id"].tolist() if "id" in part else []
        first = ids[0] if ids else None
        return {
            **self.table.update(
                ctx.downloads,
                part,
                csv=df,
                empty="No example matches these filters.",
                stem=f"explorer-{edition.replace(':', '-')}-{task_id}",
            ),
            self.info: info,
            self.example: gr.update(choices=ids, value=first),
            self.page: shown_page,
            **self.show_example(ctx, edition, task_id, key_a, key_b, first),
        }

    def pickers(self, ctx: Context, edition: str, task_id: str | None, key_a: str | None) -> Update:
        board = ctx.prepared.board
        ok = task_id in board.task_ids(edition)
        bvals = explorer.breakdown_values(board, edition, str(task_id)) if ok else []
        nms = explorer.near_miss_values(board, edition, str(task_id), key_a) if ok and key_a else []
        return {
            self.bval: gr.update(choices=[NONE, *bvals], value=NONE),
            self.nm: gr.update(choices=[NONE, *nms], value=NONE),
        }

    def open(
        self,
        ctx: Context,
        edition: str,
        task_id: str | None,
        key_a: str | None,
        verdict: str = "all",
        key_b: str | None = None,
    ) -> Update:
        """Every filter set at once (edition change, a deep link, a link from a model page)."""
        ed = ctx.prepared.edition(edition)
        tids = ctx.prepared.board.task_ids(ed.name)
        models = model_choices(ed)
        task_id = keep_or_first(task_id, tids)
        key_a = keep_or_first(key_a, models)
        keys = [k for _, k in models]
        key_b = key_b if key_b in keys and key_b != key_a else None
        verdict = verdict if verdict in explorer.VERDICTS else "all"
        return {
            self.task: gr.update(choices=[(f"{task_short(t)} · {t}", t) for t in tids], value=task_id),
            self.a: gr.update(choices=models, value=key_a),
            self.b: gr.update(choices=[("(none)", NONE), *models], value=key_b or NONE),
            self.verdict: verdict,
            self.pair: "any",
            self.search: "",
            **self.pickers(ctx, ed.name, task_id, key_a),
            **self.results(ctx, ed.name, Query(task_id, key_a, key_b, verdict)),
        }

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        p = params or {}
        return self.open(ctx, edition, p.get("task"), p.get("model"), p.get("verdict", "all"))

    def warm(self, ctx: Context, edition: str) -> None:
        # Reads one file on demand (cached), checked against its admitted digest; a suite's
        # committed items (its rendered prompts) are prepared once, here.
        ed = ctx.prepared.edition(edition)
        if not ed.standard.empty:
            for tid in ed.suite.tasks:
                ctx.prepared.board.items(ed.name, tid)

    # Events ------------------------------------------------------------------------------------
    def wire(self, ctx: Context) -> None:
        inputs = [ctx.edition, *self.filters()]

        def refresh(edition: str, *values: Any) -> Update:
            return self.results(ctx, edition, Query.of(values))

        def refresh_first_page(edition: str, *values: Any) -> Update:
            return self.results(ctx, edition, replace(Query.of(values), page=1))

        def repick(edition: str, *values: Any) -> Update:
            q = Query.of(values)
            # A new task or model resets the breakdown and near-miss filters.
            out = self.pickers(ctx, edition, q.task, q.a)
            return {**out, **self.results(ctx, edition, replace(q, bval=None, nm=None, page=1))}

        outs = self.result_outputs()
        for pick in (self.task, self.a):
            pick.input(repick, inputs, [self.bval, self.nm, *outs])
        for narrow in (self.b, self.verdict, self.pair, self.bval, self.nm):
            narrow.input(refresh_first_page, inputs, outs)
        self.search.submit(refresh_first_page, inputs, outs)
        self.page.submit(refresh, inputs, outs)

        def step(delta: int) -> Any:
            def go(edition: str, *values: Any) -> Update:
                q = Query.of(values)
                try:
                    page = int(q.page or 1) + delta
                except (TypeError, ValueError, OverflowError):
                    page = 1
                return self.results(ctx, edition, replace(q, page=page))

            return go

        self.prev.click(step(-1), inputs, outs)
        self.next.click(step(+1), inputs, outs)
        shown = [ctx.edition, self.task, self.a, self.b, self.example]
        self.example.input(
            lambda ed, t, a, b, e: self.show_example(ctx, ed, t, a, b, e), shown, self.example_outputs()
        )

        def pick_row(edition: str, t: str, a: str, b: str, evt: gr.SelectData) -> Update:
            row = evt.row_value if isinstance(evt.row_value, list) else None
            if not row:
                return gr.skip()  # nothing to open: every output as it is
            return {self.example: row[0], **self.show_example(ctx, edition, t, a, b, str(row[0]))}

        pick_row.__annotations__["evt"] = gr.SelectData
        self.table.df.select(pick_row, shown[:-1], [self.example, *self.example_outputs()])
        self.task.input(None, self.task, None, js=set_param_js("task"))
        self.a.input(None, self.a, None, js=set_param_js("model"))
