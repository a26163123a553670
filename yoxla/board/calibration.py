"""How sure the models are, on one board: calibration metrics with bootstrap intervals.

The point values are the reports admission re-derived; the intervals resample the per-example
arrays admission keeps on each task (``p_top``, ``p_gold``, ``brier``, ``top_correct``, the parsed
answer, the control mask) as docs/calibration.md ("In the app") states: every
metric is a ratio of sums over examples, so one matrix product per task gives all replicates. A
wrong answer with p ≥ 0.90 is necessarily the most probable label, so its p(answer) is ``p_top``.
A suite board has no blocks: its scopes are all tasks (pooled) and each task with a report.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from yoxla.admission.verdict import TaskRecord, Verdict
from yoxla.board.bootstrap import ALPHA, SEED, resample_counts
from yoxla.board.prepared import EditionData, block_title
from yoxla.score.calibration.metrics import ECE_BINS, HIGH_CONFIDENCE, ROUNDING

OVERALL = "overall"
# (key, label, kind): kind "p" a probability (3 decimals), "rate" a share (%), "score" Brier/ECE.
METRICS: tuple[tuple[str, str, str], ...] = (
    ("mean_gold_p", "Mean gold probability", "p"),
    ("high_confidence_error_rate", "High-confidence error rate", "rate"),
    ("brier", "Brier score", "score"),
    ("ece", "ECE", "score"),
    ("answer_agreement", "Answer = most probable label", "rate"),
)
LOWER_IS_BETTER = {"high_confidence_error_rate", "brier", "ece"}
NO_PROBS_PROVIDER = (
    "not available from this provider: the result file stores no answer probabilities (the provider "
    "returned no token logprobs, or the run was made with --no-probabilities)"
)
# Columns of the per-example matrix: counts and sums whose ratios are the metrics.
_P, _GOLD, _HCE, _SCORED, _BRIER, _AGREE, _WITH = range(7)
_BINS0 = 7  # then ECE_BINS columns of bin counts, bin confidence sums, bin correct sums
_K = _BINS0 + 3 * ECE_BINS


def scope_id(kind: str, name: str = "") -> str:
    """``overall``, ``block:<block>`` or ``task:<task id>``."""
    return OVERALL if kind == OVERALL else f"{kind}:{name}"


def example_matrix(rec: TaskRecord) -> np.ndarray | None:
    """(n, K): one row per example of the sums the metrics are ratios of; None for a task without
    a calibration report. Without distributions only the scored count is there (those examples
    stay in the high-confidence error rate's denominator when tasks are pooled)."""
    if rec.calibration is None:
        return None
    n = len(rec.ids)
    control = rec.control if rec.control is not None else np.zeros(n, dtype=bool)
    scored = ~control
    if rec.p_top is None or rec.p_gold is None or rec.top is None:
        m = np.zeros((n, _K))
        m[:, _SCORED] = scored
        return m
    with_probs = np.isfinite(rec.p_top)
    p_mask = scored & with_probs
    valid = np.array([bool(x) for x in rec.parsed], dtype=bool)
    answer_is_top = np.array(
        [bool(a) and t is not None and a == t for a, t in zip(rec.parsed, rec.top, strict=True)], dtype=bool
    )
    correct = np.array([o == "correct" for o in rec.outcomes], dtype=bool)
    conf = np.where(with_probs, rec.p_top, 0.0)
    hce = p_mask & valid & ~correct & answer_is_top & (conf >= HIGH_CONFIDENCE - ROUNDING)
    top_ok = rec.top_correct if rec.top_correct is not None else np.zeros(n, dtype=bool)
    brier = rec.brier if rec.brier is not None else np.full(n, np.nan)
    m = np.zeros((n, _K))
    m[:, _P] = p_mask
    m[:, _GOLD] = np.where(p_mask, np.nan_to_num(rec.p_gold), 0.0)
    m[:, _HCE] = hce
    m[:, _SCORED] = scored
    m[:, _BRIER] = np.where(p_mask, np.nan_to_num(brier), 0.0)
    m[:, _AGREE] = with_probs & valid & answer_is_top
    m[:, _WITH] = with_probs
    edges = np.array([i / ECE_BINS for i in range(ECE_BINS + 1)])
    index = np.clip(np.searchsorted(edges, conf, side="left") - 1, 0, ECE_BINS - 1)
    for b in range(ECE_BINS):
        in_bin = p_mask & (index == b)
        m[:, _BINS0 + b] = in_bin
        m[:, _BINS0 + ECE_BINS + b] = np.where(in_bin, conf, 0.0)
        m[:, _BINS0 + 2 * ECE_BINS + b] = in_bin & top_ok
    return m


def metrics_from_sums(sums: np.ndarray) -> dict[str, np.ndarray]:
    """Each metric from summed rows (``(..., K)``); NaN where its denominator is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        p = sums[..., _P]
        out = {
            "mean_gold_p": np.where(p > 0, sums[..., _GOLD] / p, np.nan),
            "high_confidence_error_rate": np.where(
                (p > 0) & (sums[..., _SCORED] > 0), sums[..., _HCE] / sums[..., _SCORED], np.nan
            ),
            "brier": np.where(p > 0, sums[..., _BRIER] / p, np.nan),
            "answer_agreement": np.where(sums[..., _WITH] > 0, sums[..., _AGREE] / sums[..., _WITH], np.nan),
        }
        conf = sums[..., _BINS0 + ECE_BINS : _BINS0 + 2 * ECE_BINS]
        right = sums[..., _BINS0 + 2 * ECE_BINS :]
        out["ece"] = np.where(p > 0, np.abs(right - conf).sum(axis=-1) / p, np.nan)
    return out


@dataclass
class ScopeRow:
    """One model at one scope: the stored report and the metrics' 95% intervals."""

    model: Verdict
    report: dict[str, Any]
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)


