"""The error explorer: filter one model's answers on one task, page on the server, open one.

Every function takes a board id: an edition (``v1``, ``sample``) or a suite board
(``suite:<id>``). For a suite the inputs are the exact messages the model was sent (the
committed suite's items, few-shot included), the gold is the item's target and the breakdown
is the first field of the task's ``metadata.breakdowns``. Everything returned is plain text
(or (text, label) pairs for highlighting); nothing here is meant to be rendered as HTML or
Markdown.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from yoxla.admission.verdict import TaskRecord, Verdict
from yoxla.board.loading import Board, suite_of
from yoxla.extract.parsing import answer_text
from yoxla.extract.text import az_lower, flatten
from yoxla.score.spans import locate_gold, occurrences, trim_quote
from yoxla.views.format import task_kind

VERDICTS = ("all", "correct", "wrong", "invalid")
PAIRS = ("any", "A right, B wrong", "A wrong, B right", "both wrong", "they differ")
INVALID_OUTCOMES = ("invalid", "truncated", "generation_error", "grader_error")
PAGE_SIZE = 20
_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL | re.IGNORECASE)
SNIPPET = 120


def verdict_of(outcome: str, score: float) -> str:
    """correct, wrong or invalid; a suite item graded on a scale is correct only with full marks."""
    if outcome in INVALID_OUTCOMES:
        return "invalid"
    if outcome == "correct" or (outcome in ("abstained", "graded") and score >= 1.0):
        return "correct"
    return "wrong"


def model_of(board: Board, edition: str, key: str | None) -> Verdict | None:
    """A shown file of the board (an edition's, or a suite board's)."""
    return board.model(edition, key) if key else None


def _field(board: Board, edition: str, task_id: str) -> str | None:
    """The field the explorer breaks a task down by: the first its suite declares (None: none)."""
    fields = board.meta(edition).breakdowns.get(task_id) or []
    return fields[0] if fields else None


@dataclass(frozen=True)
class RowFields:
    """What the explorer reads off a benchmark task's rows, as its package suite declares it."""

    inputs: tuple[str, ...]  # the row fields its prompt shows, in order
    numbered: frozenset[str]  # those shown as a numbered list
    gold: str  # the field its target names
    abstain: str | None  # the answer that abstains (None: the task has none)
    options_field: str | None  # the list a numbered answer picks from (None: none)


def row_fields(task_id: str) -> RowFields:
    """A benchmark task's :class:`RowFields` (KeyError for a task the benchmark does not have)."""
    from yoxla.contract.benchmark import benchmark_task, gold_field
    from yoxla.prompt.templates import Numbered

    task = benchmark_task(task_id)
    parts = [p for p in task.prompt.parts if not isinstance(p, str)]
    paths = [".".join(p.path if isinstance(p, Numbered) else p) for p in parts]
    numbered = {".".join(p.path) for p in parts if isinstance(p, Numbered)}
    rule, space = task.spec.output_extraction, task.spec.answer_space
    return RowFields(
        inputs=tuple(dict.fromkeys(paths)),
        numbered=frozenset(numbered),
        gold=gold_field(task_id),
        abstain=getattr(rule, "abstain", None),
        options_field=space.options_field if space is not None else None,
    )


def messages_text(messages: Any) -> str:
    """The messages a model was sent, as text: each one's role, then its content."""
    return "\n\n".join(f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in messages)


def split_reasoning(raw: str | None) -> tuple[str, str]:
    """(answer, reasoning): reasoning inside <think> tags is folded away from the answer."""
    if not raw:
        return "", ""
    reasoning = "\n\n".join(m.strip() for m in _THINK.findall(raw) if m.strip())
    return answer_text(raw), reasoning


def _snip(text: str, n: int = SNIPPET) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _rows_by_id(board: Board, edition: str, task_id: str) -> dict[str, dict[str, Any]] | None:
    rows = board.rows(edition)
    if rows is None:
        return None
    return {str(r["id"]): r for r in rows[task_id]}  # the edition reader's id field


def _raw_by_id(board: Board, edition: str, key: str, task_id: str) -> dict[str, str]:
    v = model_of(board, edition, key)
    if v is None:
        return {}
    doc = board.document(v)
    return {str(p["id"]): p.get("raw") or "" for p in doc["tasks"][task_id]["predictions"]}


def gold_text(task: RowFields, row: dict[str, Any]) -> str:
    gold = row.get(task.gold)
    if gold is None:
        return task.abstain or "(none)"
    if task.options_field:
        try:
            i = int(gold)
            return f"{i}. {row[task.options_field][i - 1]}"
        except (ValueError, IndexError, TypeError):
            return str(gold)
    return str(gold)


