"""A run from start to finish: ``python runner.py --suite FILE|--edition E --provider P --model M``.

A run is a folder ``runs/<run_id>/``, held by one process at a time
(:class:`~yoxla.run.artifacts.RunLock`). Starting, resuming (``--resume``) and re-asking failed
items (``--retry-errors``) are the same three steps: settle the settings and the plan, send the
pending items through the executor, and finish with the scores and the result file
(:mod:`~yoxla.run.finalize`). Whatever stops a session (a refusing server, a full disk, Ctrl-C)
leaves every answer received on disk and says in one line how to continue.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from yoxla.contract.registry import edition_of
from yoxla.providers.base import Provider, ProviderError
from yoxla.providers.registry import get_spec, redact, with_overrides
from yoxla.record.signing import model_slug
from yoxla.run.artifacts import (
    LOCK_FILE,
    PREDICTIONS,
    RUN_JSON,
    SUITE_KIND,
    CorruptRun,
    PredictionWriter,
    RunLock,
    drop_duplicates,
    duplicates_note,
    read_json,
    refuse_builtin,
    repair_predictions,
    rewrite_predictions,
    write_json,
)
from yoxla.run.errors import Log, RunError, log_stderr, os_reason, resume_command, writing
from yoxla.run.executor import RunJob, execute
from yoxla.run.finalize import RunReport, check_plan, finalize_run
from yoxla.run.judge import JUDGEMENTS, RecordingJudge, judge_facts, open_judge, precheck_judge
from yoxla.run.model_facts import public_model
from yoxla.run.plan import RunPlan, dataset_info, make_plan, run_conditions
from yoxla.run.settings import (
    RunSettings,
    check_run_id,
    now_iso,
    open_provider,
    precheck_provider,
    resolve_sign_key,
    resumed_settings,
    run_record,
    run_secrets,
    settings_from,
    stored_settings,
)

Items = Sequence[tuple[Any, Any]]  # (task, item) of a run
OnRecord = Callable[[dict[str, Any]], None]


@dataclass
class HeldRun:
    """A run folder this process holds (under its lock): its record, its settings and its plan."""

    dir: Path
    info: dict[str, Any]
    settings: RunSettings
    plan: RunPlan
    log: Log

    def write_info(self) -> None:
        """Write run.json; a refused write ends in one line that says how to continue."""
        with writing(self.dir / RUN_JSON, f"fix that, then continue with: {resume_command(self.dir)}"):
            write_json(self.dir / RUN_JSON, self.info)

    def finish(self, sent: int = 0) -> RunReport:
        """Score the stored answers and write the run's files."""
        s = self.settings
        report = finalize_run(self.dir, self.plan, sign_key=s.sign_key, log=self.log, settings=s)
        report.sent = sent
        return report

    def pending(self, done: set[tuple[str, str]]) -> tuple[list[tuple[Any, Any]], int]:
        return self.plan.pending(self.settings.limit, done)

    def items_for(self, records: Sequence[dict[str, Any]]) -> list[tuple[Any, Any]]:
        """The (task, item) each stored record answers (to ask it again)."""
        items = {(tid, i.id): (t, i) for tid, t in self.plan.tasks.items() for i in t.prepared.items}
        return [items[(r["task"], str(r["id"]))] for r in records]

    def send(
        self,
        provider: Provider,
        items: Items,
        on_record: OnRecord,
        initial: int,
        total: int | None,
        secrets: list[str],
    ) -> None:
        """One session's sending, with the run's judge (grader workers per thread when there is one)."""
        s = self.settings
        spec = with_overrides(get_spec(s.provider, s.config), s.base_url)
        judge = RecordingJudge(self.dir / JUDGEMENTS, open_judge(s))
        job = RunJob(s, spec.backend, spec.base_url, judge, secrets, parallel_graders=judge.live is not None)
        try:
            execute(provider, items, s, on_record, initial=initial, total=total, secrets=secrets, job=job)
        finally:
            job.close()
            judge.close()


