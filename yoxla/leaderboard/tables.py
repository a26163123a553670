"""pandas tables for every view: plain functions of the prepared data; no Gradio here.

Cells hold plain values (text and numbers); the app shows them in ``gr.Dataframe``, which
renders text, never HTML. Scores are 0-100; a score with its interval reads ``72.5 ±2.1``
(half the width of the 95% bootstrap interval; the CSV download has both ends).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from yoxla.leaderboard import breakdown
from yoxla.leaderboard.admission import NOT_RECHECKED, TaskRecord, Verdict
from yoxla.leaderboard.board import Board, model_key
from yoxla.leaderboard.bootstrap import mcnemar, paired_interval
from yoxla.leaderboard.prepared import (
    GROUP_TITLES,
    UNKNOWN,
    EditionData,
    Ranked,
    block_title,
    group_score,
    headline,
    licence,
    rank_board,
    size_band,
    size_text,
    weights,
)
from yoxla.leaderboard.published import BLOCKS, same_model
from yoxla.leaderboard.texts import md as md_escape
from yoxla.record import RunConditions, SuiteRunConditions
from yoxla.safetext import plain_https, repo_id
from yoxla.suite import Task, load_suite

BREAKDOWN_MIN_N = breakdown.MIN_N
NO_SEPARATION_RATIO = 1.0  # a task whose range is below this many median CI widths no longer separates
NA = "n/a"
FLOOR_NAME = "Best cue-only floor (reference, not a model)"

TASK_SHORT = {
    "extractive_qa_v1": "Extractive QA",
    "qa_abstention_v1": "QA + abstain",
    "nli_v1": "NLI",
    "sts_v1": "STS",
    "sentiment_v1": "Sentiment",
    "intent_v1": "Intent",
    "minimal_pairs_v1": "Minimal pairs",
    "az_tr_interference_v1": "AZ/TR words",
    "knowledge_choice_v1": "Facts",
    "rag_verification_v1": "RAG verify",
    "rag_selection_v1": "RAG select",
}

# Every scalar metric the evaluators compute: (key, label, kind). kind: rate (0-1, shown in %),
# corr (a correlation), count, error (STS mean errors on the 0-5 scale), label (text).
METRICS: tuple[tuple[str, str, str], ...] = (
    ("accuracy", "accuracy", "rate"),
    ("macro_f1", "macro-F1", "rate"),
    ("modal_answer_share", "modal answer share", "rate"),
    ("modal_answer", "modal answer", "label"),
    ("overall_score", "overall score", "rate"),
    ("answerability_accuracy", "answerability accuracy", "rate"),
    ("unanswerable_accuracy", "unanswerable accuracy", "rate"),
    ("abstention_rate", "abstention rate", "rate"),
    ("span_recall", "span recall", "rate"),
    ("span_precision", "span precision", "rate"),
    ("exact_span_rate", "exact-span rate", "rate"),
    ("unsupported_rate", "unsupported rate", "rate"),
    ("over_sentence_rate", "over-sentence rate", "rate"),
    ("token_f1", "token F1", "rate"),
    ("normalized_em", "normalised EM", "rate"),
    ("strict_em", "strict EM", "rate"),
    ("spearman", "Spearman", "corr"),
    ("pearson", "Pearson", "corr"),
    ("spearman_valid", "Spearman (valid only)", "corr"),
    ("pearson_valid", "Pearson (valid only)", "corr"),
    ("mae", "MAE (valid only)", "error"),
    ("rmse", "RMSE (valid only)", "error"),
    ("invalid_output_rate", "invalid-output rate", "rate"),
    ("n", "items", "count"),
    ("n_valid", "valid answers", "count"),
    ("n_answerable", "answerable items", "count"),
    ("generation_errors", "generation errors", "count"),
    ("truncated", "truncated answers", "count"),
)
SPAN_METRICS = (
    "span_recall",
    "span_precision",
    "exact_span_rate",
    "unsupported_rate",
    "over_sentence_rate",
    "token_f1",
    "normalized_em",
    "strict_em",
)
EVALUATOR_METRICS = {
    "classification": ("accuracy", "macro_f1", "modal_answer_share", "modal_answer"),
    "span": SPAN_METRICS,
    "abstention": (
        "overall_score",
        "answerability_accuracy",
        "unanswerable_accuracy",
        "abstention_rate",
        *SPAN_METRICS,
        "n_answerable",
    ),
    "correlation": ("spearman", "pearson", "spearman_valid", "pearson_valid", "mae", "rmse"),
}
COMMON_METRICS = ("invalid_output_rate", "n", "n_valid", "generation_errors", "truncated")
METRIC_LABEL = {k: label for k, label, _ in METRICS}
METRIC_KIND = {k: kind for k, _, kind in METRICS}


def task_short(task_id: str) -> str:
    return TASK_SHORT.get(task_id, task_id)


def benchmark_task(task_id: str) -> Task | None:
    """The benchmark's task of this id; None for a suite's task."""
    return load_suite().tasks.get(task_id)


def metric_keys(task_id: str, models: Iterable[Verdict] = ()) -> list[str]:
    """The scalar metrics of a task: its evaluator's for the benchmark, every number a suite task
    stores (in the order of the first file that has it) otherwise."""
    task = benchmark_task(task_id)
    if task is not None:
        return [*EVALUATOR_METRICS[task.evaluator], *COMMON_METRICS]
    keys: dict[str, None] = {}
    for v in models:
        rec = v.tasks.get(task_id)
        for k, value in (rec.metrics if rec is not None else {}).items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                keys.setdefault(k, None)
    return list(keys)


def metric_label(key: str) -> str:
    return METRIC_LABEL.get(key, key.replace("_", " "))


def task_label(ed: EditionData, task_id: str) -> str:
    """A task's column header: its short name; a suite task's id, marked when judge-scored or
    when lower is better (then the column holds the raw metric, not a 0-100 score)."""
    if not ed.is_suite:
        return task_short(task_id)
    marks = []
    if suite_judged(ed, task_id):
        marks.append("judge-scored")
    if lower_is_better(ed, task_id):
        marks.append("raw, lower is better")
    return task_id + (f" ({', '.join(marks)})" if marks else "")


def suite_judged(ed: EditionData, task_id: str) -> bool:
    return ed.suite is not None and task_id in ed.suite.judge_scored_tasks


def lower_is_better(ed: EditionData, task_id: str) -> bool:
    """A suite task whose primary metric is lower-is-better: it has no 0-100 score."""
    if not ed.is_suite:
        return False
    recs = [v.tasks[task_id] for g in ed.boards.values() for v in g.models if task_id in v.tasks]
    return bool(recs) and not recs[0].higher_is_better


def judge_text(v: Verdict, task_id: str | None = None) -> str:
    """The judge model beside a judge-scored score: the run's judge, and the ids it reported."""
    recs = [v.tasks[task_id]] if task_id is not None and task_id in v.tasks else list(v.tasks.values())
    if not any(r.judge_scored for r in recs):
        return ""
    reported = sorted({m for r in recs for m in r.judge_models})
    text = _bounded(v.judge or "unknown")
    if reported and reported != [v.judge]:
        shown = ", ".join(_bounded(m) for m in reported[:3])
        more = f" and {len(reported) - 3} more" if len(reported) > 3 else ""
        text += f" (reported as {shown}{more})"
    return text


