"""The run loop: examples → provider → one line per example → scores → result file.

A run is a folder ``runs/<run_id>/``. Examples are sent by a thread pool (up to
``workers`` in flight, under the provider's adaptive limiter) but consumed *in example
order*, so ``predictions.jsonl`` reads the same whatever the schedule and a killed run
resumes from its last complete line. Scores are always computed from the stored raw
outputs (:mod:`yoxla.rescoring`), so a run, its resumption and a later ``rescore`` agree.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from yoxla import __version__
from yoxla.editions import Edition, fingerprint, load_edition, load_rows, resolve_source
from yoxla.evaluators import score_example
from yoxla.parsing import answer_text
from yoxla.providers.base import Completion, Provider, ProviderError, ProviderOptions, Request
from yoxla.providers.registry import (
    api_key,
    create_provider,
    get_spec,
    known_secrets,
    public_url,
    redact,
    with_overrides,
)
from yoxla.record import (
    DatasetInfo,
    ModelInfo,
    RunConditions,
    RunInfo,
    TaskResult,
    Usage,
    build_document,
    build_task_result,
    summary_scores,
)
from yoxla.rescoring import align_rows
from yoxla.results import SIGN_KEY_ENV, model_slug, result_filename, write_result
from yoxla.run.artifacts import (
    PREDICTIONS,
    RUN_JSON,
    SUMMARY,
    TASK_SCORES,
    CorruptRun,
    PredictionWriter,
    read_json,
    read_predictions,
    repair_predictions,
    rewrite_predictions,
    write_json,
)
from yoxla.suite import Suite, Task, load_suite

Log = Callable[[str], None]
ABORT_AFTER_FAILURES = 10  # this many generation errors in a row with no success at all: stop
IDENTITY = (
    "provider",
    "model",
    "edition",
    "tasks",
    "limit",
    "thinking",
    "thinking_budget",
    "data_dir",
    "revision",
)


class RunError(Exception):
    """The run cannot start or go on; the message says why in one line."""


class ValidationFailed(RunError):
    """The benchmark rows broke a validation rule: no model is called."""


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class RunSettings:
    """Everything a run needs; what it was started with is stored in run.json under ``settings``."""

    provider: str
    model: str
    edition: str = "v1"
    tasks: list[str] = field(default_factory=list)  # empty: every task of the edition
    data_dir: str | None = None
    revision: str | None = None
    limit: int | None = None
    thinking: bool = False
    thinking_budget: int = 4096
    workers: int = 1
    batch_size: int | None = None
    timeout: float = 120.0
    max_retries: int = 6
    delay: float = 0.0
    backoff_base: float = 1.0
    seed: int | None = None
    config: str | None = None
    base_url: str | None = None
    provider_settings: dict[str, Any] = field(default_factory=dict)
    display_name: str | None = None
    run_id: str | None = None
    resume: bool = False
    runs_dir: str = "runs"
    results_dir: str = "results"
    sign_key: str | None = None
    progress: bool = True
    check_connection: bool = True
    command: str = ""


@dataclass
class RunReport:
    run_dir: Path
    summary: dict[str, Any]
    result_path: Path | None
    complete: bool
    sent: int = 0


# Rows ---------------------------------------------------------------------------------


def select_tasks(edition: Edition, task_ids: Iterable[str]) -> list[str]:
    suite = load_suite()
    ids = list(task_ids)
    for tid in ids:
        suite.task(tid)  # SuiteError names the known tasks
        if tid not in edition.tasks:
            raise RunError(f"task {tid} is not part of edition {edition.name}")
    chosen = set(ids) if ids else set(edition.tasks)
    return [tid for tid in edition.tasks if tid in chosen]  # edition order, no duplicates


def load_task_rows(
    edition: Edition, task_ids: list[str], data_dir: str | None, revision: str | None, log: Log | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Full rows of each task, validated; errors refuse the run, warnings are logged."""
    from yoxla.validate import validate_rows

    suite = load_suite()
    out: dict[str, list[dict[str, Any]]] = {}
    problems: list[str] = []
    for tid in task_ids:
        rows = load_rows(edition, tid, data_dir, revision)
        report = validate_rows(suite.task(tid), rows, edition.tasks[tid])
        problems.extend(str(p) for p in report.errors)
        if log:
            for p in report.warnings:
                log(f"warning: {p}")
        out[tid] = rows
    if problems:
        shown = "; ".join(problems[:3]) + (f"; … and {len(problems) - 3} more" if len(problems) > 3 else "")
        raise ValidationFailed(f"the benchmark rows failed validation ({len(problems)} errors): {shown}")
    return out


