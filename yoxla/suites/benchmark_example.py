"""One example of a benchmark task on the suite path: its verdict and its per-example metrics.

:func:`score_answer` scores one stored answer exactly as the replay scores it (it *is* the
replay, :func:`yoxla.rescoring.rescore_task`, over that one row), so what a run shows in a
``predictions.jsonl`` line as each answer arrives is what its result file will hold.
:func:`example_metrics` names a verdict's per-sample scores as a benchmark prediction line
shows them (``correct``; a span's ``exact_span``, ``unsupported``…; the abstention ``score``;
an STS ``prediction`` and ``abs_error``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from yoxla.rescoring import rescore_task
from yoxla.suite import Task
from yoxla.suites.builtins import SPAN_KEYS
from yoxla.suites.scoring import SampleResult

_SPAN_NAMES = {name: key for key, name in SPAN_KEYS}
# Per evaluator: the suite graders' per-sample metric -> its name in a benchmark prediction line.
_LINE_NAMES: dict[str, dict[str, str]] = {
    "classification": {"accuracy": "correct"},
    "span": _SPAN_NAMES,
    "abstention": {"overall_score": "score", **_SPAN_NAMES},
    "correlation": {"abs_error": "abs_error"},
}


def score_answer(
    task: Task,
    row: Mapping[str, Any],
    raw: str | None,
    finish_reason: str | None = None,
    error: str | None = None,
) -> SampleResult:
    """The verdict on one stored answer to ``row`` (a generation error or truncation scores as invalid)."""
    return rescore_task(task, [row], [raw], [finish_reason], [error]).results[0]


def example_metrics(task: Task, res: SampleResult) -> dict[str, float]:
    """The verdict's per-sample scores under the names a benchmark prediction line gives them.

    STS adds the ``prediction`` its closeness was measured from: the valid answer, else the
    answer range's midpoint (what the correlation imputes).
    """
    names = _LINE_NAMES[task.evaluator]
    out: dict[str, float] = {}
    if task.evaluator == "correlation":
        lo, hi = task.answer.range or (0.0, 1.0)
        out["prediction"] = float(res.number) if res.valid and res.number is not None else (lo + hi) / 2
    out.update((names[k], v) for k, v in res.scores.items() if k in names)
    return out
