"""One example of a benchmark task on the suite path: its verdict and its per-example metrics.

:func:`score_answer` scores one stored answer exactly as the replay scores it (it *is* the
replay, :func:`yoxla.rescoring.rescore_task`, over that one row), so what a run shows in a
``predictions.jsonl`` line as each answer arrives is what its result file will hold.
:func:`example_metrics` names a verdict's per-sample scores as a benchmark prediction line
shows them (``correct``; a span's ``exact_span``, ``unsupported``…; the abstention ``score``;
an STS ``prediction`` and ``abs_error``).

:class:`AnswerScorer` is :func:`score_answer` for a run's answers as they arrive: each task's
rows are prepared once for the run (its suite items and scorer), not once per answer, and each
answer gets the very verdict :func:`score_answer` gives it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from yoxla.parsing import answer_text
from yoxla.rescoring import rescore_task
from yoxla.suite import Task
from yoxla.suites.builtins import SPAN_KEYS
from yoxla.suites.prepare import Item, item_ids
from yoxla.suites.samples import SampleResult
from yoxla.suites.scoring import TaskScorer
from yoxla.suites.worker import WorkerPool

_SPAN_NAMES = {name: key for key, name in SPAN_KEYS}
# Per evaluator: the suite graders' per-sample metric -> its name in a benchmark prediction line.
_Row: TypeAlias = Mapping[str, Any]
_Text: TypeAlias = str | None
_LINE_NAMES: dict[str, dict[str, str]] = {
    "classification": {"accuracy": "correct"},
    "span": _SPAN_NAMES,
    "abstention": {"overall_score": "score", **_SPAN_NAMES},
    "correlation": {"abs_error": "abs_error"},
}


def score_answer(
    task: Task,
    row: Mapping[str, Any],
    raw: str | None,
    finish_reason: str | None = None,
    error: str | None = None,
) -> SampleResult:
    """The verdict on one stored answer to ``row`` (a generation error or truncation scores as invalid)."""
    return rescore_task(task, [row], [raw], [finish_reason], [error]).results[0]


class AnswerScorer:
    """:func:`score_answer` for the answers of one run, each task prepared once.

    ``items``: the run's (task, row) pairs. The first answer of a task prepares all of that
    task's rows in one go; each answer is then scored against its row's item. A row it was
    not given, or a task whose rows cannot be prepared together exactly as one at a time
    (item ids that only a single row keeps, a row the preparation refuses), is scored by
    :func:`score_answer` itself, so the verdicts are the same either way.
    """

    def __init__(self, items: Sequence[tuple[Task, Mapping[str, Any]]]) -> None:
        self._rows: dict[str, list[Mapping[str, Any]]] = {}
        for task, row in items:
            self._rows.setdefault(task.id, []).append(row)
        self._ready: dict[str, tuple[Task, TaskScorer, dict[int, Item]] | None] = {}
        self._pool = WorkerPool()  # built-in graders only: no worker is ever started

    def _prepared(self, task: Task) -> tuple[Task, TaskScorer, dict[int, Item]] | None:
        if task.id not in self._ready:
            self._ready[task.id] = self._prepare(task)
        ready = self._ready[task.id]
        return ready if ready is not None and ready[0] is task else None

    def _prepare(self, task: Task) -> tuple[Task, TaskScorer, dict[int, Item]] | None:
        from yoxla.suites.benchmark import prepare_rows

        rows = self._rows.get(task.id, [])
        try:
            prepared = prepare_rows(task.id, rows)
        except Exception:  # a row one answer at a time refuses: score_answer says so at its line
            return None
        by_row: dict[int, Item] = {}
        for row, item in zip(rows, prepared.items, strict=True):
            if item.id != item_ids([row])[0]:  # ids a run's rows share are numbered: not as one row
                return None
            by_row.setdefault(id(row), item)
        return task, TaskScorer(prepared, self._pool), by_row

    def score(
        self, task: Task, row: _Row, raw: _Text, finish_reason: _Text = None, error: _Text = None
    ) -> SampleResult:
        """``score_answer(task, row, raw, finish_reason, error)``, from the task's prepared items."""
        ready = self._prepared(task)
        item = ready[2].get(id(row)) if ready is not None else None
        if ready is None or item is None or item.row != row:  # a row changed since: as one row
            return score_answer(task, row, raw, finish_reason, error)
        return ready[1].score_text(item, None if raw is None else answer_text(raw), finish_reason, error)


def example_metrics(task: Task, res: SampleResult) -> dict[str, float]:
    """The verdict's per-sample scores under the names a benchmark prediction line gives them.

    STS adds the ``prediction`` its closeness was measured from: the valid answer, else the
    answer range's midpoint (what the correlation imputes).
    """
    names = _LINE_NAMES[task.evaluator]
    out: dict[str, float] = {}
    if task.evaluator == "correlation":
        lo, hi = task.answer.range or (0.0, 1.0)
        out["prediction"] = float(res.number) if res.valid and res.number is not None else (lo + hi) / 2
    out.update((names[k], v) for k, v in res.scores.items() if k in names)
    return out