def _selected(rows: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    return rows if limit is None else rows[:limit]


# Records ------------------------------------------------------------------------------


def make_record(task: Task, row: dict[str, Any], comp: Completion) -> dict[str, Any]:
    """One line of predictions.jsonl: the model's answer as stored, and how it scored now."""
    raw = None if comp.error else comp.raw
    res = score_example(task, row, raw, comp.finish_reason, comp.error)
    p = res.parsed
    return {
        "task": task.id,
        "id": res.id,
        "raw": raw,
        "text": answer_text(raw),
        "parsed": p.value if p.valid else None,
        "valid": p.valid,
        "abstained": p.abstained,
        "outcome": res.outcome,
        "reason": "generation_error" if comp.error else p.reason,
        "near_miss": p.near_miss,
        "score": res.score,
        "metrics": res.metrics,
        "finish_reason": comp.finish_reason,
        "model": comp.model,
        "usage": comp.usage,
        "latency_s": round(comp.latency_s, 6),
        "attempts": comp.attempts,
        "error": comp.error,
    }


def _request(task: Task, row: dict[str, Any], thinking: bool, thinking_budget: int) -> Request:
    gen = task.generation
    return Request(
        task=task,
        row=row,
        example_id=str(row[task.id_field]),
        messages=task.messages(row),
        max_tokens=gen.max_tokens + (thinking_budget if thinking else 0),
        temperature=gen.temperature,
        top_p=gen.top_p,
        thinking=thinking,
    )


Item = tuple[Task, dict[str, Any]]


def _units(items: list[Item], provider: Provider) -> list[list[Item]]:
    """Single examples for parallel providers; same-task batches of batch_size otherwise."""
    size = max(1, int(getattr(provider, "batch_size", 1) or 1))
    if size == 1:
        return [[it] for it in items]
    units: list[list[Item]] = []
    for it in items:
        if units and len(units[-1]) < size and units[-1][0][0].id == it[0].id:
            units[-1].append(it)
        else:
            units.append([it])
    return units


def execute(
    provider: Provider,
    items: list[Item],
    settings: RunSettings,
    on_record: Callable[[dict[str, Any]], None],
    *,
    initial: int = 0,
    total: int | None = None,
    secrets: list[str] | None = None,
) -> int:
    """Send ``items``; hand each record to ``on_record`` in item order. Returns requests completed."""
    secrets = secrets or []
    workers = max(1, settings.workers) if provider.parallel else 1
    units = _units(items, provider)
    window_max = workers * 4 if provider.parallel else 2
    batched = int(getattr(provider, "batch_size", 1) or 1) > 1

    def work(unit: list[Item]) -> list[Completion]:
        reqs = [_request(t, r, settings.thinking, settings.thinking_budget) for t, r in unit]
        try:
            comps = provider.generate_batch(reqs) if batched else [provider.generate(r) for r in reqs]
        except ProviderError:
            raise
        except Exception as exc:  # a provider bug or a local failure: this unit's examples fail
            msg = redact(f"{type(exc).__name__}: {exc}", secrets)[:500]
            comps = [Completion(error=msg) for _ in reqs]
        if len(comps) != len(reqs):
            raise ProviderError(f"provider returned {len(comps)} completions for {len(reqs)} requests")
        return comps

    bar = _progress(settings.progress, total if total is not None else len(items), initial)
    done = 0
    failures_in_a_row = 0
    any_success = False
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="yoxla-worker")
    window: deque[tuple[list[Item], Future[list[Completion]]]] = deque()
    it: Iterator[list[Item]] = iter(units)

    def fill() -> None:
        while len(window) < window_max:
            unit = next(it, None)
            if unit is None:
                return
            window.append((unit, pool.submit(work, unit)))

    try:
        fill()
        while window:
            unit, fut = window.popleft()
            comps = fut.result()
            for (task, row), comp in zip(unit, comps, strict=True):
                if comp.error:
                    comp.error = redact(comp.error, secrets)
                on_record(make_record(task, row, comp))
                done += 1
                if comp.error:
                    failures_in_a_row += 1
                    if not any_success and failures_in_a_row >= ABORT_AFTER_FAILURES:
                        raise ProviderError(
                            f"the first {failures_in_a_row} requests all failed (last: {comp.error}); "
                            "fix the cause, then --resume continues and --retry-errors re-asks the failed ones"
                        )
                else:
                    any_success = True
                    failures_in_a_row = 0
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


