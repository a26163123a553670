"""Finishing a run: re-score the stored outputs, write the run folder's scores and the result file.

Scores always come from the stored raw outputs through :func:`yoxla.record.build_task_result`,
so a run, its resumption and a later ``rescore`` agree. The result document is built in
one function, :func:`build_result`. Files are written in an order that never lies:
``run.json`` says ``finalizing`` first, the result file is written, and only then does
``run.json`` say ``complete`` (or ``incomplete``); a run whose finalisation failed (disk
full, read-only results folder) is finished by ``--resume`` without asking the model again.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yoxla.calibration.stored import LOGPROBS_KEY, probability_counts, run_distribution
from yoxla.declarations import edition_declarations
from yoxla.editions import fingerprint, load_edition, load_rows
from yoxla.providers.base import oversized
from yoxla.providers.registry import public_url
from yoxla.record import (
    MAX_RAW,
    DatasetInfo,
    ModelInfo,
    ModelMetadata,
    RunConditions,
    RunInfo,
    TaskResult,
    Usage,
    build_document,
    build_task_result,
    summary_scores,
)
from yoxla.rescoring import align_rows
from yoxla.results import SIGN_KEY_ENV, result_filename, write_result
from yoxla.run.artifacts import (
    PREDICTIONS,
    RUN_JSON,
    SUMMARY,
    TASK_SCORES,
    CorruptRun,
    drop_duplicates,
    duplicates_note,
    read_json,
    read_predictions,
    write_json,
)
from yoxla.run.errors import Log, RunError, log_stderr, resume_command, writing
from yoxla.run.lock import RunLock
from yoxla.run.model_facts import FACT_KEYS, check_facts, public_model
from yoxla.run.settings import now_iso, settings_from
from yoxla.suite import load_suite

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


def score_run(
    run_dir: Path, task_rows: dict[str, list[dict[str, Any]]] | None = None, log: Log | None = None
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], dict[str, TaskResult]]:
    """(run info, task_scores, records, task results) recomputed from the stored raw outputs.

    Every task result comes from :func:`yoxla.record.build_task_result`, the one path that
    turns stored answers into verdicts and metrics (admission derives the same way). A
    repeated example is scored once (its first line) and reported through ``log``.
    """
    info = read_json(run_dir / RUN_JSON)
    records = [bounded(r) for r in stored_records(run_dir, log)]
    suite = load_suite()
    s = settings_from(info)
    task_ids: list[str] = info["task_ids"]
    edition = load_edition(s.edition)
    declarations = edition_declarations(edition)
    if task_rows is None:
        task_rows = {tid: load_rows(edition, tid, s.data_dir, s.revision) for tid in task_ids}
        for tid in task_ids:
            if fingerprint(task_rows[tid]) != info["tasks"][tid]["fingerprint"]:
                raise RunError(
                    f"the rows of {tid} differ from those the run used (fingerprint); cannot re-score"
                )
    by_task = records_by_task(run_dir, records, task_ids)
    tasks_out: dict[str, Any] = {}
    results: dict[str, TaskResult] = {}
    seen_recs: list[dict[str, Any]] = []
    seen_dists: list[dict[str, Any] | None] = []
    for tid in task_ids:
        task = suite.task(tid)
        order = {str(row[task.id_field]): i for i, row in enumerate(task_rows[tid])}
        recs = sorted(by_task[tid], key=lambda r: order.get(str(r["id"]), len(order)))
        expected = info["tasks"][tid]["selected"]
        entry = {"block": task.block, "primary": task.primary, "rows": len(recs), "expected": expected}
        if not recs:
            tasks_out[tid] = {**entry, "score": None, "metrics": None}
            continue
        try:
            rows = align_rows(task, task_rows[tid], [str(r["id"]) for r in recs])
        except ValueError as exc:
            raise CorruptRun(f"{run_dir / PREDICTIONS}: {exc}") from None
        dists = [run_distribution(task, row, r) for row, r in zip(rows, recs, strict=True)]
        seen_recs += recs
        seen_dists += dists
        result = build_task_result(
            task,
            rows,
            [r.get("raw") for r in recs],
            [r.get("finish_reason") for r in recs],
            [r.get("error") for r in recs],
            fingerprint=info["tasks"][tid]["fingerprint"],
            distributions=dists,
            declarations=declarations.task(tid, task.id_field),
        )
        results[tid] = result
        tasks_out[tid] = {
            **entry,
            "score": result.score,
            "metrics": result.metrics.model_dump(mode="json", exclude_unset=True),
        }
        if result.calibration is not None:
            tasks_out[tid]["calibration"] = result.calibration.model_dump(mode="json")
    scores = summary_scores(suite, results)
    task_scores = {
        "tasks": tasks_out,
        "blocks": dict(scores.blocks),
        "yoxla": scores.yoxla if results else None,
        "probabilities": probability_counts(seen_recs, seen_dists),
    }
    return info, task_scores, records, results


def is_complete(info: dict[str, Any], task_scores: dict[str, Any]) -> bool:
    """Every task of the edition, every row: no limit, no row filter, no control skipped."""
    edition = load_edition(info["settings"]["edition"])
    settings = info.get("settings") or {}
    return (
        info.get("limit") is None
        and not settings.get("filters")
        and not settings.get("scored_only")
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
        cal = t.get("calibration")
        if cal:
            tasks[tid]["calibration"] = calibration_summary(cal)
    scores = {"yoxla": task_scores["yoxla"], "blocks": task_scores["blocks"], "tasks": tasks}
    scores = {"edition": info["edition"], "complete": complete, **scores}
    return summary_document(info, records, scores, task_scores.get("probabilities"))


def summary_document(
    info: dict[str, Any],
    records: list[dict[str, Any]],
    scores: dict[str, Any],
    probabilities: Any,
    **extra: Any,
) -> dict[str, Any]:
    """summary.json of a benchmark or a suite run: who ran, ``scores`` (what was run, whether
    complete, the scores and tasks), the answers and their generation errors, ``extra``, usage,
    probabilities and the run's time and result file."""
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
        "examples": len(records),
        "generation_errors": len(errors),
        "generation_error_examples": errors,
        **extra,
        "usage": _usage_total(records),
        "probabilities": probabilities,
        "wall_s": info.get("wall_s"),
        "result_file": info.get("result_file"),
    }