def _bounded(text: str, limit: int = 80) -> str:
    """A name from a file on one line, at most ``limit`` characters."""
    one = " ".join(str(text).split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def raw_text(value: float) -> str:
    return NA if value is None or not np.isfinite(value) else f"{value:.4g}"


def metric_text(key: str, value: Any) -> str:
    """A metric as shown: rates in %, correlations and errors with three decimals, absent as n/a."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NA
    kind = METRIC_KIND.get(key) or (
        "count" if isinstance(value, int) and not isinstance(value, bool) else "corr"
    )
    if kind == "label":
        return str(value)
    if kind == "count":
        return str(int(value))
    if kind == "rate":
        return f"{100 * float(value):.1f}%"
    return f"{float(value):.3f}"


def _r(x: float, nd: int = 1) -> str:
    return NA if x is None or not np.isfinite(x) else f"{x:.{nd}f}"


def pm(score: float, lo: float, hi: float) -> str:
    """``72.5 ±2.1``: the score and half the width of its interval."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return _r(score)
    return f"{score:.1f} ±{(hi - lo) / 2:.1f}"


def interval_text(lo: float, hi: float) -> str:
    return f"{lo:.1f}–{hi:.1f}"


def trust_badge(v: Verdict) -> str:
    return "✔ verified" if v.trust == "verified" else "community"


# Leaderboard ------------------------------------------------------------------------------------


def leaderboard_frame(ed: EditionData, group: str = "standard") -> pd.DataFrame:
    """The full leaderboard of one board, numbers unrounded: what the CSV download holds.

    A suite board's headline is the suite score; per task it also holds the raw primary
    metric (``<task> raw``: the only number of a lower-is-better task) and, when the suite
    has judge-scored tasks, the judge model.
    """
    r = ed.boards[group]
    h = ed.headline
    judged = ed.suite is not None and bool(ed.suite.judge_scored_tasks)
    cols = ["Rank", "Rank best", "Rank worst", "Model", "Provider", "Model id", "Trust"]
    cols += ["Parameters", "Size band", "Weights", "Licence", "Card", "Board", h, f"{h} low", f"{h} high"]
    cols += ["Judge"] if judged else []
    for b in r.blocks:
        cols += [block_title(b), f"{block_title(b)} low", f"{block_title(b)} high"]
    for t in r.task_ids:
        cols += [t, f"{t} low", f"{t} high"] + ([f"{t} raw"] if ed.is_suite else [])
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
            "Parameters": _params(v),
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
            lo, hi = r.block_interval(i, b)
            rec[block_title(b)] = float(v.scores["blocks"].get(b, np.nan))
            rec[f"{block_title(b)} low"], rec[f"{block_title(b)} high"] = lo, hi
        for t in r.task_ids:
            lo, hi = r.task_interval(i, t)
            task = v.tasks.get(t)
            rec[t] = float(task.score) if task is not None else np.nan
            rec[f"{t} low"], rec[f"{t} high"] = lo, hi
            if ed.is_suite:
                rec[f"{t} raw"] = float(task.primary_raw) if task is not None else np.nan
        rec["Invalid-output rate %"] = 100 * invalid_rate(v)
        rec["Generation errors"] = int(v.generation_errors)
        rec["Prompt tokens"], rec["Completion tokens"] = v.tokens
        rec["Notes"] = "; ".join(_notes(v))
        rec["File"] = model_key(v)
        records.append(rec)
    return pd.DataFrame.from_records(records, columns=cols)


def _params(v: Verdict) -> Any:
    md = v.model_info.metadata if v.model_info is not None else None
    return md.parameters if md is not None and md.parameters is not None else None


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
class LeaderboardView:
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
    if group != "standard" or not ed.publications or ed.is_suite:
        return []
    if filters.providers or filters.weights != "any" or filters.size != "any" or filters.trust != "any":
        return []
    q = filters.search.strip().casefold()
    out = []
    models = [m for p in ed.publications for m in p.models]
    for m in sorted(models, key=lambda m: (-m.yoxla, m.model)):
        if q and q not in m.model.casefold():
            continue
        num = {h: m.yoxla, **{block_title(b): m.blocks.get(b, np.nan) for b in BLOCKS}}
        rec: dict[str, Any] = {"Rank": REPORTED_RANK, "Model": m.model, **{k: _r(x) for k, x in num.items()}}
        rec["Trust"] = REPORTED_TRUST
        out.append((rec, num))
    return out


def leaderboard_view(
    frame: pd.DataFrame,
    ed: EditionData,
    group: str = "standard",
    filters: Filters | None = None,
    columns: Iterable[str] = (),
) -> LeaderboardView:
    """The compact table: rank, model, YOXLA ±, the four blocks, trust; more on request.

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
        "task scores" in columns or ed.is_suite,  # a suite has no blocks: its tasks are the columns
        "diagnostics" in columns,
    )
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
            t = block_title(b)
            rec[t] = pm(row[t], row[f"{t} low"], row[f"{t} high"]) if with_iv else _r(row[t])
            num[t] = row[t]
        if with_tasks:
            for tid in r.task_ids:
                if lower_is_better(ed, tid):
                    rec[task_label(ed, tid)] = raw_text(row[f"{tid} raw"])
                    num[task_label(ed, tid)] = row[f"{tid} raw"]
                else:
                    num[task_label(ed, tid)] = row[tid]
                    rec[task_label(ed, tid)] = (
                        pm(row[tid], row[f"{tid} low"], row[f"{tid} high"])
                        if with_iv or ed.is_suite
                        else _r(row[tid])
                    )
        rec["Trust"] = "✔ verified" if row["Trust"] == "verified" else "community"
        if with_diag:
            rec["Provider"] = row["Provider"]
            rec["Size"] = "" if pd.isna(row["Parameters"]) else f"{row['Parameters'] / 1e9:.3g}B"
            rec["Weights"] = row["Weights"]
            rec["Licence"] = row["Licence"]
            rec["Invalid %"] = f"{row['Invalid-output rate %']:.1f}"
            rec["Gen. errors"] = str(int(row["Generation errors"]))
            rec["Tokens in"] = _tokens(row["Prompt tokens"])
            rec["Tokens out"] = _tokens(row["Completion tokens"])
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
    cols = list(rows[0]) if rows else ["Rank", "Model", h, *map(block_title, r.blocks), "Trust"]
    reported_records = _reported_records(ed, group, filters, h)
    reported = [{k: rec.get(k, "") for k in cols} for rec, _ in reported_records]
    rows += reported
    nums += [num for _, num in reported_records]
    keys += [None] * len(reported)
    links += [None] * len(reported)
    floor_row = None
    summary = ed.reference.summary(ed.block_tasks())
    if summary is not None and len(rows):
        rec = {k: "" for k in cols}
        rec.update(Rank="—", Model=FLOOR_NAME, Trust="reference")
        num = {h: summary["yoxla"], **{block_title(b): summary["blocks"].get(b, np.nan) for b in r.blocks}}
        if with_tasks:
            num.update({task_label(ed, tid): ed.reference.best(tid) or np.nan for tid in r.task_ids})
        rec.update({k: _r(x) for k, x in num.items()})
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
    return LeaderboardView(
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


def _tokens(value: Any) -> str:
    return "" if value is None or pd.isna(value) else f"{int(value):,}"


def unchecked_table(ed: EditionData) -> pd.DataFrame:
    """Admitted files whose scores could not be re-checked here: listed apart, never ranked."""
    head, key = f"{ed.headline} (as stored)", "suite" if ed.is_suite else "yoxla"
    parts = dict(ed.suite.group_names) if ed.suite is not None else {b: block_title(b) for b in BLOCKS}
    cols = ["Model", "Provider", "Trust", head, *parts.values(), "Why not re-checked", "File"]
    out = []
    for v in ed.unchecked:
        rec: dict[str, Any] = {"Model": v.name, "Provider": v.provider, "Trust": trust_badge(v)}
        stored = v.scores.get(key)
        rec[head] = _r(float(stored) if stored is not None else np.nan)
        for b, title in parts.items():
            rec[title] = _r(float((v.scores.get("groups" if ed.is_suite else "blocks") or {}).get(b, np.nan)))
        why = next((n for n in v.notes if n.startswith(NOT_RECHECKED + ": ")), None)
        rec["Why not re-checked"] = (
            why.removeprefix(NOT_RECHECKED + ": ") if why else ed.rows_problem or NOT_RECHECKED
        )
        rec["File"] = v.key
        out.append(rec)
    return pd.DataFrame(out, columns=cols)


def reported_table(ed: EditionData) -> pd.DataFrame:
    cols = ["Model (as reported)", *[block_title(b) for b in BLOCKS], "YOXLA", "Source"]
    out = []
    for pub in ed.publications:
        for m in pub.models:
            rec: dict[str, Any] = {"Model (as reported)": m.model}
            for b in BLOCKS:
                rec[block_title(b)] = _r(m.blocks.get(b, float("nan")), 2)
            rec["YOXLA"] = _r(m.yoxla, 2)
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
                    for b in BLOCKS
                    if b in m.blocks and b in v.scores.get("blocks", {})
                ]
                for level, rep, adm in levels:
                    out.append(
                        {
                            "Model (as reported)": m.model,
                            "Admitted file": v.key,
                            "Board": board,
                            "Level": level,
                            "Reported": _r(rep, 2),
                            "Admitted": _r(adm, 2),
                            "Admitted − reported": f"{adm - rep:+.2f}",
                        }
                    )
    return pd.DataFrame(out, columns=cols)


# Blocks -----------------------------------------------------------------------------------------


def block_table(ed: EditionData, block: str) -> pd.DataFrame:
    """Per group (a benchmark block, a suite group): each model's group score and its tasks'
    scores with intervals, and their primary metrics."""
    r = ed.standard
    tids = ed.groups_of_tasks().get(block, [])
    out = []
    for i, v in enumerate(r.models):
        rec: dict[str, Any] = {
            "Rank": r.rank(i),
            "Model": v.name,
            ed.group_name(block): pm(group_score(v, block), *r.block_interval(i, block)),
        }
        for tid in tids:
            t = v.tasks.get(tid)
            if t is None:
                continue
            rec[task_label(ed, tid)] = pm(t.score, *r.task_interval(i, tid))
            rec[f"{task_label(ed, tid)}: {primary_name(ed, tid)}"] = round(t.primary_raw, 4)
        out.append(rec)
    return pd.DataFrame(out)


def primary_name(ed: EditionData, task_id: str) -> str:
    """A task's primary metric's name, as its suite definition gives it."""
    if ed.suite is not None:
        return ed.suite.primary.get(task_id, "score")
    return load_suite().task(task_id).primary


# Tasks ------------------------------------------------------------------------------------------


def spreads_table(ed: EditionData) -> pd.DataFrame:
    """Per task: lowest, highest and range across models; floor and chance; does it separate?"""
    r = ed.standard
    cols = [
        "Task",
        "Block",
        "Lowest",
        "Highest",
        "Range",
        "Median 95% interval width",
        "Best floor",
        "Chance",
        "Separates models",
    ]
    if r.empty:
        return pd.DataFrame(columns=cols)
    out: list[dict[str, Any]] = []
    for ti, tid in enumerate(r.task_ids):
        s = np.array([v.tasks[tid].score if tid in v.tasks else np.nan for v in r.models])
        s = s[np.isfinite(s)]
        task = benchmark_task(tid)
        block = block_title(task.block) if task is not None else "suite"
        if not len(s):  # a suite task whose primary metric is lower-is-better: no 0-100 score
            out.append({"Task": tid, "Block": block, "Separates models": "no 0–100 score (lower is better)"})
            continue
        widths = r.task_hi[:, ti] - r.task_lo[:, ti]
        widths = widths[np.isfinite(widths)]
        width = float(np.median(widths)) if len(widths) else float("nan")
        rng = float(s.max() - s.min())
        separates = len(r.models) > 1 and rng > NO_SEPARATION_RATIO * width
        chance = ed.reference.chance.get(tid)
        out.append(
            {
                "Task": tid,
                "Block": block,
                "Lowest": round(float(s.min()), 1),
                "Highest": round(float(s.max()), 1),
                "Range": round(rng, 1),
                "Median 95% interval width": round(width, 1) if np.isfinite(width) else NA,
                "Best floor": _r(ed.reference.best(tid) or float("nan")),
                "Chance": NA if chance is None else _r(chance),
                "Separates models": "yes"
                if separates
                else (
                    "one model only"
                    if len(r.models) < 2
                    else (
                        "no interval to compare with"
                        if not np.isfinite(width)
                        else "no: range within the noise"
                    )
                ),
            }
        )
    frame = pd.DataFrame(out, columns=cols)
    order = frame["Range"].astype(float).fillna(-1.0).sort_values(ascending=False, kind="stable").index
    return frame.loc[order].reset_index(drop=True)


def task_models_table(r: Ranked, task_id: str) -> pd.DataFrame:
    """Every model's score on one task, best first, with interval, rank range and primary metric."""
    cols = ["Rank on task", "Model", "Score", "95% interval", "Primary metric (raw)", "Invalid %"]
    if r.empty or task_id not in r.task_ids:
        return pd.DataFrame(columns=cols)
    ti = r.task_ids.index(task_id)
    here = [i for i in range(len(r.models)) if task_id in r.models[i].tasks]
    lower = any(not r.models[i].tasks[task_id].higher_is_better for i in here)

    def key(i: int) -> tuple[float, str]:
        t = r.models[i].tasks[task_id]
        value = t.primary_raw if lower else -t.score
        return (value if np.isfinite(value) else float("inf"), r.models[i].name)

    judged = any(r.models[i].tasks[task_id].judge_scored for i in here)
    out = []
    for i in sorted(here, key=key):
        v = r.models[i]
        t = v.tasks[task_id]
        rec: dict[str, Any] = {
            "Rank on task": r.task_rank(i, task_id),
            "Model": v.name,
            "Score": round(t.score, 1) if np.isfinite(t.score) else NA,
            "95% interval": interval_text(r.task_lo[i, ti], r.task_hi[i, ti])
            if np.isfinite(r.task_lo[i, ti])
            else NA,
            "Primary metric (raw)": round(t.primary_raw, 4) if np.isfinite(t.primary_raw) else NA,
            "Invalid %": f"{100 * float(t.metrics.get('invalid_output_rate', 0.0)):.1f}",
        }
        if judged:
            rec["Judge"] = judge_text(v, task_id)
        out.append(rec)
    return pd.DataFrame(out, columns=cols + (["Judge"] if judged else []))


def floors_table(ed: EditionData, task_id: str) -> pd.DataFrame:
    cols = ["Strategy", "Score", "Best"]
    f = ed.reference.floors.get(task_id)
    if f is None:
        return pd.DataFrame(columns=cols)
    rows = sorted(f.strategies.items(), key=lambda kv: -kv[1])
    return pd.DataFrame(
        [
            {"Strategy": s, "Score": round(x, 1), "Best": "◀ best" if s == f.best_strategy else ""}
            for s, x in rows
        ],
        columns=cols,
    )


# Breakdowns -------------------------------------------------------------------------------------


def breakdown_tasks(ed: EditionData) -> list[str]:
    """The board's tasks with a breakdown field (:meth:`EditionData.breakdown_fields`)."""
    return [t for t in ed.standard.task_ids if ed.breakdown_fields(t)]


def breakdown_key(task_id: str, ed: EditionData | None = None, field_name: str | None = None) -> str:
    """The metric a file stores a task's breakdown under (``per_<field>_accuracy`` or ``…_score``):
    the first stored one of a suite task's fields (or ``field_name``), the benchmark task's own."""
    if ed is not None and ed.suite is not None:
        fields = ed.suite.breakdowns.get(task_id) or ["class"]
        wanted = field_name if field_name in fields else fields[0]
        for v in (v for g in ed.boards.values() for v in g.models):
            rec = v.tasks.get(task_id)
            for key in rec.metrics if rec is not None else ():
                if breakdown.metric_field(key) == wanted:
                    return key
        return f"per_{wanted}_accuracy"
    task = load_suite().task(task_id)
    suffix = "accuracy" if task.evaluator == "classification" else "score"
    return f"per_{task.breakdown}_{suffix}"


def breakdown_display(
    ed: EditionData, models: list[Verdict], task_id: str, by: breakdown.Field
) -> pd.DataFrame:
    """Text cells ``"72.5 (n=40)"`` per model and value of ``by`` (``*``: fewer than the minimum n)."""
    return breakdown.display(models, task_id, by, ed.row_values.get(task_id))


def modal_share_table(r: Ranked) -> pd.DataFrame:
    """Share of a model's valid answers that are its most frequent answer, per choice task."""
    suite = load_suite()
    tids = [
        t
        for t in r.task_ids
        if (suite.task(t).evaluator == "classification" if t in suite.tasks else True)
        and any("modal_answer_share" in v.tasks[t].metrics for v in r.models if t in v.tasks)
    ]
    out = []
    for v in r.models:
        rec: dict[str, Any] = {"Model": v.name}
        for tid in tids:
            m = v.tasks[tid].metrics if tid in v.tasks else {}
            share = m.get("modal_answer_share")
            rec[task_short(tid)] = (
                "" if share is None else f"{100 * share:.0f}% {m.get('modal_answer') or ''}".strip()
            )
        out.append(rec)
    return pd.DataFrame(out, columns=["Model", *[task_short(t) for t in tids]])


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


# Diagnostics ------------------------------------------------------------------------------------


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


def span_tasks(task_ids: Iterable[str]) -> list[str]:
    suite = load_suite()
    return [t for t in task_ids if t in suite.tasks and suite.task(t).evaluator in ("span", "abstention")]


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


# Model page -------------------------------------------------------------------------------------


def model_facts(v: Verdict, ed: EditionData) -> pd.DataFrame:
    """What the file says about the model and the run, and what admission found; all text."""
    info = v.model_info
    md = info.metadata if info is not None else None
    cond = v.conditions if isinstance(v.conditions, RunConditions) else None
    scond = v.conditions if isinstance(v.conditions, SuiteRunConditions) else None
    suite_rows: list[tuple[str, Any]] = []
    if ed.suite is not None:
        suite_rows = [
            ("Suite", ed.suite.id),
            ("Suite manifest", ed.suite.path or None),
            ("Judge model", v.judge),
            ("Judge-scored tasks", ", ".join(t for t, r in v.tasks.items() if r.judge_scored) or "none"),
        ]
    rows: list[tuple[str, Any]] = [
        ("Name on the board", v.name),
        # The file comes second: it names the row exactly, and a long facts table is scrolled
        # (the browser draws only the rows in view).
        ("File", v.key),
        ("Provider", v.provider),
        ("Model id (as asked)", v.model),
        ("Model id (as the provider reported it)", info.reported_model if info else None),
        ("Parameters", size_text(v) or None),
        ("Weights", None if weights(v) == UNKNOWN else weights(v)),
        ("Licence", md.licence if md else None),
        ("Model card", md.card_url if md else None),
        ("Hub repository", md.hub_repo if md else None),
        ("Hub revision (commit)", md.hub_revision if md else None),
        ("Board", GROUP_TITLES.get(v.group, v.group) if v.rechecked else f"none: {NOT_RECHECKED}"),
        *suite_rows,
        (
            "Reasoning (thinking)",
            ("on" if cond.thinking else "off")
            if cond is not None
            else (("on" if scond.thinking else "off") if scond is not None else None),
        ),
        ("Temperature", _temperature(v, cond, scond)),
        ("System prompt", cond.system_prompt if cond is not None else ("contract" if scond else None)),
        ("Result format", v.result_format + (f" (suite {v.source_suite})" if v.source_suite else "")),
        ("Run id", v.run_id),
        ("Created", v.created_at),
        ("Trust", v.trust),
        ("Signing key", v.key_id),
        ("Content digest", v.content_sha256),
        ("Scores re-checked", "yes" if v.rechecked else f"no: {ed.rows_problem or NOT_RECHECKED}"),
        ("Generation errors", v.generation_errors),
        ("Prompt tokens", _tokens(v.tokens[0]) or None),
        ("Completion tokens", _tokens(v.tokens[1]) or None),
        ("Reasoning tokens", _tokens(v.usage.reasoning_tokens) if v.usage is not None else None),
        ("Notes", " | ".join(v.notes)),
    ]
    return pd.DataFrame(
        [{"Field": k, "Value": "not stated" if val is None or val == "" else str(val)} for k, val in rows],
        columns=["Field", "Value"],
    )


def _temperature(v: Verdict, cond: RunConditions | None, scond: SuiteRunConditions | None) -> Any:
    """The run's temperature: one set for every task, else each task's own (with its value
    when the tasks share one). A suite run states each task's as run, the manifest's unless
    the file is ranked apart (non-standard)."""
    if cond is not None:
        return "each task's own (0)" if cond.temperature is None else cond.temperature
    if scond is None:
        return None
    found = sorted({g.temperature for g in scond.generation.values() if g.temperature is not None})
    shared = f"{found[0]:g}" if len(found) == 1 else None
    if v.board == "non-standard":
        return shared or "changed for some tasks (see the file's run conditions)"
    return f"each task's own ({shared})" if shared is not None else "each task's own"


def model_scores(v: Verdict, r: Ranked | None, ed: EditionData) -> pd.DataFrame:
    """YOXLA, blocks and tasks with interval, rank range on the board, floor and chance."""
    cols = [
        "Level",
        "Name",
        "Score",
        "95% interval",
        "Rank",
        "Best floor",
        "Chance",
        "Above floor",
        "Items",
        "Primary metric",
    ]
    i = r.index(v.key) if r is not None else None
    blocks = ed.block_tasks()

    def items(tids: Iterable[str]) -> int:  # a row's n: the items of its tasks (they differ by task)
        return sum(len(v.tasks[t].ids) for t in tids if t in v.tasks)

    ref = ed.reference.summary(blocks)
    out: list[dict[str, Any]] = []

    def add(
        level: str,
        name: str,
        score: float,
        iv: tuple[float, float] | None,
        rank: str,
        floor: float | None,
        chance: float | None,
        primary: str,
        n_items: int,
    ) -> None:
        finite = iv is not None and bool(np.isfinite(iv[0]) and np.isfinite(iv[1]))
        out.append(
            {
                "Level": level,
                "Name": name,
                "Score": round(score, 1) if np.isfinite(score) else NA,
                "95% interval": interval_text(*iv) if iv is not None and finite else NA,
                "Rank": rank,
                "Best floor": NA if floor is None else _r(floor),
                "Chance": NA if chance is None else _r(chance),
                "Above floor": NA if floor is None else f"{score - floor:+.1f}",
                "Items": n_items,
                "Primary metric": primary,
            }
        )

    placed = (r, i) if r is not None and i is not None else None
    n = len(r.models) if r is not None else 0

    def add_task(tid: str, floor: float | None, chance: float | None, primary: str) -> None:
        rank = f"{placed[0].task_rank(placed[1], tid)} of {n}" if placed else NA
        iv = placed[0].task_interval(placed[1], tid) if placed else None
        add("task", tid, v.tasks[tid].score, iv, rank, floor, chance, primary, items([tid]))

    add(
        "overall",
        ed.headline,
        headline(v),
        placed[0].yoxla_interval(placed[1]) if placed else None,
        f"{placed[0].rank(placed[1])} of {n}" if placed else NA,
        ref["yoxla"] if ref else None,
        None,
        "mean of the tasks with a 0–100 score" if ed.is_suite else "mean of the blocks",
        items(v.tasks),
    )
    if ed.suite is not None:
        for tid in ed.suite.tasks:
            t = v.tasks.get(tid)
            if t is None:
                continue
            primary = ed.suite.primary.get(tid, "primary metric")
            direction = "" if t.higher_is_better else " (lower is better: no 0–100 score)"
            judge = f" · judge: {judge_text(v, tid)}" if t.judge_scored else ""
            add_task(tid, None, None, f"{primary} = {raw_text(t.primary_raw)}{direction}{judge}")
        return pd.DataFrame(out, columns=cols).drop(columns=["Best floor", "Chance", "Above floor"])
    suite = load_suite()
    for b, tids in blocks.items():
        add(
            "block",
            block_title(b),
            float(v.scores["blocks"].get(b, np.nan)),
            placed[0].block_interval(placed[1], b) if placed else None,
            NA,
            ref["blocks"].get(b) if ref else None,
            None,
            "mean of its tasks",
            items(tids),
        )
        for tid in tids:
            primary = f"{suite.task(tid).primary} = {v.tasks[tid].primary_raw:.4f}"
            add_task(tid, ed.reference.best(tid), ed.reference.chance.get(tid), primary)
    return pd.DataFrame(out, columns=cols)


def model_diagnostics(v: Verdict) -> pd.DataFrame:
    """Long form: every scalar metric of every task (absent ones read n/a)."""
    out = []
    for tid, t in v.tasks.items():
        for k in metric_keys(tid, [v]):
            out.append({"Task": tid, "Metric": metric_label(k), "Value": metric_text(k, t.metrics.get(k))})
    return pd.DataFrame(out, columns=["Task", "Metric", "Value"])


def model_breakdowns(v: Verdict, min_n: int = BREAKDOWN_MIN_N) -> pd.DataFrame:
    """Every breakdown the file stores (per class, per breakdown field), per task: value, score %, n."""
    out = []
    for tid, t in v.tasks.items():
        for key, cells in t.metrics.items():
            field_name = breakdown.metric_field(key)
            if not field_name or not isinstance(cells, dict):
                continue
            for value, c in cells.items():
                out.append(
                    {
                        "Task": tid,
                        "By": field_name,
                        "Value": str(value),
                        "Score %": round(100 * c["accuracy"], 1),
                        "n": int(c["n"]),
                        "Few items": "yes" if c["n"] < min_n else "",
                    }
                )
    return pd.DataFrame(out, columns=["Task", "By", "Value", "Score %", "n", "Few items"])


def model_near_miss(v: Verdict) -> pd.DataFrame:
    out = []
    for tid, t in v.tasks.items():
        invalid = int(t.metrics.get("n", 0)) - int(t.metrics.get("n_valid", 0))
        for kind, c in sorted((t.metrics.get("near_miss") or {}).items(), key=lambda kv: -kv[1]):
            out.append({"Task": tid, "Near-miss kind": kind, "Outputs": int(c), "Of invalid": invalid})
    return pd.DataFrame(out, columns=["Task", "Near-miss kind", "Outputs", "Of invalid"])


def weakest_tasks(v: Verdict, ed: EditionData, k: int = 3) -> pd.DataFrame:
    """The tasks with the smallest margin over their floor (or the lowest scores without floors)."""
    cols = ["Task", "Score", "Best floor", "Margin", "Wrong", "Invalid"]
    out = []
    for tid, t in v.tasks.items():
        if not np.isfinite(t.score):  # lower is better: no 0-100 score to rank by
            continue
        floor = ed.reference.best(tid)
        oc = outcome_counts(t)
        out.append(
            {
                "Task": tid,
                "Score": round(t.score, 1),
                "Best floor": NA if floor is None else _r(floor),
                "Margin": round(t.score - (floor or 0.0), 1),
                "Wrong": int(oc.get("wrong", 0)),
                "Invalid": int(t.metrics.get("n", 0)) - int(t.metrics.get("n_valid", 0)),
            }
        )
    df = pd.DataFrame(out, columns=cols)
    return df.sort_values(["Margin", "Task"]).head(k).reset_index(drop=True)


# Compare ----------------------------------------------------------------------------------------


def compare_table(r: Ranked, key_a: str, key_b: str) -> pd.DataFrame:
    """A minus B per task, block and overall, with paired bootstrap intervals and McNemar's test."""
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
    suite_board = a.suite is not None
    out: list[dict[str, Any]] = []

    def items(block: str | None = None) -> dict[str, Any]:  # a row's n: its tasks' items, which differ
        def in_block(t: str) -> bool:
            task = benchmark_task(t)
            return block is None or (task is not None and task.block == block)

        return {"items": sum(len(a.tasks[t].ids) for t in boot.task_ids if in_block(t))}

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
            "Suite score" if suite_board else "YOXLA",
            headline(a),
            headline(b),
            boot.yoxla_reps[ia],
            boot.yoxla_reps[ib],
            items(),
        )
    for bi, blk in enumerate(boot.blocks):
        if blk in a.scores.get("blocks", {}):
            row(
                "block",
                block_title(blk),
                float(a.scores["blocks"][blk]),
                float(b.scores["blocks"][blk]),
                boot.block_reps[ia, bi],
                boot.block_reps[ib, bi],
                items(blk),
            )
    for ti, tid in enumerate(boot.task_ids):
        ta, tb = a.tasks[tid], b.tasks[tid]
        extra: dict[str, Any] = {"items": len(ta.ids)}
        task = benchmark_task(tid)
        binary = (
            task.evaluator == "classification"
            if task is not None
            else bool(np.isin(ta.scores, (0.0, 1.0)).all() and np.isin(tb.scores, (0.0, 1.0)).all())
        )
        if binary and ta.ids == tb.ids:
            n10, n01, p = mcnemar(ta.scores >= 1.0, tb.scores >= 1.0)
            extra.update(n10=str(n10), n01=str(n01), p=f"{p:.3f}" if p >= 0.001 else "<0.001")
        row("task", tid, ta.score, tb.score, boot.task_reps[ia, ti], boot.task_reps[ib, ti], extra)
    return pd.DataFrame(out, columns=cols)


