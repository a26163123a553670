"""Sending: items → provider → one record per item, handed over in item order.

Examples are sent by a thread pool (up to ``workers`` in flight, under the provider's
adaptive limiter, which also owns retries and the Retry-After cap) but consumed *in
example order* through a bounded window of futures, so ``predictions.jsonl`` reads the
same whatever the schedule and a killed run resumes from its last complete line.

:class:`RunJob` is what the executor sends with. In the sending thread, right after an answer
comes back, it re-asks an empty answer up to the task's ``max_empty_retries``, then scores the
answer with the task's graders (Python graders in a worker process). A grader that asks a judge
does so through the run's :class:`~yoxla.run.judge.RecordingJudge`, so every judge call is
recorded in the run folder before the example's line is written. With a judge model, each
sending thread has its own grader workers, so judge calls of different examples run in
parallel; without one, the threads share one worker per grader. The run's final scores always
come from the stored answers again (:mod:`yoxla.run.finalize`).
"""

from __future__ import annotations

import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

from yoxla.prompt.prepare import Item
from yoxla.providers.base import Completion, Provider, ProviderError, Request
from yoxla.providers.registry import redact
from yoxla.run.judge import RecordingJudge
from yoxla.run.plan import PlannedTask, request_for
from yoxla.run.settings import RunSettings
from yoxla.score.calibration.stored import ASKED_KEY, DISTRIBUTION_KEY, LOGPROBS_KEY, REFUSED_KEY
from yoxla.score.replay import TaskScorer
from yoxla.score.samples import SampleOutput, SampleResult
from yoxla.score.worker import WorkerPool

ABORT_AFTER_FAILURES = 10  # this many generation errors in a row with no success at all: stop


class Job(Protocol):
    """How the items of a run are sent and recorded (a run's: :class:`RunJob`; a test's stand-in).

    A job's :meth:`record` runs in the sending thread, right after the answer came back (so
    scoring that asks a judge model runs in parallel); the records are still handed over in
    item order.
    """

    def request(self, task: Any, item: Any) -> Request: ...

    def record(
        self, provider: Provider, request: Request, task: Any, item: Any, comp: Completion
    ) -> dict[str, Any]: ...


def sent_fields(comp: Completion) -> dict[str, Any]:
    """The end of every predictions.jsonl line: how the answer was sent."""
    return {
        "finish_reason": comp.finish_reason,
        "model": comp.model,
        "usage": comp.usage,
        "latency_s": round(comp.latency_s, 6),
        "attempts": comp.attempts,
        "error": comp.error,
        **probability_fields(comp),
    }


def probability_fields(comp: Completion) -> dict[str, Any]:
    """What a predictions.jsonl line keeps to derive the answer's distribution from when the run
    is finished (absent: none)."""
    out: dict[str, Any] = {}
    if comp.probabilities_asked:
        out[ASKED_KEY] = True
    if comp.error:
        return out
    if comp.logprobs is not None:
        out[LOGPROBS_KEY] = comp.logprobs
    if comp.logprobs_refused is not None:
        out[REFUSED_KEY] = comp.logprobs_refused
    if comp.label_scores is not None:
        out[DISTRIBUTION_KEY] = comp.label_scores
    return out


def retry_empty(provider: Provider, request: Request, comp: Completion, retries: int) -> Completion:
    """Ask again while the answer is empty (no error, nothing but white space), ``retries`` times at most."""
    attempts = comp.attempts
    for _ in range(retries):
        if comp.error or (comp.text or "").strip():
            break
        comp = provider.generate(request)
        attempts += comp.attempts
    comp.attempts = attempts
    return comp


def prediction_line(task: PlannedTask, item: Item, comp: Completion, res: SampleResult) -> dict[str, Any]:
    """One line of a run's predictions.jsonl."""
    return {
        "task": task.id,
        "id": item.id,
        "raw": None if comp.error else comp.raw,
        "extracted": res.extracted,
        "valid": res.valid,
        "outcome": res.outcome,
        "reason": res.reason,
        "score": res.score,
        "scores": dict(res.scores),
        "grader_error": res.grader_error,
        "judgements": [j.model_dump(mode="json") for j in res.judgements],
        **sent_fields(comp),
    }


