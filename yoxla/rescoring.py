"""Re-scoring stored predictions: the one function the runner, `rescore` and admission share.

A stored prediction carries the model's raw output, its finish reason and any generation
error. Replaying those through :func:`yoxla.evaluators.evaluate_task` must reproduce the
stored metrics and score; the app's admission calls :func:`rescore_predictions` to check
every result file it accepts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from yoxla.evaluators import ExampleResult, evaluate_task
from yoxla.suite import Task


def align_rows(
    task: Task, rows: Sequence[Mapping[str, Any]], predictions: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The rows in the order of ``predictions`` (matched by id); ValueError on unknown or repeated ids."""
    by_id = {str(r[task.id_field]): dict(r) for r in rows}
    seen: set[str] = set()
    out = []
    for p in predictions:
        pid = str(p["id"])
        if pid in seen:
            raise ValueError(f"{task.id}: prediction for id {pid!r} appears twice")
        if pid not in by_id:
            raise ValueError(f"{task.id}: prediction for unknown id {pid!r}")
        seen.add(pid)
        out.append(by_id[pid])
    return out


def rescore_detailed(
    task: Task, rows: Sequence[Mapping[str, Any]], predictions: Sequence[Mapping[str, Any]]
) -> tuple[list[ExampleResult], dict[str, Any], float]:
    ordered = align_rows(task, rows, predictions)
    return evaluate_task(
        task,
        ordered,
        [p.get("raw") for p in predictions],
        [p.get("finish_reason") for p in predictions],
        [p.get("error") for p in predictions],
    )


def rescore_predictions(
    task: Task, rows: Sequence[Mapping[str, Any]], predictions: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, Any], float]:
    """(metrics, score) of a task from stored predictions (dicts with id, raw, finish_reason, error).

    ``rows`` may be the whole task; only the rows the predictions name are scored, in the
    predictions' order, exactly as the runner scored them.
    """
    _, metrics, score = rescore_detailed(task, rows, predictions)
    return metrics, score


def same_metrics(a: Any, b: Any, tol: float = 1e-9) -> bool:
    """Deep equality of two metric trees, floats within ``tol`` (ints and floats compare by value)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=0.0, abs_tol=tol)
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same_metrics(a[k], b[k], tol) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_metrics(x, y, tol) for x, y in zip(a, b, strict=True))
    return bool(a == b)
