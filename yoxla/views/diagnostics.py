"""Diagnostics: every metric the evaluators compute, invalid outputs, and why span scores move."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import gradio as gr
import pandas as pd

from yoxla.admission.verdict import TaskRecord, Verdict
from yoxla.views import plot
from yoxla.views.base import Context, Table, TaskPickerView, Update, keep_or_first
from yoxla.views.format import metric_keys, metric_label, metric_text, task_kind, task_short

WHY = """### Why did the score move? Span recall against token F1
The span tasks are scored by **span recall** on character offsets, with 0 when the quote reaches
outside the sentences the gold occupies. **Token F1** (the usual SQuAD measure) credits any shared
word, so it forgives a quote that runs on into the next sentence and punishes a long quote that
still covers the gold. A model above the diagonal gains under F1 what the score refuses it (usually
over-long quotes); one below it quotes the right words with extra ones (precision lowers F1, not
recall). Quotes not found in the passage (rewritten or invented) score 0 under both. The table gives
each model's numbers and, from them, the main reason the two differ.
"""


def diagnostics_table(models: list[Verdict], task_id: str) -> pd.DataFrame:
    """Models x every scalar metric the task's evaluator computes (absent ones read n/a)."""
    keys = metric_keys(task_id, models)
    out = []
    for v in models:
        m = v.tasks[task_id].metrics if task_id in v.tasks else {}
        rec: dict[str, Any] = {"Model": v.name}
        for k in keys:
            rec[metric_label(k)] = metric_text(k, m.get(k))
        out.append(rec)
    return pd.DataFrame(out, columns=["Model", *[metric_label(k) for k in keys]])


def outcome_counts(t: TaskRecord) -> dict[str, int]:
    """Outcome counts of the scored examples: as the metrics store them, else from the predictions."""
    stored = t.metrics.get("outcomes")
    if isinstance(stored, dict):
        return {str(k): int(c) for k, c in stored.items()}
    keep = [o for i, o in enumerate(t.outcomes) if t.control is None or not t.control[i]]
    return dict(Counter(keep))


def outcomes_table(models: list[Verdict], task_id: str) -> pd.DataFrame:
    out = []
    for v in models:
        rec: dict[str, Any] = {"Model": v.name}
        if task_id in v.tasks:
            rec.update(outcome_counts(v.tasks[task_id]))
        out.append(rec)
    df = pd.DataFrame(out)
    if df.empty:
        return pd.DataFrame(columns=["Model"])
    kinds = [c for c in df.columns if c != "Model"]
    df[kinds] = df[kinds].fillna(0).astype(int)
    return df


def near_miss_table(models: list[Verdict], task_id: str | None = None) -> pd.DataFrame:
    """Invalid outputs by near-miss kind, per model (one task, or all tasks)."""
    out = []
    for v in models:
        rec: dict[str, Any] = {"Model": v.name}
        total = 0
        for tid, t in v.tasks.items():
            if task_id and tid != task_id:
                continue
            for kind, c in (t.metrics.get("near_miss") or {}).items():
                rec[kind] = rec.get(kind, 0) + int(c)
            total += int(t.metrics.get("n", 0)) - int(t.metrics.get("n_valid", 0))
        rec["Invalid outputs"] = total
        out.append(rec)
    df = pd.DataFrame(out)
    if df.empty:
        return pd.DataFrame(columns=["Model", "Invalid outputs"])
    kinds = [c for c in df.columns if c not in ("Model", "Invalid outputs")]
    df[kinds] = df[kinds].fillna(0).astype(int)
    return df[["Model", "Invalid outputs", *kinds]]


def span_tasks(task_ids: Iterable[str]) -> list[str]:
    return [t for t in task_ids if task_kind(t) in ("span", "abstention")]


def span_why(v: Verdict, task_id: str) -> str:
    """Why span recall and token F1 disagree for one model, from its own numbers (our words)."""
    m = v.tasks[task_id].metrics
    rec, f1 = float(m.get("span_recall", 0.0)), float(m.get("token_f1", 0.0))
    prec, over = float(m.get("span_precision", 0.0)), float(m.get("over_sentence_rate", 0.0))
    uns, inv = float(m.get("unsupported_rate", 0.0)), float(m.get("invalid_output_rate", 0.0))
    bits = []
    if over >= 0.1:
        bits.append(
            f"{100 * over:.0f}% of quotes reach outside the gold's sentence (recall 0, F1 keeps the overlap)"
        )
    if uns >= 0.1:
        bits.append(f"{100 * uns:.0f}% of quotes are not in the passage (rewritten or invented)")
    if prec < 0.6 and rec >= 0.5:
        bits.append(f"quotes are long: precision {100 * prec:.0f}% lowers F1, not recall")
    if inv >= 0.1:
        bits.append(f"{100 * inv:.0f}% invalid outputs score 0 on both")
    if not bits:
        bits.append(
            "recall and F1 move together"
            if abs(rec - f1) < 0.1
            else "partial quotes: F1 credits shared words"
        )
    return "; ".join(bits)