# Starting and resuming ----------------------------------------------------------------


def _default_run_id(s: RunSettings) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}_{model_slug(s.provider)}__{model_slug(s.model)}_{s.edition}"


def find_resumable(
    runs_dir: Path, provider: str | None, model: str | None, edition: str | None
) -> Path | None:
    """The latest unfinished run of this provider/model/edition in ``runs_dir``."""
    best: tuple[str, Path] | None = None
    if not runs_dir.is_dir():
        return None
    for d in runs_dir.iterdir():
        info_path = d / RUN_JSON
        if not info_path.is_file():
            continue
        try:
            info = read_json(info_path)
        except CorruptRun:
            continue
        s = info.get("settings", {})
        if (provider and s.get("provider") != provider) or (model and s.get("model") != model):
            continue
        if (edition and s.get("edition") != edition) or info.get("status") == "complete":
            continue
        key = (info.get("started_at") or "", d)
        if best is None or key[0] > best[0]:
            best = key
    return best[1] if best else None


def _settings_from(info: dict[str, Any]) -> RunSettings:
    known = set(RunSettings.__dataclass_fields__)
    return RunSettings(**{k: v for k, v in info["settings"].items() if k in known})


def _provider_options(s: RunSettings) -> ProviderOptions:
    return ProviderOptions(
        thinking=s.thinking,
        timeout=s.timeout,
        max_retries=s.max_retries,
        delay=s.delay,
        batch_size=s.batch_size,
        seed=s.seed,
        workers=s.workers,
        backoff_base=s.backoff_base,
    )


def open_provider(s: RunSettings) -> tuple[Provider, dict[str, Any]]:
    """Create the provider (one-line ProviderError on any problem) and facts about it."""
    spec = with_overrides(get_spec(s.provider, s.config), s.base_url, **s.provider_settings)
    provider = create_provider(spec, s.model, _provider_options(s))
    check = getattr(provider, "check_reachable", None)
    if s.check_connection and callable(check):
        check()
    facts = {
        "backend": spec.backend,
        "base_url": public_url(spec.base_url),
        "api_key_env": spec.api_key_env,
        "reasoning_control": spec.reasoning,
        "provider_info": {
            k: v for k, v in provider.describe().items() if k not in ("base_url", "api_key_env")
        },
    }
    return provider, facts


def _precheck_provider(s: RunSettings) -> None:
    """Unknown provider or missing key: say so before any data is loaded."""
    spec = get_spec(s.provider, s.config)
    if spec.backend == "openai":
        api_key(with_overrides(spec, s.base_url, **s.provider_settings))


