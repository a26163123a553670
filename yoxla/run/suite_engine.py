"""A suite run from start to finish: ``python runner.py --suite FILE --provider P --model M``.

The same run folder, lock, session bookkeeping, executor and errors as a benchmark run
(:mod:`yoxla.run.engine`); only the plan (:mod:`~yoxla.run.suite_plan`), the job that sends
and scores each item (:mod:`~yoxla.run.suite_job`) and the finish
(:mod:`~yoxla.run.suite_finalize`) are the suite's own. Starting, resuming (``--resume``),
re-asking failed items (``--retry-errors``) and ``rescore`` work as for the benchmark; run.json
says ``"kind": "suite"`` so the command line sends a resumed or retried run here.

Besides the benchmark's files, a suite run folder holds ``judgements.jsonl``: every judge
call (request and response), one flushed line each, replayed by later scoring.
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
from yoxla.run.artifacts import RUN_JSON, SUITE_KIND, read_json
from yoxla.run.engine import (
    HeldRun,
    Items,
    _clean_predictions,
    _refuse_existing,
    _resume,
    begin_run,
    retry_errors,
    seeded_line,
    seeded_provider_facts,
    seeded_settings,
    write_seeded,
)
from yoxla.run.errors import Log, RunError, log_stderr
from yoxla.run.finalize import RunReport
from yoxla.run.model_facts import public_model
from yoxla.run.plan import precheck_provider, run_secrets
from yoxla.run.settings import (
    RunSettings,
    check_run_id,
    resolve_sign_key,
    run_record,
    settings_from,
)
from yoxla.run.suite_finalize import check_plan, finalize_suite_run
from yoxla.run.suite_job import SuiteJob
from yoxla.run.suite_judge import JUDGEMENTS, RecordingJudge, judge_facts, open_judge, precheck_judge
from yoxla.run.suite_plan import SuitePlan, dataset_info, make_suite_plan, suite_conditions
from yoxla.suites.registry import edition_of

KIND = SUITE_KIND


@dataclass
class SuiteHeld(HeldRun[SuitePlan]):
    """A suite run folder this process holds: a session sends with the run's judge."""

    def finalize(self) -> RunReport:
        s = self.settings
        return finalize_suite_run(self.dir, self.plan, sign_key=s.sign_key, log=self.log, settings=s)

    def items_for(self, records: Sequence[dict[str, Any]]) -> list[tuple[Any, Any]]:
        """The (task, item) each stored record answers."""
        items = {(tid, i.id): (t, i) for tid, t in self.plan.tasks.items() for i in t.prepared.items}
        return [items[(r["task"], str(r["id"]))] for r in records]

    @contextmanager
    def job(self, provider: Provider, items: Items, secrets: list[str]) -> Iterator[SuiteJob]:
        s = self.settings
        spec = with_overrides(get_spec(s.provider, s.config), s.base_url)
        client = open_judge(s)
        judge = RecordingJudge(self.dir / JUDGEMENTS, client[0] if client else None)
        job = SuiteJob(s, spec.backend, spec.base_url, judge, secrets, parallel_graders=client is not None)
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
    s: RunSettings, plan: SuitePlan, provider_facts: dict[str, Any], *, workers: int, batch_size: int
) -> dict[str, Any]:
    """run.json of a new suite run: the benchmark's record, with the suite in place of the edition."""
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
        return _resume(settings, explicit or set(), log, reopen=_reopen)
    s = settings
    if not s.provider or not s.model:
        raise RunError("give --provider and --model (or --preset NAME)")
    resolve_sign_key(s)
    _check_provider(s)
    plan = make_suite_plan(s, log=log)  # datasets read, preprocessors run: before any model call
    s.run_id = check_run_id(s.run_id or default_suite_run_id(s, plan.suite_id))
    run_dir = Path(s.runs_dir) / s.run_id
    _refuse_existing(run_dir)
    return begin_run(SuiteHeld, suite_run_record, s, plan, run_dir, log)