class RunJob:
    """The executor's job for a run (see the module docstring)."""

    def __init__(
        self,
        settings: RunSettings,
        backend: str,
        base_url: str | None,
        judge: RecordingJudge,
        secrets: list[str],
        *,
        parallel_graders: bool,
    ) -> None:
        self.settings = settings
        self.backend = backend
        self.base_url = base_url
        self.judge = judge
        self.secrets = secrets
        self.parallel_graders = parallel_graders
        self._lock = threading.Lock()
        self._local = threading.local()
        self._pools: list[WorkerPool] = []
        self._shared: dict[str, TaskScorer] = {}

    def request(self, task: PlannedTask, item: Item) -> Request:
        return request_for(task, item, self.settings, self.backend, self.base_url)

    def record(
        self, provider: Provider, request: Request, task: PlannedTask, item: Item, comp: Completion
    ) -> dict[str, Any]:
        comp = retry_empty(provider, request, comp, task.generation.max_empty_retries or 0)
        if comp.error:
            comp.error = redact(comp.error, self.secrets)
        raw = None if comp.error else comp.raw
        output = SampleOutput.from_raw(raw, comp.finish_reason, comp.error)
        result = self._scorer(task).score([item], [output])[0]
        return prediction_line(task, item, comp, result)

    def _new_pool(self) -> WorkerPool:
        pool = WorkerPool()
        with self._lock:
            self._pools.append(pool)
        return pool

    def _scorer(self, task: PlannedTask) -> TaskScorer:
        """The task's scorer: one per sending thread with a judge, else one shared."""
        if self.parallel_graders:
            scorers: dict[str, TaskScorer] | None = getattr(self._local, "scorers", None)
            if scorers is None:
                scorers = self._local.scorers = {}
                self._local.pool = self._new_pool()
            if task.id not in scorers:
                scorers[task.id] = TaskScorer(task.prepared, self._local.pool, judge=self.judge)
            return scorers[task.id]
        with self._lock:
            if task.id not in self._shared:
                if not self._pools:
                    self._pools.append(WorkerPool())
                self._shared[task.id] = TaskScorer(task.prepared, self._pools[0], judge=self.judge)
            return self._shared[task.id]

    def close(self) -> None:
        with self._lock:
            pools, self._pools = self._pools, []
        for pool in pools:
            pool.close()


def _batch_size(provider: Provider) -> int:
    return max(1, int(getattr(provider, "batch_size", 1) or 1))


def units(items: Sequence[tuple[Any, Any]], provider: Provider) -> list[list[tuple[Any, Any]]]:
    """Single examples for parallel providers; same-task batches of batch_size otherwise."""
    size = _batch_size(provider)
    if size == 1:
        return [[it] for it in items]
    out: list[list[tuple[Any, Any]]] = []
    for it in items:
        if out and len(out[-1]) < size and out[-1][0][0].id == it[0].id:
            out[-1].append(it)
        else:
            out.append([it])
    return out


class _FailureWatch:
    """Stops a run whose first requests all fail: a wrong URL or model, not bad luck."""

    def __init__(self) -> None:
        self.in_a_row = 0
        self.any_success = False

    def see(self, comp: Completion) -> None:
        if not comp.error:
            self.any_success, self.in_a_row = True, 0
            return
        self.in_a_row += 1
        if not self.any_success and self.in_a_row >= ABORT_AFTER_FAILURES:
            raise ProviderError(f"the first {self.in_a_row} requests all failed (last: {comp.error})")


def execute(
    provider: Provider,
    items: Sequence[tuple[Any, Any]],
    settings: RunSettings,
    on_record: Callable[[dict[str, Any]], None],
    *,
    initial: int = 0,
    total: int | None = None,
    secrets: list[str] | None = None,
    job: Job,
) -> int:
    """Send ``items`` with ``job``; hand each record to ``on_record`` in item order. Returns requests completed."""
    secrets = secrets or []
    workers = max(1, settings.transport.workers) if provider.parallel else 1
    window_max = workers * 4 if provider.parallel else 2
    batched = _batch_size(provider) > 1
    Done = list[tuple[Completion, dict[str, Any]]]

    def work(unit: list[tuple[Any, Any]]) -> Done:
        reqs = [job.request(t, r) for t, r in unit]
        try:
            comps = provider.generate_batch(reqs) if batched else [provider.generate(r) for r in reqs]
        except ProviderError:
            raise
        except Exception as exc:  # a provider bug or a local failure: this unit's examples fail
            msg = redact(f"{type(exc).__name__}: {exc}", secrets)[:500]
            comps = [Completion(error=msg) for _ in reqs]
        if len(comps) != len(reqs):
            raise ProviderError(f"provider returned {len(comps)} completions for {len(reqs)} requests")
        comps = [comp.bounded() for comp in comps]  # an answer too long to store is refused here
        for comp in comps:
            if comp.error:
                comp.error = redact(comp.error, secrets)
        return [
            (comp, job.record(provider, req, t, r, comp))
            for (t, r), req, comp in zip(unit, reqs, comps, strict=True)
        ]

    bar = _progress(settings.progress, total if total is not None else len(items), initial)
    done = 0
    watch = _FailureWatch()
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="yoxla-worker")
    window: deque[tuple[list[tuple[Any, Any]], Future[Done]]] = deque()
    pending: Iterator[list[tuple[Any, Any]]] = iter(units(items, provider))

    def fill() -> None:
        while len(window) < window_max and (unit := next(pending, None)) is not None:
            window.append((unit, pool.submit(work, unit)))

    try:
        fill()
        while window:
            unit, fut = window.popleft()
            for comp, record in fut.result():
                on_record(record)
                done += 1
                watch.see(comp)
            if bar is not None:
                bar.update(len(unit))
            fill()
    finally:
        for _, fut in window:
            fut.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
        if bar is not None:
            bar.close()
    return done


def _progress(enabled: bool, total: int, initial: int) -> Any:
    if not enabled or total - initial <= 0:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="req", dynamic_ncols=True, file=sys.stderr, smoothing=0.1)
