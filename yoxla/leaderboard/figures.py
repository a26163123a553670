"""Plotly figures for every view, as plain JSON-ready dicts. Names go in as data, never as HTML.

A figure here is ``{"data": [traces], "layout": {...}}``, exactly what plotly.js draws;
building the dicts directly is about a hundred times faster than ``plotly.graph_objects``
(which validates and deep-copies a template per figure), and the app sends them serialised
once. Every figure has a title and axis titles, uses the Okabe-Ito palette (safe for the
common colour-vision deficiencies) or the viridis scale, says the exact number and interval
on hover, and, when there is nothing to draw, says what is missing instead of drawing empty
axes. Plots of many models show the best :data:`MAX_PLOT_MODELS` and say so in the title;
the tables next to them hold every model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from yoxla.leaderboard import breakdown, tables
from yoxla.leaderboard.admission import Verdict
from yoxla.leaderboard.prepared import EditionData, Ranked, group_score, headline
from yoxla.suite import load_suite

Figure = dict[str, Any]

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442")
FLOOR_COLOUR = "#D55E00"  # vermillion
CHANCE_COLOUR = "#000000"
HEATMAP_SCALE = "Viridis"
MAX_PLOT_MODELS = 40
ROW_PX = 22
GRID = "#e6e6e6"


def plain(text: Any) -> str:
    """plotly renders a small HTML subset in labels; escape the angle brackets of data."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _f(x: Any) -> float | None:
    """One number for JSON: NaN and infinities become null."""
    value = float(x)
    return value if math.isfinite(value) else None


def _num(values: Any) -> list[float | None]:
    """Numbers for JSON: NaN and infinities become null (a gap)."""
    out: list[float | None] = []
    for x in np.asarray(values, dtype=float).ravel():
        out.append(float(x) if math.isfinite(float(x)) else None)
    return out


def to_json(fig: Figure) -> str:
    return json.dumps(fig, ensure_ascii=False, allow_nan=False)


def _axis(title: str, **kw: Any) -> dict[str, Any]:
    return {"title": {"text": title}, "gridcolor": GRID, "zeroline": False, "automargin": True, **kw}


TITLE_AT_TOP = {"yref": "container", "y": 1.0, "yanchor": "top", "pad": {"t": 12}}


def figure(
    data: list[dict[str, Any]], title: str, x: str, y: str, height: int = 400, **layout: Any
) -> Figure:
    base: dict[str, Any] = {
        # at the very top (not centred in the margin), so panel titles under it never meet it
        "title": {"text": title, "x": 0.01, "xanchor": "left", **TITLE_AT_TOP},
        "xaxis": _axis(x),
        "yaxis": _axis(y),
        "colorway": list(OKABE_ITO),
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "font": {"size": 12},
        "margin": {"l": 10, "r": 10, "t": 70, "b": 50},
        "hoverlabel": {"namelength": -1},
        "height": int(height),
    }
    entries = [d for d in data if d.get("showlegend", True) and d.get("name")]
    if entries:
        # The legend sits at the foot of the figure (the title at its head), so the two never
        # overlap at any width; the bottom margin makes room for it wrapping onto a few lines.
        base["legend"] = {
            "orientation": "h",
            "yref": "container",
            "y": 0,
            "yanchor": "bottom",
            "xanchor": "left",
            "x": 0,
        }
        base["margin"]["b"] = 60 + 22 * min(4, len(entries))
        base["height"] = int(height) + 22 * min(4, len(entries))
    for k, v in layout.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            base[k] = {**base[k], **v}
        else:
            base[k] = v
    return {"data": data, "layout": base}


def empty_figure(title: str, message: str, width: int = 100) -> Figure:
    """No axes, a message that says what is missing (wrapped to lines of ``width`` characters)."""
    import textwrap

    lines = textwrap.wrap(" ".join(str(message).split()), width) or [""]
    return {
        "data": [],
        "layout": {
            "title": {"text": title, "x": 0.01, "xanchor": "left"},
            "xaxis": {"visible": False},
            "yaxis": {"visible": False},
            "plot_bgcolor": "#ffffff",
            "paper_bgcolor": "#ffffff",
            "height": 220,
            "annotations": [
                {
                    "text": "<br>".join(plain(line) for line in lines),
                    "showarrow": False,
                    "xref": "paper",
                    "yref": "paper",
                    "x": 0.5,
                    "y": 0.5,
                    "font": {"size": 15},
                }
            ],
        },
    }


