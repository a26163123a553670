"""A run from start to finish: ``python runner.py --suite FILE|--edition E --provider P --model M``.

The run folder, its lock, the session bookkeeping and retries are :mod:`yoxla.run.session`'s;
this module gives them the plan (:mod:`~yoxla.run.plan`), the job that sends and scores
each item (:mod:`~yoxla.run.job`) and the finish (:mod:`~yoxla.run.finalize`).
Starting, resuming (``--resume``), re-asking failed items (``--retry-errors``) and ``rescore``
all come here; run.json says ``"kind": "suite"``. A run folder without it was made by the
built-in engine of an older version, and is refused with one line that says what to do.

A run folder holds ``judgements.jsonl`` too: every judge call (request and response), one
flushed line each, replayed by later scoring.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from yoxla.providers.base import Provider
from yoxla.providers.registry import get_spec, with_overrides
from yoxla.results import model_slug
from yoxla.run.artifacts import RUN_JSON, SUITE_KIND, read_json, refuse_builtin
from yoxla.run.errors import Log, RunError, log_stderr
from yoxla.run.finalize import check_plan, finalize_suite_run
from yoxla.run.finish import RunReport
from yoxla.run.job import RunJob
from yoxla.run.judge import JUDGEMENTS, RecordingJudge, judge_facts, open_judge, precheck_judge
from yoxla.run.model_facts import public_model
from yoxla.run.plan import RunPlan, dataset_info, make_suite_plan, suite_conditions
from yoxla.run.provider import precheck_provider, run_secrets
from yoxla.run.session import (
    HeldRun,
    Items,
    begin_run,
    clean_predictions,
    refuse_existing,
    resume,
    retry_errors,
)
from yoxla.run.settings import (
    RunSettings,
    check_run_id,
    resolve_sign_key,
    run_record,
    settings_from,
)
from yoxla.suites.registry import edition_of

KIND = SUITE_KIND


@dataclass
class PlannedRun(HeldRun):
    """A run folder of a plan this process holds: a session sends with the run's judge."""

    plan: RunPlan

    def finalize(self) -> RunReport:
        s = self.settings
        return finalize_suite_run(self.dir, self.plan, sign_key=s.sign_key, log=self.log, settings=s)

    def items_for(self, records: Sequence[dict[str, Any]]) -> list[tuple[Any, Any]]:
        """The (task, item) each stored record answers."""
        items = {(tid, i.id): (t, i) for tid, t in self.plan.tasks.items() for i in t.prepared.items}
        return [items[(r["task"], str(r["id"]))] for r in records]

    @contextmanager
    def job(self, provider: Provider, items: Items, secrets: list[str]) -> Iterator[RunJob]:
        s = self.settings
        spec = with_overrides(get_spec(s.provider, s.config), s.base_url)
        client = open_judge(s)
        judge = RecordingJudge(self.dir / JUDGEMENTS, client[0] if client else None)
        job = RunJob(s, spec.backend, spec.base_url, judge, secrets, parallel_graders=client is not None)
        try:
            yield job
        finally:
            job.close()
            judge.close()
            if client is not None:
                client[0].close()


def default_suite_run_id(s: RunSettings, sid: str) -> str:
    """``<time>_<provider>__<model>_<suite id>``; a package benchmark suite ends in its edition."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}_{model_slug(s.provider)}__{model_slug(public_model(s.model))}_{edition_of(sid) or sid}"


def _check_provider(s: RunSettings) -> None:
    precheck_provider(s)
    precheck_judge(s)


def suite_run_record(
    s: RunSettings, plan: RunPlan, provider_facts: dict[str, Any], *, workers: int, batch_size: int
) -> dict[str, Any]:
    """run.json of a new run: the common record, with the suite in place of the edition."""
    info = run_record(
        s,
        task_ids=plan.task_ids,
        facts=plan.facts(s.limit),
        provider_facts=provider_facts,
        dataset=dataset_info(s, plan.path),
        suite_hash=plan.suite_hash,
        conditions=suite_conditions(s, plan),
        workers=workers,
        batch_size=batch_size,
        secrets=run_secrets(s),
    )
    info.pop("edition", None)
    info.update(
        kind=KIND,
        suite=plan.suite_record(),
        judge=judge_facts(s),
    )
    return info


def start_suite_run(
    settings: RunSettings, explicit: set[str] | None = None, log: Log = log_stderr
) -> RunReport:
    """Start a suite run, or resume one (``settings.resume``); returns the finished report."""
    if settings.resume:
        return resume(settings, explicit or set(), log, _reopen)
    s = settings
    if not s.provider or not s.model:
        raise RunError("give --provider and --model (or --preset NAME)")
    resolve_sign_key(s)
    _check_provider(s)
    plan = make_suite_plan(s, log=log)  # datasets read, preprocessors run: before any model call
    s.run_id = check_run_id(s.run_id or default_suite_run_id(s, plan.suite_id))
    run_dir = Path(s.runs_dir) / s.run_id
    refuse_existing(run_dir)
    return begin_run(PlannedRun, suite_run_record, s, plan, run_dir, log)


def _reopen(
    run_dir: Path, adjust: Callable[[RunSettings], RunSettings], log: Log
) -> tuple[PlannedRun, list[dict[str, Any]]]:
    """A suite run folder read back (under its lock): the same suite (task hashes), or an error."""
    info = read_json(run_dir / RUN_JSON)
    refuse_builtin(run_dir)  # checked before the lock too; here for a caller that did not
    s = adjust(settings_from(info))
    resolve_sign_key(s)
    precheck_judge(s)  # a stored judge URL without its credentials: say so first
    plan = make_suite_plan(s, log=log)
    check_plan(info, plan)
    info["judge"] = judge_facts(s)  # the judge this session asks (--judge-base-url may have changed)
    return PlannedRun(run_dir, info, s, plan, log), clean_predictions(run_dir, log)


def retry_suite_errors(run_dir: Path, overrides: dict[str, Any], log: Log = log_stderr) -> RunReport:
    """Re-ask only the items whose generation failed, merge them back in place, re-score."""
    return retry_errors(run_dir, overrides, log, _reopen)
