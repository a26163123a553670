"""A run from start to finish: claim the run folder, send what is missing, finish it.

A run is a folder ``runs/<run_id>/``, held by one process at a time (:mod:`yoxla.run.lock`).
Starting, resuming and retrying failed examples are the same three steps: settle the
settings and the plan (:mod:`~yoxla.run.settings`, :mod:`~yoxla.run.plan`), send the
pending examples through the executor (:mod:`~yoxla.run.executor`), and finish with the
scores and the result file (:mod:`~yoxla.run.finalize`). Whatever stops a session (a
refusing server, a full disk, Ctrl-C) leaves every answer received on disk and says in
one line how to continue.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from yoxla.providers.base import Provider, ProviderError
from yoxla.providers.registry import redact
from yoxla.run.artifacts import (
    PREDICTIONS,
    RUN_JSON,
    CorruptRun,
    PredictionWriter,
    drop_duplicates,
    duplicates_note,
    read_json,
    repair_predictions,
    rewrite_predictions,
    write_json,
)
from yoxla.run.errors import Log, RunError, log_stderr, os_reason, resume_command, writing
from yoxla.run.executor import Job, execute
from yoxla.run.finalize import RunReport, finalize_run
from yoxla.run.lock import LOCK_FILE, RunLock
from yoxla.run.plan import Plan, dataset_info, make_plan, open_provider, precheck_provider, run_secrets
from yoxla.run.settings import (
    RunSettings,
    check_run_id,
    default_run_id,
    now_iso,
    resolve_sign_key,
    resumed_settings,
    run_conditions,
    run_record,
    settings_from,
    stored_settings,
)

Items = Sequence[tuple[Any, Any]]  # (task, row) of a benchmark run, (task, item) of a suite run
OnRecord = Callable[[dict[str, Any]], None]


class _Pending(Protocol):
    def pending(self, limit: int | None, done: set[tuple[str, str]]) -> tuple[list[Any], int]: ...


PlanT = TypeVar("PlanT", bound=_Pending)


def write_run_info(run_dir: Path, info: dict[str, Any]) -> None:
    """Write run.json; a refused write ends in one line that says how to continue."""
    with writing(run_dir / RUN_JSON, f"fix that, then continue with: {resume_command(run_dir)}"):
        write_json(run_dir / RUN_JSON, info)


@dataclass
class HeldRun(ABC, Generic[PlanT]):
    """A run folder this process holds (under its lock): its record, its settings and its plan.

    A benchmark run's is :class:`Held`, a suite run's :class:`yoxla.run.suite_engine.SuiteHeld`;
    they differ in what a session sends with (:meth:`job`), how they finish and how they find
    the example a stored record answers.
    """

    dir: Path
    info: dict[str, Any]
    settings: RunSettings
    plan: PlanT
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
    def job(self, provider: Provider, items: Items, secrets: list[str]) -> AbstractContextManager[Job | None]:
        """What the executor sends ``items`` with in one session, closed when it ends."""

    @abstractmethod
    def finalize(self) -> RunReport:
        """Score the stored answers and write the run's files."""

    @abstractmethod
    def items_for(self, records: Sequence[dict[str, Any]]) -> list[tuple[Any, Any]]:
        """The example each stored record answers (to ask it again)."""


# Reads a run folder back under its lock: (the held run, its stored records); ``adjust`` sets
# the settings of this session from the stored ones.
Reopen = Callable[
    [Path, Callable[[RunSettings], RunSettings], Log], tuple[HeldRun[Any], list[dict[str, Any]]]
]


