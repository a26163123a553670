"""The YOXLA leaderboard Space: the page frame and the wiring; each tab is a view module.

Data work (admission, intervals, floors, tables, figures) lives in ``yoxla.board``;
each tab is one module of ``yoxla.views`` that builds its section and wires its
events from one shared, read-only :class:`~yoxla.board.prepared.Prepared`. Nothing is
loaded at import: ``build_app()`` admits the files under ``results/``, prepares everything
the views read, and builds the page. Every string from a result file or a dataset is shown
in text components, never as HTML or Markdown, but for the leaderboard's model names: escaped
(``texts.md``) and linked only to a checked https model card (``views.leaderboard_tables.model_cell``).
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Callable
from typing import Any

CSS = """
.yoxla-table th, .yoxla-table th * { word-break: normal !important; overflow-wrap: normal !important;
  hyphens: none !important; }
.yoxla-csv { max-width: 14em; }
#rank-rule { font-size: 0.92em; color: var(--body-text-color-subdued); }
.yoxla-plot [data-testid="block-label"] { display: none !important; }  /* the figure has its own title */
@media (max-width: 640px) {  /* a phone: the top model's name and score on the first screen */
  #intro p { display: none; }  /* the board's own first line says what it is */
  #intro h1 { font-size: 1.5em; margin: 0; }
  :is(#status, #lb-count, #rank-rule, #lb-note) :is(.prose, .prose *) { font-size: 12px !important;
    line-height: 1.35 !important; margin-top: 0 !important; margin-bottom: 0 !important; }
}
"""


def say(message: str) -> None:
    print(f"[yoxla] {message}", flush=True)


def build_app(
    results_dir: str | os.PathLike[str] | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    data_dir: str | None = None,
    trusted_keys: str | None = None,
    board: Any = None,
    log: Callable[[str], None] | None = None,
    warm: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> Any:
    """The page on an admitted board; ``warm=False`` leaves the views' preparation to ``demo.yoxla_warm()``;
    ``progress(done, total)`` hears each result file checked. ``root`` is the repository whose
    ``results/``, ``suites/``, ``annotations/`` and ``trusted_keys.json`` are read (default
    ``$YOXLA_ROOT``, else the working directory; ``$YOXLA_RESULTS_DIR``, ``$YOXLA_SUITES_DIR``
    and ``$YOXLA_ANNOTATIONS_DIR`` name single folders elsewhere)."""
    import gradio as gr

    from yoxla.admission.committed import CommittedSuites
    from yoxla.admission.gold import DataSource
    from yoxla.admission.rules import default_trusted_keys_path
    from yoxla.board.loading import default_results_dir, load_board
    from yoxla.board.prepared import default_annotations_root, prepare
    from yoxla.board.versions import last_updated
    from yoxla.contract.registry import repo_root, suites_root
    from yoxla.views import texts
    from yoxla.views.base import SET_PARAM_JS, set_param_js
    from yoxla.views.routing import resolve
    from yoxla.views.tabs import VIEWS, Context, Downloads

    note = log or (lambda _m: None)
    where = repo_root(root)
    board = board or load_board(
        results_dir or default_results_dir(where),
        data=DataSource(
            data_dir=data_dir or os.environ.get("YOXLA_DATA_DIR"),
            suites=CommittedSuites(root=suites_root(where)),
        ),
        trusted_keys=trusted_keys or default_trusted_keys_path(where),
        log=note,
        progress=progress,
    )
    note("computing intervals, ranks and floors")
    prepared = prepare(board, log=note)
    prepared.annotations_root = default_annotations_root(where)
    ctx = Context(prepared, Downloads())
    views = [cls() for cls in VIEWS]
    ctx.views = {v.tab_id: v for v in views}

    note("building the page")
    with gr.Blocks(title="YOXLA leaderboard") as demo:
        gr.Markdown(texts.INTRO, elem_id="intro")
        with gr.Row(equal_height=True):
            ctx.edition = gr.Dropdown(  # the board: an edition of the benchmark, or an eval suite
                ctx.prepared.board_choices(),
                value=ctx.prepared.default_edition(),
                label="Board: benchmark edition or eval suite",
                elem_id="edition",
                scale=1,
            )
            status = gr.Markdown(elem_id="status")
        ctx.rendered, ctx.current = gr.State({}), gr.State(views[0].tab_id)
        with gr.Tabs(elem_id="tabs") as ctx.tabs:
            for view in views:
                with gr.Tab(view.title, id=view.tab_id) as tab:
                    view.build(ctx)
                    ctx.triggers[view.tab_id] = trigger = gr.State(None)
                tab.select(None, js=set_param_js("tab", value=view.tab_id))
                tab.select(  # a tab renders when first opened, and again only when its edition is stale
                    lambda ed, done, v=view: {
                        ctx.current: v.tab_id,
                        **({} if done.get(v.tab_id) == ed else ctx.request(v.tab_id, ed, done)),
                    },
                    [ctx.edition, ctx.rendered],
                    [ctx.current, ctx.rendered, trigger],
                    show_progress="hidden",
                )
                if view.outputs():  # the render itself: only this view's outputs
                    trigger.change(  # a trigger reset to None (a reloaded session) renders nothing:
                        # gr.skip() leaves every output as it is ({} would read as one output's value)
                        lambda req, v=view: v.render(ctx, **req["args"]) if req else gr.skip(),
                        trigger,
                        view.outputs(),
                    )
        for view in views:
            view.wire(ctx)
        triggers = list(ctx.triggers.values())

        def status_line(board_id: str) -> str:
            ed = ctx.prepared.edition(board_id)
            when = last_updated(ctx.prepared, board_id)
            updated = f" Last updated {texts.code(when)}." if when else ""
            line = board.admission_line(ed.name)
            label = ed.label_md[:1].upper() + ed.label_md[1:]
            return f"**{label}:** {line}.{updated} Reasons under *Methodology*."

        def on_load(request):  # type: ignore[no-untyped-def]
            route = resolve(ctx.prepared, dict(request.query_params), tuple(ctx.triggers))
            tab = ctx.tab_for(route.edition, route.tab)
            return {
                ctx.edition: route.edition,
                ctx.tabs: gr.Tabs(selected=tab),
                ctx.current: tab,
                status: status_line(route.edition),
                **ctx.request(tab, route.edition, {}, route.params),
            }

        def on_board(board_id: str, current: str) -> dict[Any, Any]:
            tab = ctx.tab_for(board_id, current)
            moved = {ctx.tabs: gr.Tabs(selected=tab), ctx.current: tab} if tab != current else {}
            return {status: status_line(board_id), **moved, **ctx.request(tab, board_id, {})}

        on_load.__annotations__ = {"request": gr.Request}  # gradio injects the request
        top = [ctx.edition, ctx.tabs, ctx.current, status, ctx.rendered, *triggers]
        hide_tabs = ctx.hide_tabs_js()  # the tabs with nothing to show on the board
        demo.load(on_load, None, top, js=SET_PARAM_JS).then(None, ctx.edition, None, js=hide_tabs)
        ctx.edition.input(
            on_board, [ctx.edition, ctx.current], [status, ctx.tabs, ctx.current, ctx.rendered, *triggers]
        ).then(None, ctx.edition, None, js=hide_tabs).then(
            None,
            ctx.edition,
            None,
            js="(e) => { const set = window.yoxlaSetParam; set('model', null); set('task', null); "
            "const suite = String(e).startsWith('suite:'); set('suite', suite ? String(e).slice(6) : null); "
            "set('edition', suite ? null : e); }",
        )

    def prepare_views() -> None:  # every table and figure a view shows, for every board
        t0 = time.perf_counter()
        for board_id in ctx.prepared.editions:
            for view in views:
                view.warm(ctx, board_id)
        # What is prepared stays for the process's life: moved out of the collector's reach, so a
        # full collection (seconds over millions of per-prediction records) never lands in an event.
        gc.collect()
        gc.freeze()
        note(f"prepared every view's tables and figures ({time.perf_counter() - t0:.1f} s)")

    demo.yoxla_context, demo.yoxla_warm = ctx, prepare_views  # for main(), benches and tests
    if warm:
        prepare_views()
    return demo


def launch(demo: Any, **kwargs: Any) -> Any:
    """``demo.launch`` with the page's style sheet (Gradio 6 takes it at launch)."""
    return demo.launch(css=CSS, **kwargs)