def span_table(models: list[Verdict], task_ids: Iterable[str]) -> pd.DataFrame:
    """Span recall (the score) against token F1 and what moves them apart, per model and span task."""
    cols = [
        "Model",
        "Task",
        "Span recall",
        "Token F1",
        "F1 − recall",
        "Span precision",
        "Exact span",
        "Over sentence",
        "Unsupported",
        "Why they differ",
    ]
    out = []
    for tid in span_tasks(task_ids):
        for v in models:
            m = v.tasks[tid].metrics
            rec = 100 * float(m.get("span_recall", 0.0))
            f1 = 100 * float(m.get("token_f1", 0.0))
            out.append(
                {
                    "Model": v.name,
                    "Task": tid,
                    "Span recall": round(rec, 1),
                    "Token F1": round(f1, 1),
                    "F1 − recall": round(f1 - rec, 1),
                    "Span precision": round(100 * float(m.get("span_precision", 0.0)), 1),
                    "Exact span": round(100 * float(m.get("exact_span_rate", 0.0)), 1),
                    "Over sentence": round(100 * float(m.get("over_sentence_rate", 0.0)), 1),
                    "Unsupported": round(100 * float(m.get("unsupported_rate", 0.0)), 1),
                    "Why they differ": span_why(v, tid),
                }
            )
    return pd.DataFrame(out, columns=cols)


def near_miss_figure(models: list[Verdict], task_id: str | None, edition: str) -> plot.Figure:
    title = f"Invalid outputs by near-miss kind ({task_id or 'all tasks'})"
    if not models:
        return plot.empty_figure(title, plot.no_models_message(edition))
    d = near_miss_table(models, task_id)
    d = d[d["Invalid outputs"] > 0].sort_values("Invalid outputs", ascending=False).head(plot.MAX_PLOT_MODELS)
    kinds = [c for c in d.columns if c not in ("Model", "Invalid outputs")]
    if d.empty:
        return plot.empty_figure(
            title, "No invalid output: every answer parsed, so there is no near miss to show."
        )
    names = [plot.plain(m) for m in d["Model"]]
    unclassified = d["Invalid outputs"] - (d[kinds].sum(axis=1) if kinds else 0)
    series = [(k, d[k]) for k in kinds] + (
        [("not classified", unclassified)] if (unclassified > 0).any() else []
    )
    data = [
        {
            "type": "bar",
            "y": names,
            "x": [int(x) for x in values],
            "name": plot.plain(k),
            "orientation": "h",
            "marker": {"color": plot.OKABE_ITO[j % len(plot.OKABE_ITO)]},
            "hovertemplate": "%{y}<br>" + plot.plain(k) + ": %{x} output(s)<extra></extra>",
        }
        for j, (k, values) in enumerate(series)
    ]
    return plot.figure(
        data,
        title + " · models with invalid outputs",
        "invalid outputs",
        "model",
        height=max(300, plot.ROW_PX * len(names) + 190),
        barmode="stack",
        yaxis=plot.category_axis(names, "model"),
    )


