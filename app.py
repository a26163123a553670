"""The YOXLA leaderboard Space: Gradio layout and events only.

All data work (loading, admission, tables, bootstrap, figures, explorer) lives in plain
functions in ``yoxla.leaderboard``; nothing is loaded at import. ``build_app()`` admits the
files under ``results/`` once and builds the Blocks. Every string that comes from a result
file or a dataset is shown in text components (Dataframe, Textbox, Dropdown,
HighlightedText), never as HTML or Markdown.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

EDITION_CHOICES = ["v1", "sample"]
HIGHLIGHT_COLORS = {"gold": "#ffd54f", "model": "#90caf9", "both": "#a5d6a7"}
NONE = ""


def _dtypes(df: Any) -> list[str]:
    return ["number" if str(t).startswith(("int", "float", "Int", "Float")) else "str" for t in df.dtypes]


def build_app(
    results_dir: str | os.PathLike[str] | None = None,
    *,
    data_dir: str | None = None,
    trusted_keys: str | None = None,
    board: Any = None,
) -> Any:
    import gradio as gr

    from yoxla.leaderboard import explorer, figures, tables, texts
    from yoxla.leaderboard.board import load_board
    from yoxla.suite import load_suite

    board = board or load_board(
        results_dir, data_dir=data_dir or os.environ.get("YOXLA_DATA_DIR"), trusted_keys=trusted_keys
    )
    suite = load_suite()
    blocks = list(suite.blocks)
    ed0 = board.default_edition()
    csv_dir = Path(tempfile.mkdtemp(prefix="yoxla-csv-"))

    def df_update(df: Any) -> Any:
        if len(df.columns) == 0:
            df = tables.pd.DataFrame(columns=["(nothing to show)"])
        return gr.update(value=df, datatype=_dtypes(df))

    # ---------------------------------------------------------------- data functions
    def status_line(ed: str) -> str:
        shown = board.shown(ed)
        other = [v for v in board.excluded() if v.edition in (ed, None)]
        n_ex = sum(v.status == "excluded" for v in other)
        n_sup = sum(v.status == "superseded" for v in other)
        return (
            f"Edition {ed}: {len(shown)} model(s) shown, {n_ex} file(s) excluded, {n_sup} superseded. "
            "See Methodology for the reasons."
        )

    def leaderboard(ed: str, search: str) -> tuple[Any, Any, Any]:
        df = tables.leaderboard_table(board, ed, search or "")
        path = csv_dir / f"yoxla-leaderboard-{ed}.csv"
        df.to_csv(path, index=False)
        return df_update(df), figures.leaderboard_figure(df), gr.update(value=str(path))

    def block_outputs(ed: str) -> list[Any]:
        out: list[Any] = []
        for b in blocks:
            out += [df_update(tables.block_table(board, ed, b)), figures.block_figure(board, ed, b)]
        return out

    def breakdown(ed: str, task_id: str | None) -> tuple[Any, Any, Any]:
        if not task_id:
            empty = tables.pd.DataFrame()
            return df_update(empty), figures.near_miss_figure(board, ed, None), df_update(empty)
        return (
            df_update(tables.breakdown_display(board, ed, task_id)),
            figures.breakdown_heatmap(board, ed, task_id),
            df_update(tables.near_miss_table(board, ed, task_id)),
        )

    def explore(ed, task_id, key_a, key_b, verdict, pair, bval, nm, search, page):  # type: ignore[no-untyped-def]
        if not (task_id and key_a):
            empty = tables.pd.DataFrame(columns=["id"])
            return df_update(empty), "pick a task and a model", gr.update(choices=[], value=None), 1
        df = explorer.filter_examples(
            board, ed, task_id, key_a, key_b or None, verdict, bval or None, nm or None, search or "", pair
        )
        part, page, info = explorer.page_of(df, page)
        ids = part["id"].tolist() if "id" in part else []
        return df_update(part), info, gr.update(choices=ids, value=ids[0] if ids else None), page

    def open_example(ed, task_id, key_a, key_b, example_id):  # type: ignore[no-untyped-def]
        blank = ("", "", "", "", "", "", None, "", "")
        if not (task_id and key_a and example_id):
            return blank
        va = explorer.example_view(board, ed, task_id, key_a, example_id)
        if va is None:
            return blank
        b_answer = b_verdict = ""
        if key_b:
            vb = explorer.example_view(board, ed, task_id, key_b, example_id)
            if vb is not None:
                b_answer, b_verdict = vb.answer, vb.verdict
        return (
            va.inputs,
            va.gold,
            va.answer,
            va.reasoning,
            va.parsed,
            va.verdict,
            va.highlight,
            b_answer,
            b_verdict,
        )

    def explorer_pickers(ed: str, task_id: str | None, key_a: str | None) -> tuple[Any, Any]:
        bvals = explorer.breakdown_values(board, ed, task_id) if task_id else []
        nms = explorer.near_miss_values(board, ed, task_id, key_a) if task_id and key_a else []
        return gr.update(choices=[NONE, *bvals], value=NONE), gr.update(choices=[NONE, *nms], value=NONE)

    def compare(ed: str, a: str | None, b: str | None) -> Any:
        if not (a and b):
            return df_update(tables.pd.DataFrame(columns=["Level", "Name"]))
        return df_update(tables.compare_table(board, ed, a, b))

    def edition_changed(ed: str) -> list[Any]:
        models = tables.model_choices(board, ed)
        keys = [k for _, k in models]
        bt = tables.breakdown_tasks(board, ed)
        tids = board.task_ids(ed)
        lb_df, lb_fig, lb_csv = leaderboard(ed, "")
        bd = breakdown(ed, bt[0] if bt else None)
        out = [status_line(ed), "", lb_df, lb_fig, lb_csv, *block_outputs(ed)]
        out += [df_update(tables.spreads_table(board, ed)), figures.spreads_figure(board, ed)]
        out += [gr.update(choices=bt, value=bt[0] if bt else None), *bd]
        out += [df_update(tables.modal_share_table(board, ed)), figures.span_figure(board, ed)]
        out += [
            gr.update(choices=tids, value=tids[0] if tids else None),
            gr.update(choices=models, value=keys[0] if keys else None),
            gr.update(choices=[("(none)", NONE), *models], value=NONE),
        ]
        out += [
            gr.update(choices=models, value=keys[0] if keys else None),
            gr.update(choices=models, value=keys[1] if len(keys) > 1 else (keys[0] if keys else None)),
        ]
        out += [df_update(tables.admitted_table(board, ed)), df_update(tables.excluded_table(board))]
        return out

    # ---------------------------------------------------------------- layout
    with gr.Blocks(title="YOXLA leaderboard") as demo:
        gr.Markdown(texts.INTRO)
        with gr.Row():
            edition = gr.Dropdown(EDITION_CHOICES, value=ed0, label="Edition", scale=1)
            status = gr.Textbox(label="Admission", interactive=False, scale=4)
        with gr.Tabs():
            with gr.Tab("Leaderboard", id="leaderboard"):
                search = gr.Textbox(label="Search models or providers", placeholder="type to filter")
                lb_table = gr.Dataframe(
                    label="Leaderboard", interactive=False, wrap=True, elem_id="leaderboard-table"
                )
                csv_button = gr.DownloadButton("Download table as CSV")
                lb_plot = gr.Plot(label="YOXLA score with 95% interval")
            with gr.Tab("Blocks", id="blocks"):
                block_comps: list[Any] = []
                for b in blocks:
                    gr.Markdown(f"### {tables.block_title(b)} ({suite.block_names.get(b, b)})")
                    block_comps.append(gr.Dataframe(interactive=False, wrap=True))
                    block_comps.append(gr.Plot())
            with gr.Tab("Task spreads", id="spreads"):
                spreads_table = gr.Dataframe(
                    label="Spread of task scores across models", interactive=False, wrap=True
                )
                spreads_plot = gr.Plot()
            with gr.Tab("Breakdowns", id="breakdowns"):
                bd_task = gr.Dropdown(label="Task", choices=[])
                with gr.Row():
                    bd_plot = gr.Plot(scale=2)
                    bd_table = gr.Dataframe(
                        label="Breakdown (accuracy % and n)", interactive=False, wrap=True, scale=2
                    )
                nm_table = gr.Dataframe(
                    label="Invalid outputs by near-miss kind (this task)", interactive=False
                )
                modal_table = gr.Dataframe(
                    label="Modal answer share per choice task", interactive=False, wrap=True
                )
                span_plot = gr.Plot(label="Span recall vs precision")
            with gr.Tab("Error explorer", id="explorer"):
                with gr.Row():
                    ex_task = gr.Dropdown(label="Task", choices=[], elem_id="explorer-task")
                    ex_a = gr.Dropdown(label="Model A", choices=[], elem_id="explorer-model-a")
                    ex_b = gr.Dropdown(label="Model B (optional)", choices=[])
                with gr.Row():
                    ex_verdict = gr.Radio(list(explorer.VERDICTS), value="all", label="A's verdict")
                    ex_pair = gr.Radio(list(explorer.PAIRS), value="any", label="A vs B")
                with gr.Row():
                    ex_bval = gr.Dropdown(label="Breakdown value", choices=[NONE], value=NONE)
                    ex_nm = gr.Dropdown(label="Near-miss kind", choices=[NONE], value=NONE)
                    ex_search = gr.Textbox(label="Text search (answers and inputs)")
                    ex_page = gr.Number(value=1, precision=0, minimum=1, label="Page")
                ex_info = gr.Textbox(label="Matches", interactive=False)
                ex_table = gr.Dataframe(interactive=False, wrap=True, elem_id="explorer-table")
                ex_id = gr.Dropdown(label="Open example", choices=[], elem_id="explorer-example")
                with gr.Row():
                    with gr.Column():
                        ex_inputs = gr.Textbox(
                            label="Inputs", lines=6, interactive=False, elem_id="example-inputs"
                        )
                        ex_passage = gr.HighlightedText(
                            label="Passage: gold span and the model's quote",
                            color_map=HIGHLIGHT_COLORS,
                            show_legend=True,
                        )
                    with gr.Column():
                        ex_gold = gr.Textbox(label="Gold", interactive=False)
                        ex_answer = gr.Textbox(
                            label="A: raw answer", lines=3, interactive=False, elem_id="example-answer"
                        )
                        with gr.Accordion("A: reasoning (folded)", open=False):
                            ex_reasoning = gr.Textbox(show_label=False, lines=6, interactive=False)
                        ex_parsed = gr.Textbox(label="A: parsed value", interactive=False)
                        ex_verdict_box = gr.Textbox(label="A: verdict", interactive=False)
                        ex_b_answer = gr.Textbox(label="B: raw answer", lines=2, interactive=False)
                        ex_b_verdict = gr.Textbox(label="B: verdict", interactive=False)
            with gr.Tab("Compare", id="compare"):
                with gr.Row():
                    cmp_a = gr.Dropdown(label="Model A", choices=[])
                    cmp_b = gr.Dropdown(label="Model B", choices=[])
                cmp_table = gr.Dataframe(interactive=False, wrap=True)
            with gr.Tab("Methodology", id="methodology"):
                gr.Markdown(texts.METHODOLOGY)
                gr.Markdown("### Admitted files of this edition")
                admitted_table = gr.Dataframe(interactive=False, wrap=True)
                gr.Markdown("### Excluded and superseded files (all editions)")
                excluded_table = gr.Dataframe(interactive=False, wrap=True)
            with gr.Tab("Submit", id="submit"):
                gr.Markdown(texts.SUBMIT)

        # ------------------------------------------------------------ events
        ex_filters = [edition, ex_task, ex_a, ex_b, ex_verdict, ex_pair, ex_bval, ex_nm, ex_search, ex_page]
        ex_out = [ex_table, ex_info, ex_id, ex_page]  # followed by view_out
        view_out = [
            ex_inputs,
            ex_gold,
            ex_answer,
            ex_reasoning,
            ex_parsed,
            ex_verdict_box,
            ex_passage,
            ex_b_answer,
            ex_b_verdict,
        ]
        ex_out = ex_out + view_out
        all_out = [status, search, lb_table, lb_plot, csv_button, *block_comps, spreads_table, spreads_plot]
        all_out += [
            bd_task,
            bd_table,
            bd_plot,
            nm_table,
            modal_table,
            span_plot,
            ex_task,
            ex_a,
            ex_b,
            cmp_a,
            cmp_b,
        ]
        all_out += [admitted_table, excluded_table]

        def refresh_explorer(*args):  # type: ignore[no-untyped-def]
            """Filter and page, then open the first example of the page."""
            table, info, ids, page = explore(*args)
            ed, task_id, key_a, key_b = args[:4]
            first = ids["value"] if isinstance(ids, dict) else None
            return (table, info, ids, page, *open_example(ed, task_id, key_a, key_b, first))

        load_evt = demo.load(edition_changed, edition, all_out)
        load_evt.then(explorer_pickers, [edition, ex_task, ex_a], [ex_bval, ex_nm]).then(
            refresh_explorer, ex_filters, ex_out
        )
        ch = edition.change(edition_changed, edition, all_out)
        ch.then(explorer_pickers, [edition, ex_task, ex_a], [ex_bval, ex_nm]).then(
            refresh_explorer, ex_filters, ex_out
        )
        search.submit(leaderboard, [edition, search], [lb_table, lb_plot, csv_button])
        search.change(leaderboard, [edition, search], [lb_table, lb_plot, csv_button])
        bd_task.change(breakdown, [edition, bd_task], [bd_table, bd_plot, nm_table])
        for comp in (ex_task, ex_a):
            comp.input(explorer_pickers, [edition, ex_task, ex_a], [ex_bval, ex_nm]).then(
                refresh_explorer, ex_filters, ex_out
            )
        for comp in (ex_b, ex_verdict, ex_pair, ex_bval, ex_nm):
            comp.input(refresh_explorer, ex_filters, ex_out)
        ex_search.submit(refresh_explorer, ex_filters, ex_out)
        ex_page.submit(refresh_explorer, ex_filters, ex_out)
        ex_id.input(open_example, [edition, ex_task, ex_a, ex_b, ex_id], view_out)

        def pick_row(table, evt):  # type: ignore[no-untyped-def]
            try:
                return table.iloc[evt.index[0]]["id"]
            except Exception:
                return gr.update()

        pick_row.__annotations__["evt"] = gr.SelectData  # resolved here: gradio injects the event

        ex_table.select(pick_row, ex_table, ex_id).then(
            open_example, [edition, ex_task, ex_a, ex_b, ex_id], view_out
        )
        for comp in (cmp_a, cmp_b):
            comp.change(compare, [edition, cmp_a, cmp_b], cmp_table)
    return demo


if __name__ == "__main__":
    build_app().launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
    )