# Methodology ------------------------------------------------------------------------------------


def excluded_table(board: Board, edition: str | None = None, suite: str | None = None) -> pd.DataFrame:
    """Excluded and superseded files of one board (of every board when neither is given), and
    the files that name no board here (unreadable, an unknown edition or suite)."""
    return pd.DataFrame(
        [
            {
                "File": v.key or Path(v.path).name,
                "Board": v.edition or (f"suite {v.suite}" if v.suite else "none"),
                "Status": v.status,
                "Reasons": " | ".join(v.reasons),
            }
            for v in board.listed(edition, suite)
            if not v.shown
        ],
        columns=["File", "Board", "Status", "Reasons"],
    )


def review_table(board: Board, edition: str, root: Path) -> tuple[pd.DataFrame, list[str]]:
    """(review status per task, problems): how many rows of each task people have reviewed
    (``yoxla.annotation.review_status`` on ``root/<edition>``; model annotations never count)."""
    from yoxla.annotation import review_status
    from yoxla.annotation.sheets import SheetError
    from yoxla.safetext import one_line

    cols = ["Task", "Rows", "Reviewed", "Reviewed %", "By agreement", "By resolution", "Open"]
    cols += ["Not annotated", "People", "Model annotators (never count)"]
    try:
        rows = board.rows(edition)
    except Exception as exc:  # a broken data source leaves the table out, never the app
        return pd.DataFrame(columns=cols), [f"the {edition} rows could not be read ({type(exc).__name__})"]
    if rows is None:
        return pd.DataFrame(columns=cols), [
            f"the {edition} rows are not available here, so the review status is not shown"
        ]
    try:  # unreadable sheets are problems already; anything else leaves the table out, never the app
        status, problems = review_status(root / edition, load_suite().tasks, rows)
    except (SheetError, OSError) as exc:
        return pd.DataFrame(columns=cols), [one_line(str(exc))]
    out = []
    for s in status.values():
        annotatable = s.annotatable
        out.append(
            {
                "Task": s.task,
                "Rows": s.rows,
                "Reviewed": s.reviewed if annotatable else NA,
                "Reviewed %": f"{100 * s.reviewed / s.rows:.0f}%" if annotatable and s.rows else NA,
                "By agreement": s.by_agreement if annotatable else NA,
                "By resolution": s.by_resolution if annotatable else NA,
                "Open": s.open if annotatable else NA,
                "Not annotated": s.not_annotated if annotatable else "not annotatable (open answers)",
                "People": ", ".join(s.people) or "none",
                "Model annotators (never count)": ", ".join(s.models) or "none",
            }
        )
    return pd.DataFrame(out, columns=cols), list(problems)


