"""The one scoring function for a suite task's stored outputs.

The runner's finalisation, ``rescore`` and admission all call :func:`score_suite_task`
(or, for one sample at a time, :class:`TaskScorer`). It is a pure function of the prepared
task and the stored outputs: extraction, built-in graders, Python graders in a worker
process, and judge calls replayed from the stored records (or, in live mode, answered by the
runner's callback and recorded).

Task metrics:

* always: ``n``, ``n_valid``, ``invalid_output_rate``, ``generation_errors``, ``truncated``,
  ``grader_errors``, ``extraction_errors``, ``near_miss`` (strict extraction), ``outcomes``;
  for closed answer spaces (strict choices, ``label_set``) also ``modal_answer_share`` and
  ``modal_answer``;
* each built-in grader's aggregate (see :mod:`yoxla.suites.builtins`);
* each declared metric with ``aggregation: mean`` that samples scored: the mean over the
  samples that have it (a sample whose grader failed has no scores; it is counted in
  ``grader_errors``, not averaged as 0);
* a batch grader's returned metrics;
* ``per_<field>_accuracy`` (primary metric accuracy) or ``per_<field>_score`` (any other)
  for each field in ``metadata.breakdowns``: the mean sample score per value of that row
  field (rows without the field are left out).

Declared in the task's ``metadata`` (the analysis declarations of the built-in editions,
:mod:`yoxla.declarations`, for suites):

* ``control_field`` (with optional ``control_values``, comma-separated; without them any
  truthy value: ``true``, a non-zero number, text other than ``false``/``no``/``yox``/``0``):
  the rows it marks are controls, ambiguous by construction. They are run and their samples
  scored as usual, but every task metric above leaves them out; ``controls`` (their count)
  and ``control_valid_rate`` (the share with a valid extracted answer; None without controls)
  report them.
* ``group_field``: rows sharing its value (not empty) are minimal edits of each other.
  ``group_consistency`` is the share of groups of two or more scored rows (controls left out;
  a group of one row is not a group) in which every sample's outcome is ``correct``;
  ``groups`` is their number (``group_consistency`` None when there is none).

A sample's ``score`` is its value of the task's primary metric (the first declared one) when
that metric is per sample, else of the first declared per-sample metric it has. Its outcome
is ``generation_error``, ``grader_error``, ``truncated``/``invalid`` (nothing valid was
extracted), ``abstained``, ``correct`` (score ≥ 1 on a higher-is-better metric), ``wrong``,
or ``graded`` (no per-sample score, e.g. a batch-graded task).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import compress, repeat
from operator import attrgetter, is_, is_not, itemgetter
from typing import Any

from yoxla.parsing import answer_text
from yoxla.suites import builtins as B
from yoxla.suites import spec as S
from yoxla.suites.extraction import ERROR, Extracted, StrictExtractor
from yoxla.suites.judge import BATCH_SAMPLE_ID, JudgeCallback, JudgeRecord, JudgeSession
from yoxla.suites.loader import SuiteTask
from yoxla.suites.prepare import Item, PreparedTask
from yoxla.suites.templates import lookup
from yoxla.suites.worker import CallResult, WorkerPool

SAMPLE_FUNCTIONS = ("grade",)
BATCH_FUNCTIONS = ("grade_batch",)
MAX_SCORES = 100  # metrics one sample may return
_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_METRIC = re.compile(S.ID_PATTERN)


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


def _finite(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"


def scores_from(value: Any, metric_id: str) -> tuple[dict[str, float], str | None]:
    """A grader's return value as scores, or the reason it is not one."""
    number = _finite(value)
    if number is not None:
        return {metric_id: number}, None
    if isinstance(value, float):
        return {}, f"the grader returned {value!r}, not a finite number"
    if isinstance(value, dict) and isinstance(value.get("scores"), dict):
        scores = value["scores"]
    elif isinstance(value, dict) and "scores" not in value and value:
        scores = value
    else:
        return {}, f'the grader returned {_shown(value)}; expected a number or {{"scores": {{...}}}}'
    if len(scores) > MAX_SCORES:
        return {}, f"the grader returned {len(scores)} scores (at most {MAX_SCORES})"
    out = {}
    for key, val in scores.items():
        if not isinstance(key, str) or not _METRIC.fullmatch(key):
            return {}, f"the grader returned a score named {_shown(key)} (letters, digits, _ . -)"
        num = _finite(val)
        if num is None:
            return {}, f"the grader returned {_shown(val)} for {key}, not a finite number"
        out[key] = num
    return out, None


