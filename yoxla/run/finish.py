"""Finishing a run, what every finish shares: the stored lines read back, the summary, the
result file's model and run blocks, and the files written in the order that never lies.

Scores always come from the stored raw outputs (:mod:`yoxla.run.finalize` replays them),
so a run, its resumption and a later ``rescore`` agree. Files are written in an order that
never lies: ``run.json`` says ``finalizing`` first, the result file is written, and only then
does ``run.json`` say ``complete`` (or ``incomplete``); a run whose finalisation failed (disk
full, read-only results folder) is finished by ``--resume`` without asking the model again.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yoxla.calibration.stored import LOGPROBS_KEY
from yoxla.providers.base import oversized
from yoxla.providers.registry import public_url
from yoxla.record_base import MAX_RAW, ModelInfo, ModelMetadata
from yoxla.results import result_filename, write_result
from yoxla.run.artifacts import (
    PREDICTIONS,
    RUN_JSON,
    SUMMARY,
    TASK_SCORES,
    CorruptRun,
    drop_duplicates,
    duplicates_note,
    read_predictions,
    refuse_builtin,
    write_json,
)
from yoxla.run.errors import Log, RunError, resume_command, writing
from yoxla.run.lock import RunLock
from yoxla.run.model_facts import FACT_KEYS, check_facts, public_model
from yoxla.run.settings import now_iso

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


def summary_document(
    info: dict[str, Any],
    records: list[dict[str, Any]],
    scores: dict[str, Any],
    probabilities: Any,
    **extra: Any,
) -> dict[str, Any]:
    """summary.json of a run: who ran, ``scores`` (what was run, whether
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
        "usage": usage_total(records),
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
    """The result file's ``model`` block."""
    return ModelInfo(
        provider=info["provider"],
        model=published_model(info),
        reported_model=public_model(reported) if (reported := reported_model(records)) else None,
        base_url=public_url(info.get("base_url")),
        display_name=info.get("display_name") or published_model(info),
        **({"metadata": meta} if (meta := model_metadata(info)) is not None else {}),
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


def result_path_for(info: dict[str, Any], complete: bool, *where: str) -> Path:
    """Where the result file of the run goes: ``results/<where>/<provider>__<model>.json``, under
    ``results/partial/`` when the run is not complete (``where``: the edition, or ``suites/<id>``)."""
    results_dir = Path(info["settings"].get("results_dir") or "results")
    name = result_filename(info["provider"], published_model(info))  # never a local folder's path
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


def rescore_with(finalize: Callable[..., RunReport], run_dir: Path, log: Log, **options: Any) -> RunReport:
    """``finalize(run_dir, rescore=True, …)`` under the run folder's lock; a folder of the built-in
    engine of an older version is refused before anything in it is touched."""
    if not (run_dir / RUN_JSON).is_file():
        raise RunError(f"{run_dir} is not a run folder (no run.json)")
    refuse_builtin(run_dir)
    with RunLock(run_dir, log):
        return finalize(run_dir, log=log, rescore=True, **options)
