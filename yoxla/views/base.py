"""What every view shares: the read-only context, the view interface, tables with a CSV download.

A view is one tab. It builds its own components (:meth:`View.build`), wires its own events
(:meth:`View.wire`), renders an edition, with a deep link's query when there is one
(:meth:`View.render`), and prepares at start-up what that needs (:meth:`View.warm`). Every
update is a dict keyed by component, never a positional tuple, so a view can add a component
without touching anyone else's output list. The page renders a tab when it is opened, through
the tab's trigger (:meth:`Context.request`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import tempfile
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr
import numpy as np
import pandas as pd
from gradio.components.plot import PlotData

from yoxla.board.prepared import Prepared
from yoxla.safe.csvcells import safe_frame
from yoxla.views import plot
from yoxla.views.format import task_short

Update = dict[Any, Any]
NOTHING = "Nothing to show"
SET_PARAM_JS = """
() => {
  window.yoxlaSetParam = (name, value) => {
    const url = new URL(window.location.href);
    if (value === null || value === undefined || value === "") url.searchParams.delete(name);
    else url.searchParams.set(name, String(value));
    window.history.replaceState(null, "", url);
  };
  if (window.yoxlaSortOnClick) return;
  window.yoxlaSortOnClick = true;
  // Gradio 6.31 selects a header on click and sorts only from the header's menu (⋮): in a sortable
  // table, a click on a header also picks that menu's "Sort descending" (numbers, best first) or
  // "Sort ascending" (text, ranks), and the other on the next click. Gradio's own sort then reorders
  // rows, with their shown text and styles; the menu stays there for the keyboard.
  const wait = (find, then, tries = 40) => {
    const found = find();
    if (found) then(found);
    else if (tries > 0) setTimeout(() => wait(find, then, tries - 1), 25);
  };
  document.addEventListener("click", (event) => {
    const th = event.target.closest && event.target.closest(".yoxla-sortable th[role=columnheader]");
    if (!th || !event.isTrusted || event.target.closest("button, .cell-menu")) return;
    const table = th.closest(".yoxla-sortable");
    const col = th.dataset.heading;
    const indicator = th.querySelector(".sort-indicator");
    const now = indicator ? indicator.getAttribute("aria-label") || "" : "";
    const texts = [...table.querySelectorAll(`[role=gridcell][data-col="${col}"]`)].map(c => c.innerText.trim());
    const numbers = texts.filter(t => /^[-+]?[0-9]/.test(t)).length * 2 >= texts.filter(t => t).length;
    const lowFirst = /^Rank|lower is better/i.test(th.title || "");  // ranks, raw lower-is-better metrics
    const desc = /ascending/i.test(now) || (!/descending/i.test(now) && numbers && !lowFirst);
    // The menu adds a column to the sorts already set: first clear the others', then sort this one.
    const others = [...table.querySelectorAll("th[role=columnheader]")]
      .filter(h => h !== th && h.querySelector(".sort-indicator"));
    const steps = [...others.map(h => [h, 2]), [th, desc ? 1 : 0]];  // items: asc, desc, clear sort
    const next = () => {
      const step = steps.shift();
      const menu = step && step[0].querySelector("button.cell-menu-button");
      if (!menu) return;
      menu.click();
      wait(() => document.querySelectorAll(".cell-menu [role=menuitem]")[step[1]], (item) => {
        item.click();
        setTimeout(next, 50);
      });
    };
    setTimeout(next, 50);  // once the table has taken the click itself (it selects the header)
  }, true);  // capturing: the table stops the click from bubbling
}
"""


def set_param_js(name: str, *, value: str | None = None) -> str:
    """A front-end-only event: put one component's value (or a constant) in the page's URL."""
    if value is not None:
        return f"() => {{ window.yoxlaSetParam && window.yoxlaSetParam({name!r}, {value!r}); }}"
    return f"(v) => {{ window.yoxlaSetParam && window.yoxlaSetParam({name!r}, v); return v; }}"


class Downloads:
    """CSV files of shown tables, written once per content into one temporary folder."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or Path(tempfile.mkdtemp(prefix="yoxla-csv-"))
        self._written: dict[str, Path] = {}
        self._frames: dict[int, tuple[weakref.ref[pd.DataFrame], str, str]] = {}

    def csv(self, stem: str, frame: pd.DataFrame) -> str:
        """The CSV of ``frame`` (the same frame object, e.g. a memoised one, is written once)."""
        seen = self._frames.get(id(frame))
        if seen is not None and seen[0]() is frame and seen[1] == stem:
            return seen[2]
        path = self._write(stem, frame)
        self._frames[id(frame)] = (weakref.ref(frame), stem, path)
        return path

    def _write(self, stem: str, frame: pd.DataFrame) -> str:
        text = safe_frame(frame).to_csv(index=False)  # no cell a spreadsheet would run
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
        safe_stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem)[:80]
        key = f"{safe_stem}-{digest}"
        if key not in self._written:
            path = self.folder / f"yoxla-{key}.csv"
            path.write_text(text, encoding="utf-8")
            self._written[key] = path
        return str(self._written[key])

    def copy(self, stem: str, data: bytes, suffix: str) -> str:
        digest = hashlib.sha256(data).hexdigest()[:16]
        safe_stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem)[:80]
        path = self.folder / f"{safe_stem}-{digest}{suffix}"
        if not path.exists():
            path.write_bytes(data)
        return str(path)


