"""plotly figures built from the tables. Names and values go in as data, never as HTML."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from yoxla.leaderboard import tables
from yoxla.leaderboard.board import Board


def _go() -> Any:
    import plotly.graph_objects as go

    return go


def _plain(text: Any) -> str:
    """plotly renders a small HTML subset in labels; escape the angle brackets of data."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _empty(title: str) -> Any:
    go = _go()
    fig = go.Figure()
    fig.update_layout(title=title, annotations=[{"text": "no admitted results", "showarrow": False}])
    return fig


def leaderboard_figure(df: pd.DataFrame) -> Any:
    """YOXLA score with its 95% interval, one dot per model."""
    if df.empty:
        return _empty("YOXLA score")
    go = _go()
    ci = df["YOXLA 95% CI"].str.split(" – ", expand=True).astype(float)
    d = df.assign(lo=ci[0], hi=ci[1]).sort_values("YOXLA")
    fig = go.Figure(_interval_dots(go, d["YOXLA"], d["Model"], d["lo"], d["hi"]))
    fig.update_layout(
        title="YOXLA score with 95% bootstrap interval",
        xaxis_title="score",
        height=max(300, 28 * len(d) + 120),
    )
    return fig


def _interval_dots(go: Any, x: Any, models: Any, lo: Any, hi: Any, name: str | None = None) -> Any:
    """One dot per model with its (asymmetric) interval as an error bar."""
    return go.Scatter(
        x=x,
        y=[_plain(m) for m in models],
        mode="markers",
        name=name,
        error_x={"type": "data", "symmetric": False, "array": hi - x, "arrayminus": x - lo},
    )


def block_figure(board: Board, edition: str, block: str) -> Any:
    d = tables.block_long(board, edition, block)
    if d.empty:
        return _empty(tables.block_title(block))
    go = _go()
    fig = go.Figure()
    for task, g in d.groupby("Task", sort=False):
        fig.add_trace(_interval_dots(go, g["Score"], g["Model"], g["Low"], g["High"], name=str(task)))
    fig.update_layout(
        title=f"{tables.block_title(block)}: task scores with 95% intervals",
        xaxis_title="task score",
        height=max(320, 30 * d["Model"].nunique() + 140),
    )
    return fig


def spreads_figure(board: Board, edition: str) -> Any:
    d = tables.task_scores_long(board, edition)
    if d.empty:
        return _empty("Task spreads")
    order = tables.spreads_table(board, edition)["Task"].tolist()
    go = _go()
    rng = np.random.default_rng(0)
    fig = go.Figure()
    for i, task in enumerate(order):
        g = d[d["Task"] == task]
        fig.add_trace(
            go.Scatter(
                x=g["Score"],
                y=i + rng.uniform(-0.15, 0.15, len(g)),
                mode="markers",
                name=task,
                text=[_plain(m) for m in g["Model"]],
                hovertemplate="%{text}: %{x:.1f}<extra></extra>",
                showlegend=False,
            )
        )
    fig.update_layout(
        title="Task scores across models (sorted by range)",
        yaxis={
            "tickmode": "array",
            "tickvals": list(range(len(order))),
            "ticktext": order,
            "autorange": "reversed",
        },
        xaxis_title="task score",
        height=max(360, 40 * len(order) + 120),
    )
    return fig


def breakdown_heatmap(board: Board, edition: str, task_id: str) -> Any:
    acc, cnt = tables.breakdown_table(board, edition, task_id)
    if acc.empty:
        return _empty(f"{task_id} breakdown")
    go = _go()
    z = acc.to_numpy(dtype=float)
    n = cnt.reindex(index=acc.index, columns=acc.columns).fillna(0).to_numpy()
    text = [
        [("—" if np.isnan(a) else f"{a:.0f}") + f"<br>n={int(k)}" for a, k in zip(ra, rn, strict=True)]
        for ra, rn in zip(z, n, strict=True)
    ]
    low = n < tables.BREAKDOWN_MIN_N
    axes = {
        "x": [_plain(c) for c in acc.columns],
        "y": [_plain(m) for m in acc.index],
        "text": text,
        "texttemplate": "%{text}",
        "hoverongaps": False,
    }
    fig = go.Figure(
        [
            go.Heatmap(
                z=np.where(low, np.nan, z),
                colorscale="Viridis",
                zmin=0,
                zmax=100,
                name="enough items",
                **axes,
            ),
            # Few items: the value is still shown, on grey, so nobody reads it as a finding.
            go.Heatmap(
                z=np.where(low, z, np.nan),
                colorscale=[[0, "#d0d0d0"], [1, "#d0d0d0"]],
                showscale=False,
                name="few items",
                **axes,
            ),
        ]
    )
    fig.update_layout(
        title=f"{tables.breakdown_key(task_id)} (grey: fewer than {tables.BREAKDOWN_MIN_N} items)",
        plot_bgcolor="#d0d0d0",
        height=max(320, 30 * len(acc) + 160),
    )
    return fig


def span_figure(board: Board, edition: str) -> Any:
    d = tables.span_table(board, edition)
    if d.empty:
        return _empty("Span recall vs precision")
    go = _go()
    fig = go.Figure()
    for task, g in d.groupby("Task"):
        fig.add_trace(
            go.Scatter(
                x=g["Span precision"],
                y=g["Span recall"],
                mode="markers",
                name=str(task),
                text=[_plain(m) for m in g["Model"]],
                hovertemplate="%{text}: precision %{x:.1f}, recall %{y:.1f}<extra></extra>",
            )
        )
    fig.update_layout(title="Span recall vs precision", xaxis_title="precision", yaxis_title="recall")
    return fig


def near_miss_figure(board: Board, edition: str, task_id: str | None) -> Any:
    d = tables.near_miss_table(board, edition, task_id)
    kinds = [c for c in d.columns if c not in ("Model", "Invalid outputs")]
    if d.empty or not kinds:
        return _empty("Invalid outputs by near-miss kind (none)")
    go = _go()
    fig = go.Figure()
    for k in kinds:
        fig.add_trace(go.Bar(x=[_plain(m) for m in d["Model"]], y=d[k], name=k))
    fig.update_layout(barmode="stack", title="Invalid outputs by near-miss kind", yaxis_title="outputs")
    return fig