def _dataset_info(edition: Edition, s: RunSettings) -> dict[str, Any]:
    source = resolve_source(edition, s.data_dir)
    local = Path(source).is_dir()
    return {
        "source": edition.source if edition.bundled and not s.data_dir else source,
        "revision": None if local else (s.revision or edition.revision),
        "local": local,
    }


def _task_facts(
    suite: Suite, task_rows: dict[str, list[dict[str, Any]]], limit: int | None, s: RunSettings
) -> dict[str, Any]:
    out = {}
    for tid, rows in task_rows.items():
        task = suite.task(tid)
        out[tid] = {
            "block": task.block,
            "rows": len(rows),
            "selected": len(_selected(rows, limit)),
            "fingerprint": fingerprint(rows),
            "contract_hash": task.contract_hash,
            "prompt_hash": task.prompt_hash,
            "max_tokens": task.generation.max_tokens + (s.thinking_budget if s.thinking else 0),
        }
    return out


def _check_identity(saved: RunSettings, given: RunSettings, explicit: set[str]) -> None:
    for key in IDENTITY:
        if key in explicit and getattr(given, key) != getattr(saved, key):
            raise RunError(
                f"--resume: {key} {getattr(given, key)!r} differs from the run's {getattr(saved, key)!r}; "
                "start a new run (another --run-id) to change it"
            )


