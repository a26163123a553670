"""Compare two models: A − B per task, block and overall, paired intervals, McNemar's test."""

from __future__ import annotations

from typing import Any

import gradio as gr
import numpy as np
import pandas as pd

from yoxla.board.bootstrap import mcnemar, paired_interval
from yoxla.board.loading import headline
from yoxla.board.prepared import Ranked, group_score
from yoxla.views import plot
from yoxla.views.base import Context, Table, Update, View, keep_or_first
from yoxla.views.common import components
from yoxla.views.format import task_kind, task_short

INTRO = (
    "Two models of the standard board (of an edition or a suite). Both were scored on the same examples, "
    "so their difference has a paired bootstrap interval; for choice tasks (and suite tasks scored right "
    "or wrong) McNemar's exact test counts the items one got right and the other wrong."
)
HIDDEN = ["A − B low", "A − B high"]  # the interval's ends: in the CSV, not in the shown table


def compare_table(r: Ranked, key_a: str, key_b: str) -> pd.DataFrame:
    """A minus B per task, group (the benchmark's blocks) and overall, with paired bootstrap
    intervals and McNemar's test."""
    cols = [
        "Level",
        "Name",
        "A",
        "B",
        "A − B",
        "95% interval of A − B",
        "Real difference?",
        "Items",
        "A right, B wrong",
        "A wrong, B right",
        "McNemar p",
        "A − B low",
        "A − B high",
    ]
    ia, ib = r.index(key_a), r.index(key_b)
    if ia is None or ib is None or r.boot is None:
        return pd.DataFrame(columns=cols)
    a, b, boot = r.models[ia], r.models[ib], r.boot
    out: list[dict[str, Any]] = []

    def items(block: str | None = None) -> dict[str, Any]:  # a row's n: its tasks' items, which differ
        inside = r.group_tasks.get(block, []) if block is not None else boot.task_ids
        return {"items": sum(len(a.tasks[t].ids) for t in boot.task_ids if t in inside)}

    def row(
        level: str, name: str, sa: float, sb: float, ra: np.ndarray, rb: np.ndarray, extra: dict[str, Any]
    ) -> None:
        lo, hi = paired_interval(ra, rb)
        real = "yes" if lo > 0 or hi < 0 else "no: interval includes 0"
        out.append(
            {
                "Level": level,
                "Name": name,
                "A": round(sa, 1),
                "B": round(sb, 1),
                "A − B": round(sa - sb, 1),
                "95% interval of A − B": f"{lo:+.1f} to {hi:+.1f}",
                "Real difference?": real,
                "Items": extra.get("items", ""),
                "A right, B wrong": extra.get("n10", ""),
                "A wrong, B right": extra.get("n01", ""),
                "McNemar p": extra.get("p", ""),
                "A − B low": lo,
                "A − B high": hi,
            }
        )

    if boot.task_ids:
        row(
            "overall",
            r.headline,
            headline(a),
            headline(b),
            boot.yoxla_reps[ia],
            boot.yoxla_reps[ib],
            items(),
        )
    for bi, blk in enumerate(boot.blocks):  # the groups the headline averages (none: "suite", no row)
        if np.isfinite(group_score(a, blk)):
            row(
                "block",
                r.group_title(blk),
                group_score(a, blk),
                group_score(b, blk),
                boot.block_reps[ia, bi],
                boot.block_reps[ib, bi],
                items(blk),
            )
    for ti, tid in enumerate(boot.task_ids):
        ta, tb = a.tasks[tid], b.tasks[tid]
        extra: dict[str, Any] = {"items": len(ta.ids)}
        kind = task_kind(tid)
        binary = (
            kind == "classification"
            if kind is not None
            else bool(np.isin(ta.scores, (0.0, 1.0)).all() and np.isin(tb.scores, (0.0, 1.0)).all())
        )
        if binary and ta.ids == tb.ids:
            n10, n01, p = mcnemar(ta.scores >= 1.0, tb.scores >= 1.0)
            extra.update(n10=str(n10), n01=str(n01), p=f"{p:.3f}" if p >= 0.001 else "<0.001")
        row("task", tid, ta.score, tb.score, boot.task_reps[ia, ti], boot.task_reps[ib, ti], extra)
    return pd.DataFrame(out, columns=cols)


def compare_figure(table: pd.DataFrame, edition: str) -> plot.Figure:
    title = "A − B with paired 95% intervals (right of 0: A is better)"
    if table.empty:
        return plot.empty_figure(title, "Pick two different re-checked models of this board to compare them.")
    names = [
        task_short(n) if lvl == "task" else n for lvl, n in zip(table["Level"], table["Name"], strict=True)
    ]
    data = [
        plot.dots(
            [float(x) for x in table["A − B"]],
            names,
            list(table["A − B low"]),
            list(table["A − B high"]),
            name="A − B (paired 95% interval)",
            color=plot.OKABE_ITO[0],
            what="A − B",
        )
    ]
    return plot.figure(
        data,
        title,
        "difference in score points",
        "level",
        height=plot.ROW_PX * len(names) + 200,
        yaxis=plot.category_axis(names, "level"),
        shapes=plot.vline(0.0, "#000000", "solid"),
    )


class CompareView(View):
    tab_id = "compare"
    title = "Compare"

    def build(self, ctx: Context) -> None:
        gr.Markdown(INTRO)
        with gr.Row():
            self.a = gr.Dropdown([], label="Model A", elem_id="compare-a", allow_custom_value=True)
            self.b = gr.Dropdown([], label="Model B", elem_id="compare-b", allow_custom_value=True)
        self.plot = gr.Plot(label="A − B", elem_classes=["yoxla-plot"], elem_id="compare-plot")
        self.table = Table("A − B", "compare", elem_id="compare-table")

    def result_outputs(self) -> list[Any]:
        return components(self.plot, self.table)

    def outputs(self) -> list[Any]:
        return [self.a, self.b, *self.result_outputs()]

    def result(self, ctx: Context, edition: str, a: str | None, b: str | None) -> Update:
        ed = ctx.prepared.edition(edition)
        frame = (
            ctx.memo("compare", ed.name, a, b, make=lambda: compare_table(ed.standard, a or "", b or ""))
            if a and b and a != b
            else pd.DataFrame()
        )
        return {
            self.plot: ctx.plot("compare-fig", ed.name, a, b, make=lambda: compare_figure(frame, ed.name)),
            **self.table.update(
                ctx.downloads,
                frame.drop(columns=HIDDEN) if not frame.empty else frame,
                csv=frame,
                empty="Pick two different re-checked models of this board.",
                stem=f"compare-{ed.name.replace(':', '-')}",
            ),
        }

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        choices = [(f"{v.name} · {v.provider}", v.key) for v in ed.standard.models]
        keys = [k for _, k in choices]
        a = keep_or_first(None, choices)
        b = keys[1] if len(keys) > 1 else None
        return {
            self.a: gr.update(choices=choices, value=a),
            self.b: gr.update(choices=choices, value=b),
            **self.result(ctx, ed.name, a, b),
        }

    def wire(self, ctx: Context) -> None:
        for comp in (self.a, self.b):
            comp.input(
                lambda ed, a, b: self.result(ctx, ed, a, b),
                [ctx.edition, self.a, self.b],
                self.result_outputs(),
            )
