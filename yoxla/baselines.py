"""Cue-only baselines of the benchmark: strategies that read nothing, or only a surface cue.

The strategies themselves live in :mod:`yoxla.suites.baselines` and work over any suite's
prepared items; a benchmark task's rows become such items through
:func:`yoxla.suites.benchmark.prepare_rows` (the package suite's task), so the benchmark and
every suite share one implementation. The answers are in the task's own answer format and
are scored as a model's are, by the suite replay's built-in fast path
(:func:`yoxla.suites.scoring.score_builtin_task`). Their scores are the floors a model has
to beat; a task where a cue-only strategy scores high measures the cue, not the skill.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

from yoxla.suites.baselines import SEED, STRATEGIES, suite_answers
from yoxla.suites.prepare import PreparedTask

__all__ = ["SEED", "STRATEGIES", "answers", "floors"]


class _Named(Protocol):
    @property
    def id(self) -> str: ...


def _items(task_id: str, rows: Sequence[Mapping[str, Any]]) -> PreparedTask:
    """The task's rows as suite items, one per row, in row order."""
    from yoxla.suites.benchmark import prepare_rows

    prepared = prepare_rows(task_id, rows)
    if len(prepared.items) != len(rows):
        raise ValueError(f"{task_id}: {len(rows)} rows gave {len(prepared.items)} items")
    return prepared


def _known(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown baseline strategy {strategy!r}; known: {', '.join(STRATEGIES)}")


def answers(
    strategy: str, task: str | _Named, rows: Sequence[Mapping[str, Any]], seed: int = SEED
) -> list[str]:
    """The strategy's raw answer for every row of a benchmark task (its id, or anything with
    that ``id``), in row order."""
    _known(strategy)
    return suite_answers(strategy, _items(task if isinstance(task, str) else task.id, rows), seed)


def floors(
    task_rows: Mapping[str, Sequence[Mapping[str, Any]]],
    tasks: Collection[str],
    strategies: tuple[str, ...] = STRATEGIES,
) -> dict[str, dict[str, float]]:
    """Score of every strategy on every task: {task_id: {strategy: score}}.

    ``tasks``: the task ids the caller's edition has (a mapping keyed by id will do); a task
    of ``task_rows`` outside it is a KeyError.
    """
    from yoxla.parsing import answer_text
    from yoxla.suites.scoring import score_builtin_task

    for strategy in strategies:
        _known(strategy)
    out: dict[str, dict[str, float]] = {}
    for tid, rows in task_rows.items():
        if tid not in tasks:
            raise KeyError(tid)
        prepared = _items(tid, rows)  # prepared once: every strategy answers the same items
        items = prepared.items
        blank: list[str | None] = [None] * len(items)
        out[tid] = {}
        for s in strategies:
            texts: list[str | None] = [answer_text(a) for a in suite_answers(s, prepared)]
            score = score_builtin_task(prepared, items, texts, blank, blank).score
            if score is None:
                raise ValueError(f"{tid}: the task has no 0-100 score")
            out[tid][s] = score
    return out