def start_run(settings: RunSettings, explicit: set[str] | None = None, log: Log = _stderr) -> RunReport:
    """Start a new run, or resume one (``settings.resume``); returns the finished report.

    ``explicit`` names the settings the user gave on the command line; on resume those
    that define the run (provider, model, edition, tasks, …) must match the stored ones.
    """
    runs_dir = Path(settings.runs_dir)
    explicit = explicit or set()
    resumed = settings.resume
    if resumed:
        if settings.run_id:
            run_dir = runs_dir / settings.run_id
            if not (run_dir / RUN_JSON).is_file():
                raise RunError(f"--resume: there is no run {settings.run_id!r} in {runs_dir}")
        else:
            found = find_resumable(runs_dir, settings.provider or None, settings.model or None, None)
            if found is None:
                raise RunError(f"--resume: no unfinished run to resume in {runs_dir}; give --run-id")
            run_dir = found
        info = read_json(run_dir / RUN_JSON)
        saved = _settings_from(info)
        _check_identity(saved, settings, explicit)
        # Transport knobs may change between sessions; what defines the run may not.
        for key in (
            "workers",
            "timeout",
            "max_retries",
            "delay",
            "backoff_base",
            "progress",
            "check_connection",
            "sign_key",
            "runs_dir",
            "results_dir",
            "command",
        ):
            if key in explicit or key in (
                "progress",
                "check_connection",
                "runs_dir",
                "results_dir",
                "command",
            ):
                setattr(saved, key, getattr(settings, key))
        settings = saved
    else:
        if not settings.provider or not settings.model:
            raise RunError("give --provider and --model (or --preset NAME)")
        settings.run_id = settings.run_id or _default_run_id(settings)
        run_dir = runs_dir / settings.run_id
        if run_dir.exists():
            raise RunError(
                f"run {settings.run_id!r} already exists in {runs_dir}; pass --resume to continue it"
            )
        info = {}

    _check_sign_key(settings)
    _precheck_provider(settings)
    suite = load_suite()
    edition = load_edition(settings.edition)
    task_ids = select_tasks(edition, settings.tasks)
    task_rows = load_task_rows(edition, task_ids, settings.data_dir, settings.revision, log)
    facts = _task_facts(suite, task_rows, settings.limit, settings)
    if resumed:
        for tid, f in facts.items():
            old = info.get("tasks", {}).get(tid, {})
            if old and old.get("fingerprint") != f["fingerprint"]:
                raise RunError(
                    f"--resume: the rows of {tid} changed since the run started (fingerprint differs)"
                )

    secrets = known_secrets()
    provider, pfacts = open_provider(settings)
    try:
        started = now_iso()
        if not resumed:
            run_dir.mkdir(parents=True, exist_ok=False)
            info = {
                "run_id": settings.run_id,
                "status": "running",
                "framework_version": __version__,
                "provider": settings.provider,
                "model": settings.model,
                "display_name": settings.display_name or settings.model,
                **pfacts,
                "edition": settings.edition,
                "dataset": _dataset_info(edition, settings),
                "task_ids": task_ids,
                "tasks": facts,
                "limit": settings.limit,
                "suite_hash": edition.suite_hash(suite),
                "chat_template_hash": pfacts["provider_info"].get("chat_template_hash"),
                "generation": {
                    "temperature": 0.0,
                    "top_p": 1.0,
                    "max_tokens": {tid: f["max_tokens"] for tid, f in facts.items()},
                    "thinking": settings.thinking,
                    "thinking_budget": settings.thinking_budget if settings.thinking else 0,
                    "seed": settings.seed,
                },
                "thinking": settings.thinking,
                "workers": settings.workers if provider.parallel else 1,
                "batch_size": int(getattr(provider, "batch_size", 1) or 1),
                "started_at": started,
                "finished_at": None,
                "wall_s": 0.0,
                "command": redact(settings.command, secrets),
                "python": platform.python_version(),
                "platform": platform.platform(terse=True),
                "sessions": [],
                "settings": _stored_settings(settings),
            }
        else:
            info["status"] = "running"
            info["settings"] = _stored_settings(settings)
        write_json(run_dir / RUN_JSON, info)

        pred_path = run_dir / PREDICTIONS
        records, torn = repair_predictions(pred_path)
        if torn:
            log(f"resume: discarded a torn last line ({torn} bytes) of {pred_path}")
        done_keys = {(r["task"], str(r["id"])) for r in records}
        items: list[Item] = []
        total = 0
        for tid in task_ids:
            task = suite.task(tid)
            provider.prepare(task, task_rows[tid])
            for row in _selected(task_rows[tid], settings.limit):
                total += 1
                if (tid, str(row[task.id_field])) not in done_keys:
                    items.append((task, row))
        if resumed:
            log(f"resuming {run_dir.name}: {total - len(items)} of {total} examples already on disk")

        session = {
            "kind": "resume" if resumed else "run",
            "started_at": started,
            "command": redact(settings.command, secrets),
            "workers": settings.workers,
        }
        t0 = time.perf_counter()
        writer = PredictionWriter(pred_path)
        sent = 0
        try:
            sent = execute(
                provider,
                items,
                settings,
                writer.append,
                initial=total - len(items),
                total=total,
                secrets=secrets,
            )
        except BaseException as exc:
            writer.close()
            _end_session(run_dir, info, session, t0, "interrupted")
            if isinstance(exc, KeyboardInterrupt):
                log(f"interrupted; continue with: python runner.py --run-id {run_dir.name} --resume")
            raise
        writer.close()
        _end_session(run_dir, info, session, t0, None, examples=sent)
    finally:
        provider.close()
    report = finalize_run(run_dir, task_rows=task_rows, sign_key=settings.sign_key)
    report.sent = sent
    return report


def _stored_settings(s: RunSettings) -> dict[str, Any]:
    d = asdict(s)
    for key in ("sign_key", "progress", "check_connection", "command", "resume"):
        d.pop(key, None)
    return d


def _end_session(
    run_dir: Path,
    info: dict[str, Any],
    session: dict[str, Any],
    t0: float,
    status: str | None,
    examples: int = 0,
) -> None:
    wall = time.perf_counter() - t0
    session.update(finished_at=now_iso(), wall_s=round(wall, 3), examples=examples)
    info.setdefault("sessions", []).append(session)
    info["wall_s"] = round(float(info.get("wall_s") or 0.0) + wall, 3)
    if status:
        info["status"] = status
    write_json(run_dir / RUN_JSON, info)


