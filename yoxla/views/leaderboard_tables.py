"""The Leaderboard tab's tables and figure: plain functions of the prepared data, no Gradio.

Cells hold plain values (text and numbers); the app shows them in ``gr.Dataframe``, which
renders text, never HTML (but for the model column, whose Markdown we write: :func:`model_cell`).
The full frame (:func:`leaderboard_frame`) is the CSV download; the compact table
(:func:`leaderboard_view`) is what the tab shows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from yoxla.admission.verdict import NOT_RECHECKED, Verdict
from yoxla.board.loading import Board, headline, model_key
from yoxla.board.prepared import (
    GROUP_TITLES,
    EditionData,
    Ranked,
    block_title,
    group_score,
    licence,
    parameters,
    rank_board,
    size_band,
    weights,
)
from yoxla.board.published import same_model
from yoxla.safe.text import plain_https, repo_id
from yoxla.views import plot
from yoxla.views.format import (
    interval_text,
    judge_text,
    lower_is_better,
    num_text,
    pm,
    raw_text,
    task_label,
    tokens_text,
)
from yoxla.views.texts import md as md_escape

FLOOR_NAME = "Best cue-only floor (reference, not a model)"


def leaderboard_frame(ed: EditionData, group: str = "standard") -> pd.DataFrame:
    """The full leaderboard of one board, numbers unrounded: what the CSV download holds.

    The headline is the one the board's suite names (YOXLA; a suite's score), then each of its
    groups (the benchmark's blocks); per task the score and the raw primary metric (``<task> raw``:
    the only number of a lower-is-better task) and, when the suite has judge-scored tasks, the
    judge model.
    """
    r = ed.boards[group]
    h = ed.headline
    judged = bool(ed.suite.judge_scored_tasks)
    cols = ["Rank", "Rank best", "Rank worst", "Model", "Provider", "Model id", "Trust"]
    cols += ["Parameters", "Size band", "Weights", "Licence", "Card", "Board", h, f"{h} low", f"{h} high"]
    cols += ["Judge"] if judged else []
    for b in r.blocks:
        cols += [r.group_title(b), f"{r.group_title(b)} low", f"{r.group_title(b)} high"]
    for t in r.task_ids:
        cols += [t, f"{t} low", f"{t} high", f"{t} raw"]
    cols += [
        "Invalid-output rate %",
        "Generation errors",
        "Prompt tokens",
        "Completion tokens",
        "Notes",
        "File",
    ]
    records: list[dict[str, Any]] = []
    for i, v in enumerate(r.models):
        rec: dict[str, Any] = {
            "Rank": r.rank(i),
            "Rank best": int(r.rank_best[i]),
            "Rank worst": int(r.rank_worst[i]),
            "Model": v.name,
            "Provider": v.provider,
            "Model id": v.model,
            "Trust": v.trust,
            "Parameters": parameters(v),
            "Size band": size_band(v),
            "Weights": weights(v),
            "Licence": licence(v),
            "Card": card_url(v) or "",
            "Board": GROUP_TITLES.get(group, group),
            h: headline(v),
            f"{h} low": float(r.yoxla_lo[i]),
            f"{h} high": float(r.yoxla_hi[i]),
        }
        if judged:
            rec["Judge"] = judge_text(v)
        for b in r.blocks:
            title = r.group_title(b)
            rec[title] = group_score(v, b)
            rec[f"{title} low"], rec[f"{title} high"] = r.block_interval(i, b)
        for t in r.task_ids:
            lo, hi = r.task_interval(i, t)
            task = v.tasks.get(t)
            rec[t] = float(task.score) if task is not None else np.nan
            rec[f"{t} low"], rec[f"{t} high"] = lo, hi
            rec[f"{t} raw"] = float(task.primary_raw) if task is not None else np.nan
        rec["Invalid-output rate %"] = 100 * invalid_rate(v)
        rec["Generation errors"] = int(v.generation_errors)
        rec["Prompt tokens"], rec["Completion tokens"] = v.tokens
        rec["Notes"] = "; ".join(_notes(v))
        rec["File"] = model_key(v)
        records.append(rec)
    return pd.DataFrame.from_records(records, columns=cols)


def _notes(v: Verdict) -> list[str]:
    notes = []
    if v.generation_errors:
        notes.append(f"⚠ {v.generation_errors} generation error(s)")
    if not v.rechecked:
        notes.append(NOT_RECHECKED)
    return notes


def invalid_rate(v: Verdict) -> float:
    n = sum(len(t.ids) for t in v.tasks.values())
    bad = sum(int(t.metrics.get("n", 0)) - int(t.metrics.get("n_valid", 0)) for t in v.tasks.values())
    return bad / n if n else 0.0


@dataclass(frozen=True)
class Filters:
    """What a visitor narrows the leaderboard to. Ranks stay those of the whole board."""

    search: str = ""
    providers: tuple[str, ...] = ()
    weights: str = "any"  # any | open | closed | unknown
    size: str = "any"  # any | a size band | unknown
    trust: str = "any"  # any | verified | community

    def mask(self, frame: pd.DataFrame) -> pd.Series:
        keep = pd.Series(True, index=frame.index)
        if self.search.strip():
            q = self.search.strip().casefold()
            hay = (frame["Model"] + " " + frame["Provider"] + " " + frame["Model id"]).str.casefold()
            keep &= hay.str.contains(q, regex=False)
        if self.providers:
            keep &= frame["Provider"].isin(self.providers)
        if self.weights != "any":
            keep &= frame["Weights"] == self.weights
        if self.size != "any":
            keep &= frame["Size band"] == self.size
        if self.trust != "any":
            keep &= frame["Trust"] == self.trust
        return keep


COLUMN_SETS = ("task scores", "intervals", "diagnostics")


@dataclass
class CompactTable:
    table: pd.DataFrame  # what is shown
    keys: list[str | None]  # the board key of each shown row (None: the floor row, a reported row)
    floor_row: int | None  # index of the greyed reference row
    shown: int  # models shown after the filters
    total: int
    reported_rows: list[int] = field(default_factory=list)  # rows of results reported elsewhere
    links: list[str | None] = field(default_factory=list)  # each row's model card (checked https)
    # What a click on a header sorts by: ``table`` with each column that shows numbers as numbers
    # (the score of ``72.5 ±2.1``, the best rank of ``1–3``; NaN where a row shows none).
    values: pd.DataFrame = field(default_factory=pd.DataFrame)


REPORTED_RANK = "reported"


REPORTED_TRUST = "reported by its authors, not re-checked"


def card_url(v: Verdict) -> str | None:
    """The model card a file names (``card_url``, else the Hub page of ``hub_repo``), when it is
    a plain https address (no quotes, spaces, brackets or query): else None, never a guess."""
    md = v.model_info.metadata if v.model_info is not None else None
    if md is None:
        return None
    if plain_https(md.card_url):
        return md.card_url
    if repo_id(md.hub_repo):
        return f"https://huggingface.co/{md.hub_repo}"
    return None


def model_cell(name: str, url: str | None) -> str:
    """The Markdown of a model's name cell: the name escaped (shown as the words it is), linked
    to its card when it has one."""
    text = md_escape(name)
    return f"[{text}]({url})" if url else text


def _reported_records(
    ed: EditionData, group: str, filters: Filters, h: str
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The results the benchmark's authors reported, as compact rows (standard board only: the
    reported conditions are the standard ones); the search filter applies, the others (which
    these results cannot state) leave them out."""
    if group != "standard" or not ed.publications:
        return []
    if filters.providers or filters.weights != "any" or filters.size != "any" or filters.trust != "any":
        return []
    q = filters.search.strip().casefold()
    out = []
    models = [m for p in ed.publications for m in p.models]
    for m in sorted(models, key=lambda m: (-m.yoxla, m.model)):
        if q and q not in m.model.casefold():
            continue
        num = {h: m.yoxla, **{ed.group_title(b): m.blocks.get(b, np.nan) for b in ed.suite.groups}}
        rec: dict[str, Any] = {
            "Rank": REPORTED_RANK,
            "Model": m.model,
            **{k: num_text(x) for k, x in num.items()},
        }
        rec["Trust"] = REPORTED_TRUST
        out.append((rec, num))
    return out


