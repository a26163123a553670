"""Finishing a run: re-score the stored answers, write the run folder's scores and the result file.

Scores always come from the stored raw outputs through the record's one suite writer
(:func:`yoxla.record.result.build_suite_task_result`, which calls
:func:`yoxla.score.replay.score_suite_task`), so a run, its resumption, ``yoxla rescore``
and admission agree. Judge calls come in two steps, per task with Python graders:

1. **top-up**: the graders run with the run's :class:`~yoxla.run.judge.RecordingJudge`,
   which answers from ``judgements.jsonl`` and, in a run with a judge model, asks the judge
   for what is missing (a call that failed while the run sent examples is tried again);
   this gives every sample the list of its judge calls;
2. **replay**: the task is scored from the stored answers and those judge calls only, as
   admission will score it; nothing here can ask a model.

``rescore`` does the same with a judge that never asks (memo only), so it reproduces the
run folder's files byte for byte. The result file goes to ``results/<edition>/…`` or
``results/suites/<suite id>/…`` when the run is complete (every task, every item, no
``--limit``), else under ``results/partial/`` (:func:`result_path`). Files are written in an
order that never lies: ``run.json`` says ``finalizing`` first, the result file is written, and
only then does ``run.json`` say ``complete`` (or ``incomplete``); a run whose finalisation
failed (disk full, read-only results folder) is finished by ``--resume`` without asking the
model again.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yoxla.contract.registry import edition_of
from yoxla.providers.base import oversized
from yoxla.record.base import MAX_RAW, DatasetInfo, Usage
from yoxla.record.derive import build_suite_document, build_suite_task_result, scores_of
from yoxla.record.result import JudgeInfo, RunConditions, RunInfo, SuiteInfo, TaskResult
from yoxla.record.signing import SIGN_KEY_ENV, result_filename, write_result
from yoxla.run.artifacts import (
    PREDICTIONS,
    RUN_JSON,
    SUMMARY,
    TASK_SCORES,
    CorruptRun,
    RunLock,
    drop_duplicates,
    duplicates_note,
    read_json,
    read_predictions,
    refuse_builtin,
    write_json,
)
from yoxla.run.errors import Log, RunError, log_stderr, resume_command, writing
from yoxla.run.judge import JUDGEMENTS, RecordingJudge, open_judge
from yoxla.run.model_facts import model_info, published_model
from yoxla.run.plan import PlannedTask, RunPlan, make_plan
from yoxla.run.settings import RunSettings, now_iso, settings_from
from yoxla.score.calibration.stored import LOGPROBS_KEY, probability_counts
from yoxla.score.judge import unanswered_calls
from yoxla.score.replay import score_suite_task
from yoxla.score.samples import SampleOutput
from yoxla.score.worker import WorkerPool

STORED = ("id", "raw", "finish_reason", "error")
Info = dict[str, Any]  # run.json, a document
Lines = list[dict[str, Any]]  # the lines of predictions.jsonl


@dataclass
class RunReport:
    run_dir: Path
    summary: dict[str, Any]
    result_path: Path | None
    complete: bool
    sent: int = 0


def bounded(record: dict[str, Any]) -> dict[str, Any]:
    """A line whose answer is longer than a result file stores (written before such answers were
    refused on arrival) reads as the generation error a run gives it now."""
    raw = record.get("raw")
    if not isinstance(raw, str) or len(raw) <= MAX_RAW:
        return record
    out = {k: v for k, v in record.items() if k not in (LOGPROBS_KEY, "raw", "text", "extracted")}
    return {**out, "raw": None, "text": "", "error": oversized(len(raw)), "outcome": "generation_error"}


def stored_records(run_dir: Path, log: Log | None) -> list[dict[str, Any]]:
    """The run's stored lines; a repeated example kept once (its first line) and reported through ``log``."""
    records, _ = read_predictions(run_dir / PREDICTIONS)
    records, dropped = drop_duplicates(records)
    if dropped and log:
        log(duplicates_note(run_dir / PREDICTIONS, dropped))
    return records