def decimals(values: pd.Series, most: int = 4) -> int:
    """The fewest decimals (at most ``most``) that show every finite value of a column as it is."""
    finite = [float(x) for x in values if isinstance(x, int | float) and np.isfinite(x)]
    return next((d for d in range(most + 1) if all(abs(round(x, d) - x) < 1e-9 for x in finite)), most)


def one_format(frame: pd.DataFrame) -> Any:
    """The frame, or a Styler that shows each float column with one number of decimals (``50.0``
    beside ``69.2``, never ``50``); the values themselves stay numbers (sorting, CSV)."""
    floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    if not floats:
        return frame
    return frame.style.format({c: f"{{:.{decimals(frame[c])}f}}" for c in floats}, na_rep="n/a")


class TableValue(dict):  # type: ignore[type-arg]
    """A table as ``gr.Dataframe`` sends it (``headers``, ``data`` and, when cells are formatted or
    styled, ``metadata``: display strings and styles), built without a pandas Styler: Gradio takes
    a dict as it is, where a Styler costs a full HTML render per event. ``frame`` is the shown frame."""

    frame: pd.DataFrame


def table_value(
    frame: pd.DataFrame, row_styles: dict[int, str] | None = None, shown: pd.DataFrame | None = None
) -> TableValue:
    """What ``gr.Dataframe.postprocess`` makes of :func:`one_format` (or, with ``row_styles``, of a
    Styler giving those rows that CSS), cell for cell: the same pandas formatters, the same cells.

    With ``shown`` (the same shape as ``frame``), the cells show ``shown``'s text while the data
    (what a click on a header sorts by) are ``frame``'s values, a missing number sent as none."""
    from pandas.io.formats.style_render import _maybe_wrap_formatter, maybe_convert_css_to_tuples

    data = frame.to_dict(orient="split")["data"]
    if shown is not None:
        data = [[None if isinstance(x, float) and not np.isfinite(x) else x for x in row] for row in data]
    out = TableValue(headers=list(frame.columns), data=data)
    out.frame = frame
    text = shown if shown is not None else frame  # what the cells show, formatted as one_format does
    floats = {c for c in text.columns if pd.api.types.is_float_dtype(text[c])}
    if not floats and row_styles is None and shown is None:
        out["metadata"] = None  # a plain frame: Gradio sends no display values
        return out
    na = "n/a" if floats else None  # one_format's Styler gives every column its na_rep
    plain = _maybe_wrap_formatter(None, na_rep=na)  # the Styler's default (pandas' display options)
    formats = [
        _maybe_wrap_formatter(f"{{:.{decimals(text[c])}f}}", na_rep=na) if c in floats else plain
        for c in text.columns
    ]
    css = {
        i: "; ".join(f"{k}: {v}" for k, v in maybe_convert_css_to_tuples(style))
        for i, style in (row_styles or {}).items()
    }
    width = len(frame.columns)
    rows = text.to_dict(orient="split")["data"] if shown is not None else out["data"]
    display = [[f(x) for f, x in zip(formats, row, strict=True)] for row in rows]
    out["metadata"] = {
        "display_value": display,
        "styling": [[css.get(i, "")] * width for i in range(len(frame))],
    }
    return out


TASK_COLUMNS = ("Task", "Name")  # columns that may hold a benchmark task's id


