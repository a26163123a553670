"""Cue-only baselines of the benchmark: strategies that read nothing, or only a surface cue.

The strategies themselves live in :mod:`yoxla.suites.baselines` and work over any suite's
prepared items; a benchmark task's rows become such items through
:func:`yoxla.suites.benchmark.prepare_rows`, so the benchmark and every suite share one
implementation. The answers are in the task's own answer format and are scored as a model's
are (:func:`yoxla.rescoring.rescore_task`). Their scores are the floors a model has to beat;
a task where a cue-only strategy scores high measures the cue, not the skill.
"""

from __future__ import annotations

from typing import Any

from yoxla.suite import Task
from yoxla.suites.baselines import SEED, STRATEGIES, suite_answers
from yoxla.suites.prepare import PreparedTask

__all__ = ["SEED", "STRATEGIES", "answers", "floors"]


def _items(task: Task, rows: list[dict[str, Any]]) -> PreparedTask:
    """The task's rows as suite items, one per row, in row order."""
    from yoxla.suites.benchmark import prepare_rows

    prepared = prepare_rows(task.id, rows)
    if len(prepared.items) != len(rows):
        raise ValueError(f"{task.id}: {len(rows)} rows gave {len(prepared.items)} items")
    return prepared


def _known(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown baseline strategy {strategy!r}; known: {', '.join(STRATEGIES)}")


def answers(strategy: str, task: Task, rows: list[dict[str, Any]], seed: int = SEED) -> list[str]:
    """The strategy's raw answer for every row of a task, in row order."""
    _known(strategy)
    return suite_answers(strategy, _items(task, rows), seed)


def floors(
    task_rows: dict[str, list[dict[str, Any]]],
    tasks: dict[str, Task],
    strategies: tuple[str, ...] = STRATEGIES,
) -> dict[str, dict[str, float]]:
    """Score of every strategy on every task: {task_id: {strategy: score}}."""
    from yoxla.rescoring import rescore_task

    out: dict[str, dict[str, float]] = {}
    for strategy in strategies:
        _known(strategy)
    for tid, rows in task_rows.items():
        task = tasks[tid]
        prepared = _items(task, rows)
        token = prepared.fingerprints["dataset"]  # the rows' fingerprint: their items are prepared once
        out[tid] = {
            s: rescore_task(task, rows, suite_answers(s, prepared), rows_token=token).score
            for s in strategies
        }
    return out