@dataclass
class Held(HeldRun[Plan]):
    """A benchmark run folder this process holds."""

    @contextmanager
    def job(self, provider: Provider, items: Items, secrets: list[str]) -> Iterator[None]:
        for tid in dict.fromkeys(t.id for t, _ in items):
            provider.prepare(self.plan.suite.task(tid), self.plan.rows[tid])
        yield None

    def finalize(self) -> RunReport:
        return finalize_run(self.dir, task_rows=self.plan.rows, sign_key=self.settings.sign_key, log=self.log)

    def items_for(self, records: Sequence[dict[str, Any]]) -> list[tuple[Any, Any]]:
        """The (task, row) each stored record answers."""
        plan = self.plan
        rows = {(t, str(r[plan.suite.task(t).id_field])): r for t in plan.task_ids for r in plan.rows[t]}
        return [(plan.suite.task(r["task"]), rows[(r["task"], str(r["id"]))]) for r in records]


def start_run(settings: RunSettings, explicit: set[str] | None = None, log: Log = log_stderr) -> RunReport:
    """Start a new run, or resume one (``settings.resume``); returns the finished report.

    ``explicit`` names the settings the user gave on the command line; on resume those
    that define the run (provider, model, edition, tasks, …) must match the stored ones.
    """
    if settings.resume:
        return _resume(settings, explicit or set(), log)
    return _start(settings, log)


def _start(s: RunSettings, log: Log) -> RunReport:
    if not s.provider or not s.model:
        raise RunError("give --provider and --model (or --preset NAME)")
    s.run_id = check_run_id(s.run_id or default_run_id(s))
    run_dir = Path(s.runs_dir) / s.run_id
    _refuse_existing(run_dir)  # before loading anything; checked again under the lock
    resolve_sign_key(s)
    precheck_provider(s)
    return begin_run(Held, _new_record, s, make_plan(s, log), run_dir, log)