def _reopen(
    run_dir: Path, adjust: Callable[[RunSettings], RunSettings], log: Log
) -> tuple[SuiteHeld, list[dict[str, Any]]]:
    """A suite run folder read back (under its lock): the same suite (task hashes), or an error."""
    info = read_json(run_dir / RUN_JSON)
    if info.get("kind") != KIND:
        raise RunError(f"{run_dir.name} is not a suite run; continue it without --suite")
    s = adjust(settings_from(info))
    resolve_sign_key(s)
    precheck_judge(s)  # a stored judge URL without its credentials: say so first
    plan = make_suite_plan(s, log=log)
    check_plan(info, plan)
    info["judge"] = judge_facts(s)  # the judge this session asks (--judge-base-url may have changed)
    return SuiteHeld(run_dir, info, s, plan, log), _clean_predictions(run_dir, log)


def retry_suite_errors(run_dir: Path, overrides: dict[str, Any], log: Log = log_stderr) -> RunReport:
    """Re-ask only the items whose generation failed, merge them back in place, re-score."""
    return retry_errors(run_dir, overrides, log, reopen=_reopen)


def seed_suite_run(run_dir: Path, path: Path, rec: Any, overrides: dict[str, Any], log: Log) -> None:
    """A suite run folder holding a suite result file's answers and judge calls, as if that run
    had been made here: only with the committed suite the file names, its tasks unchanged."""
    from yoxla.leaderboard.suite_data import SuiteSource
    from yoxla.record import SuiteRunConditions
    from yoxla.suites.judge import request_hash

    committed, why = SuiteSource().get(rec.suite.id)
    if committed is None:
        raise RunError(f"--retry-errors: {path}: {why}")
    cond = rec.run.conditions
    filters = {k: list(v) for k, v in (cond.filters or {}).items() if k != "controls"}
    judge = rec.run.judge
    s = seeded_settings(
        rec,
        run_dir,
        overrides,
        suite=str(committed.path.resolve()),
        tasks=list(cond.tasks or []),
        filters=filters,
        scored_only="controls" in (cond.filters or {}),
        judge_provider=judge.provider if judge else None,
        judge_model=judge.model if judge else None,
        judge_base_url=judge.base_url if judge else None,
    )
    plan = make_suite_plan(s, log=log)
    if set(plan.task_ids) != set(rec.tasks):
        raise RunError(
            f"--retry-errors: {path} holds tasks {', '.join(rec.tasks)}, "
            f"the committed suite {committed.repo_path} would ask {', '.join(plan.task_ids)}"
        )
    for tid, h in plan.hashes().items():
        stored = rec.suite.tasks.get(tid)
        if stored is None or stored.hash != h["hash"]:
            raise RunError(
                f"--retry-errors: task {tid} of {path} was run with another version of the suite "
                f"(task hash differs from the committed {committed.repo_path}); start a new run"
            )
    now = SuiteRunConditions.model_validate(suite_conditions(s, plan))
    if now.generation != rec.run.conditions.generation:
        raise RunError(
            f"--retry-errors: {path} ran with other generation settings than the committed suite's"
        )
    records: list[dict[str, Any]] = []
    judgements: dict[str, dict[str, Any]] = {}
    for tid in plan.task_ids:
        for p in rec.tasks[tid].predictions:
            verdict = {
                "extracted": p.extracted,
                "valid": p.valid,
                "outcome": p.outcome,
                "reason": p.reason,
                "score": p.score,
                "scores": dict(p.scores),
                "grader_error": p.grader_error,
                "judgements": [j.model_dump(mode="json") for j in p.judgements],
            }
            # a local model's label scores are carried over too: read back at the finish
            records.append(seeded_line(tid, p, rec, verdict))
            for j in p.judgements:  # replayed by scoring, never sent again
                if request_hash(j.request) == j.request_sha256:
                    judgements.setdefault(
                        j.request_sha256,
                        {
                            "request_sha256": j.request_sha256,
                            "request": j.request,
                            "response": j.response.model_dump(mode="json"),
                        },
                    )
    provider_facts = seeded_provider_facts(s, rec, {})
    write_seeded(
        run_dir,
        path,
        rec,
        lambda: suite_run_record(
            s, plan, provider_facts, workers=rec.run.workers, batch_size=rec.run.batch_size
        ),
        records,
        log,
        {JUDGEMENTS: list(judgements.values())},
    )
