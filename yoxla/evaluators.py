"""Evaluators: per-example verdicts and per-task metrics, chosen by the task's evaluator name.

Every function here is deterministic and works on stored raw outputs alone, so a run can
be re-scored at any time and the leaderboard can re-check every number it shows.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from yoxla.parsing import Parsed, parse
from yoxla.spans import ZERO, score_span
from yoxla.suite import Suite, Task

OUTCOMES = ("correct", "wrong", "invalid", "abstained", "truncated", "generation_error")
SPAN_KEYS = (
    ("span_recall", "span_recall"),
    ("span_precision", "span_precision"),
    ("exact_span", "exact_span_rate"),
    ("unsupported", "unsupported_rate"),
    ("over_sentence", "over_sentence_rate"),
    ("token_f1", "token_f1"),
    ("normalized_em", "normalized_em"),
    ("strict_em", "strict_em"),
)
STS_CORRECT_WITHIN = 1.0  # explorer label only: an STS answer within one point counts as "correct"


@dataclass
class ExampleResult:
    id: str
    parsed: Parsed
    outcome: str
    score: float
    metrics: dict[str, float] = field(default_factory=dict)


def gold_value(task: Task, row: dict[str, Any]) -> Any:
    gold = row[task.gold]
    if task.answer.mode == "choice":
        return None if gold is None else str(gold)
    if task.answer.mode == "numeric":
        return float(gold)
    return gold


def score_example(
    task: Task,
    row: dict[str, Any],
    raw: str | None,
    finish_reason: str | None = None,
    error: str | None = None,
) -> ExampleResult:
    """Verdict for one example. A generation error or truncation scores like an invalid output."""
    rid = str(row[task.id_field])
    parsed = parse(task, None if error else raw, row)
    gold = gold_value(task, row)
    ev = task.evaluator
    metrics: dict[str, float]
    if ev == "classification":
        ok = parsed.valid and parsed.value == gold
        metrics, score = {"correct": float(ok)}, float(ok)
        outcome = "correct" if ok else "wrong"
    elif ev == "span":
        span = (
            score_span(row[task.inputs[0]], gold, parsed.value, row.get("answer_start"))
            if parsed.valid
            else ZERO
        )
        metrics = span.as_dict() if parsed.valid else {**ZERO.as_dict(), "unsupported": 0.0}
        score = metrics["span_recall"]
        outcome = "correct" if score >= 1.0 else "wrong"
    elif ev == "abstention":
        answerable = gold is not None
        if not parsed.valid:
            score, outcome = 0.0, "wrong"
            metrics = {"score": 0.0}
        elif parsed.abstained:
            score, outcome = float(not answerable), "abstained"
            metrics = {"score": score}
        elif not answerable:
            score, outcome = 0.0, "wrong"
            metrics = {"score": 0.0}
        else:
            found = score_span(row[task.inputs[0]], gold, parsed.value, row.get("answer_start")).as_dict()
            score = found["span_recall"]
            metrics = {"score": score, **found}
            outcome = "correct" if score >= 1.0 else "wrong"
    elif ev == "correlation":
        lo, hi = task.answer.range or (0.0, 1.0)
        pred = parsed.value if parsed.valid else (lo + hi) / 2
        err = abs(pred - gold)
        metrics = {"prediction": pred, "abs_error": err}
        score = 1.0 - err / (hi - lo)
        outcome = "correct" if err <= STS_CORRECT_WITHIN else "wrong"
    else:  # pragma: no cover - the suite loader rejects unknown evaluators
        raise ValueError(f"unknown evaluator {ev!r}")
    if error:
        outcome = "generation_error"
    elif not parsed.valid:
        outcome = "truncated" if finish_reason == "length" else "invalid"
    return ExampleResult(rid, parsed, outcome, score, metrics)


# Aggregation ----------------------------------------------------------------------------


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else 0.0


def _rank(values: np.ndarray) -> np.ndarray:
    order = values.argsort(kind="mergesort")
    ranks = np.empty(len(values), dtype=float)
    sorted_vals = values[order]
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and sorted_vals[j + 1] == sorted_vals[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson correlation; 0 when it is undefined (fewer than two points or no variance)."""
    if len(x) < 2 or len(set(map(float, x))) < 2 or len(set(map(float, y))) < 2:
        return 0.0
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    a, b = a - a.mean(), b - b.mean()
    denom = math.sqrt(float((a * a).sum()) * float((b * b).sum()))
    if denom == 0.0:
        return 0.0
    return float((a * b).sum() / denom)


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    if len(x) < 2:
        return 0.0
    return pearson(_rank(np.asarray(x, dtype=float)), _rank(np.asarray(y, dtype=float)))


def _grouped(values: list[Any], scores: list[float]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[float]] = {}
    for v, s in zip(values, scores, strict=True):
        groups.setdefault(str(v), []).append(s)
    return {k: {"accuracy": _mean(v), "n": len(v)} for k, v in sorted(groups.items())}