def _sample_dict(out: SampleOutput, item: Item, ex: Extracted) -> dict[str, Any]:
    """The ``sample`` a Python grader receives."""
    return {
        "id": item.id,
        "output_text": out.output_text,
        "extracted_output": ex.value,
        "reasoning": out.reasoning,
        "finish_reason": out.finish_reason,
        "error": out.error,
        "valid": ex.valid,
        "reason": ex.reason,
    }


def _output_key(out: SampleOutput) -> tuple[Any, ...]:
    return (
        out.output_text,
        out.reasoning,
        out.finish_reason,
        out.error,
        tuple(j.model_dump_json() for j in out.judgements),
    )


class ScoringPlan:
    """What scoring reads of a task, worked out once per task (:attr:`SuiteTask.scoring`).

    The built-in graders are built, the metrics indexed and the analysis declarations
    (breakdowns, group and control fields) read here, so that scoring a task again costs
    only its samples.
    """

    def __init__(self, task: SuiteTask) -> None:
        spec = task.spec
        ex = spec.output_extraction
        strict_range = None
        if isinstance(ex, S.StrictExtraction) and ex.range is not None:
            strict_range = (float(ex.range[0]), float(ex.range[1]))
        extractor = task.extractor
        self.extractor = extractor
        self.strict = extractor if isinstance(extractor, StrictExtractor) else None
        self.closed = extractor.closed
        self.builtins = [
            B.build(g, strict_range, self.closed) for g in task.graders if isinstance(g, S.BuiltinGrader)
        ]
        # the built-in graders with per-sample metrics (macro_f1, a bare spearman only aggregate)
        self.sample_graders = [b for b in self.builtins if type(b).score is not B.Builtin.score]
        self.python = [
            (g, task.grader_code[i]) for i, g in enumerate(task.graders) if isinstance(g, S.PythonGrader)
        ]
        self.metrics = {m.id: m for m in task.metrics}
        self.primary = task.primary
        metric = self.metrics.get(self.primary or "")
        self.higher_is_better = metric.higher_is_better if metric is not None else True
        # The built-in grader that sets each sample's score and verdict (STS closeness), if any.
        self.decider = next((b for b in self.builtins if b.decides), None)
        self.choices = task.choices
        self.breakdowns = tuple((fld, tuple(fld.split("."))) for fld in spec.breakdowns)
        self.breakdown_suffix = "accuracy" if self.primary == "accuracy" else "score"
        self.group_field = spec.group_field
        self.control_field = spec.control_field
        self.control_values = spec.control_values