def is_empty(fig: Figure) -> bool:
    return not fig["data"]


def no_models_message(edition: str) -> str:
    return f"No re-checked result file on {edition} yet: nothing to plot (see Submit to add one)."


def dots(
    x: Sequence[float],
    y: Sequence[str],
    lo: Sequence[float],
    hi: Sequence[float],
    *,
    name: str,
    color: str,
    what: str,
    showlegend: bool = True,
    xaxis: str = "x",
    yaxis: str = "y",
) -> dict[str, Any]:
    """One dot per row with its (asymmetric) 95% interval; hover says the exact numbers."""
    xs, los, his = (np.asarray(v, dtype=float) for v in (x, lo, hi))
    return {
        "type": "scatter",
        "x": _num(xs),
        "y": list(y),
        "mode": "markers",
        "name": name,
        "marker": {"color": color, "size": 8},
        "error_x": {
            "type": "data",
            "symmetric": False,
            "array": _num(his - xs),
            "arrayminus": _num(xs - los),
            "color": color,
            "thickness": 1.5,
        },
        "customdata": [[a, b] for a, b in zip(_num(los), _num(his), strict=True)],
        "hovertemplate": "%{y}<br>" + plain(what) + " %{x:.2f} (95% interval %{customdata[0]:.2f}–"
        "%{customdata[1]:.2f})<extra></extra>",
        "showlegend": showlegend,
        "xaxis": xaxis,
        "yaxis": yaxis,
    }


def _vline(
    x: float | None, color: str, dash: str, xref: str = "x", yref: str = "y domain"
) -> list[dict[str, Any]]:
    if x is None or not math.isfinite(x):
        return []
    return [
        {
            "type": "line",
            "x0": x,
            "x1": x,
            "y0": 0,
            "y1": 1,
            "xref": xref,
            "yref": yref,
            "line": {"color": color, "dash": dash, "width": 1.5},
        }
    ]


