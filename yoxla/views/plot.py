"""What every view's figures share: plotly figures as plain JSON-ready dicts. Names go in as
data, never as HTML.

A figure is ``{"data": [traces], "layout": {...}}``, exactly what plotly.js draws; building
the dicts directly is about a hundred times faster than ``plotly.graph_objects`` (which
validates and deep-copies a template per figure), and the app sends them serialised once.
Every figure has a title and axis titles, uses the Okabe-Ito palette (safe for the common
colour-vision deficiencies) or the viridis scale, says the exact number and interval on
hover, and, when there is nothing to draw, says what is missing instead of drawing empty
axes. Plots of many models show the best :data:`MAX_PLOT_MODELS` and say so in the title;
the tables next to them hold every model. Each view's own figures are in its module.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from yoxla.board.prepared import Ranked

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


def json_number(x: Any) -> float | None:
    """One number for JSON: NaN and infinities become null."""
    value = float(x)
    return value if math.isfinite(value) else None


def json_numbers(values: Any) -> list[float | None]:
    """Numbers for JSON: NaN and infinities become null (a gap)."""
    out: list[float | None] = []
    for x in np.asarray(values, dtype=float).ravel():
        out.append(float(x) if math.isfinite(float(x)) else None)
    return out


def to_json(fig: Figure) -> str:
    return json.dumps(fig, ensure_ascii=False, allow_nan=False)


def axis(title: str, **kw: Any) -> dict[str, Any]:
    return {"title": {"text": title}, "gridcolor": GRID, "zeroline": False, "automargin": True, **kw}


TITLE_AT_TOP = {"yref": "container", "y": 1.0, "yanchor": "top", "pad": {"t": 12}}


def figure(
    data: list[dict[str, Any]], title: str, x: str, y: str, height: int = 400, **layout: Any
) -> Figure:
    base: dict[str, Any] = {
        # at the very top (not centred in the margin), so panel titles under it never meet it
        "title": {"text": title, "x": 0.01, "xanchor": "left", **TITLE_AT_TOP},
        "xaxis": axis(x),
        "yaxis": axis(y),
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
        "x": json_numbers(xs),
        "y": list(y),
        "mode": "markers",
        "name": name,
        "marker": {"color": color, "size": 8},
        "error_x": {
            "type": "data",
            "symmetric": False,
            "array": json_numbers(his - xs),
            "arrayminus": json_numbers(xs - los),
            "color": color,
            "thickness": 1.5,
        },
        "customdata": [[a, b] for a, b in zip(json_numbers(los), json_numbers(his), strict=True)],
        "hovertemplate": "%{y}<br>" + plain(what) + " %{x:.2f} (95% interval %{customdata[0]:.2f}–"
        "%{customdata[1]:.2f})<extra></extra>",
        "showlegend": showlegend,
        "xaxis": xaxis,
        "yaxis": yaxis,
    }


def vline(
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
    return vline(x, color, dash), [line_trace([None], f"{label} {x:.1f}", {"color": color, "dash": dash})]


def line_trace(xy: list[Any], name: str, line: dict[str, Any]) -> dict[str, Any]:
    """A line through (x, x) for each x of ``xy`` (a diagonal; ``[None]``: a legend entry alone)."""
    return {
        "type": "scatter",
        "x": xy,
        "y": list(xy),
        "mode": "lines",
        "name": name,
        "line": line,
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


def category_axis(names: list[str], title: str) -> dict[str, Any]:
    return axis(title, type="category", autorange="reversed", categoryorder="array", categoryarray=names)


def _two_lines(text: str) -> str:
    """A label on at most two lines, broken at the space nearest its middle (``<br>`` kept)."""
    if "<br>" in text:
        return text
    words = text.split()
    if len(words) < 2:
        return text
    cut = min(range(1, len(words)), key=lambda i: abs(len(" ".join(words[:i])) - len(" ".join(words[i:]))))
    return " ".join(words[:cut]) + "<br>" + " ".join(words[cut:])


def panel_title(text: str, x: float, size: int) -> dict[str, Any]:
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


def top_models(r: Ranked) -> tuple[list[int], str]:
    """Indices of the models to plot (the board's order, best first) and a title suffix when cut."""
    n = len(r.models)
    keep = list(range(min(n, MAX_PLOT_MODELS)))
    return keep, (f" (best {MAX_PLOT_MODELS} of {n}; the table has all)" if n > MAX_PLOT_MODELS else "")


def score_axis(title: str = "score (0–100)") -> dict[str, Any]:
    return axis(title, range=[-3, 103])