class TaskScorer:
    """Scores samples of one prepared task: :meth:`score` per sample, :meth:`metrics_of` for the task.

    Thread-safe: runner threads may score samples as they arrive (the worker serializes
    Python grader calls). ``judge``: the runner's live callback; None replays stored records.
    """

    def __init__(
        self,
        prepared: PreparedTask,
        pool: WorkerPool,
        *,
        cache: SampleCache | None = None,
        judge: JudgeCallback | None = None,
    ) -> None:
        self.prepared = prepared
        self.task: SuiteTask = prepared.task
        self.pool = pool
        self.cache = cache if judge is None else None  # live judgements are never served from a memo
        self.judge = judge
        plan = self.plan = self.task.scoring
        self.closed = plan.closed
        self.builtins = plan.builtins
        self.python = plan.python
        self.metrics = plan.metrics
        self.primary = plan.primary
        self.higher_is_better = plan.higher_is_better
        self.decider = plan.decider
        self.strict = plan.strict

    # samples ------------------------------------------------------------------------------------
    def _key(self, item: Item, out: SampleOutput) -> tuple[Any, ...]:
        return (self.task.definition_hash, self.prepared.items_fingerprint, item.index, _output_key(out))

    def score(self, items: Sequence[Item], outputs: Sequence[SampleOutput]) -> list[SampleResult]:
        """Per-sample results, aligned with ``items``."""
        if len(items) != len(outputs):
            raise ValueError(f"{self.task.id}: {len(items)} items but {len(outputs)} outputs")
        results: list[SampleResult | None] = [None] * len(items)
        todo = []
        for k, (item, out) in enumerate(zip(items, outputs, strict=True)):
            hit = self.cache.get(self._key(item, out)) if self.cache is not None else None
            if hit is None:
                todo.append(k)
            else:
                results[k] = hit
        if todo:
            fresh = self._score_fresh([items[k] for k in todo], [outputs[k] for k in todo])
            for k, res in zip(todo, fresh, strict=True):
                results[k] = res
                if self.cache is not None:
                    self.cache.put(self._key(items[k], outputs[k]), res)
        return [r for r in results if r is not None]

    def _extract(self, out: SampleOutput, item: Item) -> Extracted:
        return self._extract_text(None if out.error else out.output_text, item.choices)

    def _extract_text(self, raw: str | None, choices: tuple[str, ...] | None) -> Extracted:
        if choices is not None and self.strict is not None:
            return self.strict.extract_in(raw, choices)  # the item's own answer space
        return self.plan.extractor.extract(raw)

    def _grade(self, item: Item, ex: Extracted) -> tuple[dict[str, float], str | None]:
        """The built-in graders' scores of one sample, or the first one's failure."""
        graders = self.plan.sample_graders
        if len(graders) == 1:  # every built-in grader returns a fresh dict: no copy needed
            try:
                return graders[0].score(item.row, item.target, ex), None
            except B.GraderFailure as exc:
                return {}, f"{graders[0].spec.name}: {exc}"
        scores: dict[str, float] = {}
        for grader in graders:
            try:
                scores.update(grader.score(item.row, item.target, ex))
            except B.GraderFailure as exc:
                return scores, f"{grader.spec.name}: {exc}"
        return scores, None

    def _score_fresh(self, items: Sequence[Item], outputs: Sequence[SampleOutput]) -> list[SampleResult]:
        choices = self.task.choices
        extracted = [self._extract(o, i) for o, i in zip(outputs, items, strict=True)]
        graded = [self._grade(i, e) for i, e in zip(items, extracted, strict=True)]
        scores = [s for s, _ in graded]
        errors = [err for _, err in graded]
        judged = any(spec.contract == "sample" for spec, _ in self.python)  # only Python can ask a judge
        sessions = [
            JudgeSession(i.id, [j for j in o.judgements if j.sample_id != BATCH_SAMPLE_ID], self.judge)
            for i, o in zip(items, outputs, strict=True)
            if judged
        ]
        for spec, code in self.python:
            if spec.contract != "sample":
                continue
            worker = self.pool.get(code.source, code.filename, self.task.base_dir)
            args = [
                [_sample_dict(o, i, e), i.grader_item(choices)]
                for i, o, e in zip(items, outputs, extracted, strict=True)
            ]
            calls = worker.map(SAMPLE_FUNCTIONS, args, spec.timeout_seconds, self._judge_handler(sessions))
            for k, res in enumerate(calls):
                self._merge(k, res, spec.metric_id, scores, errors)
        # The judge calls a sample made (live) or replayed: a stored record nothing asked for is dropped.
        used = [tuple(sess.records) for sess in sessions] if judged else [() for _ in items]
        return [
            self._result(i, o.finish_reason, o.error, e, s, err, rec)
            for i, o, e, s, err, rec in zip(items, outputs, extracted, scores, errors, used, strict=True)
        ]

    @staticmethod
    def _judge_handler(sessions: Sequence[JudgeSession]) -> Any:
        def handle(index: int, request: dict[str, Any]) -> dict[str, Any]:
            return sessions[index].responses_create(request)

        return handle

    @staticmethod
    def _merge(
        k: int, res: CallResult, metric_id: str, scores: list[dict[str, float]], errors: list[str | None]
    ) -> None:
        if errors[k] is not None:
            return
        if not res.ok:
            errors[k] = res.error or "the grader failed"
            return
        got, problem = scores_from(res.value, metric_id)
        if problem is not None:
            errors[k] = problem
        else:
            scores[k].update(got)

    def _sample_score(self, scores: Mapping[str, float]) -> float | None:
        if self.decider is not None:
            return self.decider.sample_score(scores)
        if self.primary is not None and self.primary in scores:
            return scores[self.primary]
        for mid in self.metrics:
            if mid in scores:
                return scores[mid]
        return None

    def _result(
        self,
        item: Item,
        finish_reason: str | None,
        generation_error: str | None,
        ex: Extracted,
        scores: dict[str, float],
        error: str | None,
        judgements: tuple[JudgeRecord, ...],
    ) -> SampleResult:
        if error:
            score = None
        elif self.decider is None and (primary := self.primary) is not None and primary in scores:
            score = scores[primary]  # _sample_score's usual case, without its call
        else:
            score = self._sample_score(scores)
        if generation_error:
            outcome = "generation_error"
        elif error:
            outcome = "grader_error"
        elif not ex.valid:
            outcome = "truncated" if finish_reason == "length" else "invalid"
        elif ex.abstained:
            outcome = "abstained"
        elif score is None:
            outcome = "graded"
        else:
            decided = self.decider.correct(scores) if self.decider is not None else None
            correct = decided if decided is not None else self.higher_is_better and score >= 1.0
            outcome = "correct" if correct else "wrong"
        # positional, in the fields' order (this runs once per sample)
        return SampleResult(
            item.id,
            ex.value,
            ex.valid,
            ex.reason,
            ex.near_miss,
            ex.abstained,
            ex.number,
            {} if error else scores,
            score,
            outcome,
            error,
            ex.error,
            judgements,
            ex,
        )

    def score_text(
        self, item: Item, text: str | None, finish_reason: str | None, error: str | None
    ) -> SampleResult:
        """One sample as :meth:`score_columns` scores it, without a tally: a run's answer as it
        arrives (built-in graders only)."""
        if self.python:
            raise ValueError(f"{self.task.id}: a task with a Python grader is scored by score()")
        ex = self._extract_text(None if error else text, item.choices)
        scores, problem = self._grade(item, ex)
        return self._result(item, finish_reason, error, ex, scores, problem, ())

    # task ---------------------------------------------------------------------------------------
    def score_builtin(
        self, items: Sequence[Item], outputs: Sequence[SampleOutput]
    ) -> tuple[list[SampleResult], tuple[bool, ...], _Tally]:
        """One pass for a task whose graders are all built in (no worker, no judge, no cache).

        Each sample is extracted, graded, given its result and counted into the task's tally
        (controls apart) as it comes; returns the results, the control marks and the tally.
        Extraction is a function of the answer text and the item's answer space alone, so a
        text that recurs in this call (labels, an abstention phrase) is extracted once.
        """
        if self.python:
            raise ValueError(f"{self.task.id}: a task with a Python grader is scored by score()")
        if len(items) != len(outputs):
            raise ValueError(f"{self.task.id}: {len(items)} items but {len(outputs)} outputs")
        return self.score_columns(
            items,
            [o.output_text for o in outputs],
            [o.finish_reason for o in outputs],
            [o.error for o in outputs],
        )

    def score_columns(
        self,
        items: Sequence[Item],
        texts: Sequence[str | None],
        finish_reasons: Sequence[str | None],
        errors: Sequence[str | None],
    ) -> tuple[list[SampleResult], tuple[bool, ...], _Tally]:
        """:meth:`score_builtin` of outputs given as columns aligned with ``items``: the answer
        texts (reasoning removed), finish reasons and generation errors (no judgements: built-in
        graders never read them). Re-scoring stored answers calls it without making a
        :class:`SampleOutput` per sample."""
        if self.python:
            raise ValueError(f"{self.task.id}: a task with a Python grader is scored by score()")
        if not (len(items) == len(texts) == len(finish_reasons) == len(errors)):
            raise ValueError(f"{self.task.id}: {len(items)} items but {len(texts)} outputs")
        plan = self.plan
        tally = _Tally(plan)
        name, values = plan.control_field, plan.control_values
        control = (
            tuple(_marked(lookup(item.row, [name]), values) for item in items)
            if name is not None
            else (False,) * len(items)
        )
        results: list[SampleResult] = []
        seen: dict[tuple[str | None, tuple[str, ...] | None], Extracted] = {}  # at most one per item
        extract, grade, result, add = self._extract_text, self._grade, self._result, tally.add
        graders = plan.sample_graders
        only = graders[0].score if len(graders) == 1 else None  # the usual case: _grade without its call
        for item, text, finish, error in zip(items, texts, finish_reasons, errors, strict=True):
            key = (None if error else text, item.choices)
            ex = seen.get(key)
            if ex is None:
                ex = seen[key] = extract(*key)
            if only is not None:
                try:
                    scores, problem = only(item.row, item.target, ex), None
                except B.GraderFailure as exc:
                    scores, problem = {}, f"{graders[0].spec.name}: {exc}"  # as _grade words it
            else:
                scores, problem = grade(item, ex)
            results.append(result(item, finish, error, ex, scores, problem, ()))
        if len(results) > _BULK and (name is None or not any(control)):
            tally.add_all(items, results)
        else:
            for item, res, marked in zip(items, results, control, strict=True):
                if marked:
                    tally.add_control(res)
                else:
                    add(item, res)
        return results, control, tally

    def metrics_of(
        self,
        tally: _Tally,
        items: Sequence[Item] = (),
        outputs: Sequence[SampleOutput] = (),
        results: Sequence[SampleResult] = (),
    ) -> tuple[dict[str, Any], list[str], tuple[JudgeRecord, ...]]:
        """The task metrics of a tally (a batch grader also gets the samples counted into it)."""
        m = tally.counts(self.closed)
        for grader in self.builtins:
            m.update(grader.aggregate(tally.targets, tally.extracted, tally.scores))
        problems: list[str] = []
        for mid, metric in self.metrics.items():
            if metric.aggregation != "mean" or mid in m:
                continue
            values = [s[mid] for s in tally.scores if mid in s]
            if values:
                m[mid] = B.mean(values)
        batch_records: list[JudgeRecord] = []
        for spec, code in self.python:
            if spec.contract == "batch":
                got, problem, records = self._batch(spec, code.source, code.filename, items, outputs, results)
                batch_records.extend(records)
                if problem:
                    problems.append(problem)
                m.update(got)
        for mid, metric in self.metrics.items():
            if metric.aggregation == "mean" and mid not in m:
                problems.append(f"metric {mid} was not produced by any grader")
        m.update(tally.breakdowns(self.plan.breakdown_suffix))
        return m, problems, tuple(batch_records)

    def _batch(
        self,
        spec: S.PythonGrader,
        source: str,
        filename: str,
        items: Sequence[Item],
        outputs: Sequence[SampleOutput],
        results: Sequence[SampleResult],
    ) -> tuple[dict[str, float], str | None, list[JudgeRecord]]:
        stored = [j for o in outputs for j in o.judgements if j.sample_id == BATCH_SAMPLE_ID]
        session = JudgeSession(BATCH_SAMPLE_ID, stored, self.judge)
        samples = [
            _sample_dict(o, i, _as_extracted(r)) for i, o, r in zip(items, outputs, results, strict=True)
        ]
        grader_items = [i.grader_item(self.task.choices) for i in items]
        worker = self.pool.get(source, filename, self.task.base_dir)
        res = worker.call(
            BATCH_FUNCTIONS,
            [samples, grader_items],
            spec.timeout_seconds,
            lambda _i, request: session.responses_create(request),
        )
        if not res.ok:
            return {}, f"batch grader failed: {res.error}", session.records
        got, problem = scores_from(res.value, spec.metric_id)
        return got, (f"batch grader: {problem}" if problem else None), session.records


