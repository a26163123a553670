"""Checks 4 to 6 (docs/leaderboard.md) of a ``yoxla-result`` version 2 file, after the shared
checks of :func:`yoxla.admission.rules.check_document`.

Its benchmark is the package suite of its edition (``yoxla-sample``, ``yoxla-v1``), whose tasks
keep the published contract and prompt hashes as recorded values. The stored answers are
replayed through the one suite replay (:func:`yoxla.record.derive.derive_suite_task`) and laid
out as a v2 task stores them (:func:`legacy_task`); the first field that differs is named. An
edition made in code (tests) may carry an analysis section of its own (``Edition.analysis``):
its groups and controls replace the package suite task's for the replay. Where the edition's
rows cannot be read, the file is admitted as *not re-checked* after the checks that need no rows.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any

from yoxla.admission.rederive import check_totals, correlated_values, id_problems, task_cases
from yoxla.admission.verdict import ADMITTED, NOT_RECHECKED, TaskRecord, Verdict, _differs, _fmt_ids
from yoxla.record.base import TOLERANCE, first_difference
from yoxla.record.derive import derive_scores, derive_suite_task
from yoxla.record.result import SuiteGroup, SuiteHeadline
from yoxla.record.v2 import LEGACY_BREAKDOWNS, LEGACY_METRICS, ResultFileV2, TaskResultV2
from yoxla.score.calibration.ranking import DEFAULT_ORDER
from yoxla.score.calibration.stored import pooled_calibration, report_document

if TYPE_CHECKING:
    from yoxla.admission.gold import DataSource
    from yoxla.contract.spec import TaskAnalysis
    from yoxla.data.editions import Edition

LEGACY_SUITE_NAME = "yoxla"  # the built-in suite's name, hashed into a v2 file's suite_hash


@cache
def _package_ranking(edition: str) -> tuple[str, ...]:
    from yoxla.contract.loader import load_manifest
    from yoxla.contract.registry import manifest_path

    return load_manifest(manifest_path(edition)).ranking or DEFAULT_ORDER


def edition_ranking(edition: Edition) -> tuple[str, ...]:
    """The ranking order of an edition's board: its own analysis section's (an edition made in
    code), else its package suite's; the default order where neither declares one."""
    own = edition.analysis
    if own is None:
        return _package_ranking(edition.name)
    return tuple(own.ranking) if own.ranking is not None else DEFAULT_ORDER


def task_analysis(edition: Edition, task_id: str) -> TaskAnalysis | None:
    """The groups and controls an edition made in code declares for a task (none declared: an
    empty analysis); None: the package suite task's own, which the suite task already holds."""
    from yoxla.contract.spec import TaskAnalysis

    own = edition.analysis
    return None if own is None else own.tasks.get(task_id, TaskAnalysis())


def legacy_suite_hash(manifest: Any) -> str:
    """A v2 file's ``suite_hash`` of the suite's tasks: the built-in suite's name, its blocks (the
    suite's groups) and each task's recorded contract hash."""
    body = {
        "suite": LEGACY_SUITE_NAME,
        "blocks": [g.id for g in manifest.groups],
        "tasks": {tid: t.spec.metadata["contract_hash"] for tid, t in manifest.tasks.items()},
    }
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _blocks(manifest: Any) -> dict[str, str]:
    """Each task's block: its (first) group in the suite."""
    out: dict[str, str] = {}
    for g in manifest.groups:
        for tid in g.tasks:
            out.setdefault(tid, g.id)
    return out


def _kind(task: Any) -> str:
    """The built-in evaluator a v2 task was scored by, from the suite task's first grader."""
    names = {"accuracy": "classification", "span": "span", "abstention": "abstention"}
    return names.get(task.spec.graders[0].name, "correlation")


# Check 4 ----------------------------------------------------------------------------------------