def default_run_id(s: RunSettings, sid: str) -> str:
    """``<time>_<provider>__<model>_<suite id>``; a package benchmark suite ends in its edition."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}_{model_slug(s.provider)}__{model_slug(public_model(s.model))}_{edition_of(sid) or sid}"


def new_run_record(
    s: RunSettings, plan: RunPlan, provider_facts: dict[str, Any], *, workers: int, batch_size: int
) -> dict[str, Any]:
    """run.json of a new run: the common record, with the suite in place of the edition."""
    info = run_record(
        s,
        task_ids=plan.task_ids,
        facts=plan.facts(s),
        provider_facts=provider_facts,
        dataset=dataset_info(s, plan.path),
        suite_hash=plan.hash,
        conditions=run_conditions(s, plan),
        workers=workers,
        batch_size=batch_size,
        secrets=run_secrets(s),
    )
    info.pop("edition", None)
    info.update(kind=SUITE_KIND, suite=plan.record(), judge=judge_facts(s))
    return info


def start_run(settings: RunSettings, explicit: set[str] | None = None, log: Log = log_stderr) -> RunReport:
    """Start a run, or resume one (``settings.resume``); returns the finished report.

    A new run folder is made under its lock: the provider is opened, run.json written, every
    selected item sent, and the run finished. A provider that cannot be opened leaves no folder.
    """
    if settings.resume:
        return resume(settings, explicit or set(), log)
    s = settings
    if not s.provider or not s.model:
        raise RunError("give --provider and --model (or --preset NAME)")
    resolve_sign_key(s)
    precheck_provider(s)
    precheck_judge(s)
    plan = make_plan(s, log=log)  # datasets read, preprocessors run: before any model call
    s.run_id = check_run_id(s.run_id or default_run_id(s, plan.suite_id))
    run_dir = Path(s.runs_dir) / s.run_id
    refuse_existing(run_dir)
    with RunLock(run_dir, log):
        refuse_existing(run_dir)
        try:
            provider, provider_facts = open_provider(s)
        except BaseException:
            remove_unborn(run_dir)
            raise
        workers = s.transport.workers if provider.parallel else 1
        batch_size = int(getattr(provider, "batch_size", 1) or 1)
        info = new_run_record(s, plan, provider_facts, workers=workers, batch_size=batch_size)
        run = HeldRun(run_dir, info, s, plan, log)
        items, total = run.pending(set())
        return _send(run, provider, items, total, "run")


def refuse_existing(run_dir: Path) -> None:
    if run_dir.is_dir() and any(p.name != LOCK_FILE for p in run_dir.iterdir()):
        raise RunError(
            f"run {run_dir.name!r} already exists in {run_dir.parent}; "
            "pass --resume to continue it, or choose another --run-id"
        )
    if run_dir.exists() and not run_dir.is_dir():
        raise RunError(f"{run_dir} exists and is not a run folder; choose another --run-id")


def remove_unborn(run_dir: Path) -> None:
    """A run that never wrote its run.json leaves no folder behind (its id stays free)."""
    try:
        (run_dir / LOCK_FILE).unlink(missing_ok=True)
        run_dir.rmdir()
    except OSError:
        pass


def resume(given: RunSettings, explicit: set[str], log: Log) -> RunReport:
    """Continue the run folder ``given`` names (``--run-id``, else the latest unfinished one of its
    suite, provider and model): send what is not on disk yet, then finish it."""
    run_dir = locate(given)
    refuse_builtin(run_dir)  # before the lock: nothing in an older folder is touched
    with RunLock(run_dir, log):
        run, records = _reopen(run_dir, lambda saved: resumed_settings(saved, given, explicit), log)
        s = run.settings
        items, total = run.pending({(r["task"], str(r["id"])) for r in records})
        log(f"resuming {run_dir.name}: {total - len(items)} of {total} examples already on disk")
        run.info["settings"] = stored_settings(s)
        if not items:  # everything is on disk: finish the run, no model is asked
            run.write_info()
            return run.finish()
        provider, _ = open_provider(s)
        return _send(run, provider, items, total, "resume")


def locate(given: RunSettings) -> Path:
    runs_dir = Path(given.runs_dir)
    if given.run_id:
        run_dir = runs_dir / check_run_id(given.run_id)
        if not (run_dir / RUN_JSON).is_file():
            raise RunError(f"--resume: there is no run {given.run_id!r} in {runs_dir}")
        return run_dir
    found = find_resumable(runs_dir, given.provider or None, given.model or None, given.suite)
    if found is None:
        raise RunError(f"--resume: no unfinished run to resume in {runs_dir}; give --run-id")
    return found


def find_resumable(runs_dir: Path, provider: str | None, model: str | None, suite: str | None) -> Path | None:
    """The latest unfinished run of this provider, model and suite (a manifest path) in ``runs_dir``;
    a folder of the built-in engine of an older version is never one."""
    best: tuple[str, Path] | None = None
    if not runs_dir.is_dir():
        return None
    for d in runs_dir.iterdir():
        if not d.is_dir():
            continue
        try:
            info = read_json(d / RUN_JSON)
        except CorruptRun:
            continue
        s = info.get("settings", {})
        if (provider and s.get("provider") != provider) or (model and s.get("model") != model):
            continue
        if info.get("status") == "complete" or info.get("kind") != SUITE_KIND:
            continue
        if suite and s.get("suite") != suite:
            continue
        key = (info.get("started_at") or "", d)
        if best is None or key[0] > best[0]:
            best = key
    return best[1] if best else None


def _reopen(
    run_dir: Path, adjust: Callable[[RunSettings], RunSettings], log: Log
) -> tuple[HeldRun, list[dict[str, Any]]]:
    """A run folder read back under its lock: (the held run, its stored records) of the same suite
    (task hashes), or an error; ``adjust`` sets this session's settings from the stored ones."""
    info = read_json(run_dir / RUN_JSON)
    refuse_builtin(run_dir)  # checked before the lock too; here for a caller that did not
    s = adjust(settings_from(info))
    resolve_sign_key(s)
    precheck_judge(s)  # a stored judge URL without its credentials: say so first
    plan = make_plan(s, log=log)
    check_plan(info, plan)
    info["judge"] = judge_facts(s)  # the judge this session asks (--judge-base-url may have changed)
    return HeldRun(run_dir, info, s, plan, log), _clean_predictions(run_dir, log)