def _as_extracted(r: SampleResult) -> Extracted:
    if r.source is not None:
        return r.source
    return Extracted(r.extracted, r.valid, r.reason, r.near_miss, r.abstained, r.number)


_count = itemgetter(1)
_BULK = 16  # samples from which a tally is counted in bulk (below, one at a time costs less)
_OUTCOME, _VALID, _EXTRACTED, _NEAR = (attrgetter(a) for a in ("outcome", "valid", "extracted", "near_miss"))
_REASON, _GRADER_ERROR, _SOURCE = attrgetter("reason"), attrgetter("grader_error"), attrgetter("source")
_SCORES, _SCORE, _TARGET = attrgetter("scores"), attrgetter("score"), attrgetter("target")
_ROW = attrgetter("row")
_NOT_NONE, _IS_NONE = partial(is_not, None), partial(is_, None)
_NOT_CONTROL = frozenset({"", "0", "false", "no", "yox", "none", "null"})


def is_control(task: S.TaskSpec, row: Mapping[str, Any]) -> bool:
    """Is ``row`` a control of ``task`` (``metadata.control_field`` / ``control_values``)?"""
    return control_marks(task, [row])[0]


def control_marks(task: S.TaskSpec, rows: Sequence[Mapping[str, Any]]) -> tuple[bool, ...]:
    """Which of ``rows`` are controls of ``task`` (the declarations read once for all rows)."""
    name = task.control_field
    if name is None:
        return (False,) * len(rows)
    values = task.control_values
    return tuple(_marked(lookup(row, [name]), values) for row in rows)