def _check_contract(rec: ResultFileV2, edition: Edition, manifest: Any, v: Verdict) -> None:
    if rec.suite_hash != (expected := legacy_suite_hash(manifest)):
        v.reasons.append(
            f"suite hash {rec.suite_hash[:23]}… differs from the frozen contract's {expected[:23]}…"
        )
    missing = [t for t in manifest.tasks if t not in rec.tasks]
    if missing:
        v.reasons.append(
            f"incomplete run: task(s) missing: {', '.join(missing)} (partial runs are never shown)"
        )
    extra = [t for t in rec.tasks if t not in manifest.tasks]
    if extra:
        v.reasons.append(f"task(s) not part of edition {edition.name}: {', '.join(extra)[:200]}")
    if set(edition.tasks) != set(manifest.tasks):
        v.reasons.append(
            f"edition {edition.name} does not list the tasks of its suite {LEGACY_SUITE_NAME}-{edition.name}"
        )
        return
    blocks = _blocks(manifest)
    for tid, task in manifest.tasks.items():
        t, entry = rec.tasks.get(tid), edition.tasks[tid]
        if t is None:
            continue
        meta = task.spec.metadata
        if t.rows != entry.rows:
            v.reasons.append(f"task {tid}: row count {t.rows} differs from the edition's {entry.rows}")
        if t.fingerprint != entry.fingerprint:
            v.reasons.append(f"task {tid}: dataset fingerprint differs from the {edition.name} manifest")
        if t.contract_hash != meta["contract_hash"]:
            v.reasons.append(f"task {tid}: contract hash differs from the frozen contract's")
        if t.prompt_hash != meta["prompt_hash"]:
            v.reasons.append(f"task {tid}: prompt hash differs from the frozen prompt's")
        if t.block != blocks.get(tid):
            v.reasons.append(f"task {tid}: block {t.block!r} is not the contract's {blocks.get(tid)!r}")
        if t.primary != task.scoring.primary:
            v.reasons.append(
                f"task {tid}: primary metric {t.primary!r} is not the contract's {task.scoring.primary!r}"
            )
    cond = rec.run.conditions
    if cond.limit is not None or cond.filters:
        v.reasons.append(
            "a partial run (limit or row filters in run.conditions): partial runs are never shown"
        )


# Check 5 ----------------------------------------------------------------------------------------


def _check_coverage(tid: str, t: TaskResultV2, expected: Sequence[str] | None, v: Verdict) -> bool:
    ids = [p.id for p in t.predictions]
    dup = [i for i, c in Counter(ids).items() if c > 1]
    if dup:
        v.reasons.append(f"task {tid}: example ids predicted more than once: {_fmt_ids(dup)}")
        return False
    if expected is not None and ids != list(expected):
        v.reasons.extend(id_problems(tid, ids, expected, "example", "the dataset", "dataset"))
        return False
    if t.rows != len(ids):
        v.reasons.append(f"task {tid}: rows says {t.rows} but there are {len(ids)} predictions")
        return False
    return True


# Check 6: the replay, laid out as a v2 task -------------------------------------------------------


_DECLARED = {"group_field", "group_ids", "control_field", "control_values", "control_ids"}


def _declared(task: Any, declared: TaskAnalysis | None) -> Any:
    """The suite task the replay scores: the package suite's, with the groups and controls of an
    edition made in code in place of its own (``declared``; None: the task as committed)."""
    if declared is None:
        return task
    own = task.spec._analysis
    kept = own.model_dump(exclude=_DECLARED) if own is not None else {}
    spec = task.spec.model_copy()
    spec._analysis = type(declared).model_validate({**kept, **declared.model_dump(include=_DECLARED)})
    return replace(task, spec=spec)


def prepared_for(data: DataSource, edition: Edition, task: Any, rows: Sequence[dict[str, Any]]) -> Any:
    """The suite task prepared over the edition's rows, once per process (by the rows' fingerprint
    and the groups and controls an edition made in code declares, :func:`task_analysis`)."""
    from yoxla.admission.cache import stable_digest
    from yoxla.data.datasets import LoadedDataset
    from yoxla.prompt.prepare import prepare_task

    entry = edition.tasks[task.id]
    declared = task_analysis(edition, task.id)
    key = (edition.name, task.id, entry.fingerprint, stable_digest(declared))
    hit = data.prepared.get(key)
    if hit is None:
        loaded = LoadedDataset(tuple(rows), entry.fingerprint, {"source": "yoxla-edition"}, (), {})
        hit = data.prepared[key] = prepare_task(_declared(task, declared), data=loaded)
    return hit