def task_names(frame: pd.DataFrame) -> pd.DataFrame | None:
    """``frame`` with its ``Task``/``Name`` cells showing each benchmark task's name (``NLI``, as
    the leaderboard's columns and the figures name it) where they hold its id; None when nothing
    changes. The ids stay the table's values: a row click and the CSV read them."""
    shown = None
    for col in TASK_COLUMNS:
        if col not in frame.columns:
            continue
        names = [task_short(t) if isinstance(t, str) else t for t in frame[col]]
        if names != list(frame[col]):
            shown = frame.copy() if shown is None else shown
            shown[col] = names
    return shown


def datatypes(frame: pd.DataFrame) -> list[str]:
    return ["number" if pd.api.types.is_numeric_dtype(t) else "str" for t in frame.dtypes]


class Table:
    """A read-only Dataframe and its CSV download button, updated together."""

    def __init__(
        self,
        label: str,
        stem: str,
        *,
        elem_id: str | None = None,
        max_height: int = 480,
        column_widths: list[str | int] | None = None,
        pinned_columns: int | None = None,
        wrap: bool = True,
        sortable: bool = False,
    ) -> None:
        self.stem = stem
        self._values: dict[int, tuple[weakref.ref[pd.DataFrame], TableValue]] = {}
        self.df = gr.Dataframe(
            label=label,
            interactive=False,
            wrap=wrap,
            elem_id=elem_id,
            elem_classes=["yoxla-table", *(["yoxla-sortable"] if sortable else [])],
            max_height=max_height,
            column_widths=column_widths,
            pinned_columns=pinned_columns,
            buttons=["fullscreen", "copy"],
        )
        self.csv = gr.DownloadButton(
            "Download CSV",
            size="sm",
            variant="secondary",
            elem_classes=["yoxla-csv"],
            elem_id=f"{elem_id}-csv" if elem_id else None,
        )

    @property
    def outputs(self) -> list[Any]:
        return [self.df, self.csv]

    def update(
        self,
        downloads: Downloads,
        frame: pd.DataFrame,
        *,
        csv: pd.DataFrame | None = None,
        row_styles: dict[int, str] | None = None,
        empty: str = NOTHING,
        stem: str | None = None,
        markdown: tuple[str, ...] = (),
        shown: pd.DataFrame | None = None,
    ) -> Update:
        """The table's value (each float column with one number of decimals, ``row_styles`` giving
        rows their CSS) and its CSV (``csv``, default the frame itself); the ``markdown`` columns
        hold Markdown we wrote (escaped names, checked links). With ``shown``, the cells show its
        text over ``frame``'s values (see :func:`table_value`). The value of the same frame object
        (a memoised one) is built once."""
        if frame.empty:
            shown = pd.DataFrame({NOTHING: [empty]})
            return {self.df: gr.update(value=shown, datatype=["str"]), self.csv: None}
        path = downloads.csv(stem or self.stem, csv if csv is not None else frame)
        if row_styles is None and shown is None:
            seen = self._values.get(id(frame))
            if seen is not None and seen[0]() is frame:
                value = seen[1]
            else:
                value = table_value(frame, shown=task_names(frame))
                self._values = {k: v for k, v in self._values.items() if v[0]() is not None}
                self._values[id(frame)] = (weakref.ref(frame), value)
        else:
            value = table_value(frame, row_styles, shown if shown is not None else task_names(frame))
        types = [
            ("markdown" if c in markdown else t) for c, t in zip(frame.columns, datatypes(frame), strict=True)
        ]
        return {self.df: gr.update(value=value, datatype=types), self.csv: path}


def plot_data(fig: plot.Figure) -> PlotData:
    """A figure (see :mod:`yoxla.views.plot`) serialised once, sent without re-encoding."""
    return PlotData(type="plotly", plot=plot.to_json(fig))