def macro_f1(gold: Sequence[str | None], pred: Sequence[str | None]) -> float:
    """Mean F1 over the classes in ``gold`` and ``pred`` (None is no class); one pass over the pairs."""
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    for g, p in zip(gold, pred, strict=True):
        if g == p:
            if g is not None:
                tp[g] += 1
            continue
        if p is not None:
            fp[p] += 1
        if g is not None:
            fn[g] += 1
    classes = sorted({g for g in gold if g is not None} | {p for p in pred if p is not None})
    if not classes:
        return 0.0
    f1s = []
    for c in classes:
        t, f_p, f_n = tp[c], fp[c], fn[c]
        f1s.append(2 * t / (2 * t + f_p + f_n) if t + f_p + f_n else 0.0)
    return _mean(f1s)


def aggregate(task: Task, rows: list[dict[str, Any]], results: list[ExampleResult]) -> dict[str, Any]:
    """Task metrics from per-example results (same order as rows)."""
    n = len(results)
    valid = [r.parsed.valid for r in results]
    scores = [r.score for r in results]
    near = Counter(r.parsed.near_miss for r in results if not r.parsed.valid and r.parsed.near_miss)
    m: dict[str, Any] = {
        "n": n,
        "n_valid": sum(valid),
        "invalid_output_rate": 1.0 - _mean([float(v) for v in valid]) if n else 0.0,
        "generation_errors": sum(r.outcome == "generation_error" for r in results),
        "truncated": sum(r.outcome == "truncated" for r in results),
        "near_miss": dict(sorted(near.items())),
        "outcomes": dict(sorted(Counter(r.outcome for r in results).items())),
    }
    ev = task.evaluator
    if ev == "classification":
        gold = [gold_value(task, row) for row in rows]
        pred = [r.parsed.value if r.parsed.valid else None for r in results]
        m["accuracy"] = _mean(scores)
        m["macro_f1"] = macro_f1(gold, pred)
        m["per_class_accuracy"] = _grouped(gold, scores)
        answers = Counter(p for p in pred if p is not None)
        m["modal_answer_share"] = max(answers.values()) / sum(answers.values()) if answers else 0.0
        m["modal_answer"] = answers.most_common(1)[0][0] if answers else None
    elif ev == "span":
        for key, name in SPAN_KEYS:
            m[name] = _mean([r.metrics[key] for r in results])
    elif ev == "abstention":
        answerable = [gold_value(task, row) is not None for row in rows]
        m["overall_score"] = _mean(scores)
        m["answerability_accuracy"] = _mean(
            [
                float(r.parsed.valid and r.parsed.abstained != a)
                for r, a in zip(results, answerable, strict=True)
            ]
        )
        m["unanswerable_accuracy"] = _mean(
            [float(r.parsed.abstained) for r, a in zip(results, answerable, strict=True) if not a]
        )
        m["abstention_rate"] = _mean([float(r.parsed.abstained) for r in results])
        ans = [r for r, a in zip(results, answerable, strict=True) if a]
        for key, name in SPAN_KEYS:
            m[name] = _mean([r.metrics.get(key, 0.0) for r in ans])
        m["n_answerable"] = len(ans)
    elif ev == "correlation":
        gold_f = [gold_value(task, row) for row in rows]
        pred_f = [r.metrics["prediction"] for r in results]
        m["spearman"] = spearman(pred_f, gold_f)
        m["pearson"] = pearson(pred_f, gold_f)
        vp = [p for p, v in zip(pred_f, valid, strict=True) if v]
        vg = [g for g, v in zip(gold_f, valid, strict=True) if v]
        m["spearman_valid"] = spearman(vp, vg)
        m["pearson_valid"] = pearson(vp, vg)
        errs = [abs(p - g) for p, g in zip(vp, vg, strict=True)]
        if errs:  # no valid answer: no error to report (0.0 would read as a perfect one)
            m["mae"] = _mean(errs)
            m["rmse"] = math.sqrt(_mean([e * e for e in errs]))
    if task.breakdown:
        suffix = "accuracy" if ev == "classification" else "score"
        m[f"per_{task.breakdown}_{suffix}"] = _grouped([row.get(task.breakdown) for row in rows], scores)
    return m


# Scores ---------------------------------------------------------------------------------


def task_score(task: Task, metrics: dict[str, Any]) -> float:
    """Primary metric clamped to [0, 1], times 100."""
    return min(1.0, max(0.0, float(metrics[task.primary]))) * 100.0


def block_scores(suite: Suite, task_scores: dict[str, float]) -> dict[str, float]:
    """Macro average of task scores within each block that has any task."""
    out: dict[str, float] = {}
    for block in suite.blocks:
        vals = [s for tid, s in task_scores.items() if suite.task(tid).block == block]
        if vals:
            out[block] = _mean(vals)
    return out


def yoxla_score(blocks: dict[str, float]) -> float:
    """Mean of the block scores."""
    return _mean(list(blocks.values()))


def evaluate_task(
    task: Task,
    rows: list[dict[str, Any]],
    raws: list[str | None],
    finish_reasons: list[str | None] | None = None,
    errors: list[str | None] | None = None,
) -> tuple[list[ExampleResult], dict[str, Any], float]:
    """Score a whole task from raw outputs: per-example results, metrics, task score."""
    fr = finish_reasons or [None] * len(rows)
    er = errors or [None] * len(rows)
    results = [score_example(task, r, o, f, e) for r, o, f, e in zip(rows, raws, fr, er, strict=True)]
    metrics = aggregate(task, rows, results)
    return results, metrics, task_score(task, metrics)
