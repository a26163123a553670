"""The Model tab's tables and figure: one file's facts, scores, diagnostics, breakdowns and near
misses; plain functions of the prepared data, no Gradio."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from yoxla.admission.verdict import NOT_RECHECKED, Verdict
from yoxla.board import breakdown
from yoxla.board.loading import headline
from yoxla.board.prepared import (
    GROUP_TITLES,
    UNKNOWN,
    EditionData,
    Ranked,
    group_score,
    size_text,
    weights,
)
from yoxla.record.result import RunConditions
from yoxla.record.v2 import RunConditionsV2
from yoxla.views import plot
from yoxla.views.diagnostics import outcome_counts
from yoxla.views.format import (
    NA,
    interval_text,
    judge_text,
    metric_keys,
    metric_label,
    metric_text,
    num_text,
    primary_name,
    task_label,
    tokens_text,
)


def model_facts(v: Verdict, ed: EditionData) -> pd.DataFrame:
    """What the file says about the model and the run, and what admission found; all text."""
    info = v.model_info
    md = info.metadata if info is not None else None
    cond = v.conditions if isinstance(v.conditions, RunConditionsV2) else None
    scond = v.conditions if isinstance(v.conditions, RunConditions) else None
    suite_rows: list[tuple[str, Any]] = [  # the suite the board shows (the benchmark's package suite)
        ("Suite", ed.suite.id),
        ("Suite definition", ed.suite.path or None),
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
        ("Prompt tokens", tokens_text(v.tokens[0]) or None),
        ("Completion tokens", tokens_text(v.tokens[1]) or None),
        ("Reasoning tokens", tokens_text(v.usage.reasoning_tokens) if v.usage is not None else None),
        ("Notes", " | ".join(v.notes)),
    ]
    return pd.DataFrame(
        [{"Field": k, "Value": "not stated" if val is None or val == "" else str(val)} for k, val in rows],
        columns=["Field", "Value"],
    )


def _temperature(v: Verdict, cond: RunConditionsV2 | None, scond: RunConditions | None) -> Any:
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
    """The headline, the groups (the benchmark's blocks) and the tasks with interval, rank range on
    the board, floor and chance (the last three left out where the board has neither)."""
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
    blocks = ed.groups_of_tasks()

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
                "Best floor": NA if floor is None else num_text(floor),
                "Chance": NA if chance is None else num_text(chance),
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
        "mean of the blocks" if ed.by_groups else "mean of the tasks with a 0–100 score",
        items(v.tasks),
    )

    def add_tasks(tids: Iterable[str]) -> None:
        for tid in tids:
            t = v.tasks.get(tid)
            if t is None:
                continue
            raw = f"{t.primary_raw:.4f}" if math.isfinite(t.primary_raw) else NA
            direction = "" if t.higher_is_better else " (lower is better: no 0–100 score)"
            judge = f" · judge: {judge_text(v, tid)}" if t.judge_scored else ""
            primary = f"{primary_name(ed, tid)} = {raw}{direction}{judge}"
            add_task(tid, ed.reference.best(tid), ed.reference.chance.get(tid), primary)

    for b, tids in blocks.items():  # the suite's groups (the benchmark's blocks), each with its tasks
        add(
            "block",
            ed.group_title(b),
            group_score(v, b),
            placed[0].block_interval(placed[1], b) if placed else None,
            NA,
            ref["blocks"].get(b) if ref else None,
            None,
            "mean of its tasks",
            items(tids),
        )
        add_tasks(tids)
    grouped = {t for tids in blocks.values() for t in tids}
    add_tasks(t for t in (r.task_ids if r is not None else ed.standard.task_ids) if t not in grouped)
    frame = pd.DataFrame(out, columns=cols)
    if not ed.has_reference:
        return frame.drop(columns=["Best floor", "Chance", "Above floor"])  # no reference to compare with
    return frame


def model_diagnostics(v: Verdict) -> pd.DataFrame:
    """Long form: every scalar metric of every task (absent ones read n/a)."""
    out = []
    for tid, t in v.tasks.items():
        for k in metric_keys(tid, [v]):
            out.append({"Task": tid, "Metric": metric_label(k), "Value": metric_text(k, t.metrics.get(k))})
    return pd.DataFrame(out, columns=["Task", "Metric", "Value"])


def model_breakdowns(v: Verdict, min_n: int = breakdown.MIN_N) -> pd.DataFrame:
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
                "Best floor": NA if floor is None else num_text(floor),
                "Margin": round(t.score - (floor or 0.0), 1),
                "Wrong": int(oc.get("wrong", 0)),
                "Invalid": int(t.metrics.get("n", 0)) - int(t.metrics.get("n_valid", 0)),
            }
        )
    df = pd.DataFrame(out, columns=cols)
    return df.sort_values(["Margin", "Task"]).head(k).reset_index(drop=True)


def model_figure(v: Verdict, r: Ranked | None, ed: EditionData) -> plot.Figure:
    """One model: every task score with its interval, the task's best floor and chance level."""
    title = "Task scores with 95% intervals" + (
        ", best cue-only floors and chance levels" if ed.has_reference else ""
    )
    i = r.index(v.key) if r is not None else None
    tids = [t for t in v.tasks if math.isfinite(v.tasks[t].score)]
    if not tids:
        return plot.empty_figure(
            title, "No task of this file has a 0–100 score (every one is lower-is-better)."
        )
    labels = [plot.plain(task_label(ed, t)) for t in tids]
    xs = [float(v.tasks[t].score) for t in tids]
    if r is not None and i is not None:
        ivs = [r.task_interval(i, t) for t in tids]
    else:
        ivs = [(x, x) for x in xs]
        title += " (no intervals: scores not re-checked)"
    data = [
        plot.dots(
            xs,
            labels,
            [a for a, _ in ivs],
            [b for _, b in ivs],
            name="this model (95% interval)",
            color=plot.OKABE_ITO[0],
            what="score",
        )
    ]
    data += plot.reference_markers(
        [ed.reference.best(t) for t in tids], [ed.reference.chance.get(t) for t in tids], labels, labels, 18
    )
    return plot.figure(
        data,
        title,
        "task score (0–100)",
        "task",
        height=30 * len(tids) + 170,
        xaxis=plot.score_axis("task score (0–100)"),
        yaxis=plot.category_axis(labels, "task"),
    )
