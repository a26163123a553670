"""Deriving and writing a ``yoxla-result`` version 3 file (the suite body of :mod:`yoxla.record.result`):
a task's stored answers re-scored through :func:`yoxla.score.replay.score_suite_task` and laid
out as the file stores them (:func:`derive_suite_task`, stored judge calls replayed, never sent
again), the summary scores (:func:`derive_scores`), and the sealed document
(:func:`build_suite_document`). A run, its resumption, ``yoxla rescore`` and admission all derive
through here. Version 2 files (the old format, read) are laid out from the same derivation by
:mod:`yoxla.admission.v2`; nothing writes them but the test boards of
:mod:`yoxla.testing.synthetic`, through that replay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from yoxla.record.base import (
    FORMAT,
    FORMAT_VERSION,
    MAX_ERROR,
    ModelInfo,
    Record,
    Usage,
    as_record,
)
from yoxla.record.result import (
    MAX_PROBLEMS,
    ResultFile,
    RunInfo,
    Scores,
    SuiteGroup,
    SuiteHeadline,
    SuiteInfo,
    TaskResult,
    parse_record,
)
from yoxla.score.judge import JudgeRecord

# Writing suite results -------------------------------------------------------------------------


def _judge_records(value: Any) -> tuple[JudgeRecord, ...]:
    return tuple(j if isinstance(j, JudgeRecord) else JudgeRecord.model_validate(j) for j in value or ())


def _bounded_text(value: str | None, limit: int = MAX_ERROR) -> str | None:
    return value if value is None or len(value) <= limit else value[: limit - 1] + "…"


def _suite_metric_layout(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """Scoring's task metrics as stored: numbers, counts, the modal answer, breakdowns."""
    numbers: dict[str, Any] = {}
    breakdowns: dict[str, Any] = {}
    for key, value in metrics.items():
        if key in ("outcomes", "near_miss", "modal_answer"):
            continue
        if isinstance(value, dict):
            breakdowns[key] = {
                str(k): {"accuracy": float(c["accuracy"]), "n": int(c["n"])} for k, c in value.items()
            }
        elif value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
            numbers[key] = value
        else:
            raise ValueError(f"metric {key} is neither a number nor a breakdown ({type(value).__name__})")
    return {
        "metrics": numbers,
        "counts": {"outcomes": dict(metrics["outcomes"]), "near_miss": dict(metrics["near_miss"])},
        "modal_answer": metrics.get("modal_answer"),
        "breakdowns": breakdowns,
    }


def align_items(prepared: Any, ids: Sequence[str]) -> list[Any]:
    """A suite task's prepared items in the order of ``ids`` (its stored predictions' ids);
    ValueError on an unknown or repeated id."""
    by_id = {item.id: item for item in prepared.items}
    seen: set[str] = set()
    out = []
    for pid in ids:
        if pid in seen:
            raise ValueError(f"{prepared.task.id}: prediction for id {pid!r} appears twice")
        if pid not in by_id:
            raise ValueError(f"{prepared.task.id}: prediction for unknown id {pid!r}")
        seen.add(pid)
        out.append(by_id[pid])
    return out


def derive_suite_task(
    prepared: Any,
    stored: Sequence[Mapping[str, Any]],
    *,
    pool: Any = None,
    judge: Any = None,
) -> dict[str, Any]:
    """The one derivation of a suite task as stored: re-score the stored answers and lay them out.

    ``prepared`` is the task as :func:`yoxla.prompt.prepare.prepare_task` gives it (from the
    committed manifest); ``stored`` the predictions (``id``, ``raw``, ``finish_reason``,
    ``error``, ``judgements``, and ``distribution`` where one is stored) in item order.
    ``judge`` None replays the stored judgements (re-scoring never asks a model); the runner
    passes its recording callback. A stored distribution is read back for its item's closed
    answer space (:func:`yoxla.prompt.space.probability_space`) as the benchmark's is, and the
    ``calibration`` block derived with the benchmark's functions
    (:func:`yoxla.score.calibration.stored.suite_task_calibration`).
    """
    from yoxla.extract.parsing import answer_text
    from yoxla.score.replay import score_builtin_task, score_suite_task
    from yoxla.score.samples import SampleOutput

    items = align_items(prepared, [str(p["id"]) for p in stored])
    raws = [p.get("raw") for p in stored]
    finishes = [p.get("finish_reason") for p in stored]
    errors = [p.get("error") for p in stored]
    if prepared.task.scoring.python:
        outputs = [
            SampleOutput.from_raw(raw, finish, error, _judge_records(p.get("judgements")))
            for raw, finish, error, p in zip(raws, finishes, errors, stored, strict=True)
        ]
        scored = score_suite_task(prepared, outputs, items=items, pool=pool, judge=judge)
    else:  # built-in graders read the answer text alone: the stored answers go in as columns
        for p in stored:
            if p.get("judgements"):
                _judge_records(p["judgements"])  # checked as on the general path, never replayed
        texts = [None if raw is None else answer_text(raw) for raw in raws]
        scored = score_builtin_task(prepared, items, texts, finishes, errors)
    preds: list[dict[str, Any]] = []
    control = scored.control or (False,) * len(scored.results)
    for res, raw, finish, error, is_control in zip(
        scored.results, raws, finishes, errors, control, strict=True
    ):
        preds.append(
            {
                "id": res.id,
                "raw": raw,
                "finish_reason": finish,
                "error": error,
                "extracted": res.extracted,
                "valid": res.valid,
                "reason": res.reason,
                "near_miss": res.near_miss,
                "abstained": res.abstained,
                "number": res.number,
                "scores": dict(res.scores),
                "score": res.score,
                "outcome": res.outcome,
                "grader_error": _bounded_text(res.grader_error),
                "extraction_error": _bounded_text(res.extraction_error),
                "judgements": [j.model_dump(mode="json") for j in res.judgements] if res.judgements else [],
            }
        )
        if is_control:
            preds[-1]["control"] = True
    calibration = _suite_distributions(prepared, items, stored, preds)
    models = sorted({j.response.model for r in scored.results for j in r.judgements if j.response.model})
    return {
        "name": prepared.task.spec.name,
        "rows": len(preds),
        "items": len(prepared.items),
        "primary": scored.primary,
        "higher_is_better": scored.higher_is_better,
        "score": scored.score,
        **_suite_metric_layout(scored.metrics),
        "problems": [_bounded_text(p) for p in scored.problems[:MAX_PROBLEMS]],
        "judge_scored": scored.judge_scored,
        "judge_models": models[:20],
        "predictions": preds,
        **({"calibration": calibration} if calibration is not None else {}),
    }