def calibration_summary(cal: dict[str, Any]) -> dict[str, Any]:
    """What summary.json keeps of a task's calibration block (the printed table's columns)."""
    return {
        k: cal[k] for k in ("n_with_probs", "n_partial", "mean_gold_p", "high_confidence_error_rate", "ece")
    } | {"group_consistency": cal["groups"]["value"], "controls": cal["controls"]["n"]}


def reported_model(records: list[dict[str, Any]]) -> str | None:
    models = Counter(r.get("model") for r in records if r.get("model"))
    return models.most_common(1)[0][0] if models else None


def model_info(info: dict[str, Any], records: list[dict[str, Any]]) -> ModelInfo:
    """The result file's ``model`` block (a benchmark run's or a suite run's)."""
    return ModelInfo(
        provider=info["provider"],
        model=published_model(info),
        reported_model=public_model(reported) if (reported := reported_model(records)) else None,
        base_url=public_url(info.get("base_url")),
        display_name=info.get("display_name") or published_model(info),
        **({"metadata": meta} if (meta := model_metadata(info)) is not None else {}),
    )


def record_conditions(info: dict[str, Any]) -> RunConditions:
    """The run's conditions as the result file states them (from run.json's ``conditions``)."""
    cond = info.get("conditions") or {}
    thinking = bool(cond.get("thinking", info.get("thinking", False)))
    suite = load_suite()
    temps = {
        float(t.get("temperature", suite.task(tid).generation.temperature))
        for tid, t in (cond.get("tasks") or {}).items()
        if float(t.get("temperature", suite.task(tid).generation.temperature))
        != suite.task(tid).generation.temperature
    }
    filters: dict[str, list[str]] = {}
    edition = load_edition(info["edition"])
    if set(info["task_ids"]) != set(edition.tasks):
        filters["task"] = list(info["task_ids"])
    settings = info.get("settings") or {}
    for name, values in sorted((settings.get("filters") or {}).items()):
        filters[name] = [str(v) for v in values]
    if settings.get("scored_only"):
        filters["controls"] = ["skipped"]
    return RunConditions(
        thinking=thinking,
        thinking_budget=int(cond.get("thinking_budget") or 0) if thinking else None,
        temperature=temps.pop() if len(temps) == 1 else None,
        system_prompt="contract" if cond.get("system_prompt", "contract") == "contract" else "changed",
        limit=cond.get("limit", info.get("limit")),
        filters=filters,
    )


def published_model(info: dict[str, Any]) -> str:
    """The model id a result file publishes: never a local folder's path (yoxla.run.model_facts)."""
    stored = info.get("public_model")
    return stored if isinstance(stored, str) and stored else public_model(str(info["model"]))