def leaderboard_view(
    frame: pd.DataFrame,
    ed: EditionData,
    group: str = "standard",
    filters: Filters | None = None,
    columns: Iterable[str] = (),
) -> CompactTable:
    """The compact table: rank, model, the headline ±, the suite's groups (the benchmark's four
    blocks; a suite without groups: its tasks), trust; more on request.

    Re-checked rows come first (ranked); the floor sits among them by its score; the results
    the benchmark's authors reported follow, marked as reported and never ranked (when there is
    no re-checked row, they fill the table and the floor sits among them by its score).
    """
    filters = filters or Filters()
    columns = set(columns)
    r = ed.boards[group]
    h = ed.headline
    part = frame[filters.mask(frame)] if len(frame) else frame
    with_iv, with_tasks, with_diag = (
        "intervals" in columns,
        "task scores" in columns or not r.blocks,  # a suite without groups: its tasks are the columns
        "diagnostics" in columns,
    )
    # Per task: its column's title and whether it holds the raw value (lower is better, no score).
    task_cols = [(tid, task_label(ed, tid), lower_is_better(ed, tid)) for tid in r.task_ids]
    rows: list[dict[str, Any]] = []
    nums: list[dict[str, Any]] = []  # per row, the number behind each cell that shows one
    keys: list[str | None] = []
    links: list[str | None] = []
    for row in part.to_dict("records"):  # plain dicts: a Series per row costs ten times more
        rec: dict[str, Any] = {
            "Rank": row["Rank"],
            "Model": row["Model"],
            h: pm(row[h], row[f"{h} low"], row[f"{h} high"]),
        }
        num: dict[str, Any] = {"Rank": row["Rank best"], h: row[h]}
        if "Judge" in row:
            rec["Judge"] = row["Judge"]
        if with_iv:
            rec[f"{h} 95% interval"] = interval_text(row[f"{h} low"], row[f"{h} high"])
        for b in r.blocks:
            t = r.group_title(b)
            rec[t] = pm(row[t], row[f"{t} low"], row[f"{t} high"]) if with_iv else num_text(row[t])
            num[t] = row[t]
        if with_tasks:
            for tid, label, lower in task_cols:
                if lower:
                    rec[label] = raw_text(row[f"{tid} raw"])
                    num[label] = row[f"{tid} raw"]
                else:
                    num[label] = row[tid]
                    rec[label] = (
                        pm(row[tid], row[f"{tid} low"], row[f"{tid} high"])
                        if with_iv or not r.blocks
                        else num_text(row[tid])
                    )
        rec["Trust"] = trust_badge(row["Trust"])
        if with_diag:
            rec["Provider"] = row["Provider"]
            rec["Size"] = "" if pd.isna(row["Parameters"]) else f"{row['Parameters'] / 1e9:.3g}B"
            rec["Weights"] = row["Weights"]
            rec["Licence"] = row["Licence"]
            rec["Invalid %"] = f"{row['Invalid-output rate %']:.1f}"
            rec["Gen. errors"] = str(int(row["Generation errors"]))
            rec["Tokens in"] = tokens_text(row["Prompt tokens"])
            rec["Tokens out"] = tokens_text(row["Completion tokens"])
            rec["Notes"] = row["Notes"]
            num.update(
                {
                    "Size": row["Parameters"],
                    "Invalid %": row["Invalid-output rate %"],
                    "Gen. errors": row["Generation errors"],
                    "Tokens in": row["Prompt tokens"],
                    "Tokens out": row["Completion tokens"],
                }
            )
        rows.append(rec)
        nums.append(num)
        keys.append(str(row["File"]))
        links.append(row["Card"] or None)
    ranked = len(rows)
    cols = list(rows[0]) if rows else ["Rank", "Model", h, *map(r.group_title, r.blocks), "Trust"]
    reported_records = _reported_records(ed, group, filters, h)
    reported = [{k: rec.get(k, "") for k in cols} for rec, _ in reported_records]
    rows += reported
    nums += [num for _, num in reported_records]
    keys += [None] * len(reported)
    links += [None] * len(reported)
    floor_row = None
    summary = ed.reference.summary(ed.groups_of_tasks())
    if summary is not None and len(rows):
        rec = {k: "" for k in cols}
        rec.update(Rank="—", Model=FLOOR_NAME, Trust="reference")
        num = {h: summary["yoxla"], **{r.group_title(b): summary["blocks"].get(b, np.nan) for b in r.blocks}}
        if with_tasks:
            num.update({label: ed.reference.best(tid) or np.nan for tid, label, _ in task_cols})
        rec.update({k: num_text(x) for k, x in num.items()})
        if ranked:
            floor_row = sum(float(s) >= summary["yoxla"] for s in part[h])
        else:
            floor_row = sum(float(x[h]) >= summary["yoxla"] for x in reported)
        rows.insert(floor_row, rec)
        nums.insert(floor_row, num)
        keys.insert(floor_row, None)
        links.insert(floor_row, None)
    reported_rows = [i for i, k in enumerate(rows) if k.get("Rank") == REPORTED_RANK]
    table = pd.DataFrame(rows, columns=cols)
    return CompactTable(
        table, keys, floor_row, len(part), len(frame), reported_rows, links, sort_values(table, nums)
    )


