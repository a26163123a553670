"""Breakdowns: a task's score per value of each field its rows carry, on any board.

A task is broken down by the fields its suite declares (``metadata.breakdowns`` and the
analysis section's): a committed suite's manifest, or, for a benchmark edition, its package
suite ``yoxla/editions/yoxla-<edition>.yaml`` (its board's SuiteMeta), which declares
every categorical field of the edition's rows. A value's cell (mean per-example score and
item count) is the one the file stores when it stores that breakdown (re-derived at
admission), else it is computed here from the file's per-example scores joined with the
edition's rows by id, controls left out as in the task score. Rows never reach the views:
:func:`row_values` keeps, per row id, only the breakdown fields' values as short text.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from yoxla.admission.verdict import TaskRecord, Verdict

MIN_N = 10  # a cell over fewer items is marked (*)
MAX_VALUE = 80  # a breakdown value is shown in at most this many characters
CLASS = "class"  # the per-class breakdown every classification task stores

RowValues = dict[str, dict[str, str]]  # row id -> field -> value (text)
Cells = dict[str, dict[str, float]]  # value -> {"accuracy": mean score, "n": items}


@dataclass(frozen=True)
class Field:
    """A row field to break a task down by (categorical: one cell per value)."""

    name: str

    def value(self, raw: Any) -> str:
        """A row's value as breakdown text (whitespace collapsed, at most MAX_VALUE characters)."""
        return " ".join(str(raw).split())[:MAX_VALUE]


def fields(declared: Mapping[str, Sequence[str]], task_id: str) -> list[Field]:
    """The fields a task is broken down by (``declared``: task id -> field names, in order)."""
    return [Field(name) for name in declared.get(task_id, ())]


def row_values(
    tasks: Mapping[str, Sequence[Field]], rows: Mapping[str, Sequence[Mapping[str, Any]]] | None
) -> dict[str, RowValues]:
    """Per task, each row's breakdown values by row id (one linear pass; rows lacking an id are
    left out, a missing field reads as the text ``None``, as the evaluators group it)."""
    out: dict[str, RowValues] = {}
    for tid, fs in tasks.items():
        task_rows = (rows or {}).get(tid)
        if not fs or not task_rows:
            continue
        got: RowValues = {}
        for row in task_rows:
            rid = row.get("id")
            if isinstance(rid, str):
                got[rid] = {f.name: f.value(row.get(f.name)) for f in fs}
        out[tid] = got
    return out


def metric_field(key: str) -> str | None:
    """The field of a stored breakdown metric (``per_topic_accuracy`` → ``topic``), else None."""
    for suffix in ("_accuracy", "_score"):
        if key.startswith("per_") and key.endswith(suffix) and len(key) > len("per_") + len(suffix):
            return key[len("per_") : -len(suffix)]
    return None


def stored(rec: TaskRecord, name: str) -> Cells | None:
    """The breakdown by ``name`` the file stores (re-derived at admission), else None."""
    for key, cells in rec.metrics.items():
        if isinstance(cells, dict) and metric_field(key) == name:
            return {str(k): {"accuracy": float(c["accuracy"]), "n": int(c["n"])} for k, c in cells.items()}
    return None


def computed(rec: TaskRecord, field: Field, values: RowValues) -> Cells:
    """Mean per-example score per value: the file's predictions joined with the rows by id
    (controls and examples without a score left out; an id the rows lack is not counted)."""
    groups: dict[str, list[float]] = {}
    control = rec.control
    for i, (rid, score) in enumerate(zip(rec.ids, rec.scores, strict=True)):
        if (control is not None and control[i]) or not math.isfinite(score):
            continue
        value = values.get(rid, {}).get(field.name)
        if value is not None:
            groups.setdefault(value, []).append(float(score))
    return {
        k: {"accuracy": math.fsum(groups[k]) / len(groups[k]), "n": len(groups[k])} for k in sorted(groups)
    }


def cells(v: Verdict, task_id: str, field: Field, values: RowValues | None) -> Cells:
    """One model's cells of a task by one field (stored, else computed; {} when neither)."""
    rec = v.tasks.get(task_id)
    if rec is None:
        return {}
    found = stored(rec, field.name)
    if found is not None:
        return found
    return computed(rec, field, values) if values else {}


def shown_fields(
    models: Iterable[Verdict], task_id: str, candidates: Sequence[Field], values: RowValues | None
) -> list[Field]:
    """The candidate fields that have a cell for at least one model (in declared order)."""
    ms = list(models)
    return [f for f in candidates if any(cells(v, task_id, f, values) for v in ms)]


def frames(
    models: Iterable[Verdict], task_id: str, field: Field, values: RowValues | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(scores %, counts): models x values, columns in the field's order."""
    acc: dict[str, dict[str, float]] = {}
    cnt: dict[str, dict[str, float]] = {}
    columns: dict[str, None] = {}
    for v in models:
        got = cells(v, task_id, field, values)
        acc[v.name] = {k: 100 * c["accuracy"] for k, c in got.items()}
        cnt[v.name] = {k: c["n"] for k, c in got.items()}
        columns.update(dict.fromkeys(got))
    cols = list(columns)
    return (
        pd.DataFrame(acc, index=cols).T.reindex(columns=cols),
        pd.DataFrame(cnt, index=cols).T.reindex(columns=cols),
    )


def display(
    models: Iterable[Verdict], task_id: str, field: Field, values: RowValues | None, min_n: int = MIN_N
) -> pd.DataFrame:
    """Text cells ``"72.5 (n=40)"``; cells below the minimum n end with ``"*"``."""
    out = []
    for v in models:
        rec: dict[str, Any] = {"Model": v.name}
        for k, c in cells(v, task_id, field, values).items():
            rec[k] = f"{100 * c['accuracy']:.1f} (n={int(c['n'])}){'*' if c['n'] < min_n else ''}"
        out.append(rec)
    return pd.DataFrame(out)


def few(counts: pd.DataFrame, min_n: int = MIN_N) -> np.ndarray:
    return counts.fillna(0).to_numpy() < min_n
