"""Re-scoring stored answers: the only place that turns raw outputs into verdicts and metrics.

The runner's finalisation, ``yoxla rescore`` and the leaderboard's admission all call
:func:`rescore_task` (through :func:`yoxla.record.build_task_result`, which records the
result). Nothing else scores an answer for a stored result, so a run, its re-scoring and
its admission cannot disagree.

:class:`ScoreCache` is an optional memo: ``score_example`` is pure, and many models give
the same raw answer to the same row, so admission of many files shares it. Its key holds
everything the verdict depends on: the task's contract, the rows' fingerprint and the
row's position, and the stored answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from yoxla.alignment import align_by_id
from yoxla.evaluators import ExampleResult, aggregate, score_example, task_score
from yoxla.suite import Task


@dataclass
class ScoreCache:
    """Memo of per-example verdicts, bounded; shared by the files one process admits."""

    max_entries: int = 2_000_000
    _store: dict[tuple[Any, ...], ExampleResult] = field(default_factory=dict, repr=False)
    hits: int = 0

    def get(self, key: tuple[Any, ...]) -> ExampleResult | None:
        hit = self._store.get(key)
        if hit is not None:
            self.hits += 1
        return hit

    def put(self, key: tuple[Any, ...], value: ExampleResult) -> None:
        if len(self._store) < self.max_entries:
            self._store[key] = value

    def __len__(self) -> int:
        return len(self._store)


@dataclass
class TaskRescore:
    """What re-scoring derives for one task."""

    results: list[ExampleResult]
    metrics: dict[str, Any]
    score: float


def rescore_task(
    task: Task,
    rows: Sequence[Mapping[str, Any]],
    raws: Sequence[str | None],
    finish_reasons: Sequence[str | None] | None = None,
    errors: Sequence[str | None] | None = None,
    *,
    cache: ScoreCache | None = None,
    rows_token: str | None = None,
    controls: Sequence[bool] | None = None,
) -> TaskRescore:
    """Per-example verdicts, task metrics and score from stored answers aligned with ``rows``.

    ``rows_token`` (e.g. the rows' fingerprint) identifies the rows' content for the cache;
    without it the cache is not used. ``controls`` marks rows that are run but not scored
    (declared controls, ambiguous by construction): they get a verdict each, and are left
    out of the task's metrics and score.
    """
    n = len(rows)
    frs = finish_reasons if finish_reasons is not None else [None] * n
    errs = errors if errors is not None else [None] * n
    if not (len(raws) == len(frs) == len(errs) == n):
        raise ValueError(f"{task.id}: {n} rows but {len(raws)} answers")
    use_cache = cache is not None and rows_token is not None
    contract = task.contract_hash
    plain = cast(list[dict[str, Any]], list(rows))
    results: list[ExampleResult] = []
    for i, (row, raw, fr, err) in enumerate(zip(plain, raws, frs, errs, strict=True)):
        if use_cache:
            key = (contract, rows_token, i, raw, fr, err)
            hit = cache.get(key)  # type: ignore[union-attr]
            if hit is None:
                hit = score_example(task, row, raw, fr, err)
                cache.put(key, hit)  # type: ignore[union-attr]
            results.append(hit)
        else:
            results.append(score_example(task, row, raw, fr, err))
    if controls is not None:
        if len(controls) != n:
            raise ValueError(f"{task.id}: {n} rows but {len(controls)} control flags")
        keep = [i for i, c in enumerate(controls) if not c]
        metrics = aggregate(task, [plain[i] for i in keep], [results[i] for i in keep])
    else:
        metrics = aggregate(task, plain, results)
    return TaskRescore(results, metrics, task_score(task, metrics))


def align_rows(task: Task, rows: Sequence[Mapping[str, Any]], ids: Sequence[str]) -> list[Mapping[str, Any]]:
    """The rows in the order of ``ids``; ValueError on an unknown or repeated id."""
    return align_by_id({str(r[task.id_field]): r for r in rows}, ids, task.id)