def _check_sign_key(s: RunSettings) -> None:
    key = s.sign_key or os.environ.get(SIGN_KEY_ENV)
    if key and not Path(key).is_file():
        raise RunError(f"signing key {key} does not exist (make one with `yoxla keygen`)")
    s.sign_key = key


# Retrying generation errors -------------------------------------------------------------


def retry_errors(run_dir: Path, overrides: dict[str, Any], log: Log = _stderr) -> RunReport:
    """Re-ask only the examples whose generation failed, merge them back in place, re-score."""
    if not (run_dir / RUN_JSON).is_file():
        raise RunError(f"--retry-errors: {run_dir} is not a run folder (no run.json)")
    info = read_json(run_dir / RUN_JSON)
    s = _settings_from(info)
    for key, value in overrides.items():
        setattr(s, key, value)
    _check_sign_key(s)
    _precheck_provider(s)
    suite = load_suite()
    edition = load_edition(s.edition)
    task_ids = info["task_ids"]
    task_rows = load_task_rows(edition, task_ids, s.data_dir, s.revision, log)
    records, _ = repair_predictions(run_dir / PREDICTIONS)
    failed = [i for i, r in enumerate(records) if r.get("outcome") == "generation_error"]
    if not failed:
        log(f"{run_dir.name}: no generation errors to retry")
        return finalize_run(run_dir, task_rows=task_rows, sign_key=s.sign_key)
    rows_by_key = {(tid, str(r[suite.task(tid).id_field])): r for tid in task_ids for r in task_rows[tid]}
    items: list[Item] = [
        (suite.task(records[i]["task"]), rows_by_key[(records[i]["task"], str(records[i]["id"]))])
        for i in failed
    ]
    secrets = known_secrets()
    provider, _ = open_provider(s)
    new: list[dict[str, Any]] = []
    session = {"kind": "retry_errors", "started_at": now_iso(), "command": redact(s.command, secrets)}
    t0 = time.perf_counter()
    try:
        for tid in dict.fromkeys(t.id for t, _ in items):
            provider.prepare(suite.task(tid), task_rows[tid])
        execute(provider, items, s, new.append, secrets=secrets)
    except BaseException:
        # Merge what came back before the interruption; the rest stay generation errors.
        _merge(run_dir, records, failed, new)
        _end_session(run_dir, info, session, t0, "interrupted", examples=len(new))
        raise
    finally:
        provider.close()
    _merge(run_dir, records, failed, new)
    fixed = sum(r["outcome"] != "generation_error" for r in new)
    log(f"retried {len(new)} failed examples: {fixed} answered, {len(new) - fixed} still failing")
    _end_session(run_dir, info, session, t0, None, examples=len(new))
    report = finalize_run(run_dir, task_rows=task_rows, sign_key=s.sign_key)
    report.sent = len(new)
    return report


def _merge(
    run_dir: Path, records: list[dict[str, Any]], failed: list[int], new: list[dict[str, Any]]
) -> None:
    for idx, record in zip(failed, new, strict=False):
        record["attempts"] = int(records[idx].get("attempts") or 0) + int(record.get("attempts") or 0)
        records[idx] = record
    rewrite_predictions(run_dir / PREDICTIONS, records)


# Scoring and finishing ----------------------------------------------------------------