def _suite_distributions(
    prepared: Any, items: Sequence[Any], stored: Sequence[Mapping[str, Any]], preds: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """Each stored distribution read back for its item's closed answer space into ``preds``
    (dropped for a generation error, an open space, or an inconsistent form), and the task's
    calibration block derived from them (None when no prediction keeps one)."""
    from yoxla.prompt.space import calibration_inputs
    from yoxla.score.calibration.stored import checked_in, suite_task_calibration

    if not any(p.get("distribution") is not None for p in stored):
        return None  # most files: nothing to read back
    inputs = calibration_inputs(prepared.task.spec, items)
    for pred, p, space in zip(preds, stored, inputs[1], strict=True):
        dist = checked_in(space, p.get("distribution")) if p.get("error") is None else None
        if dist is not None:
            pred["distribution"] = dist
    return suite_task_calibration(prepared.task.id, inputs, preds)


build_suite_task_result = as_record(TaskResult, derive_suite_task)


def _mean_or_none(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def derive_scores(
    tasks: Mapping[str, TaskResult],
    groups: Sequence[SuiteGroup] | None = None,
    headline: SuiteHeadline | None = None,
) -> Scores:
    """Task scores, group scores and the suite score (tasks without a 0–100 score are left out).

    The suite score is the mean of the task scores, or, under the headline rule
    ``mean_of_groups`` (the default with groups), the mean of the group scores.
    """
    scores = {tid: t.score for tid, t in tasks.items()}
    present = [s for s in scores.values() if s is not None]
    if groups is None:
        return Scores.model_construct(suite=_mean_or_none(present), tasks=scores)
    by_group: dict[str, float] = {}
    for g in groups:
        mean = _mean_or_none([s for tid in g.tasks if (s := scores.get(tid)) is not None])
        if mean is not None:
            by_group[g.id] = mean
    rule = headline.rule if headline is not None else "mean_of_groups"
    suite = _mean_or_none(list(by_group.values())) if rule == "mean_of_groups" else _mean_or_none(present)
    return Scores.model_construct(suite=suite, tasks=scores, groups=by_group)


def scores_of(info: SuiteInfo, tasks: Mapping[str, TaskResult]) -> Scores:
    """:func:`derive_scores` with the groups and headline the file's suite block declares."""
    return derive_scores(tasks, info.groups, info.headline)


def _suite_task_dump(t: TaskResult) -> dict[str, Any]:
    """A task as stored: a prediction's ``control`` only where it is true (as derived)."""
    out = t.model_dump(mode="json")
    for pred in out["predictions"]:
        for key in ("control", "distribution"):
            if pred.get(key) is None:
                pred.pop(key, None)
        if pred.get("distribution") is not None:  # its optional fields only where set, as derived
            pred["distribution"] = {k: v for k, v in pred["distribution"].items() if v is not None}
    if out.get("calibration") is None:
        out.pop("calibration", None)
    return out


def build_suite_document(
    *,
    suite: SuiteInfo,
    model: ModelInfo,
    run: RunInfo,
    tasks: Mapping[str, TaskResult],
    usage: Usage,
    created_at: str,
    sign_key: Any = None,
) -> dict[str, Any]:
    """The whole suite result document with its digest (signed when a key is given), validated."""

    body = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "suite": suite.model_dump(mode="json", exclude_unset=True),  # commits only where read
        "model": model.model_dump(mode="json", exclude_unset=True),
        "run": run.model_dump(mode="json", exclude_unset=True),
        "tasks": {tid: _suite_task_dump(t) for tid, t in tasks.items()},
        "scores": scores_of(suite, tasks).model_dump(mode="json", exclude_unset=True),
        "usage": usage.model_dump(mode="json", exclude_unset=True),
        "generation_errors": sum(p.error is not None for t in tasks.values() for p in t.predictions),
        "created_at": created_at,
    }
    return sealed(body, sign_key, ResultFile)


def sealed(body: dict[str, Any], sign_key: Any, model: type[Record]) -> dict[str, Any]:
    """``body`` with its digest (signed when a key is given), read back as ``model`` (a result
    file of either kind) before it is returned: the writer never makes a file the reader refuses."""
    from yoxla.record.signing import finalize

    doc = finalize(body, sign_key)
    record, problems = parse_record(doc)
    if not isinstance(record, model):
        what = "suite result" if model is ResultFile else "result"
        raise ValueError(f"the {what} document does not match its own format: " + "; ".join(problems))
    return doc
