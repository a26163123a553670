"""The leaderboard: a compact ranked table, filters, the floor as a reference row, files apart.

Ranked models of one board (run conditions) with rank ranges, trust, YOXLA ± and the four
blocks; task columns, intervals and diagnostics on request. Filters hide rows but never
re-rank. Files whose scores could not be re-checked, and results reported elsewhere, get
their own labelled sections below, never ranked with admitted files. A click on a row opens
that model's page.
"""

from __future__ import annotations

from typing import Any

import gradio as gr
import numpy as np

from yoxla.board.prepared import GROUP_TITLES, RANK_RULE, SIZE_BANDS, UNKNOWN, EditionData
from yoxla.views.base import Context, Table, Update, View, set_param_js
from yoxla.views.common import components
from yoxla.views.format import lower_is_better
from yoxla.views.leaderboard_tables import (
    COLUMN_SETS,
    Filters,
    card_url,
    leaderboard_figure,
    leaderboard_frame,
    leaderboard_view,
    model_cell,
    reported_table,
    reported_vs_admitted,
    unchecked_table,
)
from yoxla.views.texts import md

ANY = "any"
FLOOR_STYLE = "color: #6b6b6b; background-color: #eeeeee; font-style: italic"
REPORTED_STYLE = "background-color: #fff8e6"
HOW_TO_READ = (
    "**How to read this:** *72.5 ±2.1* is a score with half its 95% interval; a Rank such as *1–3* "
    "means the intervals cannot order the model more finely; the grey row is the best cue-only floor "
    "(a reference, not a model)."
)


def how_to_read(ed: EditionData) -> str:
    """The one line above the table: intervals, rank ranges, the floor where the board has one (the
    full rule is one click away)."""
    if not ed.reference.available:
        return (
            "**How to read this:** a Rank such as *1–3* means the intervals (where a task has them) cannot "
            "order the model more finely; ranks are those of the whole board."
        )
    line = HOW_TO_READ
    if ed.publications:
        line += " Rows marked *reported* are the benchmark authors' own numbers, not re-checked here."
    return line


def board_note(ed: EditionData) -> str:
    """The board's first line: what this board is (and, for ``sample``, what it is not)."""
    if ed.suite.edition is None:  # a committed suite: its own name
        return f"**{md(ed.label)}**: an eval suite committed under `suites/`, re-scored with its own graders."
    if ed.name == "sample":
        models = [v for g in ed.groups() for v in ed.boards[g].models]
        cue_only = bool(models) and all(v.provider == "baseline" for v in models)
        what = "its rows are cue-only baselines" if cue_only else "its rows check the runner end to end"
        return (
            "**`sample` is the small offline edition bundled with the code:** "
            f"{what}, not a ranking of language models. Pick **v1** under *Board* for the benchmark."
        )
    return f"**`{ed.name}` is the published YOXLA benchmark:** eleven frozen tasks in four blocks."


def rule_text(ed: EditionData) -> str:
    """The board's ranking rule and how to read a rank range (our words, and the suite's escaped id)."""
    floor = (
        " The grey row is the best cue-only floor: what reading only a surface cue scores."
        if ed.reference.available
        else ""
    )
    r = ed.standard
    if not r.empty and not np.isfinite(r.yoxla_lo).any():
        rank = (
            "This suite's score has no interval (a task's score is not a mean of per-item scores, "
            "so items cannot be resampled): ranks follow the scores, and equal scores share a range."
        )
    else:
        rank = RANK_RULE
    return f"{md(ed.order_text)} {rank} Ranks are those of the whole board; filters only hide rows.{floor}"