def score_run(
    run_dir: Path, task_rows: dict[str, list[dict[str, Any]]] | None = None
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], dict[str, TaskResult]]:
    """(run info, task_scores, records, task results) recomputed from the stored raw outputs.

    Every task result comes from :func:`yoxla.record.build_task_result`, the one path that
    turns stored answers into verdicts and metrics (admission uses it too).
    """
    info = read_json(run_dir / RUN_JSON)
    records, _ = read_predictions(run_dir / PREDICTIONS)
    suite = load_suite()
    s = _settings_from(info)
    task_ids: list[str] = info["task_ids"]
    if task_rows is None:
        edition = load_edition(s.edition)
        task_rows = {tid: load_rows(edition, tid, s.data_dir, s.revision) for tid in task_ids}
        for tid in task_ids:
            if fingerprint(task_rows[tid]) != info["tasks"][tid]["fingerprint"]:
                raise RunError(
                    f"the rows of {tid} differ from those the run used (fingerprint); cannot re-score"
                )
    by_task: dict[str, list[dict[str, Any]]] = {tid: [] for tid in task_ids}
    for r in records:
        if r.get("task") not in by_task:
            raise CorruptRun(
                f"{run_dir / PREDICTIONS}: a line names task {r.get('task')!r}, not part of this run"
            )
        by_task[r["task"]].append(r)
    tasks_out: dict[str, Any] = {}
    results: dict[str, TaskResult] = {}
    for tid in task_ids:
        task = suite.task(tid)
        order = {str(row[task.id_field]): i for i, row in enumerate(task_rows[tid])}
        recs = sorted(by_task[tid], key=lambda r: order.get(str(r["id"]), len(order)))
        expected = info["tasks"][tid]["selected"]
        entry = {"block": task.block, "primary": task.primary, "rows": len(recs), "expected": expected}
        if not recs:
            tasks_out[tid] = {**entry, "score": None, "metrics": None}
            continue
        rows = align_rows(task, task_rows[tid], [str(r["id"]) for r in recs])
        result = build_task_result(
            task,
            rows,
            [r.get("raw") for r in recs],
            [r.get("finish_reason") for r in recs],
            [r.get("error") for r in recs],
            fingerprint=info["tasks"][tid]["fingerprint"],
        )
        results[tid] = result
        tasks_out[tid] = {
            **entry,
            "score": result.score,
            "metrics": result.metrics.model_dump(mode="json", exclude_unset=True),
        }
    scores = summary_scores(suite, results)
    task_scores = {
        "tasks": tasks_out,
        "blocks": dict(scores.blocks),
        "yoxla": scores.yoxla if results else None,
    }
    return info, task_scores, records, results


def is_complete(info: dict[str, Any], task_scores: dict[str, Any]) -> bool:
    edition = load_edition(info["settings"]["edition"])
    return (
        info.get("limit") is None
        and set(info["task_ids"]) == set(edition.tasks)
        and all(t["rows"] == t["expected"] for t in task_scores["tasks"].values())
    )


