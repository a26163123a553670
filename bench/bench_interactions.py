"""Server time of the app's interactions with many full-size models (target: ≤ 300 ms each).

    python bench/bench_interactions.py [--models 100] [--repeat 5] [--json OUT.json]

Writes N synthetic result files of full v1 size (1,443 predictions each, half of them with
answer distributions; see ``yoxla.testing.boards``) next to the committed sample and suite
files, admits them against the synthetic rows, builds the app (which prepares every view of
every board: both editions and each suite), then runs each
event the way the server does, through ``Blocks.process_api``: preprocessing of the inputs,
the handler, and postprocessing of every output (tables and figures serialised, download
files registered). Network and browser rendering are not included. Prints, per interaction,
the median and the slowest of ``--repeat`` runs (each run on different models or values).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_MS = 300.0


def find_fn(demo: Any, component: Any, event: str) -> Any:
    """The Python handler of ``component``'s ``event`` (the first one with a function)."""
    for fn in demo.fns.values():
        if fn.fn is not None and any(t[0] == component._id and t[1] == event for t in fn.targets):
            return fn
    raise LookupError(f"no {event} handler on {component}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write slowest_ms and each interaction's median and slowest here")
    args = ap.parse_args()

    from gradio.state_holder import SessionState

    import app
    from yoxla.board import calibration as calib
    from yoxla.testing.boards import synthetic_board, synthetic_v1, write_synthetic_folder

    t0 = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="yoxla-bench-")) / "results"
    data = synthetic_v1()
    write_synthetic_folder(folder, args.models, data=data)
    print(f"wrote {args.models} full-size v1 files in {time.perf_counter() - t0:.1f} s", flush=True)
    t0 = time.perf_counter()
    board = synthetic_board(folder, data)
    t1 = time.perf_counter()
    demo = app.build_app(board=board)
    t2 = time.perf_counter()
    print(f"admitted in {t1 - t0:.1f} s; built and prepared the app in {t2 - t1:.1f} s", flush=True)

    from yoxla.views.base import Context
    from yoxla.views.breakdowns import by_fields

    ctx: Context = demo.yoxla_context
    views = ctx.views
    state = SessionState(demo)
    v1 = ctx.prepared.edition("v1")
    keys = [v.key for v in v1.all_models()]
    results: dict[str, list[float]] = {}

    def run(label: str, component: Any, event: str, inputs: list[Any]) -> None:
        """One event; when it asks a tab to render (a trigger), that render too, as the page does."""
        fn = find_fn(demo, component, event)
        before = {k: state[t._id] if t._id in state else None for k, t in ctx.triggers.items()}
        t = time.perf_counter()
        asyncio.run(demo.process_api(fn, inputs, state=state))
        for tab_id, trig in ctx.triggers.items():
            if trig._id in state and state[trig._id] != before[tab_id] and views[tab_id].outputs():
                asyncio.run(demo.process_api(find_fn(demo, trig, "change"), [None], state=state))
        results.setdefault(label, []).append(1000 * (time.perf_counter() - t))

    def looking_at(tab_id: str) -> None:
        """The page shows ``tab_id``; no tab has been rendered yet for either edition."""
        state[ctx.current._id] = tab_id
        state[ctx.rendered._id] = {}

    def values(comps: list[Any], overrides: dict[Any, Any]) -> list[Any]:
        return [overrides.get(c, getattr(c, "value", None)) for c in comps]

    def each(label: str, make: Callable[[int], tuple[Any, str, list[Any]]]) -> None:
        for i in range(args.repeat):
            component, event, inputs = make(i)
            run(label, component, event, inputs)

    lb, model, explorer = views["leaderboard"], views["model"], views["explorer"]
    suites = [b for b in ctx.prepared.editions if b.startswith("suite:")]
    for tab_id in views:  # switching edition re-renders the tab being looked at
        looking_at(tab_id)
        each(
            f"switch edition ({tab_id} tab open)",
            lambda i: (ctx.edition, "input", ["v1" if i % 2 == 0 else "sample", None]),
        )
    for tab_id in views:  # and so does switching to a suite's board
        looking_at(tab_id)
        each(
            f"switch to a suite board ({tab_id} tab open)",
            lambda i: (ctx.edition, "input", [suites[i % len(suites)], None]),
        )
    for tab_id in views:  # opening a tab renders it (once per edition)
        tab = next(
            b
            for b in demo.blocks.values()
            if getattr(b, "id", None) == tab_id and b.__class__.__name__ == "Tab"
        )

        def opened(i: int, tab: Any = tab) -> tuple[Any, str, list[Any]]:
            looking_at("leaderboard")
            return tab, "select", ["v1" if i % 2 == 0 else "sample", None]

        each(f"open the {tab_id} tab", opened)
    each("open a model page", lambda i: (model.picker, "input", [keys[(7 * i + 3) % len(keys)]]))
    bd = views["breakdowns"]
    bd_tasks = bd.task_ids(ctx, "v1")
    each("breakdowns: pick a task", lambda i: (bd.picker, "input", ["v1", bd_tasks[i % len(bd_tasks)]]))
    fields = [(t, f.name) for t in bd_tasks for f in by_fields(v1, t)]  # every field of every task
    each("breakdowns: pick a field", lambda i: (bd.by, "input", ["v1", *fields[(5 * i + 1) % len(fields)]]))
    filters = lb.filter_inputs()
    each(
        "leaderboard: search",
        lambda i: (
            lb.search,
            "input",
            ["v1", *values(filters, {lb.search: ["model-0", "gpt", "org/model-1"][i % 3]})],
        ),
    )
    each(
        "leaderboard: filter provider and size",
        lambda i: (lb.size, "input", ["v1", *values(filters, {lb.providers: ["vllm"], lb.size: "4–15B"})]),
    )
    each(
        "leaderboard: show task columns and intervals",
        lambda i: (lb.columns, "input", ["v1", *values(filters, {lb.columns: ["task scores", "intervals"]})]),
    )
    ex_filters = explorer.filters()
    tids = v1.standard.task_ids

    def explorer_inputs(i: int, **over: Any) -> list[Any]:
        base = {
            explorer.task: tids[i % len(tids)],
            explorer.a: keys[i % len(keys)],
            explorer.b: "",
            explorer.verdict: "all",
            explorer.pair: "any",
            explorer.bval: "",
            explorer.nm: "",
            explorer.search: "",
            explorer.page: 1,
        }
        base.update({getattr(explorer, k): v for k, v in over.items()})
        return ["v1", *values(ex_filters, base)]

    each("explorer: pick model A (reads its file)", lambda i: (explorer.a, "input", explorer_inputs(i)))
    each(
        "explorer: filter wrong answers",
        lambda i: (explorer.verdict, "input", explorer_inputs(0, verdict="wrong")),
    )
    each(
        "explorer: A vs B, they differ",
        lambda i: (explorer.pair, "input", explorer_inputs(0, b=keys[1], pair="they differ")),
    )
    each("explorer: text search", lambda i: (explorer.search, "submit", explorer_inputs(0, search="a")))
    compare = views["compare"]
    each("compare two models", lambda i: (compare.a, "input", ["v1", keys[i + 2], keys[0]]))
    cal = views["calibration"]
    scopes = [s for _, s in cal._data(ctx, v1).scopes]  # type: ignore[attr-defined]
    with_probs = [k for _, k in calib.model_choices(cal._data(ctx, v1), "overall")]  # type: ignore[attr-defined]
    each(
        "calibration: pick a task (or block)",
        lambda i: (cal.scope, "input", ["v1", scopes[(3 * i + 1) % len(scopes)], with_probs[0]]),
    )
    each(
        "calibration: pick a model (reliability diagram)",
        lambda i: (
            cal.model,
            "input",
            ["v1", scopes[i % len(scopes)], with_probs[(5 * i + 2) % len(with_probs)]],
        ),
    )

    print(f"\n{'interaction':<48} {'median':>8} {'slowest':>8}")
    worst = 0.0
    for label, ms in results.items():
        worst = max(worst, max(ms))
        print(f"{label:<48} {statistics.median(ms):>6.0f}ms {max(ms):>6.0f}ms")
    print(
        f"\nslowest interaction: {worst:.0f} ms (target ≤ {TARGET_MS:.0f} ms): {worst / TARGET_MS:.2f}× the target"
    )
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    print(f"load average: {' '.join(load) or '?'}")
    if args.json:
        import json

        body = {
            "models": args.models,
            "repeat": args.repeat,
            "slowest_ms": worst,
            "target_ms": TARGET_MS,
            "load_average": " ".join(load),
            "interactions": {
                label: {"median_ms": statistics.median(ms), "slowest_ms": max(ms)}
                for label, ms in results.items()
            },
        }
        Path(args.json).write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