def _clean_predictions(run_dir: Path, log: Log) -> list[dict[str, Any]]:
    """The stored records, with a torn last line cut off and repeated examples dropped (first kept)."""
    path = run_dir / PREDICTIONS
    with writing(path):
        records, torn = repair_predictions(path)
    if torn:
        log(f"resume: discarded a torn last line ({torn} bytes) of {path}")
    records, dropped = drop_duplicates(records)
    if dropped:
        log(duplicates_note(path, dropped))
        with writing(path):
            rewrite_predictions(path, records)
    return records


# Sending ---------------------------------------------------------------------------------------


def _send(
    run: HeldRun, provider: Provider, items: Sequence[tuple[Any, Any]], total: int, kind: str
) -> RunReport:
    """Append the answers to ``items`` to predictions.jsonl, then finish the run."""
    run.info["status"] = "running"
    try:
        run.write_info()
        path = run.dir / PREDICTIONS
        with writing(path):
            writer = PredictionWriter(path)
    except BaseException:
        provider.close()
        raise
    return run.finish(_session(run, provider, items, kind, writer.append, writer.close, total))


def _session(
    run: HeldRun,
    provider: Provider,
    items: Items,
    kind: str,
    on_record: OnRecord,
    wrap_up: Callable[[], None],
    total: int | None = None,
) -> int:
    """One session of sending: every record to ``on_record``, then ``wrap_up``; returns records sent.

    Whatever stops it is recorded in run.json (status ``interrupted``) and re-raised as one line
    that says how to continue.
    """
    s, secrets = run.settings, run_secrets(run.settings)
    session = {
        "kind": kind,
        "started_at": now_iso(),
        "command": redact(s.command, secrets),
        "workers": s.transport.workers,
    }
    t0 = time.perf_counter()
    sent = 0

    def record(r: dict[str, Any]) -> None:
        nonlocal sent
        on_record(r)
        sent += 1

    before = (total or len(items)) - len(items)
    try:
        try:
            run.send(provider, items, record, before, total, secrets)
        finally:
            provider.close()
            wrap_up()
    except BaseException as exc:
        _end_session(run, session, t0, sent, failed=True)
        raise _stopped(exc, run.dir, kind, before + sent, run.log) from None
    _end_session(run, session, t0, sent)
    return sent