def _usage_total(records: list[dict[str, Any]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for r in records:
        for k, v in (r.get("usage") or {}).items():
            if isinstance(v, int):
                total[k] += v
    out = {k: int(total.get(k, 0)) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    if total.get("reasoning_tokens"):
        out["reasoning_tokens"] = int(total["reasoning_tokens"])
    return out


def build_summary(
    info: dict[str, Any], task_scores: dict[str, Any], records: list[dict[str, Any]], complete: bool
) -> dict[str, Any]:
    errors = [
        {"task": r["task"], "id": r["id"], "error": r.get("error")}
        for r in records
        if r.get("outcome") == "generation_error"
    ]
    tasks = {}
    for tid, t in task_scores["tasks"].items():
        m = t["metrics"] or {}
        tasks[tid] = {
            "block": t["block"],
            "score": t["score"],
            "rows": t["rows"],
            "expected": t["expected"],
            "invalid_output_rate": m.get("invalid_output_rate"),
            "generation_errors": m.get("generation_errors", 0),
            "truncated": m.get("truncated", 0),
        }
    return {
        "run_id": info["run_id"],
        "provider": info["provider"],
        "model": info["model"],
        "edition": info["edition"],
        "complete": complete,
        "yoxla": task_scores["yoxla"],
        "blocks": task_scores["blocks"],
        "tasks": tasks,
        "examples": len(records),
        "generation_errors": len(errors),
        "generation_error_examples": errors,
        "usage": _usage_total(records),
        "wall_s": info.get("wall_s"),
        "result_file": info.get("result_file"),
    }


def reported_model(records: list[dict[str, Any]]) -> str | None:
    models = Counter(r.get("model") for r in records if r.get("model"))
    return models.most_common(1)[0][0] if models else None


def run_conditions(info: dict[str, Any]) -> RunConditions:
    """What changes comparability, as the run recorded it."""
    settings = info.get("settings") or {}
    thinking = bool(info.get("thinking"))
    limit = info.get("limit")
    edition = load_edition(info["edition"])
    filters: dict[str, list[str]] = {}
    if set(info["task_ids"]) != set(edition.tasks):
        filters["task"] = list(info["task_ids"])
    return RunConditions(
        thinking=thinking,
        thinking_budget=int(settings.get("thinking_budget") or 0) if thinking else None,
        temperature=None,
        system_prompt="contract",
        limit=limit,
        filters=filters,
    )


def build_result(
    info: dict[str, Any],
    results: dict[str, TaskResult],
    records: list[dict[str, Any]],
    sign_key: str | None = None,
) -> dict[str, Any]:
    """The result file: metadata, scores, every prediction; written by :mod:`yoxla.record`."""
    dataset = info.get("dataset") or {}
    return build_document(
        edition=info["edition"],
        model=ModelInfo(
            provider=info["provider"],
            model=info["model"],
            reported_model=reported_model(records),
            base_url=public_url(info.get("base_url")),
            display_name=info.get("display_name") or info["model"],
        ),
        run=RunInfo(
            run_id=info["run_id"],
            framework_version=info["framework_version"],
            started_at=info["started_at"],
            finished_at=info.get("finished_at"),
            workers=int(info.get("workers") or 1),
            batch_size=int(info.get("batch_size") or 1),
            dataset=DatasetInfo(source=dataset.get("source"), revision=dataset.get("revision")),
            chat_template_hash=info.get("chat_template_hash"),
            command=info.get("command", ""),
            conditions=run_conditions(info),
        ),
        suite_hash=info["suite_hash"],
        tasks=results,
        usage=Usage(**_usage_total(records)),
        created_at=now_iso(),
        sign_key=sign_key,
    )


def result_path_for(info: dict[str, Any], complete: bool) -> Path:
    results_dir = Path(info["settings"].get("results_dir") or "results")
    name = result_filename(info["provider"], info["model"])
    if complete:
        return results_dir / info["edition"] / name
    return results_dir / "partial" / info["edition"] / name


def finalize_run(
    run_dir: Path,
    task_rows: dict[str, list[dict[str, Any]]] | None = None,
    write_result_file: bool = True,
    sign_key: str | None = None,
) -> RunReport:
    """Score the stored outputs; write task_scores.json, summary.json and (by default) the result file."""
    info, task_scores, records, results = score_run(run_dir, task_rows)
    complete = is_complete(info, task_scores)
    result_path: Path | None = None
    if write_result_file:
        info["status"] = "complete" if complete else "incomplete"
        info["finished_at"] = now_iso()
        result_path = result_path_for(info, complete)
        info["result_file"] = str(result_path)
        write_json(run_dir / RUN_JSON, info)
        doc = build_result(info, results, records, sign_key or os.environ.get(SIGN_KEY_ENV))
        write_result(doc, result_path)
    write_json(run_dir / TASK_SCORES, task_scores)
    summary = build_summary(info, task_scores, records, complete)
    write_json(run_dir / SUMMARY, summary)
    return RunReport(run_dir, summary, result_path, complete)


def rescore_run(run_dir: Path, write_result_file: bool = False, sign_key: str | None = None) -> RunReport:
    """Replay stored raw outputs through today's parsers and evaluators; answers are never touched."""
    if not (run_dir / RUN_JSON).is_file():
        raise RunError(f"{run_dir} is not a run folder (no run.json)")
    return finalize_run(run_dir, write_result_file=write_result_file, sign_key=sign_key)
