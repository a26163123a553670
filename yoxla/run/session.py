"""A run folder from start to finish: claim it, send what is missing, finish it.

A run is a folder ``runs/<run_id>/``, held by one process at a time (:mod:`yoxla.run.lock`).
Starting, resuming and retrying failed items are the same three steps: settle the settings and
the plan (:mod:`~yoxla.run.settings`, :mod:`~yoxla.run.plan`), send the pending items
through the executor (:mod:`~yoxla.run.executor`), and finish with the scores and the result
file (:mod:`~yoxla.run.finalize`). Whatever stops a session (a refusing server, a full
disk, Ctrl-C) leaves every answer received on disk and says in one line how to continue. What
is particular to the suite engine (its plan, job and finish) is :mod:`yoxla.run.engine`'s.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from yoxla.providers.base import Provider, ProviderError
from yoxla.providers.registry import redact
from yoxla.run.artifacts import (
    PREDICTIONS,
    RUN_JSON,
    SUITE_KIND,
    CorruptRun,
    PredictionWriter,
    drop_duplicates,
    duplicates_note,
    read_json,
    refuse_builtin,
    repair_predictions,
    rewrite_predictions,
    write_json,
)
from yoxla.run.errors import Log, RunError, os_reason, resume_command, writing
from yoxla.run.executor import Job, execute
from yoxla.run.finish import RunReport
from yoxla.run.lock import LOCK_FILE, RunLock
from yoxla.run.provider import open_provider, run_secrets
from yoxla.run.settings import RunSettings, check_run_id, now_iso, resumed_settings, stored_settings

Items = Sequence[tuple[Any, Any]]  # (task, item) of a run
OnRecord = Callable[[dict[str, Any]], None]


def write_run_info(run_dir: Path, info: dict[str, Any]) -> None:
    """Write run.json; a refused write ends in one line that says how to continue."""
    with writing(run_dir / RUN_JSON, f"fix that, then continue with: {resume_command(run_dir)}"):
        write_json(run_dir / RUN_JSON, info)


@dataclass
class HeldRun(ABC):
    """A run folder this process holds (under its lock): its record, its settings and its plan.

    Its one kind is :class:`yoxla.run.engine.PlannedRun` (a run of a plan): it says what a session sends
    with (:meth:`job`), how the run finishes and which item a stored record answers.
    """

    dir: Path
    info: dict[str, Any]
    settings: RunSettings
    plan: Any
    log: Log

    def write_info(self) -> None:
        write_run_info(self.dir, self.info)

    def finish(self, sent: int = 0) -> RunReport:
        report = self.finalize()
        report.sent = sent
        return report

    def pending(self, done: set[tuple[str, str]]) -> tuple[list[tuple[Any, Any]], int]:
        return self.plan.pending(self.settings.limit, done)

    def send(
        self,
        provider: Provider,
        items: Items,
        on_record: OnRecord,
        initial: int,
        total: int | None,
        secrets: list[str],
    ) -> None:
        s = self.settings
        with self.job(provider, items, secrets) as job:
            execute(provider, items, s, on_record, initial=initial, total=total, secrets=secrets, job=job)

    @abstractmethod
    def job(self, provider: Provider, items: Items, secrets: list[str]) -> AbstractContextManager[Job]:
        """What the executor sends ``items`` with in one session, closed when it ends."""

    @abstractmethod
    def finalize(self) -> RunReport:
        """Score the stored answers and write the run's files."""

    @abstractmethod
    def items_for(self, records: Sequence[dict[str, Any]]) -> list[tuple[Any, Any]]:
        """The example each stored record answers (to ask it again)."""


# Reads a run folder back under its lock: (the held run, its stored records); ``adjust`` sets
# the settings of this session from the stored ones.
Reopen = Callable[[Path, Callable[[RunSettings], RunSettings], Log], tuple[HeldRun, list[dict[str, Any]]]]


def begin_run(
    held: type[HeldRun],
    new_record: Callable[..., dict[str, Any]],
    s: RunSettings,
    plan: Any,
    run_dir: Path,
    log: Log,
) -> RunReport:
    """A new run folder, under its lock: open the provider, write run.json (``new_record(s, plan,
    provider facts, workers=, batch_size=)``), send every selected example, finish. A provider
    that cannot be opened leaves no folder behind."""
    with RunLock(run_dir, log):
        refuse_existing(run_dir)
        try:
            provider, provider_facts = open_provider(s)
        except BaseException:
            remove_unborn(run_dir)
            raise
        workers = s.transport.workers if provider.parallel else 1
        batch_size = int(getattr(provider, "batch_size", 1) or 1)
        info = new_record(s, plan, provider_facts, workers=workers, batch_size=batch_size)
        run = held(run_dir, info, s, plan, log)
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


def resume(given: RunSettings, explicit: set[str], log: Log, reopen: Reopen) -> RunReport:
    """Continue the run folder ``given`` names (``--run-id``, else the latest unfinished one of its
    suite, provider and model): send what is not on disk yet, then finish it."""
    run_dir = locate(given)
    refuse_builtin(run_dir)  # before the lock: nothing in an older folder is touched
    with RunLock(run_dir, log):
        run, records = reopen(run_dir, lambda saved: resumed_settings(saved, given, explicit), log)
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


def clean_predictions(run_dir: Path, log: Log) -> list[dict[str, Any]]:
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


def retry_errors(run_dir: Path, overrides: dict[str, Any], log: Log, reopen: Reopen) -> RunReport:
    """Re-ask only the examples whose generation failed, merge them back in place, re-score.

    ``reopen`` reads the run folder back (:func:`yoxla.run.engine.retry_suite_errors`).
    """
    if not (run_dir / RUN_JSON).is_file():
        raise RunError(f"--retry-errors: {run_dir} is not a run folder (no run.json)")
    refuse_builtin(run_dir)  # before the lock: nothing in an older folder is touched

    def adjust(s: RunSettings) -> RunSettings:
        for key, value in overrides.items():
            s.set(key, value)
        return s

    with RunLock(run_dir, log):
        run, records = reopen(run_dir, adjust, log)
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
