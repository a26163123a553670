"""Calibration through the run folder and the result file: what is stored, and what is derived.

The run folder keeps what the provider returned (``predictions.jsonl``: token logprobs, or a
local model's label-scored ``distribution``); :func:`distribution_in` turns one line into the
stored form of a :class:`LabelDistribution`, every time the run is finished or re-scored. The
result file keeps it per prediction (:func:`checked_in` reads one back);
:func:`suite_task_calibration` and :func:`pooled_calibration` derive the reports.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from yoxla.score.calibration.distribution import LabelDistribution
from yoxla.score.calibration.metrics import Case, calibration_report

LOGPROBS_KEY = "logprobs"  # predictions.jsonl: the answer's token logprobs as the API returned them
# predictions.jsonl: a distribution in its stored form: a local model's label scoring, or one
# carried over from a result file (--retry-errors FILE)
DISTRIBUTION_KEY = "distribution"
ASKED_KEY = "probabilities_asked"  # predictions.jsonl: the request asked for token logprobs
REFUSED_KEY = "logprobs_refused"  # predictions.jsonl: why the logprobs that came back were not kept


def checked_in(space: Sequence[str] | None, stored: Any) -> dict[str, Any] | None:
    """A stored distribution read back for ``space`` and written out again (its one checked
    form); None without a space, or when the stored form is inconsistent."""
    if space is None or not isinstance(stored, Mapping):
        return None
    try:
        return LabelDistribution.from_dict(stored, space).to_dict()
    except (ValueError, TypeError, KeyError):
        return None


def distribution_in(space: Sequence[str] | None, record: Mapping[str, Any]) -> dict[str, Any] | None:
    """The distribution one ``predictions.jsonl`` line gives over ``space`` (an item's closed
    answer space), stored form: the line's label scores checked, or its token logprobs read
    against ``space``. None for a generation error, an open answer, a line without logprobs or
    label scores, malformed logprobs, or logprobs that put no mass on any label: absent, never zeros."""
    from yoxla.score.calibration.logprobs import distribution_from_logprobs
    from yoxla.score.calibration.token_logprobs import LogprobsError, parse_logprobs

    if space is None or record.get("error"):
        return None
    scored = record.get(DISTRIBUTION_KEY)
    if scored is not None:
        return checked_in(space, scored)
    raw = record.get(LOGPROBS_KEY)
    if not raw:
        return None
    text = record.get("text")
    if text is None and isinstance(record.get("raw"), str):  # suite lines keep the raw output only
        from yoxla.extract.parsing import answer_text

        text = answer_text(record["raw"])
    finish = record.get("finish_reason")
    try:
        dist = distribution_from_logprobs(
            parse_logprobs(raw),
            tuple(space),
            text=text if isinstance(text, str) else None,
            finish_reason=finish if isinstance(finish, str) else None,
        )
    except (LogprobsError, ValueError):
        return None
    return None if dist is None else dist.to_dict()


def probability_counts(
    records: Sequence[Mapping[str, Any]], distributions: Sequence[Mapping[str, Any] | None]
) -> dict[str, Any]:
    """How answer probabilities fared over a run's lines (same order as their distributions):
    requests that asked for token logprobs (or were label-scored by a local model), those that
    received them, the distributions derived (complete and partial), and why the rest have none
    (reason → count)."""
    asked = received = complete = partial = 0
    absent: dict[str, int] = {}

    def why(reason: str) -> None:
        absent[reason] = absent.get(reason, 0) + 1

    for record, dist in zip(records, distributions, strict=True):
        if dist is not None:
            if dist.get("missing"):
                partial += 1
            else:
                complete += 1
        scored = record.get(DISTRIBUTION_KEY) is not None  # a local model's label scoring
        if not (record.get(ASKED_KEY) or scored):
            continue
        asked += 1
        refused = record.get(REFUSED_KEY)
        if record.get(LOGPROBS_KEY) or refused or scored:
            received += 1
        if dist is not None:
            continue
        if record.get("error"):
            why("generation error")
        elif refused:
            why(f"refused: {str(refused).split(': ', 1)[-1]}")
        elif not record.get(LOGPROBS_KEY):
            why("none in the reply")
        else:
            why("no label among the tokens")
    return {
        "asked": asked,
        "received": received,
        "complete": complete,
        "partial": partial,
        "absent": dict(sorted(absent.items())),
    }


def _field(pred: Any, name: str) -> Any:
    if type(pred) is dict:  # a derived document (the usual case): no abstract-class check
        return pred.get(name)
    return pred.get(name) if isinstance(pred, Mapping) else getattr(pred, name, None)


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, Mapping):
        return value
    return value.model_dump(mode="json", exclude_unset=True)


def report_document(cases: Sequence[Case], n_partial: int) -> dict[str, Any]:
    """``calibration_report(cases)`` as the result file stores it (JSON types only)."""
    doc: dict[str, Any] = json.loads(json.dumps(calibration_report(cases).to_dict(), allow_nan=False))
    doc["n_partial"] = n_partial
    return doc


def _n_partial(preds: Sequence[Any]) -> int:
    """Scored predictions whose distribution is partial (some labels missing)."""
    return sum(
        1
        for p in preds
        if (d := _plain(_field(p, "distribution"))) is not None
        and d.get("missing")
        and not _field(p, "control")
    )


# A suite task's items as calibration reads them: targets, closed answer spaces, groups
# (yoxla.prompt.space.calibration_inputs).
SuiteInputs = tuple[Sequence[str], Sequence[Sequence[str] | None], Sequence[str | None]]


def suite_cases(
    task_id: str,
    targets: Sequence[str],
    spaces: Sequence[Sequence[str] | None],
    groups: Sequence[str | None],
    preds: Sequence[Any],
) -> list[Case]:
    """The metrics' cases of one suite task: per item its target, its closed answer space (None:
    open), its group (``metadata.group_field``'s value, None: none) and its prediction (derived
    document or typed record), same order. A distribution counts only when complete and its
    space holds the target; the answer is the extracted value when it is a label of the space."""
    if not len(targets) == len(spaces) == len(groups) == len(preds):
        raise ValueError(f"{task_id}: items, spaces, groups and predictions differ in number")
    out = []
    for target, space, group, pred in zip(targets, spaces, groups, preds, strict=True):
        labels = set(space or ())
        control = bool(_field(pred, "control"))
        dist = _plain(_field(pred, "distribution"))
        usable = dist is not None and not dist.get("missing") and (control or target in labels)
        extracted = _field(pred, "extracted")
        valid = bool(_field(pred, "valid")) and isinstance(extracted, str) and extracted in labels
        out.append(
            Case(
                gold=None if control else target,
                answer=extracted if valid else None,
                probs=dict(dist["probs"]) if usable and dist is not None else None,
                correct=_field(pred, "outcome") == "correct",
                control=control,
                group=None if group is None else (task_id, group),
            )
        )
    return out


def suite_task_calibration(task_id: str, inputs: SuiteInputs, preds: Sequence[Any]) -> dict[str, Any] | None:
    """A suite task's ``calibration`` block (:func:`suite_cases` of the items' targets, spaces and
    groups, ``inputs``, through the benchmark's :func:`report_document`), or None when no
    prediction stores a distribution: a suite's group consistency and controls are already among
    its task metrics, so a file without probabilities keeps the form it had."""
    if not any(_field(p, "distribution") is not None for p in preds):
        return None
    return report_document(suite_cases(task_id, *inputs, preds), _n_partial(preds))


def pooled_calibration(
    blocks: Mapping[str, str], cases: Mapping[str, Sequence[Case]], partial: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """Reports pooled over tasks: ``{"overall": report, "blocks": {block: report}}``.

    ``cases`` maps a task id to its cases (tasks without a calibration block left out),
    ``blocks`` a task id to its block. Every case keeps its own answer space, so cases of
    different tasks pool as they are; ``overall`` is None when no task has cases.
    """
    partial = partial or {}
    by_block: dict[str, list[Case]] = {}
    n_partial: dict[str, int] = {}
    for tid, task_cases in cases.items():
        block = blocks[tid]
        by_block.setdefault(block, []).extend(task_cases)
        n_partial[block] = n_partial.get(block, 0) + partial.get(tid, 0)
    every = [c for cs in by_block.values() for c in cs]
    return {
        "overall": report_document(every, sum(n_partial.values())) if every else None,
        "blocks": {b: report_document(cs, n_partial[b]) for b, cs in by_block.items()},
    }