@dataclass
class BoardCalibration:
    """Every calibration number of a board's standard models, per scope."""

    scopes: list[tuple[str, str]]  # (label, scope id): overall, blocks, tasks with a report
    rows: dict[str, list[ScopeRow]]  # scope id -> models with a report there (board order)
    without: list[Verdict]  # models with no calibration report at all
    B: int
    # scope id -> what a pooled scope is pooled over, when the models' task sets differ (pooled
    # then on the tasks every model has), or why it is not pooled at all (no task in common)
    notes: dict[str, str] = field(default_factory=dict)

    def row(self, scope: str, key: str) -> ScopeRow | None:
        return next((r for r in self.rows.get(scope, []) if r.model.key == key), None)

    @property
    def any_probabilities(self) -> bool:
        return any(int(r.report.get("n_with_probs") or 0) > 0 for rows in self.rows.values() for r in rows)


def _has_content(report: Mapping[str, Any] | None) -> bool:
    if not report:
        return False
    groups = report.get("groups") or {}
    controls = report.get("controls") or {}
    return bool(
        int(report.get("n_with_probs") or 0)
        or int(groups.get("n_groups") or 0)
        or int(controls.get("n") or 0)
    )


def board_calibration(ed: EditionData, B: int = 1000, seed: int = SEED) -> BoardCalibration:
    """Reports and bootstrap intervals of every standard model of a board, per scope."""
    r = ed.standard
    models = r.models
    tids = list(r.task_ids)
    task_block = {t: (models[0].tasks[t].block if models and t in models[0].tasks else "") for t in tids}
    # Per task: the replicate sums (B, K) and full sums (K,) of every model with distributions.
    reps: dict[tuple[str, str], np.ndarray] = {}
    for ti, tid in enumerate(tids):
        mats: dict[str, tuple[list[str], np.ndarray]] = {}
        for v in models:
            m = example_matrix(v.tasks[tid]) if tid in v.tasks else None
            if m is not None:
                mats[v.key] = (list(v.tasks[tid].ids), m)
        if not mats:
            continue
        ids = next(iter(mats.values()))[0]
        rng = np.random.default_rng([seed, ti])
        _, counts = resample_counts(len(ids), B, rng)
        for key, (these, m) in mats.items():
            if these != ids:  # another set of examples (cannot share resamples): no interval
                continue
            reps[(key, tid)] = counts @ m
    rows: dict[str, list[ScopeRow]] = {}
    scopes: list[tuple[str, str]] = []
    notes: dict[str, str] = {}

    def add(
        scope: str,
        label: str,
        pairs: list[tuple[Verdict, dict[str, Any] | None, list[str]]],
        pooled: bool = False,
    ) -> None:
        pairs = [(v, rep, parts) for v, rep, parts in pairs if _has_content(rep)]
        if pooled and pairs and any(parts != pairs[0][2] for _, _, parts in pairs):
            # Models with reports on different tasks: pool every model on the same items.
            shared = [t for t in pairs[0][2] if all(t in parts for _, _, parts in pairs)]
            dropped = sorted({t for _, _, parts in pairs for t in parts} - set(shared))
            if not shared:
                notes[scope] = (
                    f"{label}: not pooled. The models of this board have calibration reports on "
                    "different tasks with none in common, so a pooled number would compare "
                    "different items; see each task's own scope."
                )
                return
            pairs = [(v, pooled_report(v, shared), shared) for v, _, _ in pairs]
            pairs = [(v, rep, parts) for v, rep, parts in pairs if _has_content(rep)]
            notes[scope] = (
                f"{label}: pooled over the {len(shared)} task(s) every model here has a calibration "
                f"report on ({', '.join(shared)}), so every row counts the same items; left out: "
                f"{', '.join(dropped)} (not every model has them; see each task's own scope)."
            )
            label += f" on {len(shared)} shared task(s)"
        got = []
        for v, report, parts in pairs:
            assert report is not None
            mats = [reps[(v.key, t)] for t in parts if (v.key, t) in reps]
            intervals: dict[str, tuple[float, float]] = {}
            if mats and len(mats) == len(parts):
                values = metrics_from_sums(np.sum(mats, axis=0))
                for k, arr in values.items():
                    finite = arr[np.isfinite(arr)]
                    # a replicate that drew no example with probabilities has no value; a few are fine
                    if report.get(k) is not None and len(finite) >= 0.99 * len(arr):
                        lo, hi = np.percentile(finite, [100 * ALPHA / 2, 100 * (1 - ALPHA / 2)])
                        intervals[k] = (float(lo), float(hi))
            got.append(ScopeRow(v, dict(report), intervals))
        if got:
            rows[scope] = got
            scopes.append((label, scope))

    def with_report(v: Verdict, t: str) -> bool:
        return t in v.tasks and v.tasks[t].calibration is not None

    add(
        OVERALL,
        "All tasks (pooled)",
        [(v, v.calibration.get("overall"), [t for t in tids if with_report(v, t)]) for v in models],
        pooled=True,
    )
    for b in r.blocks:
        add(
            scope_id("block", b),
            f"{block_title(b)} block (pooled)",
            [
                (
                    v,
                    (v.calibration.get("blocks") or {}).get(b),
                    [t for t in tids if task_block[t] == b and with_report(v, t)],
                )
                for v in models
            ],
            pooled=True,
        )
    for t in tids:
        add(
            scope_id("task", t),
            f"Task {t}",
            [(v, v.tasks[t].calibration if t in v.tasks else None, [t]) for v in models],
        )
    seen = {row.model.key for rs in rows.values() for row in rs}
    return BoardCalibration(scopes, rows, [v for v in models if v.key not in seen], B, notes)


