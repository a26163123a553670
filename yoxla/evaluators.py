"""The former built-in scorer, kept only as the "before" of ``bench/bench_scoring.py``.

Nothing in the package scores through it: runs, re-scoring and admission all score on the
suite path (:func:`yoxla.rescoring.rescore_task`; one answer: :func:`yoxla.suites.benchmark_example.score_answer`).
:func:`evaluate_task` is the old per-example verdicts and task metrics, which the benchmark
times the suite path against; the statistics it shares live in :mod:`yoxla.stats`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from yoxla.gold import gold_value
from yoxla.parsing import Parsed, parse
from yoxla.rescoring import task_score
from yoxla.spans import ZERO, score_span
from yoxla.stats import macro_f1, mean, pearson, spearman
from yoxla.suite import Task
from yoxla.suites.benchmark import strict_rule
from yoxla.suites.builtins import SPAN_KEYS, cells

Answers = Sequence[str | None]
# An STS answer within this many points of the gold is "correct" (the sts_v1 grader's correct_within).
STS_CORRECT_WITHIN = 1.0


@dataclass
class _Example:
    id: str
    parsed: Parsed
    outcome: str
    score: float
    metrics: dict[str, float] = field(default_factory=dict)


def _score_example(
    task: Task, row: dict[str, Any], raw: str | None, fin: str | None, error: str | None
) -> _Example:
    """Verdict for one example. A generation error or truncation scores like an invalid output."""
    rid = str(row[task.id_field])
    parsed = parse(strict_rule(task.id), None if error else raw, task.answer.values_for(row))
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
        outcome = "truncated" if fin == "length" else "invalid"
    return _Example(rid, parsed, outcome, score, metrics)


def _aggregate(task: Task, rows: list[dict[str, Any]], results: list[_Example]) -> dict[str, Any]:
    """Task metrics from per-example results (same order as rows)."""
    n = len(results)
    valid = [r.parsed.valid for r in results]
    scores = [r.score for r in results]
    near = Counter(r.parsed.near_miss for r in results if not r.parsed.valid and r.parsed.near_miss)
    m: dict[str, Any] = {
        "n": n,
        "n_valid": sum(valid),
        "invalid_output_rate": 1.0 - mean([float(v) for v in valid]) if n else 0.0,
        "generation_errors": sum(r.outcome == "generation_error" for r in results),
        "truncated": sum(r.outcome == "truncated" for r in results),
        "near_miss": dict(sorted(near.items())),
        "outcomes": dict(sorted(Counter(r.outcome for r in results).items())),
    }
    ev = task.evaluator
    if ev == "classification":
        gold = [gold_value(task, row) for row in rows]
        pred = [r.parsed.value if r.parsed.valid else None for r in results]
        m["accuracy"] = mean(scores)
        m["macro_f1"] = macro_f1(gold, pred)
        m["per_class_accuracy"] = cells(gold, scores)
        answers = Counter(p for p in pred if p is not None)
        m["modal_answer_share"] = max(answers.values()) / sum(answers.values()) if answers else 0.0
        m["modal_answer"] = answers.most_common(1)[0][0] if answers else None
    elif ev == "span":
        for key, name in SPAN_KEYS:
            m[name] = mean([r.metrics[key] for r in results])
    elif ev == "abstention":
        answerable = [gold_value(task, row) is not None for row in rows]
        m["overall_score"] = mean(scores)
        m["answerability_accuracy"] = mean(
            [
                float(r.parsed.valid and r.parsed.abstained != a)
                for r, a in zip(results, answerable, strict=True)
            ]
        )
        m["unanswerable_accuracy"] = mean(
            [float(r.parsed.abstained) for r, a in zip(results, answerable, strict=True) if not a]
        )
        m["abstention_rate"] = mean([float(r.parsed.abstained) for r in results])
        ans = [r for r, a in zip(results, answerable, strict=True) if a]
        for key, name in SPAN_KEYS:
            m[name] = mean([r.metrics.get(key, 0.0) for r in ans])
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
            m["mae"] = mean(errs)
            m["rmse"] = math.sqrt(mean([e * e for e in errs]))
    if task.breakdown:
        suffix = "accuracy" if ev == "classification" else "score"
        m[f"per_{task.breakdown}_{suffix}"] = cells([row.get(task.breakdown) for row in rows], scores)
    return m


def evaluate_task(
    task: Task,
    rows: list[dict[str, Any]],
    raws: Answers,
    fins: Answers | None = None,
    errs: Answers | None = None,
) -> tuple[list[_Example], dict[str, Any], float]:
    """Score a whole task from raw outputs (finish reasons, errors): per-example results, metrics, score."""
    fr, er = fins or [None] * len(rows), errs or [None] * len(rows)
    results = [_score_example(task, r, o, f, e) for r, o, f, e in zip(rows, raws, fr, er, strict=True)]
    metrics = _aggregate(task, rows, results)
    return results, metrics, task_score(task, metrics)
