"""pandas tables for every tab. Plain functions of a Board; no Gradio here.

Cells hold plain values (text and numbers); the app shows them in ``gr.Dataframe``, which
renders text, never HTML.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from yoxla.leaderboard.admission import NOT_RECHECKED, Verdict
from yoxla.leaderboard.board import Board, model_key
from yoxla.leaderboard.bootstrap import Boot, arena_ranks, mcnemar, paired_interval
from yoxla.suite import load_suite

BLOCK_TITLES = {
    "understanding": "Understanding",
    "language": "Language",
    "knowledge": "Knowledge",
    "rag": "RAG",
}
BREAKDOWN_MIN_N = 10
NO_SEPARATION_RATIO = 1.0  # a task whose range is below this many median CI widths no longer separates


def block_title(block: str) -> str:
    return BLOCK_TITLES.get(block, block)


def _ci(lo: float, hi: float) -> str:
    return f"{lo:.1f} – {hi:.1f}"


def leaderboard_table(board: Board, edition: str, search: str = "") -> pd.DataFrame:
    """Headline table: rank by interval overlap, scores with 95% bootstrap intervals."""
    models = board.shown(edition)
    suite = load_suite()
    blocks = [b for b in suite.blocks if any(suite.task(t).block == b for t in board.task_ids(edition))]
    cols = ["Rank", "Model", "Provider", "Trust", "YOXLA", "YOXLA 95% CI"]
    for b in blocks:
        cols += [block_title(b), f"{block_title(b)} 95% CI"]
    cols += ["Generation errors", "Notes", "File"]
    if not models:
        return pd.DataFrame(columns=cols)
    boot = board.boot(edition)
    lo, hi = Boot.interval(boot.yoxla_reps)
    ranks = arena_ranks(lo, hi)
    rank_counts = pd.Series(ranks).value_counts()
    blo, bhi = Boot.interval(boot.block_reps)
    records: list[dict[str, Any]] = []
    for i, v in enumerate(models):
        notes = []
        if rank_counts[ranks[i]] > 1:
            notes.append(f"tied with {rank_counts[ranks[i]] - 1} other(s)")
        if v.generation_errors:
            notes.append(f"⚠ {v.generation_errors} generation error(s)")
        if not v.rechecked:
            notes.append(NOT_RECHECKED)
        rec: dict[str, Any] = {
            "Rank": int(ranks[i]),
            "Model": v.name,
            "Provider": v.provider,
            "Trust": v.trust,
            "YOXLA": round(float(v.scores["yoxla"]), 2),
            "YOXLA 95% CI": _ci(lo[i], hi[i]),
        }
        for b in blocks:
            bi = boot.blocks.index(b)
            rec[block_title(b)] = round(float(v.scores["blocks"].get(b, np.nan)), 2)
            rec[f"{block_title(b)} 95% CI"] = _ci(blo[i, bi], bhi[i, bi])
        rec["Generation errors"] = int(v.generation_errors)
        rec["Notes"] = "; ".join(notes)
        rec["File"] = model_key(v)
        records.append(rec)
    df = pd.DataFrame.from_records(records, columns=cols).sort_values(
        ["Rank", "YOXLA"], ascending=[True, False]
    )
    if search.strip():
        q = search.strip().lower()
        mask = df["Model"].str.lower().str.contains(q, regex=False) | df["Provider"].str.lower().str.contains(
            q, regex=False
        )
        df = df[mask]
    return df.reset_index(drop=True)


def block_table(board: Board, edition: str, block: str) -> pd.DataFrame:
    """Per block: each model's task scores and the primary metric's raw value."""
    suite = load_suite()
    tids = [t for t in board.task_ids(edition) if suite.task(t).block == block]
    records = []
    for v in board.shown(edition):
        rec: dict[str, Any] = {
            "Model": v.name,
            block_title(block): round(float(v.scores["blocks"].get(block, np.nan)), 2),
        }
        for tid in tids:
            t = v.tasks[tid]
            rec[tid] = round(t.score, 2)
            rec[f"{tid} · {suite.task(tid).primary}"] = round(t.primary_raw, 4)
        records.append(rec)
    return pd.DataFrame.from_records(records)


def block_long(board: Board, edition: str, block: str) -> pd.DataFrame:
    """Long form of the block table for figures: model, task, score, interval."""
    suite = load_suite()
    models = board.shown(edition)
    if not models:
        return pd.DataFrame(columns=["Model", "Task", "Score", "Low", "High"])
    boot = board.boot(edition)
    lo, hi = Boot.interval(boot.task_reps)
    out = []
    for i, v in enumerate(models):
        for ti, tid in enumerate(boot.task_ids):
            if suite.task(tid).block == block:
                out.append(
                    {
                        "Model": v.name,
                        "Task": tid,
                        "Score": v.tasks[tid].score,
                        "Low": lo[i, ti],
                        "High": hi[i, ti],
                    }
                )
    return pd.DataFrame(out)


def spreads_table(board: Board, edition: str) -> pd.DataFrame:
    """Per task: lowest, highest and range across shown models; small range = no longer separates."""
    models = board.shown(edition)
    cols = [
        "Task",
        "Block",
        "Lowest",
        "Lowest model",
        "Highest",
        "Highest model",
        "Range",
        "Median 95% CI width",
        "Separates models",
    ]
    if not models:
        return pd.DataFrame(columns=cols)
    boot = board.boot(edition)
    lo, hi = Boot.interval(boot.task_reps)
    suite = load_suite()
    out = []
    for ti, tid in enumerate(boot.task_ids):
        s = np.array([v.tasks[tid].score for v in models])
        width = float(np.median(hi[:, ti] - lo[:, ti]))
        rng = float(s.max() - s.min())
        separates = len(models) > 1 and rng > NO_SEPARATION_RATIO * width
        out.append(
            {
                "Task": tid,
                "Block": block_title(suite.task(tid).block),
                "Lowest": round(float(s.min()), 2),
                "Lowest model": models[int(s.argmin())].name,
                "Highest": round(float(s.max()), 2),
                "Highest model": models[int(s.argmax())].name,
                "Range": round(rng, 2),
                "Median 95% CI width": round(width, 2),
                "Separates models": "yes" if separates else "no: range within the noise",
            }
        )
    return pd.DataFrame(out, columns=cols).sort_values("Range", ascending=False).reset_index(drop=True)


def task_scores_long(board: Board, edition: str) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"Task": tid, "Model": v.name, "Score": t.score}
            for v in board.shown(edition)
            for tid, t in v.tasks.items()
        ]
    )


# Breakdowns ------------------------------------------------------------------------------


def breakdown_tasks(board: Board, edition: str) -> list[str]:
    suite = load_suite()
    return [t for t in board.task_ids(edition) if suite.task(t).breakdown]


def breakdown_key(task_id: str) -> str:
    task = load_suite().task(task_id)
    suffix = "accuracy" if task.evaluator == "classification" else "score"
    return f"per_{task.breakdown}_{suffix}"


def breakdown_table(
    board: Board, edition: str, task_id: str, min_n: int = BREAKDOWN_MIN_N
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(scores, counts): models x breakdown values, accuracy in % and n. Cells below ``min_n``
    keep their value; the heatmap and the table grey them out rather than hide them."""
    key = breakdown_key(task_id)
    acc: dict[str, dict[str, float]] = {}
    cnt: dict[str, dict[str, float]] = {}
    for v in board.shown(edition):
        per = v.tasks[task_id].metrics.get(key) or {}
        acc[v.name] = {k: 100 * c["accuracy"] for k, c in per.items()}
        cnt[v.name] = {k: c["n"] for k, c in per.items()}
    return pd.DataFrame(acc).T, pd.DataFrame(cnt).T