@dataclass
class Context:
    """What views share: the prepared data (read-only), the page-level controls, the other views."""

    prepared: Prepared
    downloads: Downloads
    edition: Any = None  # the edition Dropdown
    tabs: Any = None  # the gr.Tabs
    rendered: Any = None  # gr.State: {tab id: the edition it shows}; a tab renders when first opened
    current: Any = None  # gr.State: the selected tab's id
    triggers: dict[str, Any] = field(default_factory=dict)  # per tab, a gr.State whose change renders it
    views: dict[str, View] = field(default_factory=dict)
    _count: Iterator[int] = field(default_factory=itertools.count, repr=False)

    def request(
        self, tab_id: str, edition: str, rendered: dict[str, str] | None, params: dict[str, str] | None = None
    ) -> Update:
        """Ask a tab's view to render ``edition`` (through its trigger), and mark it rendered.

        The render runs as its own event whose outputs are only that view's components, so
        a page-wide event (loading the page, switching edition) never carries every view's
        outputs.
        """
        args = {"edition": edition, "params": dict(params or {})}
        return {
            self.rendered: {**(rendered or {}), tab_id: edition},
            self.triggers[tab_id]: {"args": args, "n": next(self._count)},
        }

    def tab_for(self, board_id: str, tab_id: str) -> str:
        """The tab to show on a board: ``tab_id``, or the first (the leaderboard) when that tab has
        nothing to show there."""
        view = self.views.get(tab_id)
        return (
            tab_id
            if view is not None and view.shown_on(self.prepared.edition(board_id))
            else next(iter(self.views))
        )

    def hide_tabs_js(self) -> str:
        """A front-end function of the board id that hides the tabs with nothing to show on that
        board (Gradio 6.31 does not apply a ``gr.Tab(visible=…)`` update to the tab's button)."""
        hidden = {
            bid: [v.title for v in self.views.values() if not v.shown_on(ed)]
            for bid, ed in self.prepared.editions.items()
        }
        return (
            "(board) => { const hide = new Set((" + json.dumps(hidden) + ")[board] || []); "
            "for (const b of document.querySelectorAll('#tabs button[role=tab]')) "
            "b.style.display = hide.has(b.innerText.trim()) ? 'none' : ''; return board; }"
        )

    def goto(self, tab_id: str, edition: str, rendered: dict[str, str] | None, page: Update) -> Update:
        """Select a tab whose view ``page`` has just rendered for ``edition`` (a link between views)."""
        return {
            self.tabs: gr.Tabs(selected=tab_id),
            self.rendered: {**(rendered or {}), tab_id: edition},
            self.current: tab_id,
            **page,
        }

    def goto_outputs(self, tab_id: str) -> list[Any]:
        return [self.tabs, self.rendered, self.current, *self.views[tab_id].outputs()]

    def memo(self, *key: Any, make: Any) -> Any:
        return self.prepared.memo(key, make)

    def plot(self, *key: Any, make: Any) -> PlotData:
        """A figure built once per key, kept serialised."""
        return self.prepared.memo(("plot", *key), lambda: plot_data(make()))


class View:
    """One tab of the app. Subclasses set ``tab_id`` and ``title`` and override what they need."""

    tab_id = ""
    title = ""

    def shown_on(self, ed: Any) -> bool:
        """Whether this tab has something to show on a board (an ``EditionData``); hidden otherwise."""
        return True

    def build(self, ctx: Context) -> None:
        """Lay out this view's components (called inside its ``gr.Tab``)."""

    def wire(self, ctx: Context) -> None:
        """Register this view's events (called once every view is built)."""

    def outputs(self) -> list[Any]:
        """Every component :meth:`render` and :meth:`route` may update."""
        return []

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        """The whole view for one edition; ``params`` are the page's URL query (a deep link)."""
        return {}

    def warm(self, ctx: Context, edition: str) -> None:
        """Compute at start-up what :meth:`render` will need (the default renders once)."""
        self.render(ctx, edition)


class TaskPickerView(View):
    """A view with a task picker whose choice re-renders part of the view (its page)."""

    picker: Any
    url_param: str | None = None  # put the picked task in the URL under this name

    def page(self, ctx: Context, edition: str, task_id: str | None) -> Update:
        raise NotImplementedError

    def page_outputs(self) -> list[Any]:
        raise NotImplementedError

    def task_ids(self, ctx: Context, edition: str) -> list[str]:
        return list(ctx.prepared.edition(edition).standard.task_ids)

    def warm(self, ctx: Context, edition: str) -> None:
        self.render(ctx, edition)
        for tid in self.task_ids(ctx, edition):
            self.page(ctx, edition, tid)

    def wire(self, ctx: Context) -> None:
        event = self.picker.input(
            lambda ed, t: self.page(ctx, ed, t), [ctx.edition, self.picker], self.page_outputs()
        )
        if self.url_param:
            event.then(None, self.picker, None, js=set_param_js(self.url_param))


def keep_or_first(value: Any, choices: list[Any]) -> Any:
    """``value`` if it is still a choice, else the first choice (None when there is none)."""
    values = [c[1] if isinstance(c, tuple) else c for c in choices]
    if value in values:
        return value
    return values[0] if values else None