def _marked(value: Any, values: tuple[str, ...]) -> bool:
    if value is None:
        return False
    if values:
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        return text.strip() in values
    if isinstance(value, str):
        return value.strip().lower() not in _NOT_CONTROL
    return bool(value)


class _Tally:
    """A task's counts, taken one scored sample at a time; controls are counted apart.

    The samples counted (:meth:`add`) are the task metrics' samples: the graded ones (no
    grader error) are kept, aligned, for the built-in graders' aggregates.
    """

    def __init__(self, plan: ScoringPlan) -> None:
        self.n = self.n_valid = self.grader_errors = self.extraction_errors = 0
        # plain dicts, counted with get (three Counters cost more to make than a small task to count)
        self.outcomes: dict[str, int] = {}
        self.near: dict[str, int] = {}
        self.answers: dict[str, int] = {}  # counted for a closed answer space only (its modal answer)
        self._closed = plan.closed
        self.targets: list[str] = []
        self.extracted: list[Extracted] = []
        self.scores: list[dict[str, float]] = []
        # per breakdown field: its name, its path, and the keys and scores of the samples that have both
        self._cells: list[tuple[str, tuple[str, ...], list[Any], list[float]]] = [
            (fld, path, [], []) for fld, path in plan.breakdowns
        ]
        self._group = (plan.group_field,) if plan.group_field is not None else None
        self._groups: dict[str, list[bool]] = {}
        self._controls = None if plan.control_field is None else [0, 0]  # controls, valid ones

    def add(self, item: Item, r: SampleResult) -> None:
        self.n += 1
        outcomes = self.outcomes
        outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
        if r.valid:
            self.n_valid += 1
            if r.extracted is not None and self._closed:
                answers = self.answers
                answers[r.extracted] = answers.get(r.extracted, 0) + 1
        if r.near_miss:
            self.near[r.near_miss] = self.near.get(r.near_miss, 0) + 1
        if r.grader_error is None:
            self.targets.append(item.target)
            self.extracted.append(r.source if r.source is not None else _as_extracted(r))
            self.scores.append(r.scores)
        else:
            self.grader_errors += 1
        if r.reason == ERROR:
            self.extraction_errors += 1
        row = item.row
        plain = type(row) is dict  # a top-level field of a plain row is its get (what lookup gives)
        if r.score is not None and self._cells:
            for _, path, keys, values in self._cells:
                key = row.get(path[0]) if plain and len(path) == 1 else lookup(row, path)
                if key is not None:  # rows without the field are left out
                    keys.append(key)
                    values.append(r.score)
        if self._group is not None:
            value = row.get(self._group[0]) if plain else lookup(row, self._group)
            if value is not None and value != "":
                self._groups.setdefault(str(value), []).append(r.outcome == "correct")

    def add_all(self, items: Sequence[Item], results: Sequence[SampleResult]) -> None:
        """:meth:`add` of every sample in order, into a fresh tally, each count taken in one pass
        in C where the samples allow (plain rows, no groups): the same tally."""
        rows = list(map(_ROW, items))
        if self.n or self._group is not None or set(map(type, rows)) - {dict}:
            for item, r in zip(items, results, strict=True):
                self.add(item, r)
            return
        self.n = len(results)
        self.outcomes = dict(Counter(map(_OUTCOME, results)))
        valid = list(map(_VALID, results))
        self.n_valid = sum(valid)
        if self._closed:  # the valid answers in order: the modal answer is the first counted most
            self.answers = dict(Counter(filter(_NOT_NONE, compress(map(_EXTRACTED, results), valid))))
        self.near = dict(Counter(filter(None, map(_NEAR, results))))
        self.extraction_errors = list(map(_REASON, results)).count(ERROR)
        errors = list(map(_GRADER_ERROR, results))
        sources = list(map(_SOURCE, results))
        if all(map(_IS_NONE, errors)) and all(map(_NOT_NONE, sources)):
            self.targets = list(map(_TARGET, items))
            self.extracted = sources
            self.scores = list(map(_SCORES, results))
        else:
            for item, r, err in zip(items, results, errors, strict=True):
                if err is None:
                    self.targets.append(item.target)
                    self.extracted.append(r.source if r.source is not None else _as_extracted(r))
                    self.scores.append(r.scores)
                else:
                    self.grader_errors += 1
        if not self._cells:
            return
        scores = list(map(_SCORE, results))
        scored = all(map(_NOT_NONE, scores))
        for _, path, keys, values in self._cells:
            found = (
                list(map(dict.get, rows, repeat(path[0])))
                if len(path) == 1
                else [lookup(r, path) for r in rows]
            )
            if scored and all(map(_NOT_NONE, found)):
                keys.extend(found)
                values.extend(scores)
                continue
            for key, score in zip(found, scores, strict=True):
                if key is not None and score is not None:  # rows without the field are left out
                    keys.append(key)
                    values.append(score)

    def add_control(self, r: SampleResult) -> None:
        if self._controls is not None:
            self._controls[0] += 1
            self._controls[1] += r.valid

    def counts(self, closed: bool) -> dict[str, Any]:
        """The metrics every task has (see the module), in the result's order."""
        n, n_valid = self.n, self.n_valid
        m: dict[str, Any] = {
            "n": n,
            "n_valid": n_valid,
            "invalid_output_rate": 1.0 - n_valid / n if n else 0.0,
            "generation_errors": self.outcomes.get("generation_error", 0),
            "truncated": self.outcomes.get("truncated", 0),
            "grader_errors": self.grader_errors,
            "extraction_errors": self.extraction_errors,
            "near_miss": dict(sorted(self.near.items())),
            "outcomes": dict(sorted(self.outcomes.items())),
        }
        if closed:
            answers = self.answers
            total = sum(answers.values())
            m["modal_answer_share"] = max(answers.values()) / total if total else 0.0
            # Counter.most_common(1): the first answer counted of those counted most often
            m["modal_answer"] = max(answers.items(), key=_count)[0] if answers else None
        return m

    def breakdowns(self, suffix: str) -> dict[str, Any]:
        """``per_<field>_<suffix>`` of each breakdown field."""
        return {f"per_{fld}_{suffix}": B.cells(keys, values) for fld, _, keys, values in self._cells}

    def groups(self) -> dict[str, Any]:
        """``group_consistency`` and ``groups`` of the counted samples (see the module)."""
        if self._group is None:
            return {}
        real = [g for g in self._groups.values() if len(g) >= 2]
        return {
            "group_consistency": sum(all(g) for g in real) / len(real) if real else None,
            "groups": len(real),
        }

    def controls(self) -> dict[str, Any]:
        """``controls`` and ``control_valid_rate`` of the control samples (see the module)."""
        if self._controls is None:
            return {}
        count, valid = self._controls
        return {"controls": count, "control_valid_rate": valid / count if count else None}