def breakdown_display(board: Board, edition: str, task_id: str, min_n: int = BREAKDOWN_MIN_N) -> pd.DataFrame:
    """Text cells ``"72.5 (n=40)"``; cells below the minimum n are marked ``"50.0 (n=2, below 10)"``."""
    key = breakdown_key(task_id)
    out = []
    for v in board.shown(edition):
        per = v.tasks[task_id].metrics.get(key) or {}
        rec: dict[str, Any] = {"Model": v.name}
        for k, c in per.items():
            low = f", below {min_n}" if c["n"] < min_n else ""
            rec[k] = f"{100 * c['accuracy']:.1f} (n={c['n']}{low})"
        out.append(rec)
    return pd.DataFrame(out)


def modal_share_table(board: Board, edition: str) -> pd.DataFrame:
    """Share of a model's valid answers that are its most frequent answer, per choice task."""
    suite = load_suite()
    tids = [t for t in board.task_ids(edition) if suite.task(t).evaluator == "classification"]
    out = []
    for v in board.shown(edition):
        rec: dict[str, Any] = {"Model": v.name}
        for tid in tids:
            m = v.tasks[tid].metrics
            share = m.get("modal_answer_share")
            rec[tid] = "" if share is None else f"{100 * share:.0f}% {m.get('modal_answer') or ''}".strip()
        out.append(rec)
    return pd.DataFrame(out)


def span_table(board: Board, edition: str) -> pd.DataFrame:
    suite = load_suite()
    tids = [t for t in board.task_ids(edition) if suite.task(t).evaluator in ("span", "abstention")]
    return pd.DataFrame(
        [
            {
                "Model": v.name,
                "Task": tid,
                "Span recall": round(100 * float(v.tasks[tid].metrics.get("span_recall", 0.0)), 2),
                "Span precision": round(100 * float(v.tasks[tid].metrics.get("span_precision", 0.0)), 2),
            }
            for v in board.shown(edition)
            for tid in tids
        ],
        columns=["Model", "Task", "Span recall", "Span precision"],
    )