def _metric_layout(tid: str, kind: str, derived: Mapping[str, Any]) -> dict[str, Any]:
    """The replay's task metrics as a v2 task stores them (its names, its one breakdown)."""
    flat = {
        **derived["metrics"],
        **derived["counts"],
        "modal_answer": derived["modal_answer"],
        **derived["breakdowns"],
    }
    names = LEGACY_METRICS[kind]
    if kind == "correlation" and not flat["n_valid"]:
        names = tuple(k for k in names if k not in ("mae", "rmse"))  # no valid answer: no error
    out = {k: flat[k] for k in names}
    field = LEGACY_BREAKDOWNS.get(tid)
    if field is not None:
        name = f"per_{field}_{'accuracy' if kind == 'classification' else 'score'}"
        out[name] = flat[name]
    return out


def _prediction(p: Mapping[str, Any], numeric: bool) -> dict[str, Any]:
    valid = p["valid"]
    parsed = None
    if valid:
        parsed = float(p["number"]) if numeric and p["number"] is not None else p["extracted"]
    out = {
        "id": p["id"],
        "raw": p["raw"],
        "parsed": parsed,
        "valid": valid,
        "abstained": p["abstained"],
        "outcome": p["outcome"],
        "reason": "generation_error" if p["error"] else p["reason"],
        "near_miss": p["near_miss"],
        "score": float(p["score"] if p["score"] is not None else 0.0),
        "finish_reason": p["finish_reason"],
        "error": p["error"],
    }
    for key in ("distribution", "control"):
        if key in p:
            out[key] = p[key]
    return out


def legacy_task(prepared: Any, derived: Mapping[str, Any], entry: Any, block: str) -> dict[str, Any]:
    """A task's replay (``derived``, :func:`derive_suite_task` of ``prepared``) as a v2 file
    stores it under ``tasks.<id>`` (``entry``: the edition's manifest entry of the task)."""
    task = prepared.task
    numeric = task.spec.output_extraction.mode == "numeric"
    doc: dict[str, Any] = {
        "block": block,
        "rows": derived["rows"],
        "fingerprint": entry.fingerprint,
        "contract_hash": task.spec.metadata["contract_hash"],
        "prompt_hash": task.spec.metadata["prompt_hash"],
        "primary": derived["primary"],
        "score": derived["score"],
        "metrics": _metric_layout(task.id, _kind(task), derived),
        "predictions": [_prediction(p, numeric) for p in derived["predictions"]],
    }
    if "calibration" in derived:
        doc["calibration"] = derived["calibration"]
    elif task.spec.has_groups or task.spec.has_controls:  # a v2 task reports its groups and controls there
        doc["calibration"] = report_document(task_cases(prepared, derived), 0)
    return doc


# Checks that need no rows -------------------------------------------------------------------------


def _stored_consistency(tid: str, primary: str | None, t: TaskResultV2) -> str | None:
    """The stored counts and score follow from the stored predictions (controls not counted)."""
    preds = [p for p in t.predictions if not p.control]
    m = t.metrics
    derived = {
        "n": len(preds),
        "n_valid": sum(p.valid for p in preds),
        "generation_errors": sum(p.outcome == "generation_error" for p in preds),
        "truncated": sum(p.outcome == "truncated" for p in preds),
        "outcomes": dict(Counter(p.outcome for p in preds)),
        "near_miss": dict(Counter(p.near_miss for p in preds if not p.valid and p.near_miss)),
    }
    diff = first_difference({k: getattr(m, k) for k in derived}, derived, "metrics")
    if diff:
        return _differs(f"task {tid}", diff)
    value = m.get(primary or "")
    if not isinstance(value, int | float):
        return f"task {tid}: the primary metric {primary} is missing from the stored metrics"
    expected = min(1.0, max(0.0, float(value))) * 100.0
    if abs(expected - t.score) > TOLERANCE:
        return f"task {tid}: score {t.score} is not the primary metric {primary} × 100 ({expected})"
    return None


def _record(task: Any, t: TaskResultV2, metrics: dict[str, Any], block: str, gold: Any = None) -> TaskRecord:
    """The board's record of an admitted v2 task (an STS task with the values it correlates)."""
    values = (float(p.parsed) if p.valid and isinstance(p.parsed, float) else None for p in t.predictions)
    return TaskRecord.from_result(
        task.id, t, metrics, gold, block=block, prediction=correlated_values(task, values)
    )


# The check --------------------------------------------------------------------------------------------