def span_figure(models: list[Verdict], task_ids: list[str], edition: str) -> plot.Figure:
    """Why did the score move: span recall (the score) against token F1, per model and span task."""
    title = "Span recall (the score) against token F1"
    if not models:
        return plot.empty_figure(title, plot.no_models_message(edition))
    d = span_table(models[: plot.MAX_PLOT_MODELS], task_ids)
    if d.empty:
        return plot.empty_figure(title, "This board has no span task.")
    data: list[dict[str, Any]] = []
    for j, (task, g) in enumerate(d.groupby("Task", sort=False)):
        data.append(
            {
                "type": "scatter",
                "x": plot.json_numbers(g["Span recall"]),
                "y": plot.json_numbers(g["Token F1"]),
                "mode": "markers",
                "name": str(task),
                "marker": {
                    "color": plot.OKABE_ITO[j % len(plot.OKABE_ITO)],
                    "size": 9,
                    "symbol": ["circle", "diamond"][j % 2],
                },
                "customdata": [
                    [plot.plain(m), float(p), float(o)]
                    for m, p, o in zip(g["Model"], g["Span precision"], g["Over sentence"], strict=True)
                ],
                "hovertemplate": "%{customdata[0]}<br>span recall %{x:.1f}, token F1 %{y:.1f}<br>"
                "precision %{customdata[1]:.1f}, over sentence %{customdata[2]:.1f}%<extra></extra>",
            }
        )
    data.append(plot.line_trace([0, 100], "F1 = recall", {"color": "#999999", "dash": "dot"}))
    cut = f" (best {plot.MAX_PLOT_MODELS} of {len(models)})" if len(models) > plot.MAX_PLOT_MODELS else ""
    return plot.figure(
        data,
        title + cut + "<br><sup>above the line: F1 credits words the score does not</sup>",
        "span recall %",
        "token F1 %",
        height=480,
        xaxis=plot.axis("span recall %", range=[-2, 102]),
        yaxis=plot.axis("token F1 %", range=[-2, 102]),
    )


class DiagnosticsView(TaskPickerView):
    tab_id = "diagnostics"
    title = "Diagnostics"

    def build(self, ctx: Context) -> None:
        tids = ctx.prepared.board.task_ids(ctx.prepared.default_edition())
        self.picker = gr.Dropdown(
            [(f"{task_short(t)} · {t}", t) for t in tids],
            value=tids[0],
            label="Task",
            elem_id="diagnostics-task",
            allow_custom_value=True,
        )
        self.metrics = Table(
            "Every metric of this task (n/a: not defined, e.g. no valid answer)",
            "diagnostics",
            elem_id="diag-metrics",
        )
        self.outcomes = Table("Outcomes (items)", "outcomes", elem_id="diag-outcomes")
        self.near_miss_plot = gr.Plot(
            label="Near misses", elem_classes=["yoxla-plot"], elem_id="near-miss-plot"
        )
        self.near_miss = Table("Invalid outputs by near-miss kind", "near-miss", elem_id="diag-near-miss")
        gr.Markdown(WHY)
        self.span_plot = gr.Plot(
            label="Span recall vs token F1", elem_classes=["yoxla-plot"], elem_id="span-plot"
        )
        self.span = Table("Span recall, token F1 and what moves them apart", "span-why", elem_id="span-table")

    def page_outputs(self) -> list[Any]:
        return [*self.metrics.outputs, *self.outcomes.outputs, self.near_miss_plot, *self.near_miss.outputs]

    def outputs(self) -> list[Any]:
        return [self.picker, *self.page_outputs(), self.span_plot, *self.span.outputs]

    def page(self, ctx: Context, edition: str, task_id: str | None) -> Update:
        ed = ctx.prepared.edition(edition)
        task_id = keep_or_first(task_id, ed.standard.task_ids)
        models = ed.standard.models
        none = f"No re-checked result file on {ed.label} yet."
        stem = f"{ed.name.replace(':', '-')}-{task_id}"
        return {
            **self.metrics.update(
                ctx.downloads,
                ctx.memo("diag", ed.name, task_id, make=lambda: diagnostics_table(models, task_id)),
                empty=none,
                stem=f"diagnostics-{stem}",
            ),
            **self.outcomes.update(
                ctx.downloads, outcomes_table(models, task_id), empty=none, stem=f"outcomes-{stem}"
            ),
            self.near_miss_plot: ctx.plot(
                "nm-fig", ed.name, task_id, make=lambda: near_miss_figure(models, task_id, ed.label)
            ),
            **self.near_miss.update(
                ctx.downloads, near_miss_table(models, task_id), empty=none, stem=f"near-miss-{stem}"
            ),
        }

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        task_id = keep_or_first((params or {}).get("task"), ed.standard.task_ids)
        models = ed.standard.models
        span = ctx.memo("span", ed.name, make=lambda: span_table(models, ed.standard.task_ids))
        from yoxla.views.tasks import task_choices

        return {
            self.picker: gr.update(choices=task_choices(ed), value=task_id),
            **self.page(ctx, ed.name, task_id),
            self.span_plot: ctx.plot(
                "span-fig", ed.name, make=lambda: span_figure(models, ed.standard.task_ids, ed.label)
            ),
            **self.span.update(
                ctx.downloads,
                span,
                empty=f"No re-checked result file on {ed.label} yet."
                if not models
                else f"{ed.label} has no span task.",
                stem=f"span-{ed.name.replace(':', '-')}",
            ),
        }