def near_miss_table(board: Board, edition: str, task_id: str | None = None) -> pd.DataFrame:
    """Invalid outputs by near-miss kind, per model (one task, or all tasks)."""
    out = []
    for v in board.shown(edition):
        rec: dict[str, Any] = {"Model": v.name}
        total = 0
        for tid, t in v.tasks.items():
            if task_id and tid != task_id:
                continue
            for kind, c in (t.metrics.get("near_miss") or {}).items():
                rec[kind] = rec.get(kind, 0) + int(c)
            total += int((t.metrics.get("outcomes") or {}).get("invalid", 0)) + int(
                (t.metrics.get("outcomes") or {}).get("truncated", 0)
            )
        rec["Invalid outputs"] = total
        out.append(rec)
    return pd.DataFrame(out).fillna(0)


# Compare ---------------------------------------------------------------------------------


def compare_table(board: Board, edition: str, key_a: str, key_b: str) -> pd.DataFrame:
    """A minus B per task, block and overall, with paired bootstrap intervals and McNemar's test."""
    models = board.shown(edition)
    keys = [model_key(v) for v in models]
    cols = [
        "Level",
        "Name",
        "A",
        "B",
        "A − B",
        "95% CI of A − B",
        "Real difference?",
        "A right, B wrong",
        "A wrong, B right",
        "McNemar p",
    ]
    if key_a not in keys or key_b not in keys:
        return pd.DataFrame(columns=cols)
    ia, ib = keys.index(key_a), keys.index(key_b)
    a, b = models[ia], models[ib]
    boot = board.boot(edition)
    suite = load_suite()
    out: list[dict[str, Any]] = []

    def row(
        level: str, name: str, sa: float, sb: float, ra: np.ndarray, rb: np.ndarray, extra: dict[str, Any]
    ) -> None:
        lo, hi = paired_interval(ra, rb)
        real = "yes" if lo > 0 or hi < 0 else "no: interval includes 0"
        out.append(
            {
                "Level": level,
                "Name": name,
                "A": round(sa, 2),
                "B": round(sb, 2),
                "A − B": round(sa - sb, 2),
                "95% CI of A − B": _ci(lo, hi),
                "Real difference?": real,
                **extra,
            }
        )

    row(
        "overall",
        "YOXLA",
        float(a.scores["yoxla"]),
        float(b.scores["yoxla"]),
        boot.yoxla_reps[ia],
        boot.yoxla_reps[ib],
        {},
    )
    for bi, blk in enumerate(boot.blocks):
        if blk in a.scores["blocks"]:
            row(
                "block",
                block_title(blk),
                float(a.scores["blocks"][blk]),
                float(b.scores["blocks"][blk]),
                boot.block_reps[ia, bi],
                boot.block_reps[ib, bi],
                {},
            )
    for ti, tid in enumerate(boot.task_ids):
        ta, tb = a.tasks[tid], b.tasks[tid]
        extra: dict[str, Any] = {}
        if suite.task(tid).evaluator == "classification" and ta.ids == tb.ids:
            n10, n01, p = mcnemar(ta.scores >= 1.0, tb.scores >= 1.0)
            extra = {"A right, B wrong": n10, "A wrong, B right": n01, "McNemar p": round(p, 4)}
        row("task", tid, ta.score, tb.score, boot.task_reps[ia, ti], boot.task_reps[ib, ti], extra)
    df = pd.DataFrame(out, columns=cols)
    for c in ("A right, B wrong", "A wrong, B right", "McNemar p"):
        df[c] = [("" if pd.isna(x) else (f"{x:.4g}" if c == "McNemar p" else str(int(x)))) for x in df[c]]
    return df


# Methodology -------------------------------------------------------------------------------


def excluded_table(board: Board) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "File": Path(v.path).name,
                "Edition": v.edition or "",
                "Status": v.status,
                "Reasons": " | ".join(v.reasons),
            }
            for v in board.excluded()
        ],
        columns=["File", "Edition", "Status", "Reasons"],
    )


def admitted_table(board: Board, edition: str) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "File": model_key(v),
                "Model": v.name,
                "Provider": v.provider,
                "Trust": v.trust,
                "Key": v.key_id or "",
                "Notes": " | ".join(v.notes),
            }
            for v in board.shown(edition)
        ],
        columns=["File", "Model", "Provider", "Trust", "Key", "Notes"],
    )


def model_choices(board: Board, edition: str) -> list[tuple[str, str]]:
    """(label, value) pairs for model pickers: label is the name, value the file name."""
    return [(f"{v.name} · {v.provider}", model_key(v)) for v in board.shown(edition)]


def verdict_line(v: Verdict) -> str:
    return f"{Path(v.path).name}: {v.summary()}"