def _weighted(reports: Sequence[Mapping[str, Any]], key: str, weight: str) -> float | None:
    pairs = [(r.get(key), int(r.get(weight) or 0)) for r in reports]
    total = sum(w for x, w in pairs if x is not None)
    return sum(float(x) * w for x, w in pairs if x is not None) / total if total else None


def pooled_report(v: Verdict, task_ids: list[str]) -> dict[str, Any] | None:
    """One model's calibration pooled over ``task_ids`` only, from its per-example sums (the same
    ratios of sums as the stored pooled report; accuracy, groups and controls from the tasks'
    reports, weighted by their counts). None when none of those tasks has a report."""
    recs = [v.tasks[t] for t in task_ids if t in v.tasks and v.tasks[t].calibration is not None]
    mats = [m for m in (example_matrix(r) for r in recs) if m is not None]
    if not mats:
        return None
    sums = np.sum([m.sum(axis=0) for m in mats], axis=0)
    values = {k: float(x) for k, x in metrics_from_sums(sums).items()}
    reports = [r.calibration for r in recs if r.calibration is not None]
    groups = [r.get("groups") or {} for r in reports]
    controls = [r.get("controls") or {} for r in reports]
    n_p = round(float(sums[_P]))
    counts = sums[_BINS0 : _BINS0 + ECE_BINS]
    conf = sums[_BINS0 + ECE_BINS : _BINS0 + 2 * ECE_BINS]
    right = sums[_BINS0 + 2 * ECE_BINS :]
    bins = [
        {
            "lower": b / ECE_BINS,
            "upper": (b + 1) / ECE_BINS,
            "count": round(float(counts[b])),
            "mean_confidence": float(conf[b] / counts[b]) if counts[b] else None,
            "accuracy": float(right[b] / counts[b]) if counts[b] else None,
        }
        for b in range(ECE_BINS)
    ]
    n_groups = sum(int(g.get("n_groups") or 0) for g in groups)
    n_controls = sum(int(c.get("n") or 0) for c in controls)
    return {
        "n": sum(int(r.get("n") or 0) for r in reports),
        "n_scored": round(float(sums[_SCORED])),
        "n_with_probs": n_p,
        "n_partial": sum(int(r.get("n_partial") or 0) for r in reports),
        "accuracy": _weighted(reports, "accuracy", "n_scored"),
        **{k: (x if math.isfinite(x) and n_p else None) for k, x in values.items()},
        "reliability": {"ece": values["ece"] if n_p else None, "n": n_p, "bins": bins},
        "groups": {
            "value": _weighted(groups, "value", "n_groups"),
            "n_groups": n_groups,
            "n_consistent": sum(int(g.get("n_consistent") or 0) for g in groups),
            "n_rows": sum(int(g.get("n_rows") or 0) for g in groups),
        },
        "controls": {
            "n": n_controls,
            "valid_choice_rate": _weighted(controls, "valid_choice_rate", "n"),
            "mean_max_probability": _weighted(controls, "mean_max_probability", "n_with_probs"),
            "n_with_probs": sum(int(c.get("n_with_probs") or 0) for c in controls),
        },
    }