def main() -> None:
    from yoxla.views.startpage import StartPage

    t0 = time.perf_counter()
    host = os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1")
    port = int(os.environ.get("GRADIO_SERVER_PORT", "7860"))
    page = StartPage(host, port)  # "checking N of M files" on the app's port until the board is ready
    if page.start():
        say(f"while the files are checked, http://{host}:{port} shows how far the check is")
    say("starting the YOXLA leaderboard (importing gradio)")
    from yoxla.score.sandbox import announce, isolation

    announce(isolation(), say)  # committed suites' Python runs at start-up: say when it is not sandboxed
    try:
        # The repository the Space serves: $YOXLA_ROOT, else where `python app.py` is started.
        demo = build_app(
            root=os.environ.get("YOXLA_ROOT") or os.getcwd(), log=say, warm=False, progress=page.update
        )
    finally:
        page.stop()
    _, url, _ = launch(demo, server_name=host, server_port=port, prevent_thread_lock=True, quiet=True)
    say(f"ready at {url} ({time.perf_counter() - t0:.1f} s); preparing every view's tables and figures")
    # Serving starts at once; a view opened meanwhile computes what it shows, then keeps it.
    threading.Thread(target=demo.yoxla_warm, name="yoxla-warm", daemon=True).start()
    demo.block_thread()


if __name__ == "__main__":
    main()
