"""The stored and derived records of suite scoring: what the runner stored for one item
(:class:`SampleOutput`), what scoring derived for it (:class:`SampleResult`), a task's results
and metrics (:class:`TaskScore`), and the memo of per-sample results (:class:`SampleCache`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from yoxla.extract.extractors import Extracted
from yoxla.extract.parsing import answer_text
from yoxla.score.judge import JudgeRecord

_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class SampleOutput:
    """What the runner stored for one item."""

    output_text: str | None  # the answer (reasoning removed); None when the request failed
    reasoning: str | None = None
    finish_reason: str | None = None
    error: str | None = None  # the generation error after the last retry
    judgements: tuple[JudgeRecord, ...] = ()

    @classmethod
    def from_raw(
        cls,
        raw: str | None,
        finish_reason: str | None = None,
        error: str | None = None,
        judgements: Sequence[JudgeRecord] = (),
    ) -> SampleOutput:
        """From a stored raw output with reasoning inside ``<think>`` (the result file's ``raw``)."""
        reasoning = None
        if raw:
            found = [m.strip() for m in _THINK.findall(raw) if m.strip()]
            reasoning = "\n\n".join(found) or None
        text = None if raw is None else answer_text(raw)
        return cls(text, reasoning, finish_reason, error, tuple(judgements))


@dataclass
class SampleResult:
    """What scoring derived for one sample; treat it as read-only (a memo shares it between files).

    Not ``frozen``: a frozen dataclass sets each of its fields through ``object.__setattr__``,
    which made building it the largest single cost of scoring a sample on the fast path.
    """

    id: str
    extracted: str | None
    valid: bool
    reason: str | None  # why nothing valid was extracted
    near_miss: str | None
    abstained: bool
    number: float | None
    scores: dict[str, float]
    score: float | None
    outcome: str
    grader_error: str | None = None
    extraction_error: str | None = None
    judgements: tuple[JudgeRecord, ...] = ()
    # What extraction gave, kept so that aggregation need not rebuild it (not part of the record).
    source: Extracted | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class TaskScore:
    """A task's per-sample results and metrics."""

    task_id: str
    task_hash: str
    primary: str | None
    higher_is_better: bool
    results: tuple[SampleResult, ...]
    metrics: dict[str, Any]
    problems: tuple[str, ...] = ()  # task-level: a batch grader failed, a declared metric is missing
    control: tuple[bool, ...] = ()  # aligned with results: True for a declared control (not in metrics)

    @property
    def primary_value(self) -> float | None:
        value = self.metrics.get(self.primary) if self.primary else None
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    @property
    def score(self) -> float | None:
        """The primary metric clamped to [0, 1] × 100 (None when lower is better or it is missing)."""
        value = self.primary_value
        if value is None or not self.higher_is_better:
            return None
        return min(1.0, max(0.0, value)) * 100.0

    @property
    def judge_scored(self) -> bool:
        return any(r.judgements for r in self.results)


@dataclass
class SampleCache:
    """Memo of per-sample results, keyed by task definition, items and the stored output."""

    max_entries: int = 1_000_000
    hits: int = 0
    _store: dict[tuple[Any, ...], SampleResult] = field(default_factory=dict, repr=False)

    def get(self, key: tuple[Any, ...]) -> SampleResult | None:
        hit = self._store.get(key)
        if hit is not None:
            self.hits += 1
        return hit

    def put(self, key: tuple[Any, ...], value: SampleResult) -> None:
        if len(self._store) < self.max_entries:
            self._store[key] = value