def suite_about(ed: EditionData) -> str:
    """The board's suite as text (the benchmark's: its package suite): name, description,
    definition, tasks, breakdowns, groups, headline, judge."""
    meta = ed.suite
    lines = [f"Suite {meta.id}: {meta.name}" if meta.name != meta.id else f"Suite {meta.id}"]
    if meta.description:
        lines.append(meta.description)
    lines.append(f"Suite definition: {meta.path or 'not committed here'}")
    for tid, name in meta.tasks.items():
        bits = [meta.types.get(tid, ""), f"primary metric {meta.primary.get(tid, '?')}"]
        if lower_is_better(ed, tid):
            bits.append("lower is better (no 0–100 score; the raw value is shown)")
        if tid in meta.judge_scored_tasks:
            bits.append("judge-scored")
        if meta.breakdowns.get(tid):
            bits.append("breakdowns by " + ", ".join(meta.breakdowns[tid]))
        lines.append(f"Task {tid} · {name} ({'; '.join(b for b in bits if b)})")
    for gid, tids in meta.groups.items():
        lines.append(f"Group {meta.group_names.get(gid, gid)} ({gid}): {', '.join(tids)}")
    if meta.groups or meta.headline_name:
        rule = (
            "the mean of the group scores"
            if meta.headline_rule == "mean_of_groups"
            else "the mean of the task scores"
        )
        lines.append(f"Suite score{f' ({meta.headline_name})' if meta.headline_name else ''}: {rule}")
    if meta.judge_models:
        lines.append("Judge model(s) of the shown files: " + ", ".join(meta.judge_models))
    return "\n".join(lines)


