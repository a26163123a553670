"""How every view writes numbers, metrics and task names: plain text, no Gradio.

Scores are 0-100; a score with its interval reads ``72.5 ±2.1`` (half the width of the 95%
bootstrap interval; the CSV downloads have both ends); an absent number reads ``n/a``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from yoxla.admission.verdict import Verdict
from yoxla.board.prepared import EditionData

NA = "n/a"


TASK_SHORT = {
    "extractive_qa_v1": "Extractive QA",
    "qa_abstention_v1": "QA + abstain",
    "nli_v1": "NLI",
    "sts_v1": "STS",
    "sentiment_v1": "Sentiment",
    "intent_v1": "Intent",
    "minimal_pairs_v1": "Minimal pairs",
    "az_tr_interference_v1": "AZ/TR words",
    "knowledge_choice_v1": "Facts",
    "rag_verification_v1": "RAG verify",
    "rag_selection_v1": "RAG select",
}


# Every scalar metric the evaluators compute: (key, label, kind). kind: rate (0-1, shown in %),
# corr (a correlation), count, error (STS mean errors on the 0-5 scale), label (text).
METRICS: tuple[tuple[str, str, str], ...] = (
    ("accuracy", "accuracy", "rate"),
    ("macro_f1", "macro-F1", "rate"),
    ("modal_answer_share", "modal answer share", "rate"),
    ("modal_answer", "modal answer", "label"),
    ("overall_score", "overall score", "rate"),
    ("answerability_accuracy", "answerability accuracy", "rate"),
    ("unanswerable_accuracy", "unanswerable accuracy", "rate"),
    ("abstention_rate", "abstention rate", "rate"),
    ("span_recall", "span recall", "rate"),
    ("span_precision", "span precision", "rate"),
    ("exact_span_rate", "exact-span rate", "rate"),
    ("unsupported_rate", "unsupported rate", "rate"),
    ("over_sentence_rate", "over-sentence rate", "rate"),
    ("token_f1", "token F1", "rate"),
    ("normalized_em", "normalised EM", "rate"),
    ("strict_em", "strict EM", "rate"),
    ("spearman", "Spearman", "corr"),
    ("pearson", "Pearson", "corr"),
    ("spearman_valid", "Spearman (valid only)", "corr"),
    ("pearson_valid", "Pearson (valid only)", "corr"),
    ("mae", "MAE (valid only)", "error"),
    ("rmse", "RMSE (valid only)", "error"),
    ("invalid_output_rate", "invalid-output rate", "rate"),
    ("n", "items", "count"),
    ("n_valid", "valid answers", "count"),
    ("n_answerable", "answerable items", "count"),
    ("generation_errors", "generation errors", "count"),
    ("truncated", "truncated answers", "count"),
)


SPAN_METRICS = (
    "span_recall",
    "span_precision",
    "exact_span_rate",
    "unsupported_rate",
    "over_sentence_rate",
    "token_f1",
    "normalized_em",
    "strict_em",
)


EVALUATOR_METRICS = {
    "classification": ("accuracy", "macro_f1", "modal_answer_share", "modal_answer"),
    "span": SPAN_METRICS,
    "abstention": (
        "overall_score",
        "answerability_accuracy",
        "unanswerable_accuracy",
        "abstention_rate",
        *SPAN_METRICS,
        "n_answerable",
    ),
    "correlation": ("spearman", "pearson", "spearman_valid", "pearson_valid", "mae", "rmse"),
}


COMMON_METRICS = ("invalid_output_rate", "n", "n_valid", "generation_errors", "truncated")


METRIC_LABEL = {k: label for k, label, _ in METRICS}


METRIC_KIND = {k: kind for k, _, kind in METRICS}


def task_short(task_id: str) -> str:
    return TASK_SHORT.get(task_id, task_id)


# How a benchmark task is scored, by its package suite's first grader.
GRADER_KINDS = {
    "accuracy": "classification",
    "span": "span",
    "abstention": "abstention",
    "spearman": "correlation",
}


def task_kind(task_id: str) -> str | None:
    """How the benchmark task of this id is scored: ``classification``, ``span``,
    ``abstention`` or ``correlation`` (its package suite's first grader); None for a task the
    benchmark does not have (a suite's)."""
    from yoxla.contract.benchmark import benchmark_task

    try:
        graders = benchmark_task(task_id).spec.graders
    except KeyError:
        return None
    return GRADER_KINDS.get(getattr(graders[0], "name", "")) if graders else None


def metric_keys(task_id: str, models: Iterable[Verdict] = ()) -> list[str]:
    """The scalar metrics of a task: its evaluator's for the benchmark, every number a suite task
    stores (in the order of the first file that has it) otherwise."""
    kind = task_kind(task_id)
    if kind is not None:
        return [*EVALUATOR_METRICS[kind], *COMMON_METRICS]
    keys: dict[str, None] = {}
    for v in models:
        rec = v.tasks.get(task_id)
        for k, value in (rec.metrics if rec is not None else {}).items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                keys.setdefault(k, None)
    return list(keys)


def metric_label(key: str) -> str:
    return METRIC_LABEL.get(key, key.replace("_", " "))


def task_label(ed: EditionData, task_id: str) -> str:
    """A task's column header: its short name (a task without one: its id), marked when
    judge-scored or when lower is better (then the column holds the raw metric, not a 0-100 score)."""
    marks = []
    if task_id in ed.suite.judge_scored_tasks:
        marks.append("judge-scored")
    if lower_is_better(ed, task_id):
        marks.append("raw, lower is better")
    return task_short(task_id) + (f" ({', '.join(marks)})" if marks else "")


def primary_name(ed: EditionData, task_id: str) -> str:
    """A task's primary metric's name, as its suite definition gives it."""
    return ed.suite.primary.get(task_id, "score")


def lower_is_better(ed: EditionData, task_id: str) -> bool:
    """A task whose primary metric is lower-is-better (as its files record it): it has no 0-100 score."""
    first = next((v.tasks[task_id] for g in ed.boards.values() for v in g.models if task_id in v.tasks), None)
    return first is not None and not first.higher_is_better


def judge_text(v: Verdict, task_id: str | None = None) -> str:
    """The judge model beside a judge-scored score: the run's judge, and the ids it reported."""
    recs = [v.tasks[task_id]] if task_id is not None and task_id in v.tasks else list(v.tasks.values())
    if not any(r.judge_scored for r in recs):
        return ""
    reported = sorted({m for r in recs for m in r.judge_models})
    text = bounded(v.judge or "unknown")
    if reported and reported != [v.judge]:
        shown = ", ".join(bounded(m) for m in reported[:3])
        more = f" and {len(reported) - 3} more" if len(reported) > 3 else ""
        text += f" (reported as {shown}{more})"
    return text


def bounded(text: str, limit: int = 80) -> str:
    """A name from a file on one line, at most ``limit`` characters."""
    one = " ".join(str(text).split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def raw_text(value: float) -> str:
    return NA if value is None or not np.isfinite(value) else f"{value:.4g}"


def metric_text(key: str, value: Any) -> str:
    """A metric as shown: rates in %, correlations and errors with three decimals, absent as n/a."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NA
    kind = METRIC_KIND.get(key) or (
        "count" if isinstance(value, int) and not isinstance(value, bool) else "corr"
    )
    if kind == "label":
        return str(value)
    if kind == "count":
        return str(int(value))
    if kind == "rate":
        return f"{100 * float(value):.1f}%"
    return f"{float(value):.3f}"


def num_text(x: float, nd: int = 1) -> str:
    return NA if x is None or not np.isfinite(x) else f"{x:.{nd}f}"


def pm(score: float, lo: float, hi: float) -> str:
    """``72.5 ±2.1``: the score and half the width of its interval."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return num_text(score)
    return f"{score:.1f} ±{(hi - lo) / 2:.1f}"


def interval_text(lo: float, hi: float) -> str:
    return f"{lo:.1f}–{hi:.1f}"


def tokens_text(value: Any) -> str:
    return "" if value is None or pd.isna(value) else f"{int(value):,}"