def _stopped(exc: BaseException, run_dir: Path, kind: str, on_disk: int, log: Log) -> BaseException:
    """The one-line error that ends a stopped session, with the command that continues it."""
    again = resume_command(run_dir, kind)
    if isinstance(exc, KeyboardInterrupt):
        log(f"interrupted; continue with: {again}")
        return exc
    if isinstance(exc, ProviderError):
        return RunError(f"{exc}; {on_disk} examples are on disk; continue later with: {again}")
    if isinstance(exc, OSError):
        where_failed = exc.filename or run_dir
        return RunError(
            f"cannot write {where_failed}: {os_reason(exc)}; fix that, then continue with: {again}"
        )
    return exc


def _end_session(
    run: HeldRun, session: dict[str, Any], t0: float, examples: int, failed: bool = False
) -> None:
    """Record the session in run.json; after a failed session (status ``interrupted``) only try to."""
    wall = time.perf_counter() - t0
    session.update(finished_at=now_iso(), wall_s=round(wall, 3), examples=examples)
    run.info.setdefault("sessions", []).append(session)
    run.info["wall_s"] = round(float(run.info.get("wall_s") or 0.0) + wall, 3)
    if failed:
        run.info["status"] = "interrupted"
    try:
        run.write_info()
    except RunError as exc:
        if not failed:
            raise
        run.log(f"could not record the end of the session: {exc}")


# Retrying generation errors ---------------------------------------------------------------------


def retry_errors(run_dir: Path, overrides: dict[str, Any], log: Log = log_stderr) -> RunReport:
    """Re-ask only the examples whose generation failed, merge them back in place, re-score."""
    if not (run_dir / RUN_JSON).is_file():
        raise RunError(f"--retry-errors: {run_dir} is not a run folder (no run.json)")
    refuse_builtin(run_dir)  # before the lock: nothing in an older folder is touched

    def adjust(s: RunSettings) -> RunSettings:
        for key, value in overrides.items():
            s.set(key, value)
        return s

    with RunLock(run_dir, log):
        run, records = _reopen(run_dir, adjust, log)
        failed = [i for i, r in enumerate(records) if r.get("outcome") == "generation_error"]
        if not failed:
            log(f"{run_dir.name}: no generation errors to retry")
            return run.finish()
        items = run.items_for([records[i] for i in failed])
        provider, _ = open_provider(run.settings)
        new: list[dict[str, Any]] = []
        # What came back is merged in place, also when the session is interrupted.
        _session(
            run, provider, items, "retry_errors", new.append, partial(_merge, run_dir, records, failed, new)
        )
        fixed = sum(r["outcome"] != "generation_error" for r in new)
        log(f"retried {len(new)} failed examples: {fixed} answered, {len(new) - fixed} still failing")
        return run.finish(len(new))


def _merge(
    run_dir: Path, records: list[dict[str, Any]], failed: list[int], new: list[dict[str, Any]]
) -> None:
    for idx, record in zip(failed, new, strict=False):
        record["attempts"] = int(records[idx].get("attempts") or 0) + int(record.get("attempts") or 0)
        records[idx] = record
    rewrite_predictions(run_dir / PREDICTIONS, records)
