"""Sending a suite's items: requests, empty-answer retries, and each answer scored as it arrives.

:class:`RunJob` is the executor's :class:`~yoxla.run.executor.Job` for suite runs. In the
sending thread, right after an answer comes back, it re-asks an empty answer up to the
task's ``max_empty_retries``, then scores the answer with the task's graders (Python graders
in a worker process). A grader that asks a judge does so through the run's
:class:`~yoxla.run.judge.RecordingJudge`, so every judge call is recorded in the run
folder before the example's line is written. With a judge model, each sending thread has
its own grader workers, so judge calls of different examples run in parallel; without one,
the threads share one worker per grader.

The line written to ``predictions.jsonl`` keeps the raw output, finish reason and error (what
re-scoring starts from), and shows what scoring made of it then (extracted value, outcome,
scores, grader error, judge calls). The run's final scores always come from the stored
answers again (:mod:`yoxla.run.finalize`).
"""

from __future__ import annotations

import threading
from typing import Any

from yoxla.providers.base import Completion, Provider, Request
from yoxla.providers.registry import redact
from yoxla.run.executor import sent_fields
from yoxla.run.judge import RecordingJudge
from yoxla.run.plan import PlannedTask, request_for
from yoxla.run.settings import RunSettings
from yoxla.suites.prepare import Item
from yoxla.suites.samples import SampleOutput, SampleResult
from yoxla.suites.scoring import TaskScorer
from yoxla.suites.worker import WorkerPool


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
    """One line of a suite run's predictions.jsonl."""
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
    """The executor's job for a suite run (see the module docstring)."""

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