# Tables ---------------------------------------------------------------------------------------


def _fmt(kind: str, value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{100 * value:.1f}%" if kind == "rate" else f"{value:.3f}"


def cell(kind: str, value: float | None, iv: tuple[float, float] | None) -> str:
    """``0.712 (0.690–0.733)``: the value and its 95% interval (the value alone without one)."""
    text = _fmt(kind, value)
    if iv is None or value is None or text == "n/a":
        return text
    return f"{text} ({_fmt(kind, iv[0]).rstrip('%')}–{_fmt(kind, iv[1])})"


def _part(report: Mapping[str, Any], key: str, count: str) -> tuple[Mapping[str, Any], int]:
    """A report's ``groups`` or ``controls`` part and its count (an empty part when there is none)."""
    part = report.get(key) or {}
    return part, int(part.get(count) or 0)


def _groups_text(report: Mapping[str, Any]) -> str:
    g, n = _part(report, "groups", "n_groups")
    return f"{_fmt('rate', g.get('value'))} of {n} group(s)" if n else "no groups"


def _controls_text(report: Mapping[str, Any]) -> str:
    c, n = _part(report, "controls", "n")
    if not n:
        return "no controls"
    text = f"{n}: valid {_fmt('rate', c.get('valid_choice_rate'))}"
    if c.get("mean_max_probability") is not None:
        text += f", max p {_fmt('p', c.get('mean_max_probability'))}"
    return text


def scope_table(cal: BoardCalibration, scope: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(shown, csv): one row per model with a report at this scope; text cells with intervals,
    and the CSV with every number and both ends of each interval."""
    shown, csv = [], []
    for row in cal.rows.get(scope, []):
        rep = row.report
        rec: dict[str, Any] = {
            "Model": row.model.name,
            "With probabilities": f"{int(rep.get('n_with_probs') or 0)} of {int(rep.get('n_scored') or 0)}",
            "Accuracy": _fmt("rate", rep.get("accuracy")),
        }
        out: dict[str, Any] = {
            "Model": row.model.name,
            "File": row.model.key,
            "n scored": rep.get("n_scored"),
            "n with probabilities": rep.get("n_with_probs"),
            "n partial": rep.get("n_partial"),
            "accuracy": rep.get("accuracy"),
        }
        for key, label, kind in METRICS:
            iv = row.intervals.get(key)
            rec[label + (" ↓" if key in LOWER_IS_BETTER else "")] = cell(kind, rep.get(key), iv)
            out[key] = rep.get(key)
            out[f"{key} low"], out[f"{key} high"] = iv if iv else (None, None)
        rec["Group consistency"] = _groups_text(rep)
        rec["Controls"] = _controls_text(rep)
        rec["Partial (left out)"] = int(rep.get("n_partial") or 0)
        groups = rep.get("groups") or {}
        controls = rep.get("controls") or {}
        out.update(
            {
                "group consistency": groups.get("value"),
                "groups": groups.get("n_groups"),
                "controls": controls.get("n"),
                "controls valid-choice rate": controls.get("valid_choice_rate"),
                "controls mean max probability": controls.get("mean_max_probability"),
            }
        )
        shown.append(rec)
        csv.append(out)
    return pd.DataFrame(shown), pd.DataFrame(csv)


def model_table(cal: BoardCalibration, key: str) -> pd.DataFrame:
    """One model's calibration at every scope where it has a report (the model page)."""
    out = []
    for label, scope in cal.scopes:
        row = cal.row(scope, key)
        if row is None:
            continue
        rep = row.report
        rec: dict[str, Any] = {
            "Scope": label,
            "With probabilities": f"{int(rep.get('n_with_probs') or 0)} of {int(rep.get('n_scored') or 0)}",
        }
        for k, name, kind in METRICS:
            rec[name + (" ↓" if k in LOWER_IS_BETTER else "")] = cell(kind, rep.get(k), row.intervals.get(k))
        rec["Group consistency"] = _groups_text(rep)
        rec["Controls"] = _controls_text(rep)
        out.append(rec)
    return pd.DataFrame(out)


def reliability_bins(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The stored reliability bins of a report (15 equal-width bins; empty ones included)."""
    rel = report.get("reliability") or {}
    return [dict(b) for b in rel.get("bins") or []]


def scope_choices(cal: BoardCalibration) -> list[tuple[str, str]]:
    return list(cal.scopes)


def model_choices(cal: BoardCalibration, scope: str) -> list[tuple[str, str]]:
    """Models with probabilities at this scope (the reliability diagram's picker)."""
    return [
        (f"{r.model.name} · {r.model.provider}", r.model.key)
        for r in cal.rows.get(scope, [])
        if int(r.report.get("n_with_probs") or 0) > 0
    ]