def reference_line(
    x: float | None, label: str, color: str, dash: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(shapes, traces): a vertical line at ``x`` and its legend entry; nothing when ``x`` is None."""
    if x is None or not math.isfinite(x):
        return [], []
    return _vline(x, color, dash), [_legend_line(f"{label} {x:.1f}", color, dash)]


def _legend_line(label: str, color: str, dash: str) -> dict[str, Any]:
    """A trace with no points that gives a reference line its legend entry."""
    return {
        "type": "scatter",
        "x": [None],
        "y": [None],
        "mode": "lines",
        "name": label,
        "line": {"color": color, "dash": dash},
        "hoverinfo": "skip",
    }


def reference_markers(
    floors: Sequence[float | None],
    chance: Sequence[float | None],
    y: Sequence[Any],
    labels: Sequence[str],
    size: int,
) -> list[dict[str, Any]]:
    """Per row a vertical tick at the best cue-only floor and a cross at the chance level."""
    out = []
    for values, name, symbol, colour, width, scale in (
        (floors, "best cue-only floor", "line-ns-open", FLOOR_COLOUR, 3, 1.0),
        (chance, "chance level", "x-thin-open", CHANCE_COLOUR, 2, 0.5),
    ):
        if all(v is None for v in values):
            continue
        out.append(
            {
                "type": "scatter",
                "x": list(values),
                "y": list(y),
                "mode": "markers",
                "name": name,
                "marker": {
                    "symbol": symbol,
                    "size": max(10, int(size * scale)),
                    "color": colour,
                    "line": {"width": width, "color": colour},
                },
                "customdata": list(labels),
                "hovertemplate": "%{customdata}: " + name + " %{x:.2f}<extra></extra>",
            }
        )
    return out


def _category_axis(names: list[str], title: str) -> dict[str, Any]:
    return _axis(title, type="category", autorange="reversed", categoryorder="array", categoryarray=names)


def _two_lines(text: str) -> str:
    """A label on at most two lines, broken at the space nearest its middle (``<br>`` kept)."""
    if "<br>" in text:
        return text
    words = text.split()
    if len(words) < 2:
        return text
    cut = min(range(1, len(words)), key=lambda i: abs(len(" ".join(words[:i])) - len(" ".join(words[i:]))))
    return " ".join(words[:cut]) + "<br>" + " ".join(words[cut:])


def _panel_title(text: str, x: float, size: int) -> dict[str, Any]:
    """A small-multiple panel's title above it (``text`` already escaped), centred at ``x``, on at
    most two lines so that narrow panels (a phone's width) keep their titles apart. Centred
    explicitly: Plotly's default anchor (``auto``) pins a title left of x under a third of the
    width and right of it over two thirds, so two panels' titles grow towards each other."""
    return {
        "text": _two_lines(text),
        "x": x,
        "xanchor": "center",
        "y": 1.0,
        "xref": "paper",
        "yref": "paper",
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": size},
    }


def _top(r: Ranked) -> tuple[list[int], str]:
    """Indices of the models to plot (the board's order, best first) and a title suffix when cut."""
    n = len(r.models)
    keep = list(range(min(n, MAX_PLOT_MODELS)))
    return keep, (f" (best {MAX_PLOT_MODELS} of {n}; the table has all)" if n > MAX_PLOT_MODELS else "")


def _score_axis(title: str = "score (0–100)") -> dict[str, Any]:
    return _axis(title, range=[-3, 103])


# Leaderboard ------------------------------------------------------------------------------------


def leaderboard_figure(ed: EditionData, group: str = "standard") -> Figure:
    """YOXLA with its 95% interval per model, and the best cue-only floor as a line."""
    r = ed.boards[group]
    h = ed.headline
    title = f"{h} with 95% bootstrap interval ({plain(ed.label)})"
    if r.empty:
        return empty_figure(title, no_models_message(ed.label))
    keep, cut = _top(r)
    names = [plain(r.models[i].name) for i in keep]
    data = [
        dots(
            [headline(r.models[i]) for i in keep],
            names,
            [float(r.yoxla_lo[i]) for i in keep],
            [float(r.yoxla_hi[i]) for i in keep],
            name="model (95% interval)",
            color=OKABE_ITO[0],
            what=h,
        )
    ]
    summary = ed.reference.summary(ed.block_tasks())
    shapes, legend = reference_line(
        summary["yoxla"] if summary else None, "best cue-only floor", FLOOR_COLOUR, "dash"
    )
    data += legend
    return figure(
        data,
        title + cut,
        f"{h} (0–100)",
        "model",
        height=max(300, ROW_PX * len(keep) + 170),
        yaxis=_category_axis(names, "model"),
        xaxis=_score_axis(f"{h} (0–100)"),
        shapes=shapes,
    )


# Blocks -----------------------------------------------------------------------------------------


BLOCK_COLUMNS = 2  # panels per row: wide enough for their titles and ticks on a phone's screen too


def block_figure(ed: EditionData, block: str) -> Figure:
    """Small multiples: the block score and each of its tasks in its own panel, models on rows;
    at most :data:`BLOCK_COLUMNS` panels a row, so no panel is too narrow for its title."""
    r = ed.standard
    title = f"{plain(ed.group_name(block))}: group and task scores"
    if r.empty:
        return empty_figure(title + " with 95% intervals", no_models_message(ed.label))
    keep, cut = _top(r)
    tids = ed.groups_of_tasks().get(block, [])
    panels = [None, *tids]
    names = [plain(r.models[i].name) for i in keep]
    cols = min(BLOCK_COLUMNS, len(panels))
    n_rows = -(-len(panels) // cols)
    gap, vgap = 0.04, 0.5 / max(1, len(keep))  # between panels; between rows (room for titles)
    vgap = min(0.12, max(0.04, vgap)) if n_rows > 1 else 0.0
    width = (1.0 - gap * (cols - 1)) / cols
    height_each = (1.0 - vgap * (n_rows - 1)) / n_rows
    data, shapes, annotations = [], [], []
    layout: dict[str, Any] = {}
    for c, panel in enumerate(panels):
        row, col = divmod(c, cols)
        label = "Group" if panel is None else tables.task_label(ed, panel)
        if panel is None:
            xs = [group_score(r.models[i], block) for i in keep]
            ivs = [r.block_interval(i, block) for i in keep]
        else:
            xs = [_task_score(r.models[i], panel) for i in keep]
            ivs = [r.task_interval(i, panel) for i in keep]
        ax = "x" if c == 0 else f"x{c + 1}"
        ay = "y" if row == 0 else f"y{row + 1}"
        lo_d = col * (width + gap)
        top = 1.0 - row * (height_each + vgap)
        layout["xaxis" if c == 0 else f"xaxis{c + 1}"] = _axis(
            "score", domain=[lo_d, lo_d + width], range=[-3, 103], anchor=ay
        )
        if col == 0:  # long names shortened on the axis (the hover has them whole): room for panels
            yaxis = _category_axis(names, "model")
            yaxis.update(
                domain=[top - height_each, top],
                tickmode="array",
                tickvals=names,
                ticktext=[n if len(n) <= 18 else n[:17] + "…" for n in names],
            )
            layout["yaxis" if row == 0 else f"yaxis{row + 1}"] = yaxis
        data.append(
            dots(
                xs,
                names,
                [a for a, _ in ivs],
                [b for _, b in ivs],
                name=label,
                color=OKABE_ITO[c % len(OKABE_ITO)],
                what=label,
                showlegend=False,
                xaxis=ax,
                yaxis=ay,
            )
        )
        heading = _panel_title(plain(label), lo_d + width / 2, 13)
        heading["y"] = top
        annotations.append(heading)
        floor = ed.reference.best(panel) if panel else None
        shapes += _vline(floor, FLOOR_COLOUR, "dash", xref=ax, yref=f"{ay} domain")
    # One short line each (a phone's width holds about 40 characters of it).
    lines = [title, "with 95% intervals" + cut]
    if ed.reference.available:
        lines.append("dashed: the task's best cue-only floor")
    fig = figure(
        data,
        "<br>".join(lines),
        "score",
        "model",
        height=max(320, n_rows * (ROW_PX * len(keep) + 90) + 110),
        annotations=annotations,
        shapes=shapes,
        margin={"t": 40 + 18 * len(lines) + 40},
    )
    fig["layout"]["title"]["font"] = {"size": 14}
    fig["layout"].update(layout)
    return fig


# Tasks ------------------------------------------------------------------------------------------


def spreads_figure(ed: EditionData) -> Figure:
    """Every task's model scores on one row, with its best floor and chance level marked."""
    r = ed.standard
    title = (
        "Task scores across models"
        if ed.is_suite
        else "Task scores across models, with each task's best floor and chance level"
    )
    if r.empty:
        return empty_figure(title, no_models_message(ed.label))
    spreads = tables.spreads_table(ed)
    order = [t for t, lo in zip(spreads["Task"], spreads["Lowest"], strict=True) if pd.notna(lo)]
    if not order:
        return empty_figure(title, "No task of this board has a 0–100 score (every one is lower-is-better).")
    labels = [plain(tables.task_label(ed, t)) for t in order]
    rng = np.random.default_rng(0)
    xs: list[float] = []
    ys: list[float] = []
    cds: list[list[Any]] = []
    for j, tid in enumerate(order):
        ti = r.task_ids.index(tid)
        for i, v in enumerate(r.models):
            if tid not in v.tasks:
                continue
            xs.append(float(v.tasks[tid].score))
            ys.append(j + float(rng.uniform(-0.2, 0.2)))
            cds.append([plain(v.name), labels[j], _f(r.task_lo[i, ti]), _f(r.task_hi[i, ti])])
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "x": _num(xs),
            "y": ys,
            "mode": "markers",
            "name": "a model",
            "marker": {"color": OKABE_ITO[0], "size": 7, "opacity": 0.7},
            "customdata": cds,
            "hovertemplate": "%{customdata[0]} on %{customdata[1]}<br>score %{x:.2f} "
            "(95% interval %{customdata[2]:.2f}–%{customdata[3]:.2f})<extra></extra>",
        }
    ]
    data += reference_markers(
        [ed.reference.best(t) for t in order],
        [ed.reference.chance.get(t) for t in order],
        list(range(len(order))),
        labels,
        24,
    )
    return figure(
        data,
        title,
        "task score (0–100)",
        "task (sorted by range)",
        height=max(320 if ed.is_suite else 380, 42 * len(order) + 170),
        xaxis=_score_axis("task score (0–100)"),
        yaxis=_axis(
            "task (sorted by range)",
            tickmode="array",
            tickvals=list(range(len(order))),
            ticktext=labels,
            # one row per task, whatever their number: a one-task board's jitter stays on its row
            range=[len(order) - 0.5, -0.5],
        ),
    )


def task_figure(ed: EditionData, task_id: str) -> Figure:
    """One task: every model's score with its interval, the best floor and the chance level."""
    r = ed.standard
    title = f"{plain(task_id)}: model scores with 95% intervals"
    if r.empty:
        return empty_figure(title, no_models_message(ed.label))
    if tables.lower_is_better(ed, task_id):
        return empty_figure(
            title,
            f"{task_id}'s primary metric is lower-is-better: it has no 0–100 score (its raw values are in the table).",
        )
    ti = r.task_ids.index(task_id)
    order = sorted(
        (i for i in range(len(r.models)) if task_id in r.models[i].tasks),
        key=lambda i: -r.models[i].tasks[task_id].score,
    )
    cut = ""
    if len(order) > MAX_PLOT_MODELS:
        cut = f" (best {MAX_PLOT_MODELS} of {len(order)}; the table has all)"
        order = order[:MAX_PLOT_MODELS]
    names = [plain(r.models[i].name) for i in order]
    data = [
        dots(
            [r.models[i].tasks[task_id].score for i in order],
            names,
            [float(r.task_lo[i, ti]) for i in order],
            [float(r.task_hi[i, ti]) for i in order],
            name="model (95% interval)",
            color=OKABE_ITO[0],
            what="score",
        )
    ]
    floor_shapes, floor_legend = reference_line(
        ed.reference.best(task_id), "best cue-only floor", FLOOR_COLOUR, "dash"
    )
    chance_shapes, chance_legend = reference_line(
        ed.reference.chance.get(task_id), "chance", CHANCE_COLOUR, "dot"
    )
    shapes = floor_shapes + chance_shapes
    data += floor_legend + chance_legend
    return figure(
        data,
        title + cut,
        "task score (0–100)",
        "model",
        height=max(300, ROW_PX * len(order) + 170),
        xaxis=_score_axis("task score (0–100)"),
        yaxis=_category_axis(names, "model"),
        shapes=shapes,
    )


# Breakdowns -------------------------------------------------------------------------------------


def _task_score(v: Verdict, task_id: str) -> float:
    t = v.tasks.get(task_id)
    return float(t.score) if t is not None else float("nan")


def breakdown_heatmap(
    models: list[Verdict],
    task_id: str,
    edition: str,
    by: breakdown.Field | str | None = None,
    values: breakdown.RowValues | None = None,
) -> Figure:
    """Models x the values of one field (``by``: a field, or a stored metric's key; default the
    benchmark task's stored field, else its classes), coloured by score; few-item cells keep
    their colour and get a *. ``values``: the rows' values by id, for fields no file stores."""
    if by is None:
        task = load_suite().task(task_id)
        by = breakdown.Field(task.breakdown or breakdown.CLASS)
    field = by if isinstance(by, breakdown.Field) else breakdown.Field(breakdown.metric_field(by) or by)
    what = field.name.replace("_", " ")
    title = f"{plain(task_id)}: score by {plain(what)}"
    if not models:
        return empty_figure(title, no_models_message(edition))
    acc, cnt = breakdown.frames(models[:MAX_PLOT_MODELS], task_id, field, values)
    if acc.empty or acc.shape[1] == 0:
        return empty_figure(title, f"{task_id} records no breakdown by {what}.")
    z = acc.to_numpy(dtype=float)
    n = cnt.fillna(0).to_numpy()
    few = breakdown.few(cnt)
    text = [
        [("—" if np.isnan(a) else f"{a:.0f}") + ("*" if f else "") for a, f in zip(ra, rf, strict=True)]
        for ra, rf in zip(z, few, strict=True)
    ]
    ys = [plain(m) for m in acc.index]
    xs = [plain(c) for c in acc.columns]
    data = [
        {
            "type": "heatmap",
            "z": [_num(row) for row in z],
            "x": xs,
            "y": ys,
            "text": text,
            "customdata": [[int(k) for k in row] for row in n],
            "texttemplate": "%{text}",
            "colorscale": HEATMAP_SCALE,
            "zmin": 0,
            "zmax": 100,
            "colorbar": {"title": {"text": "score %"}},
            "hoverongaps": False,
            "hovertemplate": "%{y} · %{x}<br>score %{z:.1f}% on %{customdata} item(s)<extra></extra>",
        }
    ]
    cut = f" (best {MAX_PLOT_MODELS} of {len(models)})" if len(models) > MAX_PLOT_MODELS else ""
    note = f"<br><sup>* fewer than {tables.BREAKDOWN_MIN_N} items: read with care</sup>" if few.any() else ""
    return figure(
        data,
        title + cut + note,
        plain(what),
        "model",
        height=max(320, 26 * len(ys) + 190),
        xaxis=_axis(plain(what), type="category"),
        yaxis=_axis("model", type="category", autorange="reversed"),
    )


def near_miss_figure(models: list[Verdict], task_id: str | None, edition: str) -> Figure:
    title = f"Invalid outputs by near-miss kind ({task_id or 'all tasks'})"
    if not models:
        return empty_figure(title, no_models_message(edition))
    d = tables.near_miss_table(models, task_id)
    d = d[d["Invalid outputs"] > 0].sort_values("Invalid outputs", ascending=False).head(MAX_PLOT_MODELS)
    kinds = [c for c in d.columns if c not in ("Model", "Invalid outputs")]
    if d.empty:
        return empty_figure(
            title, "No invalid output: every answer parsed, so there is no near miss to show."
        )
    names = [plain(m) for m in d["Model"]]
    unclassified = d["Invalid outputs"] - (d[kinds].sum(axis=1) if kinds else 0)
    series = [(k, d[k]) for k in kinds] + (
        [("not classified", unclassified)] if (unclassified > 0).any() else []
    )
    data = [
        {
            "type": "bar",
            "y": names,
            "x": [int(x) for x in values],
            "name": plain(k),
            "orientation": "h",
            "marker": {"color": OKABE_ITO[j % len(OKABE_ITO)]},
            "hovertemplate": "%{y}<br>" + plain(k) + ": %{x} output(s)<extra></extra>",
        }
        for j, (k, values) in enumerate(series)
    ]
    return figure(
        data,
        title + " · models with invalid outputs",
        "invalid outputs",
        "model",
        height=max(300, ROW_PX * len(names) + 190),
        barmode="stack",
        yaxis=_category_axis(names, "model"),
    )


# Diagnostics ------------------------------------------------------------------------------------


def span_figure(models: list[Verdict], task_ids: list[str], edition: str) -> Figure:
    """Why did the score move: span recall (the score) against token F1, per model and span task."""
    title = "Span recall (the score) against token F1"
    if not models:
        return empty_figure(title, no_models_message(edition))
    d = tables.span_table(models[:MAX_PLOT_MODELS], task_ids)
    if d.empty:
        return empty_figure(title, "This board has no span task.")
    data: list[dict[str, Any]] = []
    for j, (task, g) in enumerate(d.groupby("Task", sort=False)):
        data.append(
            {
                "type": "scatter",
                "x": _num(g["Span recall"]),
                "y": _num(g["Token F1"]),
                "mode": "markers",
                "name": str(task),
                "marker": {
                    "color": OKABE_ITO[j % len(OKABE_ITO)],
                    "size": 9,
                    "symbol": ["circle", "diamond"][j % 2],
                },
                "customdata": [
                    [plain(m), float(p), float(o)]
                    for m, p, o in zip(g["Model"], g["Span precision"], g["Over sentence"], strict=True)
                ],
                "hovertemplate": "%{customdata[0]}<br>span recall %{x:.1f}, token F1 %{y:.1f}<br>"
                "precision %{customdata[1]:.1f}, over sentence %{customdata[2]:.1f}%<extra></extra>",
            }
        )
    data.append(
        {
            "type": "scatter",
            "x": [0, 100],
            "y": [0, 100],
            "mode": "lines",
            "name": "F1 = recall",
            "line": {"color": "#999999", "dash": "dot"},
            "hoverinfo": "skip",
        }
    )
    cut = f" (best {MAX_PLOT_MODELS} of {len(models)})" if len(models) > MAX_PLOT_MODELS else ""
    return figure(
        data,
        title + cut + "<br><sup>above the line: F1 credits words the score does not</sup>",
        "span recall %",
        "token F1 %",
        height=480,
        xaxis=_axis("span recall %", range=[-2, 102]),
        yaxis=_axis("token F1 %", range=[-2, 102]),
    )


# Model page -------------------------------------------------------------------------------------


def model_figure(v: Verdict, r: Ranked | None, ed: EditionData) -> Figure:
    """One model: every task score with its interval, the task's best floor and chance level."""
    title = (
        "Task scores with 95% intervals"
        if ed.is_suite
        else "Task scores with 95% intervals, best cue-only floors and chance levels"
    )
    i = r.index(v.key) if r is not None else None
    tids = [t for t in v.tasks if math.isfinite(v.tasks[t].score)]
    if not tids:
        return empty_figure(title, "No task of this file has a 0–100 score (every one is lower-is-better).")
    labels = [plain(tables.task_label(ed, t)) for t in tids]
    xs = [float(v.tasks[t].score) for t in tids]
    if r is not None and i is not None:
        ivs = [r.task_interval(i, t) for t in tids]
    else:
        ivs = [(x, x) for x in xs]
        title += " (no intervals: scores not re-checked)"
    data = [
        dots(
            xs,
            labels,
            [a for a, _ in ivs],
            [b for _, b in ivs],
            name="this model (95% interval)",
            color=OKABE_ITO[0],
            what="score",
        )
    ]
    data += reference_markers(
        [ed.reference.best(t) for t in tids], [ed.reference.chance.get(t) for t in tids], labels, labels, 18
    )
    return figure(
        data,
        title,
        "task score (0–100)",
        "task",
        height=30 * len(tids) + 170,
        xaxis=_score_axis("task score (0–100)"),
        yaxis=_category_axis(labels, "task"),
    )


# Compare ----------------------------------------------------------------------------------------


def compare_figure(table: pd.DataFrame, edition: str) -> Figure:
    title = "A − B with paired 95% intervals (right of 0: A is better)"
    if table.empty:
        return empty_figure(title, "Pick two different re-checked models of this board to compare them.")
    names = [
        tables.task_short(n) if lvl == "task" else n
        for lvl, n in zip(table["Level"], table["Name"], strict=True)
    ]
    data = [
        dots(
            [float(x) for x in table["A − B"]],
            names,
            list(table["A − B low"]),
            list(table["A − B high"]),
            name="A − B (paired 95% interval)",
            color=OKABE_ITO[0],
            what="A − B",
        )
    ]
    return figure(
        data,
        title,
        "difference in score points",
        "level",
        height=ROW_PX * len(names) + 200,
        yaxis=_category_axis(names, "level"),
        shapes=_vline(0.0, "#000000", "solid"),
    )


# Calibration ------------------------------------------------------------------------------------

CALIBRATION_PANELS = (
    ("mean_gold_p", "mean gold probability", (0.0, 1.0)),
    ("high_confidence_error_rate", "high-confidence error rate", (0.0, None)),
    ("brier", "Brier score (multi-class)", (0.0, None)),
    ("ece", "expected calibration error", (0.0, None)),
)


def calibration_figure(rows: Sequence[Any], scope_label: str, board: str) -> Figure:
    """Small multiples: per model (rows) mean gold p, high-confidence error rate, Brier and ECE
    with their 95% intervals; only models with probabilities at this scope."""
    title = f"How sure, and how right: {plain(scope_label)} ({plain(board)})"
    shown = [r for r in rows if int(r.report.get("n_with_probs") or 0) > 0][:MAX_PLOT_MODELS]
    if not shown:
        return empty_figure(title, f"No model on {board} has answer probabilities here: nothing to plot.")
    names = [plain(r.model.name) for r in shown]
    gap = 0.03
    width = (1.0 - gap * (len(CALIBRATION_PANELS) - 1)) / len(CALIBRATION_PANELS)
    data, annotations = [], []
    layout: dict[str, Any] = {}
    for c, (key, label, (lo_r, hi_r)) in enumerate(CALIBRATION_PANELS):
        xs = [r.report.get(key) for r in shown]
        ivs = [r.intervals.get(key) for r in shown]
        ax = "x" if c == 0 else f"x{c + 1}"
        lo_d = c * (width + gap)
        top = max([x for x in xs if x is not None] + [b[1] for b in ivs if b] + [0.05])
        rng = [lo_r, hi_r if hi_r is not None else min(2.0, top * 1.1)]
        layout["xaxis" if c == 0 else f"xaxis{c + 1}"] = _axis(
            label, domain=[lo_d, lo_d + width], range=rng, anchor="y"
        )
        data.append(
            dots(
                [np.nan if x is None else x for x in xs],
                names,
                [b[0] if b else (np.nan if x is None else x) for x, b in zip(xs, ivs, strict=True)],
                [b[1] if b else (np.nan if x is None else x) for x, b in zip(xs, ivs, strict=True)],
                name=label,
                color=OKABE_ITO[c % len(OKABE_ITO)],
                what=label,
                showlegend=False,
                xaxis=ax,
            )
        )
        better = "lower is better" if c else "higher is better"
        annotations.append(_panel_title(f"{plain(label)}<br>({better})", lo_d + width / 2, 12))
    cut = f" (first {MAX_PLOT_MODELS} in the board's order)" if len(rows) > MAX_PLOT_MODELS else ""
    fig = figure(
        data,
        title + cut,
        "value",
        "model",
        height=max(320, ROW_PX * len(names) + 190),
        yaxis=_category_axis(names, "model"),
        annotations=annotations,
        margin={"t": 100},
    )
    fig["layout"].update(layout)
    return fig


def reliability_figure(bins: Sequence[dict[str, Any]], title: str, empty: str) -> Figure:
    """Reliability diagram from stored ECE bins: accuracy against confidence per non-empty bin
    (marker area by its count), the bin counts as bars on a second axis, and the diagonal."""
    title = plain(title)
    filled = [b for b in bins if int(b.get("count") or 0) > 0 and b.get("mean_confidence") is not None]
    if not filled:
        return empty_figure(title, empty)
    counts = [int(b["count"]) for b in bins]
    biggest = max(counts) or 1
    centres = [(float(b["lower"]) + float(b["upper"])) / 2 for b in bins]
    width = [float(b["upper"]) - float(b["lower"]) for b in bins]
    data: list[dict[str, Any]] = [
        {
            "type": "bar",
            "x": centres,
            "y": counts,
            "width": width,
            "name": "examples in the bin (right axis)",
            "yaxis": "y2",
            "marker": {"color": "#bbbbbb", "opacity": 0.45},
            "customdata": [[float(b["lower"]), float(b["upper"])] for b in bins],
            "hovertemplate": "confidence in (%{customdata[0]:.3f}, %{customdata[1]:.3f}]: %{y} example(s)"
            "<extra></extra>",
        },
        {
            "type": "scatter",
            "x": [0, 1],
            "y": [0, 1],
            "mode": "lines",
            "name": "perfect calibration",
            "line": {"color": "#000000", "dash": "dot", "width": 1.5},
            "hoverinfo": "skip",
        },
        {
            "type": "scatter",
            "x": [float(b["mean_confidence"]) for b in filled],
            "y": [float(b["accuracy"]) for b in filled],
            "mode": "lines+markers",
            "name": "this model (one point per bin)",
            "line": {"color": OKABE_ITO[0], "width": 2},
            "marker": {
                "color": OKABE_ITO[0],
                "size": [8 + 22 * (int(b["count"]) / biggest) ** 0.5 for b in filled],
            },
            "customdata": [[int(b["count"]), float(b["lower"]), float(b["upper"])] for b in filled],
            "hovertemplate": "bin (%{customdata[1]:.3f}, %{customdata[2]:.3f}], %{customdata[0]} example(s)"
            "<br>mean confidence %{x:.3f}, accuracy %{y:.3f}<extra></extra>",
        },
    ]
    return figure(
        data,
        title + "<br><sup>above the diagonal: under-confident; below: over-confident</sup>",
        "confidence: probability of the most probable label",
        "accuracy of the most probable label",
        height=460,
        xaxis=_axis("confidence: probability of the most probable label", range=[0, 1.0]),
        yaxis=_axis("accuracy of the most probable label", range=[0, 1.02]),
        yaxis2={
            "title": {"text": "examples in the bin"},
            "overlaying": "y",
            "side": "right",
            "showgrid": False,
            "rangemode": "tozero",
            "automargin": True,
        },
        margin={"t": 90, "r": 60},
    )