def score_suite_task(
    prepared: PreparedTask,
    outputs: Sequence[SampleOutput],
    *,
    items: Sequence[Item] | None = None,
    pool: WorkerPool | None = None,
    cache: SampleCache | None = None,
    judge: JudgeCallback | None = None,
) -> TaskScore:
    """Score stored outputs of a task: per-sample results and task metrics.

    ``items`` defaults to all of ``prepared.items`` (give a subset for a partial run);
    ``outputs`` is aligned with it. ``pool`` keeps grader workers alive across calls (one is
    made and closed here when omitted). ``judge`` is the live judge callback; without it
    stored judgements are replayed.

    A task whose graders are all built in takes the fast path (:meth:`TaskScorer.score_builtin`):
    one pass over the samples, no worker process, and no ``cache`` (scoring such a sample
    costs less than keying the memo). Its results equal the general path's.
    """
    its = list(prepared.items if items is None else items)
    own = pool is None
    workers = pool or WorkerPool()
    try:
        scorer = TaskScorer(prepared, workers, cache=cache, judge=judge)
        if not scorer.python:
            results, control, tally = scorer.score_builtin(its, outputs)
            metrics, problems, batch_records = scorer.metrics_of(tally)
            keep = []
        else:
            results = scorer.score(its, outputs)
            control = control_marks(prepared.task.spec, [i.row for i in its])
            keep = [k for k, c in enumerate(control) if not c]  # controls are run, never in the metrics
            tally = _Tally(scorer.plan)
            for k, c in enumerate(control):
                if c:
                    tally.add_control(results[k])
                else:
                    tally.add(its[k], results[k])
            metrics, problems, batch_records = scorer.metrics_of(
                tally, [its[k] for k in keep], [outputs[k] for k in keep], [results[k] for k in keep]
            )
        metrics.update(tally.groups())
        metrics.update(tally.controls())
    finally:
        if own:
            workers.close()
    if batch_records and keep:
        # A batch grader's judgements are kept with the first scored sample, under the batch id.
        first = keep[0]
        results[first] = replace(results[first], judgements=(*results[first].judgements, *batch_records))
    return TaskScore(
        task_id=prepared.task.id,
        task_hash=prepared.task_hash,
        primary=scorer.primary,
        higher_is_better=scorer.higher_is_better,
        results=tuple(results),
        metrics=metrics,
        problems=tuple(problems),
        control=control if any(control) else (),
    )