class LeaderboardView(View):
    tab_id = "leaderboard"
    title = "Leaderboard"

    def build(self, ctx: Context) -> None:
        self.note = gr.Markdown(elem_id="lb-note")  # the board's first line: what it is
        with gr.Accordion("Filters and more columns", open=False, elem_id="lb-filters"):
            with gr.Row(equal_height=True):
                self.search = gr.Textbox(
                    label="Search",
                    placeholder="model, provider or model id",
                    scale=3,
                    elem_id="lb-search",
                    max_lines=1,
                )
                self.group = gr.Dropdown(
                    [(GROUP_TITLES["standard"], "standard")],
                    value="standard",
                    label="Run conditions (ranked only among equal ones)",
                    elem_id="lb-group",
                    scale=3,
                )
                self.providers = gr.Dropdown(
                    [], value=[], multiselect=True, label="Provider", scale=3, elem_id="lb-providers"
                )
                self.weights = gr.Dropdown(
                    [ANY, "open", "closed", UNKNOWN], value=ANY, label="Weights", scale=1, min_width=110
                )
                self.size = gr.Dropdown(
                    [ANY, *[name for name, _, _ in SIZE_BANDS], UNKNOWN],
                    value=ANY,
                    label="Size",
                    scale=1,
                    min_width=120,
                )
                self.trust = gr.Dropdown(
                    [ANY, "verified", "community"], value=ANY, label="Trust", scale=1, min_width=120
                )
            self.columns = gr.CheckboxGroup(
                list(COLUMN_SETS), value=[], label="Show also", elem_id="lb-columns", container=False
            )
        self.about = gr.Textbox(
            label="About this suite", visible=False, lines=3, interactive=False, elem_id="lb-about"
        )
        self.count = gr.Markdown(elem_id="lb-count")
        self.how = gr.Markdown(HOW_TO_READ, elem_id="rank-rule")
        self.table = Table(
            "Leaderboard (click a row to open the model's page)",
            "leaderboard",
            elem_id="leaderboard-table",
            max_height=640,
            pinned_columns=2,
            column_widths=["88px", "150px", "76px"],
            sortable=True,
        )
        with gr.Accordion("The full ranking rule", open=False, elem_id="rank-rule-more"):
            self.rule = gr.Markdown(
                f"{RANK_RULE} Ranks are those of the whole board.", elem_id="rank-rule-full"
            )
        self.keys = gr.State([])
        self.plot = gr.Plot(label="Headline score with 95% interval", elem_classes=["yoxla-plot"])
        with gr.Column(visible=False, elem_id="lb-unchecked") as self.unchecked_box:
            gr.Markdown(
                "### Admitted, scores not re-checked (listed apart, never ranked)\n"
                "These files passed every check that needs no dataset rows (digest, signature, contract, "
                "coverage, every stored count), but their scores could not be recomputed here because the "
                "edition's rows are not available. They are shown as stored."
            )
            self.unchecked = Table("Not re-checked", "not-rechecked", elem_id="unchecked-table")
        with gr.Column(visible=False, elem_id="lb-reported") as self.reported_box:
            self.reported_note = gr.Markdown()
            self.reported = Table("Reported results (not ranked)", "reported", elem_id="reported-table")
            gr.Markdown(
                "#### Reported and admitted, side by side\n"
                "When an admitted result file is for a reported model, both are listed here with the "
                "difference (admitted − reported)."
            )
            self.side = Table("Reported vs admitted", "reported-vs-admitted", elem_id="reported-vs-admitted")

    def filter_inputs(self) -> list[Any]:
        return [self.group, self.search, self.providers, self.weights, self.size, self.trust, self.columns]

    def table_outputs(self) -> list[Any]:
        return components(self.table, self.count, self.keys, self.plot)

    def apart_outputs(self) -> list[Any]:
        """The sections of files listed apart: not re-checked, reported elsewhere (and beside admitted)."""
        reported = [self.reported_box, self.reported_note, self.reported, self.side]
        return components(self.unchecked_box, self.unchecked, reported)

    def outputs(self) -> list[Any]:
        texts = [self.about, self.note, self.how, self.rule]
        return components(self.filter_inputs(), self.table_outputs(), texts, self.apart_outputs())

    # Data --------------------------------------------------------------------------------------
    def refresh(
        self,
        ctx: Context,
        edition: str,
        group: str | None,
        search: str = "",
        providers: list[str] | None = None,
        weights: str = ANY,
        size: str = ANY,
        trust: str = ANY,
        columns: list[str] | None = None,
    ) -> Update:
        ed = ctx.prepared.edition(edition)
        group = group if group in ed.boards else "standard"
        frame = ctx.memo("lb-frame", ed.name, group, make=lambda: leaderboard_frame(ed, group))
        filters = Filters(
            search=search or "",
            providers=tuple(providers or ()),
            weights=weights or ANY,
            size=size or ANY,
            trust=trust or ANY,
        )
        view = leaderboard_view(frame, ed, group, filters, columns or ())
        shown, values = view.table.copy(), view.values.copy()
        if len(shown):  # each name escaped, linked to its card when the file names a checked one
            shown["Model"] = values["Model"] = [
                model_cell(str(name), link) for name, link in zip(shown["Model"], view.links, strict=True)
            ]
        row_styles = None
        if view.floor_row is not None or view.reported_rows:  # greyed floor, tinted reported rows
            row_styles = dict.fromkeys(view.reported_rows, REPORTED_STYLE)
            if view.floor_row is not None:
                row_styles[view.floor_row] = FLOOR_STYLE
        board = ed.boards[group]
        where = ed.label_md
        reported = len(view.reported_rows)
        if board.empty and reported:
            count = (
                f"**No re-checked result file on {where} yet:** the rows marked *reported* are the "
                "results the benchmark's authors published, not re-checked here and never ranked."
            )
        elif board.empty:
            count = (
                f"**No re-checked result file on {where} yet.** "
                + ("See the sections below. " if ed.unchecked or ed.publications else "")
                + "To add a model, see the Submit tab."
            )
        else:
            count = (
                f"Showing **{view.shown} of {view.total}** model(s) on the "
                f"*{GROUP_TITLES.get(group, group).lower()}* board of {where}."
            ) + (
                f" Below them, {reported} result(s) *reported* by the benchmark's authors (not re-checked "
                "here, not ranked)."
                if reported
                else ""
            )
        empty = (
            "No model matches the filters."
            if view.total or ed.publications
            else f"No re-checked result file on {ed.label} yet."
        )
        return {
            **self.table.update(
                ctx.downloads,
                values,
                shown=shown,
                markdown=("Model",),
                csv=frame,
                row_styles=row_styles,
                empty=empty,
                stem=f"leaderboard-{ed.name}-{group}",
            ),
            self.count: count,
            self.keys: view.keys,
            self.plot: ctx.plot("lb-fig", ed.name, group, make=lambda: leaderboard_figure(ed, group)),
        }

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        groups = ed.groups()
        providers = sorted({v.provider for g in groups for v in ed.boards[g].models})
        out: Update = {
            self.group: gr.update(choices=[(GROUP_TITLES[g], g) for g in groups], value="standard"),
            self.search: "",
            self.providers: gr.update(choices=providers, value=[]),
            self.weights: ANY,
            self.size: ANY,
            self.trust: ANY,
            self.columns: [],
            **self.refresh(ctx, ed.name, "standard"),
        }
        # A committed suite's box says what the suite is; the benchmark's boards say it in the page's
        # introduction above the table (and the box there would push the ranking below the first screen).
        about = suite_about(ed)
        out[self.about] = gr.update(value=about, visible=bool(about) and ed.suite.edition is None)
        out[self.note] = board_note(ed)
        out[self.how] = how_to_read(ed)
        out[self.rule] = rule_text(ed)
        out[self.unchecked_box] = gr.update(visible=bool(ed.unchecked))
        out.update(self.unchecked.update(ctx.downloads, unchecked_table(ed), stem=f"not-rechecked-{ed.name}"))
        out[self.reported_box] = gr.update(visible=bool(ed.publications))
        note = "\n\n".join(
            f"### Reported results (not admitted files)\n**Source:** {p.source}, {p.date}. **Conditions:** "
            f"{p.conditions}. These numbers come without predictions: nothing in them can be re-checked, they "
            "have no intervals, and they are never ranked together with admitted files."
            for p in ed.publications
        )
        out[self.reported_note] = note
        out.update(self.reported.update(ctx.downloads, reported_table(ed), stem=f"reported-{ed.name}"))
        out.update(
            self.side.update(
                ctx.downloads,
                reported_vs_admitted(ed),
                empty="No admitted result file is for a reported model yet.",
                stem=f"reported-vs-admitted-{ed.name}",
            )
        )
        return out

    def warm(self, ctx: Context, edition: str) -> None:
        ed = ctx.prepared.edition(edition)
        for g in ed.groups():
            self.refresh(ctx, edition, g)
        self.render(ctx, edition)

    # Events ------------------------------------------------------------------------------------
    def wire(self, ctx: Context) -> None:
        def on_filter(edition: str, *args: Any) -> Update:
            return self.refresh(ctx, edition, *args)

        inputs = [ctx.edition, *self.filter_inputs()]
        for comp in (self.group, self.providers, self.weights, self.size, self.trust, self.columns):
            comp.input(on_filter, inputs, self.table_outputs(), show_progress="hidden")
        self.search.input(
            on_filter, inputs, self.table_outputs(), show_progress="hidden", trigger_mode="always_last"
        )

        from yoxla.views.model import ModelView

        model_view = ctx.views["model"]
        assert isinstance(model_view, ModelView)

        def open_row(
            edition: str, group: str, keys: list[Any], rendered: dict[str, str], evt: gr.SelectData
        ) -> Update:
            key = None
            ed = ctx.prepared.edition(edition)
            board = ed.boards.get(group or "standard", ed.standard)
            row = evt.row_value if isinstance(evt.row_value, list) else None
            cells = ctx.memo(
                "lb-cells",
                ed.name,
                group or "standard",
                make=lambda: {model_cell(v.name, card_url(v)): v.key for v in board.models},
            )
            if row and len(row) > 1:  # the row by its model cell (its index moves when a header sorts)
                key = cells.get(row[1]) if isinstance(row[1], str) else None  # floor, reported: none
            elif isinstance(evt.index, list | tuple) and evt.index and 0 <= int(evt.index[0]) < len(keys):
                key = keys[int(evt.index[0])]
            if not key:
                return gr.skip()  # nothing to open: every output as it is
            return ctx.goto("model", ed.name, rendered, model_view.show(ctx, ed.name, key))

        open_row.__annotations__["evt"] = gr.SelectData  # resolved here: gradio injects the event
        self.table.df.select(
            open_row, [ctx.edition, self.group, self.keys, ctx.rendered], ctx.goto_outputs("model")
        ).then(None, model_view.picker, None, js=set_param_js("model")).then(
            None, js=set_param_js("tab", value="model")
        )