def records_by_task(
    run_dir: Path, records: list[dict[str, Any]], task_ids: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    """The stored lines of each task of the run; a line of another task is a corrupt run."""
    by_task: dict[str, list[dict[str, Any]]] = {tid: [] for tid in task_ids}
    for r in records:
        if r.get("task") not in by_task:
            raise CorruptRun(
                f"{run_dir / PREDICTIONS}: a line names task {r.get('task')!r}, not part of this run"
            )
        by_task[r["task"]].append(r)
    return by_task


def usage_total(records: list[dict[str, Any]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for r in records:
        for k, v in (r.get("usage") or {}).items():
            if isinstance(v, int):
                total[k] += v
    out = {k: int(total.get(k, 0)) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    if total.get("reasoning_tokens"):
        out["reasoning_tokens"] = int(total["reasoning_tokens"])
    return out


def calibration_summary(cal: dict[str, Any]) -> dict[str, Any]:
    """What summary.json keeps of a task's calibration block (the printed table's columns)."""
    return {
        k: cal[k] for k in ("n_with_probs", "n_partial", "mean_gold_p", "high_confidence_error_rate", "ece")
    } | {"group_consistency": cal["groups"]["value"], "controls": cal["controls"]["n"]}


def check_plan(info: dict[str, Any], plan: RunPlan) -> None:
    """The suite's tasks must be those the run started with (same hash), or nothing is scored."""
    stored = info.get("suite", {}).get("tasks", {})
    for tid, h in plan.hashes().items():
        old = stored.get(tid, {}).get("hash")
        if old is not None and old != h["hash"]:
            raise RunError(
                f"task {tid} of {plan.path} changed since the run started (task hash differs); "
                "start a new run for the changed suite"
            )


def judgements_by_sample(
    task: PlannedTask, stored: Sequence[Mapping[str, Any]], pool: WorkerPool, judge: RecordingJudge
) -> list[list[dict[str, Any]]]:
    """Step 1 (top-up): each sample's judge calls, from the run's judgements or the judge model."""
    if not task.python_graders:
        return [[] for _ in stored]
    from yoxla.record.derive import align_items

    items = align_items(task.prepared, [str(p["id"]) for p in stored])
    outputs = [SampleOutput.from_raw(p.get("raw"), p.get("finish_reason"), p.get("error")) for p in stored]
    scored = score_suite_task(task.prepared, outputs, items=items, pool=pool, judge=judge)
    return [[j.model_dump(mode="json") for j in r.judgements] for r in scored.results]


def score_task(
    task: PlannedTask, records: Sequence[Mapping[str, Any]], pool: WorkerPool, judge: RecordingJudge
) -> TaskResult:
    """A task of the run scored from its stored answers (top-up, then replay)."""
    stored: list[dict[str, Any]] = [{k: r.get(k) for k in STORED} for r in records]
    for p, calls in zip(stored, judgements_by_sample(task, stored, pool, judge), strict=True):
        p["judgements"] = calls
    add_distributions(task, records, stored)
    return build_suite_task_result(task.prepared, stored, pool=pool)


def add_distributions(
    task: PlannedTask, records: Sequence[Mapping[str, Any]], stored: list[dict[str, Any]]
) -> None:
    """Each answer's distribution over its item's closed answer space, derived from what its
    line keeps (token logprobs, a local model's label scores), into ``stored`` (none: no key)."""
    from yoxla.prompt.space import probability_space
    from yoxla.record.derive import align_items
    from yoxla.score.calibration.stored import DISTRIBUTION_KEY, LOGPROBS_KEY, distribution_in

    if not any(r.get(LOGPROBS_KEY) or r.get(DISTRIBUTION_KEY) is not None for r in records):
        return  # nothing to derive from (most runs): skip aligning the items
    spec = task.task.spec
    items = align_items(task.prepared, [str(p["id"]) for p in stored])
    for p, r, item in zip(stored, records, items, strict=True):
        dist = distribution_in(probability_space(spec, item.choices), r)
        if dist is not None:
            p["distribution"] = dist


def score_run(
    run_dir: Path, plan: RunPlan | None, judge: RecordingJudge, log: Log | None = None
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], dict[str, TaskResult]]:
    """(run info, task_scores, records, task results) recomputed from the stored answers."""
    info = read_json(run_dir / RUN_JSON)
    records = [bounded(r) for r in stored_records(run_dir, log)]
    if plan is None:
        plan = make_plan(settings_from(info))
    check_plan(info, plan)
    # The tasks are those the run started with; what the suite makes of them (groups, headline,
    # analysis section) is today's committed manifest's, as admission will check.
    now = plan.record()
    info["suite"] = {
        **{
            k: v for k, v in info.get("suite", {}).items() if k not in ("groups", "headline", "analysis_hash")
        },
        **{k: now[k] for k in ("suite_hash", "groups", "headline", "analysis_hash") if k in now},
    }
    by_task = records_by_task(run_dir, records, plan.task_ids)
    results: dict[str, TaskResult] = {}
    tasks_out: dict[str, Any] = {}
    with WorkerPool() as pool:
        for tid, task in plan.tasks.items():
            order = {item.id: i for i, item in enumerate(task.prepared.items)}
            recs = sorted(by_task[tid], key=lambda r: order.get(str(r["id"]), len(order)))
            entry: dict[str, Any] = {"rows": len(recs), "expected": info["tasks"][tid]["selected"]}
            if not recs:
                tasks_out[tid] = {**entry, "score": None, "primary": None, "metrics": None, "problems": []}
                continue
            try:
                result = score_task(task, recs, pool, judge)
            except ValueError as exc:
                raise CorruptRun(f"{run_dir / PREDICTIONS}: {exc}") from None
            results[tid] = result
            tasks_out[tid] = {
                **entry,
                "score": result.score,
                "primary": result.primary,
                "metrics": dict(result.metrics),
                "problems": list(result.problems),
            }
    scores = scores_of(recorded_suite(info, results), results)
    task_scores: dict[str, Any] = {"suite": plan.suite_id, "tasks": tasks_out, "suite_score": scores.suite}
    if scores.groups is not None:  # a suite that declares groups (the benchmark's blocks)
        task_scores["groups"] = dict(scores.groups)
    return info, task_scores, records, results


def unanswered(results: Mapping[str, TaskResult]) -> dict[str, int]:
    """Per task, the samples whose judge call has no answer (the judge failed or was not given)."""
    found = {
        tid: unanswered_calls((p.grader_error for p in t.predictions), t.problems)
        for tid, t in results.items()
    }
    return {tid: n for tid, n in found.items() if n}


def is_complete(info: dict[str, Any], results: Mapping[str, TaskResult]) -> bool:
    """Every task, every item: no limit, no task or row filter, no control skipped, and every
    judge call answered."""
    conditions = info.get("conditions") or {}
    settings = info.get("settings") or {}
    return (
        conditions.get("limit") is None
        and not conditions.get("tasks")
        and not conditions.get("filters")
        and not settings.get("filters")
        and not settings.get("scored_only")
        and set(results) == set(info["task_ids"])
        and all(t.rows == t.items for t in results.values())
        and not unanswered(results)
    )


def build_summary(
    info: dict[str, Any],
    task_scores: dict[str, Any],
    records: list[dict[str, Any]],
    results: Mapping[str, TaskResult],
    complete: bool,
) -> dict[str, Any]:
    tasks = {}
    missing = unanswered(results)
    group_of = {tid: g["id"] for g in info["suite"].get("groups") or [] for tid in g["tasks"]}
    for tid, t in task_scores["tasks"].items():
        res = results.get(tid)
        m = res.metrics if res is not None else {}
        tasks[tid] = {
            **({"group": group_of[tid]} if tid in group_of else {}),
            "score": t["score"],
            "primary": t["primary"],
            "primary_value": m.get(t["primary"]) if t["primary"] else None,
            "rows": t["rows"],
            "expected": t["expected"],
            "invalid_output_rate": m.get("invalid_output_rate"),
            "generation_errors": m.get("generation_errors", 0),
            "grader_errors": m.get("grader_errors", 0),
            "truncated": m.get("truncated", 0),
            "judge_scored": bool(res and res.judge_scored),
            "judge_unanswered": missing.get(tid, 0),
            "problems": t["problems"],
        }
        if res is not None and res.calibration is not None:
            tasks[tid]["calibration"] = calibration_summary(res.calibration.model_dump(mode="json"))
    dists = {
        (tid, p.id): p.distribution.model_dump(mode="json", exclude_none=True)
        for tid, t in results.items()
        for p in t.predictions
        if p.distribution is not None
    }
    scores = {"suite": info["suite"]["id"], "complete": complete, "suite_score": task_scores["suite_score"]}
    scores.update(headline_facts(info["suite"], task_scores))
    errors = [
        {"task": r["task"], "id": r["id"], "error": r.get("error")}
        for r in records
        if r.get("outcome") == "generation_error"
    ]
    return {
        "run_id": info["run_id"],
        "provider": info["provider"],
        "model": info["model"],
        **scores,
        "tasks": tasks,
        "examples": len(records),
        "generation_errors": len(errors),
        "generation_error_examples": errors,
        "judge": info.get("judge"),
        "usage": usage_total(records),
        "probabilities": probability_counts(records, [dists.get((r["task"], str(r["id"]))) for r in records]),
        "wall_s": info.get("wall_s"),
        "result_file": info.get("result_file"),
    }


def headline_facts(suite: Mapping[str, Any], task_scores: Mapping[str, Any]) -> dict[str, Any]:
    """What the summary adds for a suite that declares groups or a named headline: the group
    scores with each group's name (as the benchmark's summary has its blocks) and the headline's
    name (``YOXLA``); nothing for a suite that declares neither."""
    out: dict[str, Any] = {}
    if "groups" in task_scores:
        names = {g["id"]: g.get("name") for g in suite.get("groups") or []}
        out["groups"] = dict(task_scores["groups"])
        out["group_names"] = {gid: names.get(gid) or gid for gid in task_scores["groups"]}
    name = (suite.get("headline") or {}).get("name")
    if name:
        out["headline"] = name
    return out


def recorded_suite(info: dict[str, Any], results: Mapping[str, TaskResult]) -> SuiteInfo:
    """The result file's ``suite`` block: run.json's suite (groups and headline where declared)."""
    suite = info["suite"]
    extra = {key: suite[key] for key in ("groups", "headline", "analysis_hash") if suite.get(key) is not None}
    return SuiteInfo.model_validate(
        {
            "id": suite["id"],
            "path": suite["path"],
            "suite_hash": suite["suite_hash"],
            "tasks": {tid: suite["tasks"][tid] for tid in results},
            **extra,
        }
    )


def build_result(
    info: Info, results: Mapping[str, TaskResult], records: Lines, sign_key: str | None = None
) -> Info:
    """The suite result file, written by :mod:`yoxla.record.result` (admission reads the same record)."""
    judge = info.get("judge")
    return build_suite_document(
        suite=recorded_suite(info, results),
        model=model_info(info, records),
        run=RunInfo(
            **run_facts(info),
            conditions=RunConditions.model_validate(info["conditions"]),
            **_dataset_override(info, judge),
        ),
        tasks=results,
        usage=Usage(**usage_total(records)),
        created_at=now_iso(),
        sign_key=sign_key,
    )


def _dataset_override(info: dict[str, Any], judge: dict[str, Any] | None) -> dict[str, Any]:
    """The optional parts of ``run``: the judge, and the dataset of a run whose Hub datasets were
    read with --data-dir or --revision (absent otherwise, so other files stay as they were)."""
    out: dict[str, Any] = {"judge": JudgeInfo(**judge)} if judge else {}
    settings = info.get("settings") or {}
    if settings.get("data_dir") is not None or settings.get("revision") is not None:
        ds = info.get("dataset") or {}
        out["dataset"] = DatasetInfo(source=ds.get("source"), revision=ds.get("revision"))
    return out


def run_facts(info: dict[str, Any]) -> dict[str, Any]:
    """What the result file's ``run`` block takes from run.json as it is."""
    return {
        "run_id": info["run_id"],
        "framework_version": info["framework_version"],
        "started_at": info["started_at"],
        "finished_at": info.get("finished_at"),
        "workers": int(info.get("workers") or 1),
        "batch_size": int(info.get("batch_size") or 1),
        "command": info.get("command", ""),
    }


def result_path(info: dict[str, Any], complete: bool) -> Path:
    """Where the result file of the run goes: ``results/<edition>/<provider>__<model>.json`` for a
    package benchmark suite (``yoxla-v1``: ``results/v1/``, where the edition's results always
    were), else ``results/suites/<suite id>/…``; under ``results/partial/`` when not complete."""
    sid = info["suite"]["id"]
    edition = edition_of(sid)
    results_dir = Path(info["settings"].get("results_dir") or "results")
    name = result_filename(info["provider"], published_model(info))  # never a local folder's path
    where = (edition,) if edition else ("suites", sid)
    return (results_dir if complete else results_dir / "partial").joinpath(*where, name)


def write_finished(
    run_dir: Path,
    info: dict[str, Any],
    task_scores: dict[str, Any],
    complete: bool,
    result_path: Path | None,
    document: Callable[[], dict[str, Any]],
    summary: Callable[[], dict[str, Any]],
    *,
    rescore: bool = False,
) -> RunReport:
    """Write the result file (when ``result_path`` is given), task_scores.json and summary.json
    in the order that never lies (the module docstring); ``document`` and ``summary`` are built
    after run.json records the finish time and the result file's path. A rescore keeps the run's
    ``finished_at`` (when it has one) and records its own time as ``rescored_at``."""
    if result_path is not None:
        if rescore and info.get("finished_at"):
            info.update(rescored_at=now_iso())
        else:
            info.update(finished_at=now_iso())
        info.update(status="finalizing", result_file=str(result_path))
        _write(run_dir / RUN_JSON, info, run_dir)
        doc = document()
        with _writing(result_path, run_dir):
            write_result(doc, result_path)
    _write(run_dir / TASK_SCORES, task_scores, run_dir)
    written = summary()
    _write(run_dir / SUMMARY, written, run_dir)
    if result_path is not None:
        info["status"] = "complete" if complete else "incomplete"  # only once the result file exists
        _write(run_dir / RUN_JSON, info, run_dir)
    return RunReport(run_dir, written, result_path, complete)


def _writing(path: Path, run_dir: Path) -> Any:
    return writing(
        path, f"fix that, then `{resume_command(run_dir)}` finishes the run without asking the model"
    )


def _write(path: Path, data: Any, run_dir: Path) -> None:
    with _writing(path, run_dir):
        write_json(path, data)


def finalize_run(
    run_dir: Path,
    plan: RunPlan | None = None,
    *,
    write_result_file: bool = True,
    sign_key: str | None = None,
    ask_judge: bool = True,
    log: Log | None = None,
    settings: RunSettings | None = None,
    rescore: bool = False,
) -> RunReport:
    """Score the stored answers; write task_scores.json, summary.json and (by default) the result file.

    ``ask_judge``: a missing judge call may be sent to the run's judge model (never in rescore);
    ``settings``: the session's settings (credentials of the URLs included), else run.json's.
    A task with a judge call left without an answer makes the run incomplete.
    """
    info = read_json(run_dir / RUN_JSON)
    judge = RecordingJudge(
        run_dir / JUDGEMENTS, open_judge(settings or settings_from(info)) if ask_judge else None
    )
    try:
        info, task_scores, records, results = score_run(run_dir, plan, judge, log)
    finally:
        judge.close()
    if judge.failures and log:
        log(f"{judge.failures} judge call(s) failed; their samples have grader errors (resume to try again)")
    complete = is_complete(info, results)
    report = write_finished(
        run_dir,
        info,
        task_scores,
        complete,
        result_path(info, complete) if write_result_file and results else None,
        lambda: build_result(info, results, records, sign_key or os.environ.get(SIGN_KEY_ENV)),
        lambda: build_summary(info, task_scores, records, results, complete),
        rescore=rescore,
    )
    _warn_unanswered_judge(info, results, log)
    return report


def _warn_unanswered_judge(info: dict[str, Any], results: Mapping[str, TaskResult], log: Log | None) -> None:
    if info.get("judge") or log is None:
        return
    asked = Counter(
        tid
        for tid, t in results.items()
        for p in t.predictions
        if p.grader_error and "judge" in p.grader_error
    )
    if asked:
        log(
            "the graders of "
            + ", ".join(sorted(asked))
            + " ask a judge model; run with --judge-provider P --judge-model M to answer them"
        )


def rescore_run(
    run_dir: Path, write_result_file: bool = False, sign_key: str | None = None, log: Log = log_stderr
) -> RunReport:
    """Replay the stored answers and judge calls through today's graders; never asks a model."""
    if not (run_dir / RUN_JSON).is_file():
        raise RunError(f"{run_dir} is not a run folder (no run.json)")
    refuse_builtin(run_dir)  # an older built-in engine's folder: refused before anything is touched
    with RunLock(run_dir, log):
        return finalize_run(
            run_dir,
            write_result_file=write_result_file,
            sign_key=sign_key,
            ask_judge=False,
            log=log,
            rescore=True,
        )