def check_legacy_record(
    doc: dict[str, Any],
    rec: ResultFileV2,
    v: Verdict,
    data: DataSource,
    editions: Mapping[str, Edition] | None,
) -> None:
    """Checks 4 to 6 on a v2 record whose digest and signature were checked (see the module)."""
    from yoxla.data.editions import EDITIONS, load_edition

    eds = editions if editions is not None else {name: load_edition(name) for name in EDITIONS}
    edition = eds.get(rec.edition)
    if edition is None:
        v.reasons.append(f"unknown edition {rec.edition!r} (known: {', '.join(eds)})")
        return
    suite, problem = data.suites.get(f"{LEGACY_SUITE_NAME}-{rec.edition}")
    if suite is None:
        v.reasons.append(problem or f"the package suite of edition {rec.edition} is missing")
        return
    manifest = suite.manifest
    _check_contract(rec, edition, manifest, v)
    if v.reasons:
        return
    rows_info = data.rows(edition)
    rows = rows_info.rows
    blocks = _blocks(manifest)
    records: dict[str, TaskRecord] = {}
    cases: dict[str, list[Any]] = {}
    partial: dict[str, int] = {}
    for tid in edition.tasks:  # in the edition's order, as its board lists them
        t, task = rec.tasks[tid], manifest.tasks[tid]
        expected = [str(r["id"]) for r in rows[tid]] if rows is not None else None
        if not _check_coverage(tid, t, expected, v):
            continue
        if rows is None:
            problem = _stored_consistency(tid, task.scoring.primary, t)
            if problem:
                v.reasons.append(problem)
            else:
                records[tid] = _record(
                    task, t, t.metrics.model_dump(mode="json", exclude_unset=True), blocks[tid]
                )
            continue
        prepared = prepared_for(data, edition, task, rows[tid])
        derived = derive_suite_task(prepared, doc["tasks"][tid]["predictions"], pool=data.suites.pool)
        laid = legacy_task(prepared, derived, edition.tasks[tid], blocks[tid])
        diff = first_difference(doc["tasks"][tid], laid, f"tasks.{tid}")
        if diff:
            v.reasons.append(_differs(f"task {tid}", diff))
            continue
        gold = [i.target for i in prepared.items] if t.calibration is not None else None
        records[tid] = _record(task, t, laid["metrics"], blocks[tid], gold)
        if "calibration" in laid:
            cases[tid] = task_cases(prepared, derived)
            partial[tid] = int(laid["calibration"]["n_partial"])
    if v.reasons:
        return
    _check_totals(doc, rec, manifest, v)
    if v.reasons:
        return
    _admit(rec, records, rows_info, v)
    if v.rechecked and cases:
        v.calibration = pooled_calibration({tid: blocks[tid] for tid in cases}, cases, partial)


def _check_totals(doc: dict[str, Any], rec: ResultFileV2, manifest: Any, v: Verdict) -> None:
    """The block and YOXLA scores (the suite's groups and headline) and the generation-error
    count follow from the stored tasks."""
    from yoxla.contract.hashing import declared_aggregation

    how = declared_aggregation(manifest)
    groups = [SuiteGroup.model_validate(g) for g in how.get("groups", [])]
    headline = SuiteHeadline.model_validate(how["headline"]) if "headline" in how else None
    s = derive_scores(rec.tasks, groups, headline)  # type: ignore[arg-type]  # a score per task is all it reads
    scores = {"yoxla": s.suite, "blocks": dict(s.groups or {}), "tasks": dict(s.tasks)}
    check_totals(doc, rec, scores, v)
    v.scores = scores


def _admit(rec: ResultFileV2, records: dict[str, TaskRecord], rows_info: Any, v: Verdict) -> None:
    v.rechecked = rows_info.rows is not None
    if not v.rechecked:
        v.notes.append(f"{NOT_RECHECKED}: {rows_info.problem}")
    if v.generation_errors:
        v.notes.append(
            f"{v.generation_errors} generation error(s): they can move a score for reasons outside the model"
        )
    if rec.run.conditions.thinking:
        v.notes.append("reasoning was on (thinking): ranked only among thinking runs")
    if rec.run.conditions.group == "non-standard":
        v.notes.append("non-standard run conditions (temperature or system prompt changed): ranked apart")
    v.tasks = records
    v.status = ADMITTED
