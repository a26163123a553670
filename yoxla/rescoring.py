"""Re-scoring stored answers of a benchmark task: the one replay, through the suite scoring path.

The runner's finalisation, ``yoxla rescore`` and the leaderboard's admission all call
:func:`rescore_task` (through :func:`yoxla.record.build_task_result`, which records the
result). It turns an edition's rows into the benchmark task's suite items
(:func:`yoxla.suites.benchmark.prepare_rows`), scores the stored answers on the suite path's
built-in fast path (:meth:`yoxla.suites.scoring.TaskScorer.score_builtin`) and lays the
suite metrics out as the benchmark's result records hold them (:func:`benchmark_metrics`).
Nothing else scores an answer for a stored result, so a run, its re-scoring and its
admission cannot disagree.

:class:`ScoreCache` is an optional memo: a sample's verdict is a pure function of the task's
contract, the row and the stored answer, and many models give the same raw answer to the
same row, so admission of many files shares it. Its key holds everything the verdict
depends on: the task's contract, the rows' fingerprint and the row's position, and the
stored answer.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from yoxla.parsing import answer_text
from yoxla.record_v2 import LEGACY_METRICS
from yoxla.suite import Task
from yoxla.suites.prepare import PreparedTask
from yoxla.suites.samples import SampleResult
from yoxla.suites.scoring import TaskScorer
from yoxla.suites.tally import Tally
from yoxla.suites.worker import WorkerPool

_PREPARED_MAX = 64  # (task, rows) pairs whose prepared items one process keeps


@dataclass
class ScoreCache:
    """Memo of per-sample verdicts, bounded; shared by the files one process admits."""

    max_entries: int = 2_000_000
    _store: dict[tuple[Any, ...], SampleResult] = field(default_factory=dict, repr=False)
    hits: int = 0

    def get(self, key: tuple[Any, ...]) -> SampleResult | None:
        hit = self._store.get(key)
        if hit is not None:
            self.hits += 1
        return hit

    def put(self, key: tuple[Any, ...], value: SampleResult) -> None:
        if len(self._store) < self.max_entries:
            self._store[key] = value

    def __len__(self) -> int:
        return len(self._store)


@dataclass
class TaskRescore:
    """What re-scoring derives for one task: per-sample results (aligned with the rows), metrics, score."""

    results: list[SampleResult]
    metrics: dict[str, Any]
    score: float


_prepared: OrderedDict[tuple[str, str, str], PreparedTask] = OrderedDict()


def _prepare(task: Task, rows: Sequence[Mapping[str, Any]], rows_token: str | None) -> PreparedTask:
    """The task's suite items over ``rows``; remembered by the rows' fingerprint when one is given."""
    from yoxla.suites.benchmark import prepare_rows

    key = (task.id, task.contract_hash, rows_token) if rows_token is not None else None
    hit = _prepared.get(key) if key is not None else None
    if hit is not None and len(hit.items) == len(rows):
        id_field = task.id_field
        if all(item.id == str(row[id_field]) for item, row in zip(hit.items, rows, strict=True)):
            _prepared.move_to_end(key)  # type: ignore[arg-type]
            return hit
    breakdowns = (task.breakdown,) if task.breakdown else ()  # the one a result record holds
    prepared = prepare_rows(task.id, rows, fingerprint=rows_token, breakdowns=breakdowns)
    if key is not None:
        _prepared[key] = prepared
        while len(_prepared) > _PREPARED_MAX:
            _prepared.popitem(last=False)
    return prepared


def benchmark_metrics(task: Task, metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The suite path's task metrics as the benchmark's result records hold them (keys and order)."""
    names = LEGACY_METRICS[task.evaluator]
    if task.evaluator == "correlation" and not metrics["n_valid"]:
        names = tuple(k for k in names if k not in ("mae", "rmse"))  # no valid answer: no error to report
    out = {k: metrics[k] for k in names}
    if task.breakdown:
        suffix = "accuracy" if task.evaluator == "classification" else "score"
        out[f"per_{task.breakdown}_{suffix}"] = metrics[f"per_{task.breakdown}_{suffix}"]
    return out


def task_score(task: Task, metrics: Mapping[str, Any]) -> float:
    """Primary metric clamped to [0, 1], times 100."""
    return min(1.0, max(0.0, float(metrics[task.primary]))) * 100.0


def stored_value(task: Task, res: SampleResult) -> Any:
    """A sample's parsed answer as the result record stores it (numbers as floats, else text)."""
    if not res.valid:
        return None
    if task.answer.mode == "numeric" and res.number is not None:
        return float(res.number)
    return res.extracted


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
    """Per-sample verdicts, task metrics and score from stored answers aligned with ``rows``.

    ``rows_token`` (e.g. the rows' fingerprint) identifies the rows' content for the cache
    and the prepared items; without it neither is reused. ``controls`` marks rows that are
    run but not scored (declared controls, ambiguous by construction): they get a verdict
    each, and are left out of the task's metrics and score.
    """
    n = len(rows)
    frs = finish_reasons if finish_reasons is not None else [None] * n
    errs = errors if errors is not None else [None] * n
    if not (len(raws) == len(frs) == len(errs) == n):
        raise ValueError(f"{task.id}: {n} rows but {len(raws)} answers")
    if controls is not None and len(controls) != n:
        raise ValueError(f"{task.id}: {n} rows but {len(controls)} control flags")
    prepared = _prepare(task, rows, rows_token)
    items = prepared.items
    scorer = TaskScorer(prepared, WorkerPool())  # built-in graders only: no worker is started
    # an empty memo that cannot take more has nothing to give or keep: no key is built
    use_cache = cache is not None and rows_token is not None and (len(cache) > 0 or cache.max_entries > 0)
    contract = task.contract_hash
    results: list[SampleResult | None] = [None] * n
    todo: list[int] = []
    keys: list[tuple[Any, ...]] = []
    if use_cache:
        keys = [(contract, rows_token, i, raws[i], frs[i], errs[i]) for i in range(n)]
        get = cache.get  # type: ignore[union-attr]
        for i, key in enumerate(keys):
            hit = get(key)
            if hit is None:
                todo.append(i)
            else:
                results[i] = hit
    else:
        todo = list(range(n))
    tally: Tally | None = None
    if todo:
        # the answer without its reasoning (built-in graders never read the reasoning itself)
        texts = [None if (raw := raws[i]) is None else answer_text(raw) for i in todo]
        if len(todo) == n:
            fresh, _, counted = scorer.score_columns(items, texts, frs, errs)
        else:
            fresh, _, counted = scorer.score_columns(
                [items[i] for i in todo], texts, [frs[i] for i in todo], [errs[i] for i in todo]
            )
        if len(todo) == n and controls is None:
            tally = counted  # every sample scored here and none is a control: the counts are the task's
        remember = use_cache and len(cache) < cache.max_entries  # type: ignore[arg-type,union-attr]
        if remember or len(todo) < n:
            for i, res in zip(todo, fresh, strict=True):
                results[i] = res
                if remember:
                    cache.put(keys[i], res)  # type: ignore[union-attr]
        else:
            results = fresh  # type: ignore[assignment]  # every sample, in order, none to keep
    done = [r for r in results if r is not None]
    if tally is None:
        tally = Tally(scorer.plan)
        for i, res in enumerate(done):
            if controls is not None and controls[i]:
                tally.add_control(res)
            else:
                tally.add(items[i], res)
    metrics = benchmark_metrics(task, scorer.metrics_of(tally)[0])
    return TaskRescore(done, metrics, task_score(task, metrics))