def breakdown_values(board: Board, edition: str, task_id: str) -> list[str]:
    field = _field(board, edition, task_id)
    if field is None:
        return []
    if suite_of(edition) is not None:  # a committed suite's items, else the edition's rows
        items = board.items(edition, task_id)
        return sorted({str(i.row.get(field)) for i in items.values()})
    rows = board.rows(edition)
    return [] if rows is None else sorted({str(r.get(field)) for r in rows[task_id]})


def near_miss_values(board: Board, edition: str, task_id: str, key: str) -> list[str]:
    v = model_of(board, edition, key)
    if v is None or task_id not in v.tasks:
        return []
    return sorted({k for k in v.tasks[task_id].near_miss if k})


def _frame(rec: TaskRecord, prefix: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": rec.ids,
            f"{prefix} verdict": [verdict_of(o, s) for o, s in zip(rec.outcomes, rec.scores, strict=True)],
            f"{prefix} parsed": rec.parsed,
            f"{prefix} near miss": [k or "" for k in rec.near_miss],
            f"{prefix} score": [round(float(s), 3) if np.isfinite(s) else None for s in rec.scores],
        }
    )


def filter_examples(
    board: Board,
    edition: str,
    task_id: str,
    key_a: str,
    key_b: str | None = None,
    verdict: str = "all",
    breakdown: str | None = None,
    near_miss: str | None = None,
    search: str = "",
    pair: str = "any",
) -> pd.DataFrame:
    """All examples that pass the filters (the caller pages them)."""
    a = model_of(board, edition, key_a)
    if a is None or task_id not in a.tasks:
        return pd.DataFrame(columns=["id", "A verdict", "A answer"])
    df = _frame(a.tasks[task_id], "A")
    raws = _raw_by_id(board, edition, key_a, task_id)
    df["A answer"] = [_snip(split_reasoning(raws.get(i, ""))[0]) for i in df["id"]]
    field = _field(board, edition, task_id)
    inputs: dict[str, str] = {}
    if suite_of(edition) is None:  # the edition's rows, else the committed suite's items
        task = row_fields(task_id)
        rows = _rows_by_id(board, edition, task_id)
        if rows is not None:
            df["gold"] = [_snip(gold_text(task, rows[i])) for i in df["id"]]
            if field:
                df[field] = [str(rows[i].get(field)) for i in df["id"]]
            inputs = {i: " ".join(str(rows[i].get(f, "")) for f in task.inputs) for i in df["id"]}
    else:
        items = board.items(edition, task_id)
        if items and all(i in items for i in df["id"]):
            df["gold"] = [_snip(str(items[i].target or "")) for i in df["id"]]
            if field:
                df[field] = [str(items[i].row.get(field)) for i in df["id"]]
            inputs = {i: " ".join(str(m.get("content", "")) for m in items[i].messages) for i in df["id"]}
    b = model_of(board, edition, key_b) if key_b else None
    if b is not None and task_id in b.tasks:
        fb = _frame(b.tasks[task_id], "B")
        df = df.merge(fb, on="id", how="left")
        raws_b = _raw_by_id(board, edition, key_b or "", task_id)
        df["B answer"] = [_snip(split_reasoning(raws_b.get(i, ""))[0]) for i in df["id"]]
    mask = pd.Series(True, index=df.index)
    if verdict and verdict != "all":
        mask &= df["A verdict"] == verdict
    if near_miss:
        mask &= df["A near miss"] == near_miss
    if breakdown and field and field in df:
        mask &= df[field] == breakdown
    if b is not None and pair and pair != "any":
        ra, rb = df["A verdict"] == "correct", df["B verdict"] == "correct"
        mask &= {
            "A right, B wrong": ra & ~rb,
            "A wrong, B right": ~ra & rb,
            "both wrong": ~ra & ~rb,
            "they differ": df["A parsed"] != df["B parsed"],
        }.get(pair, True)
    if search.strip():
        q = search.strip().lower()
        hay = [raws.get(i, "").lower() + "\n" + inputs.get(i, "").lower() for i in df["id"]]
        mask &= pd.Series(
            [q in h or q in i.lower() for h, i in zip(hay, df["id"], strict=True)], index=df.index
        )
    keep = ["id", "A verdict", "A answer", "A parsed", "A near miss"]
    if "gold" in df:
        keep.insert(1, "gold")
    if field and field in df:
        keep.append(field)
    if b is not None:
        keep += ["B verdict", "B answer", "B parsed"]
    return df.loc[mask, keep].reset_index(drop=True)


def page_of(df: pd.DataFrame, page: int, size: int = PAGE_SIZE) -> tuple[pd.DataFrame, int, str]:
    """(rows of the page, the page number actually shown (1-based), a one-line summary)."""
    pages = max(1, math.ceil(len(df) / size))
    page = min(max(1, int(page or 1)), pages)
    part = df.iloc[(page - 1) * size : page * size].reset_index(drop=True)
    return part, page, f"{len(df)} example(s) match; page {page} of {pages}"