def begin_run(
    held: type[HeldRun[Any]],
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
        _refuse_existing(run_dir)
        try:
            provider, provider_facts = open_provider(s)
        except BaseException:
            _remove_unborn(run_dir)
            raise
        workers = s.transport.workers if provider.parallel else 1
        batch_size = int(getattr(provider, "batch_size", 1) or 1)
        info = new_record(s, plan, provider_facts, workers=workers, batch_size=batch_size)
        run = held(run_dir, info, s, plan, log)
        items, total = run.pending(set())
        return _send(run, provider, items, total, "run")


def _new_record(
    s: RunSettings, plan: Plan, provider_facts: dict[str, Any], *, workers: int, batch_size: int
) -> dict[str, Any]:
    """run.json of a new run folder (started here, or made from a result file)."""
    return run_record(
        s,
        task_ids=plan.task_ids,
        facts=plan.facts,
        provider_facts=provider_facts,
        dataset=dataset_info(plan.edition, s),
        suite_hash=plan.edition.suite_hash(plan.suite),
        conditions=run_conditions(s, plan.suite, plan.task_ids),
        workers=workers,
        batch_size=batch_size,
        secrets=run_secrets(s),
    )


def _refuse_existing(run_dir: Path) -> None:
    if run_dir.is_dir() and any(p.name != LOCK_FILE for p in run_dir.iterdir()):
        raise RunError(
            f"run {run_dir.name!r} already exists in {run_dir.parent}; "
            "pass --resume to continue it, or choose another --run-id"
        )
    if run_dir.exists() and not run_dir.is_dir():
        raise RunError(f"{run_dir} exists and is not a run folder; choose another --run-id")


def _remove_unborn(run_dir: Path) -> None:
    """A run that never wrote its run.json leaves no folder behind (its id stays free)."""
    try:
        (run_dir / LOCK_FILE).unlink(missing_ok=True)
        run_dir.rmdir()
    except OSError:
        pass


def _resume(given: RunSettings, explicit: set[str], log: Log, reopen: Reopen | None = None) -> RunReport:
    run_dir = _locate(given)
    with RunLock(run_dir, log):
        run, records = (reopen or _reopen)(
            run_dir, lambda saved: resumed_settings(saved, given, explicit), log
        )
        s = run.settings
        items, total = run.pending({(r["task"], str(r["id"])) for r in records})
        log(f"resuming {run_dir.name}: {total - len(items)} of {total} examples already on disk")
        run.info["settings"] = stored_settings(s)
        if not items:  # everything is on disk: finish the run, no model is asked
            run.write_info()
            return run.finish()
        provider, _ = open_provider(s)
        return _send(run, provider, items, total, "resume")


def _reopen(
    run_dir: Path, adjust: Callable[[RunSettings], RunSettings], log: Log
) -> tuple[HeldRun[Any], list[dict[str, Any]]]:
    """A run folder read back (under its lock): its settings as ``adjust`` makes them, and its records."""
    info = read_json(run_dir / RUN_JSON)
    if info.get("kind") == "suite":
        raise RunError(f"{run_dir.name} is a suite run; continue it with --run-id {run_dir.name} --resume")
    s = adjust(settings_from(info))
    resolve_sign_key(s)
    plan = make_plan(s, log)
    for tid, f in plan.facts.items():
        old = info.get("tasks", {}).get(tid, {})
        if old and old.get("fingerprint") != f["fingerprint"]:
            raise RunError(f"the rows of {tid} changed since the run started (fingerprint differs)")
    return Held(run_dir, info, s, plan, log), _clean_predictions(run_dir, log)


def _locate(given: RunSettings) -> Path:
    runs_dir = Path(given.runs_dir)
    if given.run_id:
        run_dir = runs_dir / check_run_id(given.run_id)
        if not (run_dir / RUN_JSON).is_file():
            raise RunError(f"--resume: there is no run {given.run_id!r} in {runs_dir}")
        return run_dir
    found = find_resumable(runs_dir, given.provider or None, given.model or None, None, suite=given.suite)
    if found is None:
        raise RunError(f"--resume: no unfinished run to resume in {runs_dir}; give --run-id")
    return found


def find_resumable(
    runs_dir: Path, provider: str | None, model: str | None, edition: str | None, *, suite: str | None = None
) -> Path | None:
    """The latest unfinished run of this provider/model/edition in ``runs_dir``; with ``suite``
    (a manifest path) the latest unfinished run of that suite, else never a suite run."""
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
        if (edition and s.get("edition") != edition) or info.get("status") == "complete":
            continue
        if (info.get("kind") == "suite") != (suite is not None) or (suite and s.get("suite") != suite):
            continue
        key = (info.get("started_at") or "", d)
        if best is None or key[0] > best[0]:
            best = key
    return best[1] if best else None


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
    run: HeldRun[Any], provider: Provider, items: Sequence[tuple[Any, Any]], total: int, kind: str
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
    run: HeldRun[Any],
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
    run: HeldRun[Any], session: dict[str, Any], t0: float, examples: int, failed: bool = False
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


def retry_errors(
    run_dir: Path, overrides: dict[str, Any], log: Log = log_stderr, reopen: Reopen | None = None
) -> RunReport:
    """Re-ask only the examples whose generation failed, merge them back in place, re-score.

    ``reopen`` reads the run folder back (default: a benchmark run; a suite run passes its own).
    """
    if not (run_dir / RUN_JSON).is_file():
        raise RunError(f"--retry-errors: {run_dir} is not a run folder (no run.json)")

    def adjust(s: RunSettings) -> RunSettings:
        for key, value in overrides.items():
            s.set(key, value)
        return s

    with RunLock(run_dir, log):
        run, records = (reopen or _reopen)(run_dir, adjust, log)
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


def retry_result_file(
    path: Path, runs_dir: str, overrides: dict[str, Any], log: Log = log_stderr
) -> RunReport | None:
    """``--retry-errors RESULT.json``: re-ask only the examples the file records as generation
    errors, and write a new, complete result file (a new digest).

    A benchmark or a suite result file. When the run folder that wrote the file is in
    ``runs_dir`` (its ``run.run_id``), the retry happens there, like ``--retry-errors RUN``.
    Otherwise a run folder of that id is made from the file (its settings, conditions and
    stored answers, distributions and judge calls) and the retry happens in it. The new result
    file goes where the run writes it (``results/<edition>/…`` or ``results/suites/<suite>/…``):
    the old file is replaced when it is that file; otherwise it stays, and the board shows the
    newer one (same provider and model). Returns None when the file has no generation error
    (nothing is written).
    """
    from yoxla.record import SuiteResultFile

    rec = _read_result(path)
    if rec.generation_errors == 0:
        log(f"{path}: no generation errors to retry")
        return None
    if isinstance(rec, SuiteResultFile):
        from yoxla.run import suite_engine

        seed: Callable[[Path, Path, Any, dict[str, Any], Log], None] = suite_engine.seed_suite_run
        retry: Callable[[Path, dict[str, Any], Log], RunReport] = suite_engine.retry_suite_errors
        identity: tuple[Any, ...] = (suite_engine.KIND, rec.model.provider, rec.model.model, rec.suite.id)
    else:
        seed, retry = _seed_run, retry_errors
        identity = (None, rec.model.provider, rec.model.model, rec.edition)
    root = Path(overrides.get("runs_dir") or runs_dir)
    run_dir = root / check_run_id(rec.run.run_id)
    if (run_dir / RUN_JSON).is_file():
        info = read_json(run_dir / RUN_JSON)
        suite = info.get("suite")
        held = (
            info.get("kind"),
            info.get("provider"),
            info.get("model"),
            suite.get("id") if isinstance(suite, dict) else info.get("edition"),
        )
        if held == identity:
            log(f"{path}: retrying in its run folder {run_dir}")
            return retry(run_dir, overrides, log)
        run_dir = root / check_run_id(f"{rec.run.run_id}-retry-{now_iso().replace(':', '')}")
    seed(run_dir, path, rec, overrides, log)
    log(f"{path}: made the run folder {run_dir} from the file; retrying its {rec.generation_errors} errors")
    return retry(run_dir, overrides, log)


def _read_result(path: Path) -> Any:
    from yoxla.leaderboard.admission import MAX_BYTES
    from yoxla.record import parse_record
    from yoxla.strictjson import StrictJSONError, loads_strict, read_regular_file

    raw, problem = read_regular_file(path, MAX_BYTES)
    if raw is None:
        raise RunError(f"--retry-errors: cannot read {path}: {problem}")
    try:
        doc = loads_strict(raw)
    except StrictJSONError as exc:
        raise RunError(f"--retry-errors: {path} is not a result file: {exc}") from None
    rec, problems = parse_record(doc)
    if rec is None:
        raise RunError(f"--retry-errors: {path} is not a result file: {problems[0]}")
    return rec


def seeded_settings(rec: Any, run_dir: Path, overrides: dict[str, Any], **kind: Any) -> RunSettings:
    """The settings of a run folder seeded from a result file (benchmark or suite): the file's
    model, limit and run conditions, then ``overrides``; ``kind`` holds what differs by kind."""
    cond = rec.run.conditions
    s = RunSettings(
        provider=rec.model.provider,
        model=rec.model.model,
        limit=cond.limit,
        thinking=cond.thinking,
        thinking_budget=cond.thinking_budget if cond.thinking_budget is not None else 4096,
        base_url=rec.model.base_url,
        display_name=rec.model.display_name,
        run_id=run_dir.name,
        runs_dir=str(run_dir.parent),
        **kind,
    )
    for key, value in overrides.items():
        s.set(key, value)
    return s


def _seed_run(run_dir: Path, path: Path, rec: Any, overrides: dict[str, Any], log: Log) -> None:
    """A run folder holding a result file's answers, as if that run had been made here."""
    from yoxla.parsing import answer_text

    cond = rec.run.conditions
    if cond.temperature is not None or cond.system_prompt != "contract":
        raise RunError(
            f"--retry-errors: {path} ran under changed conditions (temperature or system prompt) "
            "that this runner cannot repeat"
        )
    filters = {k: list(v) for k, v in cond.filters.items() if k not in ("task", "controls")}
    s = seeded_settings(
        rec,
        run_dir,
        overrides,
        edition=rec.edition,
        tasks=list(cond.filters.get("task", [])),
        filters=filters,
        scored_only="controls" in cond.filters,
    )
    plan = make_plan(s, log)
    if set(plan.task_ids) != set(rec.tasks):
        raise RunError(
            f"--retry-errors: {path} holds tasks {', '.join(rec.tasks)}, the run would ask {', '.join(plan.task_ids)}"
        )
    for tid, facts in plan.facts.items():
        if facts["fingerprint"] != rec.tasks[tid].fingerprint:
            raise RunError(f"--retry-errors: the rows of {tid} differ from those {path} was run on")
    provider_facts = seeded_provider_facts(s, rec, {"chat_template_hash": rec.run.chat_template_hash})
    records = [
        seeded_line(
            tid,
            p,
            rec,
            {
                "text": answer_text(p.raw),
                "parsed": p.parsed,
                "valid": p.valid,
                "abstained": p.abstained,
                "outcome": p.outcome,
                "reason": p.reason,
                "near_miss": p.near_miss,
                "score": p.score,
                "metrics": {},
            },
        )
        for tid in plan.task_ids
        for p in rec.tasks[tid].predictions
    ]
    write_seeded(
        run_dir,
        path,
        rec,
        lambda: _new_record(s, plan, provider_facts, workers=rec.run.workers, batch_size=rec.run.batch_size),
        records,
        log,
    )


def seeded_line(tid: str, p: Any, rec: Any, verdict: dict[str, Any]) -> dict[str, Any]:
    """The predictions.jsonl line of answer ``p`` to task ``tid`` of result file ``rec``, as a run
    writes it; ``verdict`` holds what a benchmark or a suite line stores of the answer's scoring."""
    from yoxla.calibration.stored import DISTRIBUTION_KEY

    line = {
        "task": tid,
        "id": p.id,
        "raw": p.raw,
        **verdict,
        "finish_reason": p.finish_reason,
        "model": rec.model.reported_model,
        "usage": {},
        "latency_s": 0.0,
        "attempts": 1,
        "error": p.error,
    }
    if p.distribution is not None:
        line[DISTRIBUTION_KEY] = p.distribution.model_dump(mode="json", exclude_unset=True)
    return line


def seeded_provider_facts(s: RunSettings, rec: Any, provider_info: dict[str, Any]) -> dict[str, Any]:
    """run.json's provider facts of a run folder made from result file ``rec``."""
    from yoxla.providers.registry import get_spec

    spec = get_spec(s.provider, s.config)
    return {
        "backend": spec.backend,
        "base_url": rec.model.base_url,
        "api_key_env": spec.api_key_env,
        "reasoning_control": spec.reasoning,
        "provider_info": provider_info,
    }


def write_seeded(
    run_dir: Path,
    path: Path,
    rec: Any,
    new_record: Callable[[], dict[str, Any]],
    records: list[dict[str, Any]],
    log: Log,
    extra: dict[str, list[dict[str, Any]]] | None = None,
) -> None:
    """Write a run folder made from result file ``rec``, under its lock: run.json,
    predictions.jsonl, and ``extra`` (more JSON-lines files by name)."""
    if records:  # the file keeps only the run's total usage: carried over on the first answer
        records[0]["usage"] = rec.usage.model_dump(mode="json", exclude_unset=True)
    with RunLock(run_dir, log):
        _refuse_existing(run_dir)
        info = new_record()
        info.update(
            status="incomplete",
            started_at=rec.run.started_at,
            seeded_from={"result_file": path.name, "content_sha256": rec.content_sha256},
        )
        for name, lines in (extra or {}).items():
            rewrite_predictions(run_dir / name, lines)
        write_json(run_dir / RUN_JSON, info)
        rewrite_predictions(run_dir / PREDICTIONS, records)


def _merge(
    run_dir: Path, records: list[dict[str, Any]], failed: list[int], new: list[dict[str, Any]]
) -> None:
    for idx, record in zip(failed, new, strict=False):
        record["attempts"] = int(records[idx].get("attempts") or 0) + int(record.get("attempts") or 0)
        records[idx] = record
    rewrite_predictions(run_dir / PREDICTIONS, records)