def admitted_table(ed: EditionData) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "File": model_key(v),
                "Model": v.name,
                "Provider": v.provider,
                "Trust": v.trust,
                "Board": GROUP_TITLES.get(v.group, v.group) if v.rechecked else NOT_RECHECKED,
                "Signing key": v.key_id or "",
                "Notes": " | ".join(v.notes),
            }
            for v in ed.all_models()
        ],
        columns=["File", "Model", "Provider", "Trust", "Board", "Signing key", "Notes"],
    )


def model_choices(ed: EditionData) -> list[tuple[str, str]]:
    """(label, key) for the model page's picker: every shown file of the edition."""
    out = []
    for v in ed.all_models():
        where = (
            ""
            if v.rechecked and v.group == "standard"
            else (f" [{v.group}]" if v.rechecked else " [not re-checked]")
        )
        out.append((f"{v.name} · {v.provider}{where}", v.key))
    return out


def ranked_choices(r: Ranked) -> list[tuple[str, str]]:
    return [(f"{v.name} · {v.provider}", v.key) for v in r.models]


# Compatibility: the whole standard board of an edition, straight from a Board --------------------


def leaderboard_table(board: Board, edition: str, search: str = "") -> pd.DataFrame:
    """One row per ranked model of the edition's standard board (numbers unrounded)."""
    from yoxla.leaderboard.floors import Reference

    r = rank_board(board, edition, "standard")
    empty = Ranked(edition, "x", [], r.task_ids, r.blocks)
    ed = EditionData(
        edition, {"standard": r, "thinking": empty, "non-standard": empty}, [], Reference(edition), [], None
    )
    frame = leaderboard_frame(ed)
    if search.strip():
        frame = frame[Filters(search=search).mask(frame)]
    return frame.reset_index(drop=True)