@dataclass
class ExampleView:
    example_id: str
    inputs: str
    gold: str
    answer: str
    reasoning: str
    parsed: str
    verdict: str
    highlight: list[tuple[str, str | None]] | None  # passage segments for span tasks


def highlight_spans(
    passage: str, gold: str | None, quote: str | None, answer_start: int | None = None
) -> list[tuple[str, str | None]]:
    """The flattened passage cut into (text, label) segments: "gold", "model", "both" or None."""
    flat = flatten(passage)
    labels: list[str | None] = [None] * len(flat)
    g = locate_gold(passage, gold, answer_start) if gold else None
    if g:
        for i in range(*g):
            labels[i] = "gold"
    q = trim_quote(quote or "")
    if q:
        hits = occurrences(az_lower(flat), az_lower(q))
        if hits:
            start = hits[0]
            if g:  # prefer the occurrence that overlaps the gold most, as the scorer does
                gs, ge = g
                # overlap of [h, h+len(q)) with the gold's [gs, ge), counted, not listed: linear
                # in the hits however long the quote
                start = max(hits, key=lambda h: max(0, min(h + len(q), ge) - max(h, gs)))
            for i in range(start, start + len(q)):
                labels[i] = "both" if labels[i] == "gold" else "model"
    out: list[tuple[str, str | None]] = []
    for ch, lab in zip(flat, labels, strict=True):
        if out and out[-1][1] == lab:
            out[-1] = (out[-1][0] + ch, lab)
        else:
            out.append((ch, lab))
    return out


def _suite_detail(board: Board, v: Verdict, task_id: str, example_id: str) -> str:
    """A suite prediction's grader error and judge calls (their answers), as one line each."""
    preds = board.document(v)["tasks"][task_id]["predictions"]
    pred: dict[str, Any] = next(
        (p for p in preds if isinstance(p, dict) and str(p.get("id")) == example_id), {}
    )
    bits = []
    if pred.get("grader_error"):
        bits.append(f"grader error: {_snip(pred['grader_error'], 300)}")
    if pred.get("extraction_error"):
        bits.append(f"extraction error: {_snip(pred['extraction_error'], 300)}")
    for j in pred.get("judgements") or []:
        answer = (j.get("response") or {}).get("output_text", "")
        bits.append(f"judge ({v.judge or 'unknown'}) answered: {_snip(str(answer), 300)}")
    return "\n".join(bits)


def example_view(board: Board, edition: str, task_id: str, key: str, example_id: str) -> ExampleView | None:
    v = model_of(board, edition, key)
    if v is None or task_id not in v.tasks or example_id not in v.tasks[task_id].ids:
        return None
    rec = v.tasks[task_id]
    i = rec.ids.index(example_id)
    raw = _raw_by_id(board, edition, key, task_id).get(example_id, "")
    answer, reasoning = split_reasoning(raw)
    suite = suite_of(edition) is not None
    score = float(rec.scores[i])
    scored = "no per-item score" if suite and not np.isfinite(score) else f"score {score:.3f}"
    detail = f"{verdict_of(rec.outcomes[i], score)} (outcome: {rec.outcomes[i]}, {scored}"
    if rec.near_miss[i]:
        detail += f", near miss: {rec.near_miss[i]}"
    detail += ")"
    hl = None
    if suite:
        item = board.items(edition, task_id).get(example_id)
        if item is None:
            inputs, gold = "(the committed suite could not be prepared here, so the prompt is not shown)", ""
        else:
            inputs, gold = messages_text(item.messages), str(item.target or "")
        extra = _suite_detail(board, v, task_id, example_id)
        if extra:
            detail += "\n" + extra
        return ExampleView(
            example_id, inputs, gold, answer, reasoning, rec.parsed[i] or "(invalid)", detail, hl
        )
    task = row_fields(task_id)
    rows = _rows_by_id(board, edition, task_id)
    row = rows.get(example_id) if rows is not None else None
    if row is None:
        inputs, gold = "(the edition's rows are not available here, so inputs and gold are not shown)", ""
    else:
        parts = []
        for f in task.inputs:
            val = row.get(f)
            if f in task.numbered and isinstance(val, list):
                val = "\n".join(f"{k}. {item}" for k, item in enumerate(val, start=1))
            parts.append(f"{f}:\n{val}")
        inputs = "\n\n".join(parts)
        gold = gold_text(task, row)
        if task_kind(task_id) in ("span", "abstention"):
            passage = str(row[task.inputs[0]])
            hl = highlight_spans(
                passage, row.get(task.gold), answer if rec.parsed[i] else None, row.get("answer_start")
            )
    return ExampleView(example_id, inputs, gold, answer, reasoning, rec.parsed[i] or "(invalid)", detail, hl)
