"""What admission says about a file (:class:`Verdict`) and the board's record of each admitted
task (:class:`TaskRecord`), with the one-line wording of a difference that admission reports.

:mod:`yoxla.admission.rules` writes a verdict; the board and the views read it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from yoxla.record.base import MISSING, ModelInfo, Usage
from yoxla.record.result import Prediction, RunConditions, TaskResult
from yoxla.record.v2 import PredictionV2, RunConditionsV2, TaskResultV2
from yoxla.safe.text import one_line

VERIFIED, COMMUNITY = "verified", "community"
TRUST_RANK = {COMMUNITY: 0, VERIFIED: 1}
ADMITTED, SUPERSEDED, EXCLUDED = "admitted", "superseded", "excluded"
NOT_RECHECKED = "scores not re-checked"


# Records ----------------------------------------------------------------------------------


@dataclass
class TaskRecord:
    """One task of an admitted file, in dataset order, compact enough to keep 300 in memory."""

    task_id: str
    block: str
    score: float
    primary_raw: float
    metrics: dict[str, Any]
    ids: list[str]
    scores: np.ndarray  # per-example score in [0, 1]
    outcomes: list[str]
    parsed: list[str]  # the parsed value as text ("" when invalid)
    near_miss: list[str | None]
    prediction: np.ndarray | None = None  # correlation tasks: the value scored (midpoint if invalid)
    # How sure the model was (None when the task has no calibration block): the task's
    # report as stored (docs/result-format.md), and per example the most probable label,
    # its probability and the gold label's probability (NaN without a complete distribution).
    calibration: dict[str, Any] | None = None
    top: list[str | None] | None = None
    p_top: np.ndarray | None = None
    p_gold: np.ndarray | None = None
    control: np.ndarray | None = None  # True for declared controls (run, not scored); None: no control
    # Per example, for the app's calibration intervals: the multi-class Brier term
    # Σ_k (p_k − [k = gold])² (NaN without a complete distribution) and whether the most
    # probable label is the gold one (False without a complete distribution).
    brier: np.ndarray | None = None
    top_correct: np.ndarray | None = None

    @property
    def scored_scores(self) -> np.ndarray:
        """Per-example scores of the scored rows (controls left out), as the task score averages them."""
        return self.scores if self.control is None else self.scores[~self.control]

    # Suite tasks (TaskRecord.from_suite): block is "", score NaN when lower is better,
    # per-sample scores NaN where a sample has none (grader error, batch-graded task).
    name: str = ""
    higher_is_better: bool = True
    judge_scored: bool = False
    judge_models: tuple[str, ...] = ()

    @classmethod
    def from_result(
        cls,
        task_id: str,
        t: TaskResultV2,
        metrics: dict[str, Any],
        gold: Sequence[Any] | None = None,
        *,
        block: str,
        prediction: np.ndarray | None = None,
    ) -> TaskRecord:
        """A task of an admitted ``yoxla-result`` v2 file (``metrics`` as stored; ``gold``: the
        targets, for the per-example calibration arrays; ``block``: the task's group in the suite;
        ``prediction``: a correlation task's values)."""
        preds = t.predictions
        return cls(
            task_id=task_id,
            block=block,
            score=float(t.score),
            primary_raw=float(metrics.get(t.primary, t.score / 100.0)),
            metrics=metrics,
            ids=[p.id for p in preds],
            scores=np.fromiter((p.score for p in preds), dtype=float, count=len(preds)),
            outcomes=[p.outcome for p in preds],
            parsed=[_text(p.parsed) if p.valid else "" for p in preds],
            near_miss=[None if p.valid else p.near_miss for p in preds],
            prediction=prediction,
            **_calibration_fields(t, gold),
        )

    @classmethod
    def from_suite(
        cls,
        task_id: str,
        t: TaskResult,
        gold: Sequence[Any] | None = None,
        *,
        block: str = "",
        prediction: np.ndarray | None = None,
    ) -> TaskRecord:
        """A task of an admitted suite file (metrics: the numbers, the outcome and near-miss
        counts, the modal answer and the breakdowns as cells, as a benchmark file's task has
        them); ``gold``: the items' targets, for the per-example calibration arrays; ``block``:
        the task's (first) group in the suite; ``prediction``: a correlation task's values."""
        preds = t.predictions
        nan = float("nan")
        primary = t.metrics.get(t.primary) if t.primary else None
        metrics: dict[str, Any] = dict(t.metrics)
        metrics["outcomes"] = dict(t.counts.outcomes)
        metrics["near_miss"] = dict(t.counts.near_miss)
        if t.modal_answer is not None:
            metrics["modal_answer"] = t.modal_answer
        metrics.update(
            {k: {v: c.model_dump() for v, c in cells.items()} for k, cells in t.breakdowns.items()}
        )
        return cls(
            task_id=task_id,
            block=block,
            score=float(t.score) if t.score is not None else nan,
            primary_raw=float(primary) if isinstance(primary, int | float) else nan,
            metrics=metrics,
            ids=[p.id for p in preds],
            scores=np.fromiter(
                (nan if p.score is None else p.score for p in preds), dtype=float, count=len(preds)
            ),
            outcomes=[p.outcome for p in preds],
            parsed=[p.extracted or "" for p in preds],
            near_miss=[p.near_miss for p in preds],
            prediction=prediction,
            **_calibration_fields(t, gold),
            name=t.name or task_id,
            higher_is_better=t.higher_is_better,
            judge_scored=t.judge_scored,
            judge_models=tuple(t.judge_models),
        )


def _calibration_fields(t: TaskResultV2 | TaskResult, gold: Sequence[Any] | None) -> dict[str, Any]:
    preds: Sequence[PredictionV2 | Prediction] = t.predictions
    out: dict[str, Any] = {}
    if any(p.control for p in preds):
        out["control"] = np.fromiter((bool(p.control) for p in preds), dtype=bool, count=len(preds))
    if t.calibration is None:
        return out
    out["calibration"] = t.calibration.model_dump(mode="json")
    if not any(p.distribution is not None for p in preds):
        return out
    n = len(preds)
    p_top, p_gold, brier = (np.full(n, float("nan")) for _ in range(3))
    top_correct = np.zeros(n, dtype=bool)
    for i, p in enumerate(preds):
        d = p.distribution
        if d is None or d.missing:  # no complete distribution: NaN, not the top label
            continue
        p_top[i] = d.probs[d.top]
        g = None if gold is None or gold[i] is None else str(gold[i])
        if g is None or g not in d.probs:
            continue
        p_gold[i] = d.probs[g]
        brier[i] = math.fsum((q - (1.0 if k == g else 0.0)) ** 2 for k, q in d.probs.items())
        top_correct[i] = d.top == g
    tops = [None if p.distribution is None else p.distribution.top for p in preds]
    out.update(top=tops, p_top=p_top, p_gold=p_gold, brier=brier, top_correct=top_correct)
    return out


@dataclass
class Verdict:
    """What admission says about one file."""

    path: str
    status: str  # admitted | superseded | excluded
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    key: str = ""  # the board key: the path under the results folder
    sha256: str = ""  # of the file's bytes (cache key)
    content_sha256: str = ""
    edition: str | None = None
    provider: str = ""
    model: str = ""
    display_name: str = ""
    trust: str = COMMUNITY
    key_id: str | None = None
    rechecked: bool = False
    generation_errors: int = 0
    created_at: str = ""
    conditions: RunConditionsV2 | RunConditions | None = None
    model_info: ModelInfo | None = None
    usage: Usage | None = None  # tokens the run used, as the file states them
    run_id: str = ""
    scores: dict[str, Any] = field(default_factory=dict)
    tasks: dict[str, TaskRecord] = field(default_factory=dict)
    superseded_by: str | None = None
    # Calibration pooled over the tasks that have a calibration block: {"overall": report or
    # None, "blocks": {block: report}} (yoxla.score.calibration.stored.pooled_calibration); empty
    # when the file was not re-checked (pooling needs the gold labels).
    calibration: dict[str, Any] = field(default_factory=dict)

    def ranking_entry(self, task_id: str | None = None) -> dict[str, Any]:
        """The values a declared ranking order sorts by (yoxla.score.calibration.ranking): the YOXLA
        score (or a task's score) and the pooled (or the task's) calibration metrics. A suite
        file: its suite score and group consistency (the mean over its tasks that have one)."""
        if self.suite is not None and task_id is None:
            found = [t.metrics.get("group_consistency") for t in self.tasks.values()]
            values = [float(x) for x in found if isinstance(x, int | float) and not isinstance(x, bool)]
            suite_score = self.scores.get("suite")
            return {
                "yoxla": suite_score,
                "score": suite_score,
                "group_consistency": sum(values) / len(values) if values else None,
            }
        if task_id is None:
            score = self.scores.get("yoxla")
            report = self.calibration.get("overall") or {}
        else:
            rec = self.tasks.get(task_id)
            score = rec.score if rec is not None else None
            report = (rec.calibration if rec is not None else None) or {}
        groups = report.get("groups") or {}
        # the board's headline ("yoxla"): the YOXLA score, or the task's score
        entry = {"yoxla": score, "score": score, "group_consistency": groups.get("value")}
        keys = ("accuracy", "high_confidence_error_rate", "mean_gold_p", "brier", "ece", "answer_agreement")
        return entry | {key: report.get(key) for key in keys}

    # Suite result files: the suite board's id (None for a file of a package benchmark suite,
    # whose board is its edition's), the judge model, and a board other than the conditions'
    # (``non-standard`` when the generation settings are not the manifest's).
    suite: str | None = None
    judge: str | None = None
    board: str | None = None
    # The file's format (``yoxla-result v3``, ``yoxla-result v2``, ``yoxla-suite-result v1``) and, for a suite
    # file, the committed suite it was re-derived with (what a cached verdict rests on).
    result_format: str = ""
    source_suite: str | None = None

    @property
    def tokens(self) -> tuple[int | None, int | None]:
        """(prompt, completion) tokens the run used; (None, None) when unknown."""
        u = self.usage
        return (None, None) if u is None else (u.prompt_tokens, u.completion_tokens)

    @property
    def admitted(self) -> bool:
        return self.status != EXCLUDED

    @property
    def shown(self) -> bool:
        return self.status == ADMITTED

    @property
    def name(self) -> str:
        return self.display_name or self.model

    @property
    def group(self) -> str:
        """The board this file is ranked on (standard, thinking, non-standard)."""
        if self.board is not None:
            return self.board
        return self.conditions.group if self.conditions is not None else "standard"

    def summary(self) -> str:
        if self.status == EXCLUDED:
            return "excluded: " + "; ".join(self.reasons)
        bits = [self.status, self.trust]
        if not self.rechecked:
            bits.append(NOT_RECHECKED)
        if self.group != "standard":
            bits.append(f"{self.group} run")
        if self.generation_errors:
            bits.append(f"{self.generation_errors} generation error(s)")
        if self.superseded_by:
            bits.append(f"superseded by {self.superseded_by}")
        return ", ".join(bits)


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v)) if abs(v) < 1e15 else str(v)
    return str(v)


def _fmt_ids(ids: Iterable[str], limit: int = 5) -> str:
    ids = list(ids)
    shown = ", ".join(one_line(repr(i), 60) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "") + f" ({len(ids)})"


def _value(v: Any) -> str:
    if v is MISSING:
        return "absent"
    return one_line(json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else repr(v), 60)


def _differs(what: str, diff: tuple[str, Any, Any]) -> str:
    path, stored, derived = diff
    return (
        f"{what}: {path} is stored as {_value(stored)} but re-deriving it from the stored answers "
        f"gives {_value(derived)}"
    )