def sort_values(table: pd.DataFrame, nums: list[dict[str, Any]]) -> pd.DataFrame:
    """``table`` with each column some row has a number for (``nums``, per row) holding those
    numbers (NaN where a row has none: a reported row's rank, the floor's trust)."""
    values = table.copy()
    numeric = {k for num in nums for k in num} & set(table.columns)
    for col in table.columns:
        if col in numeric:
            values[col] = pd.array([_number(num.get(col)) for num in nums], dtype="float64")
    return values


def _number(value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return float("nan")
    return x if np.isfinite(x) else float("nan")


def trust_badge(trust: str) -> str:
    return "✔ verified" if trust == "verified" else "community"


def unchecked_table(ed: EditionData) -> pd.DataFrame:
    """Admitted files whose scores could not be re-checked here: listed apart, never ranked."""
    head = f"{ed.headline} (as stored)"
    parts = {g: ed.group_title(g) for g in ed.standard.blocks}
    cols = ["Model", "Provider", "Trust", head, *parts.values(), "Why not re-checked", "File"]
    out = []
    for v in ed.unchecked:
        rec: dict[str, Any] = {"Model": v.name, "Provider": v.provider, "Trust": trust_badge(v.trust)}
        rec[head] = num_text(headline(v))
        for g, title in parts.items():
            rec[title] = num_text(group_score(v, g))
        why = next((n for n in v.notes if n.startswith(NOT_RECHECKED + ": ")), None)
        rec["Why not re-checked"] = (
            why.removeprefix(NOT_RECHECKED + ": ") if why else ed.rows_problem or NOT_RECHECKED
        )
        rec["File"] = v.key
        out.append(rec)
    return pd.DataFrame(out, columns=cols)


def reported_table(ed: EditionData) -> pd.DataFrame:
    cols = ["Model (as reported)", *[block_title(b) for b in ed.suite.groups], "YOXLA", "Source"]
    out = []
    for pub in ed.publications:
        for m in pub.models:
            rec: dict[str, Any] = {"Model (as reported)": m.model}
            for b in ed.suite.groups:
                rec[block_title(b)] = num_text(m.blocks.get(b, float("nan")), 2)
            rec["YOXLA"] = num_text(m.yoxla, 2)
            rec["Source"] = f"{pub.source} ({pub.date})"
            out.append(rec)
    return pd.DataFrame(out, columns=cols)


def reported_vs_admitted(ed: EditionData) -> pd.DataFrame:
    """Each reported model that also has an admitted file: both scores and the difference."""
    cols = [
        "Model (as reported)",
        "Admitted file",
        "Board",
        "Level",
        "Reported",
        "Admitted",
        "Admitted − reported",
    ]
    out = []
    for pub in ed.publications:
        for m in pub.models:
            for v in ed.all_models():
                info = v.model_info
                ids = [v.model] + ([info.reported_model] if info is not None else [])
                if info is not None and info.metadata is not None:
                    ids.append(info.metadata.hub_repo)
                if not same_model(m.model, ids):
                    continue
                board = GROUP_TITLES.get(v.group, v.group) if v.rechecked else NOT_RECHECKED
                levels = [("YOXLA", m.yoxla, float(v.scores["yoxla"]))]
                levels += [
                    (block_title(b), m.blocks[b], float(v.scores["blocks"][b]))
                    for b in ed.suite.groups
                    if b in m.blocks and b in v.scores.get("blocks", {})
                ]
                for level, rep, adm in levels:
                    out.append(
                        {
                            "Model (as reported)": m.model,
                            "Admitted file": v.key,
                            "Board": board,
                            "Level": level,
                            "Reported": num_text(rep, 2),
                            "Admitted": num_text(adm, 2),
                            "Admitted − reported": f"{adm - rep:+.2f}",
                        }
                    )
    return pd.DataFrame(out, columns=cols)


def leaderboard_table(board: Board, edition: str, search: str = "") -> pd.DataFrame:
    """One row per ranked model of the edition's standard board (numbers unrounded)."""
    from yoxla.board.floors import Reference

    r = rank_board(board, edition, "standard")
    empty = Ranked(edition, "x", [], r.task_ids, r.blocks)
    boards = {"standard": r, "thinking": empty, "non-standard": empty}
    ed = EditionData(edition, boards, [], Reference(edition), [], None, board.meta(edition))
    frame = leaderboard_frame(ed)
    if search.strip():
        frame = frame[Filters(search=search).mask(frame)]
    return frame.reset_index(drop=True)


def leaderboard_figure(ed: EditionData, group: str = "standard") -> plot.Figure:
    """YOXLA with its 95% interval per model, and the best cue-only floor as a line."""
    r = ed.boards[group]
    h = ed.headline
    title = f"{h} with 95% bootstrap interval ({plot.plain(ed.label)})"
    if r.empty:
        return plot.empty_figure(title, plot.no_models_message(ed.label))
    keep, cut = plot.top_models(r)
    names = [plot.plain(r.models[i].name) for i in keep]
    data = [
        plot.dots(
            [headline(r.models[i]) for i in keep],
            names,
            [float(r.yoxla_lo[i]) for i in keep],
            [float(r.yoxla_hi[i]) for i in keep],
            name="model (95% interval)",
            color=plot.OKABE_ITO[0],
            what=h,
        )
    ]
    summary = ed.reference.summary(ed.groups_of_tasks())
    shapes, legend = plot.reference_line(
        summary["yoxla"] if summary else None, "best cue-only floor", plot.FLOOR_COLOUR, "dash"
    )
    data += legend
    return plot.figure(
        data,
        title + cut,
        f"{h} (0–100)",
        "model",
        height=max(300, plot.ROW_PX * len(keep) + 170),
        yaxis=plot.category_axis(names, "model"),
        xaxis=plot.score_axis(f"{h} (0–100)"),
        shapes=shapes,
    )