def model_metadata(info: dict[str, Any]) -> ModelMetadata | None:
    """What the provider could tell about the model (a local model's parameter count, a Hub
    model's repository and commit) and what the contributor stated (``--model-card``,
    ``--license``, ``--weights``, ``--params``: these win); None when nothing is known."""
    facts = info.get("provider_info") or {}
    found: dict[str, Any] = {}
    if isinstance(facts.get("parameters"), int) and facts["parameters"] > 0:
        found["parameters"] = facts["parameters"]
    if isinstance(facts.get("hub_repo"), str):
        found["hub_repo"] = facts["hub_repo"]
        found["card_url"] = f"https://huggingface.co/{facts['hub_repo']}"
    if isinstance(facts.get("hub_revision"), str) and re.fullmatch(r"[0-9a-f]{40}", facts["hub_revision"]):
        found["hub_revision"] = facts["hub_revision"]
    stated = check_facts(
        {k: v for k, v in (info.get("settings") or {}).items() if k in FACT_KEYS and v is not None}
    )
    if "params" in stated:
        found["parameters"] = stated["params"]
    if "weights" in stated:
        found["open_weights"] = stated["weights"] == "open"
    if "license" in stated:
        found["licence"] = stated["license"]
    if "model_card" in stated:
        found["card_url"] = stated["model_card"]
    return ModelMetadata(**found) if found else None


def run_facts(info: dict[str, Any]) -> dict[str, Any]:
    """What the result file's ``run`` block (a benchmark run's or a suite run's) takes from run.json as it is."""
    return {
        "run_id": info["run_id"],
        "framework_version": info["framework_version"],
        "started_at": info["started_at"],
        "finished_at": info.get("finished_at"),
        "workers": int(info.get("workers") or 1),
        "batch_size": int(info.get("batch_size") or 1),
        "command": info.get("command", ""),
    }


def build_result(
    info: Info, results: dict[str, TaskResult], records: Lines, sign_key: str | None = None
) -> Info:
    """The result file: metadata, scores, every prediction, digest (and signature).

    Written by :mod:`yoxla.record` (the one writer; admission reads with the same record).
    """
    dataset = info.get("dataset") or {}
    return build_document(
        edition=info["edition"],
        model=model_info(info, records),
        run=RunInfo(
            **run_facts(info),
            dataset=DatasetInfo(source=dataset.get("source"), revision=dataset.get("revision")),
            chat_template_hash=info.get("chat_template_hash"),
            conditions=record_conditions(info),
        ),
        suite_hash=info["suite_hash"],
        tasks=results,
        usage=Usage(**_usage_total(records)),
        created_at=now_iso(),
        sign_key=sign_key,
    )


def result_path_for(info: dict[str, Any], complete: bool, *where: str) -> Path:
    """Where the result file of the run goes: ``results/<where>/<provider>__<model>.json``, under
    ``results/partial/`` when the run is not complete; ``where`` is the edition by default."""
    results_dir = Path(info["settings"].get("results_dir") or "results")
    name = result_filename(info["provider"], published_model(info))  # never a local folder's path
    return (results_dir if complete else results_dir / "partial").joinpath(
        *(where or (info["edition"],)), name
    )


def finalize_run(
    run_dir: Path,
    task_rows: dict[str, list[dict[str, Any]]] | None = None,
    write_result_file: bool = True,
    sign_key: str | None = None,
    log: Log | None = None,
    rescore: bool = False,
) -> RunReport:
    """Score the stored outputs; write task_scores.json, summary.json and (by default) the result file.

    ``rescore``: the run finished before; its ``finished_at`` is kept (see :func:`write_finished`).
    """
    info, task_scores, records, results = score_run(run_dir, task_rows, log)
    complete = is_complete(info, task_scores)
    return write_finished(
        run_dir,
        info,
        task_scores,
        complete,
        result_path_for(info, complete) if write_result_file else None,
        lambda: build_result(info, results, records, sign_key or os.environ.get(SIGN_KEY_ENV)),
        lambda: build_summary(info, task_scores, records, complete),
        rescore=rescore,
    )


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
    in the order that never lies: run.json says ``finalizing`` first and ``complete`` (or
    ``incomplete``) only once the result file exists. ``document`` and ``summary`` are built
    after run.json records the finish time and the result file's path.

    A rescore (``rescore``) keeps the run's ``finished_at`` (when it has one) and records its own
    time apart, as ``rescored_at`` in run.json (the result file's ``created_at`` is the rescore's).
    """
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


def rescore_run(
    run_dir: Path, write_result_file: bool = False, sign_key: str | None = None, log: Log = log_stderr
) -> RunReport:
    """Replay stored raw outputs through today's parsers and evaluators; answers are never touched."""
    return rescore_with(finalize_run, run_dir, log, write_result_file=write_result_file, sign_key=sign_key)


def rescore_with(finalize: Callable[..., RunReport], run_dir: Path, log: Log, **options: Any) -> RunReport:
    """``finalize(run_dir, rescore=True, …)`` under the run folder's lock (a run of either kind)."""
    if not (run_dir / RUN_JSON).is_file():
        raise RunError(f"{run_dir} is not a run folder (no run.json)")
    with RunLock(run_dir, log):
        return finalize(run_dir, log=log, rescore=True, **options)
