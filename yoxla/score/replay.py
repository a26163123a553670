"""The one scoring function for a suite task's stored outputs.

The runner's finalisation, ``rescore`` and admission all call :func:`score_suite_task`
(or, for one sample at a time, :class:`TaskScorer`). It is a pure function of the prepared
task and the stored outputs: extraction, built-in graders, Python graders in a worker
process, and judge calls replayed from the stored records (or, in live mode, answered by the
runner's callback and recorded). The task metrics, a sample's score and outcome, groups and
controls are specified in docs/suites.md ("Metrics", "Groups, controls and a ranking order").
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from yoxla.contract import spec as S
from yoxla.extract.extractors import Extracted, StrictExtractor
from yoxla.score import graders as B
from yoxla.score.judge import BATCH_SAMPLE_ID, JudgeCallback, JudgeRecord, JudgeSession
from yoxla.score.samples import SampleCache, SampleOutput, SampleResult, TaskScore
from yoxla.score.tally import BULK, Tally, as_extracted, control_marks
from yoxla.score.worker import CallResult, WorkerPool

if TYPE_CHECKING:
    from yoxla.contract.loader import SuiteTask
    from yoxla.prompt.prepare import Item, PreparedTask

SAMPLE_FUNCTIONS = ("grade",)
BATCH_FUNCTIONS = ("grade_batch",)
MAX_SCORES = 100  # metrics one sample may return
_METRIC = re.compile(S.ID_PATTERN)


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

    The built-in graders are built, the metrics indexed and the task's analysis
    (breakdowns, groups and controls) read here, so that scoring a task again costs
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
        self.group_ids = spec.group_ids
        self.has_controls = spec.has_controls


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
        self.plan = self.task.scoring

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
        if choices is not None and self.plan.strict is not None:
            return self.plan.strict.extract_in(raw, choices)  # the item's own answer space
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
        judged = any(spec.contract == "sample" for spec, _ in self.plan.python)  # only Python can ask a judge
        sessions = [
            JudgeSession(i.id, [j for j in o.judgements if j.sample_id != BATCH_SAMPLE_ID], self.judge)
            for i, o in zip(items, outputs, strict=True)
            if judged
        ]
        for spec, code in self.plan.python:
            if spec.contract != "sample":
                continue
            worker = self.pool.get(code.source, code.filename, self.task.base_dir)
            args = [
                [_sample_dict(o, i, e), i.grader_item(choices)]
                for i, o, e in zip(items, outputs, extracted, strict=True)
            ]
            calls = worker.map(
                SAMPLE_FUNCTIONS,
                args,
                spec.timeout_seconds,
                lambda i, request: sessions[i].responses_create(request),
            )
            for k, res in enumerate(calls):
                self._merge(k, res, spec.metric_id, scores, errors)
        # The judge calls a sample made (live) or replayed: a stored record nothing asked for is dropped.
        used = [tuple(sess.records) for sess in sessions] if judged else [() for _ in items]
        return [
            self._result(i, o.finish_reason, o.error, e, s, err, rec)
            for i, o, e, s, err, rec in zip(items, outputs, extracted, scores, errors, used, strict=True)
        ]

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
        if self.plan.decider is not None:
            return self.plan.decider.sample_score(scores)
        if self.plan.primary is not None and self.plan.primary in scores:
            return scores[self.plan.primary]
        for mid in self.plan.metrics:
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
        decider = self.plan.decider
        if error:
            score = None
        elif decider is None and (primary := self.plan.primary) is not None and primary in scores:
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
            decided = decider.correct(scores) if decider is not None else None
            correct = decided if decided is not None else self.plan.higher_is_better and score >= 1.0
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
        if self.plan.python:
            raise ValueError(f"{self.task.id}: a task with a Python grader is scored by score()")
        ex = self._extract_text(None if error else text, item.choices)
        scores, problem = self._grade(item, ex)
        return self._result(item, finish_reason, error, ex, scores, problem, ())

    # task ---------------------------------------------------------------------------------------
    def score_columns(
        self,
        items: Sequence[Item],
        texts: Sequence[str | None],
        finish_reasons: Sequence[str | None],
        errors: Sequence[str | None],
    ) -> tuple[list[SampleResult], tuple[bool, ...], Tally]:
        """One pass for a task whose graders are all built in (no worker, no judge, no cache),
        its outputs given as columns aligned with ``items``: the answer texts (reasoning
        removed), finish reasons and generation errors. Each sample is extracted (a text that
        recurs is extracted once), graded and counted into the tally (controls apart); returns
        the results, the control marks and the tally."""
        if self.plan.python:
            raise ValueError(f"{self.task.id}: a task with a Python grader is scored by score()")
        if not (len(items) == len(texts) == len(finish_reasons) == len(errors)):
            raise ValueError(f"{self.task.id}: {len(items)} items but {len(texts)} outputs")
        plan = self.plan
        tally = Tally(plan)
        control = control_marks(self.task.spec, [item.row for item in items])
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
        if len(results) > BULK and not any(control):
            tally.add_all(items, results)
        else:
            for item, res, is_ctl in zip(items, results, control, strict=True):
                if is_ctl:
                    tally.add_control(res)
                else:
                    add(item, res)
        return results, control, tally

    def metrics_of(
        self,
        tally: Tally,
        items: Sequence[Item] = (),
        outputs: Sequence[SampleOutput] = (),
        results: Sequence[SampleResult] = (),
    ) -> tuple[dict[str, Any], list[str], tuple[JudgeRecord, ...]]:
        """The task metrics of a tally (a batch grader also gets the samples counted into it)."""
        m = tally.counts(self.plan.closed)
        for grader in self.plan.builtins:
            m.update(grader.aggregate(tally.targets, tally.extracted, tally.scores))
        problems: list[str] = []
        for mid, metric in self.plan.metrics.items():
            if metric.aggregation != "mean" or mid in m:
                continue
            values = [s[mid] for s in tally.scores if mid in s]
            if values:
                m[mid] = B.mean(values)
        batch_records: list[JudgeRecord] = []
        for spec, code in self.plan.python:
            if spec.contract == "batch":
                got, problem, records = self._batch(spec, code.source, code.filename, items, outputs, results)
                batch_records.extend(records)
                if problem:
                    problems.append(problem)
                m.update(got)
        for mid, metric in self.plan.metrics.items():
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
            _sample_dict(o, i, as_extracted(r)) for i, o, r in zip(items, outputs, results, strict=True)
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

    A task whose graders are all built in takes the fast path (:func:`score_builtin_task`):
    one pass over the samples, no worker process, and no ``cache`` (scoring such a sample
    costs less than keying the memo). Its results equal the general path's.
    """
    its = list(prepared.items if items is None else items)
    if not prepared.task.scoring.python:
        return score_builtin_task(
            prepared,
            its,
            [o.output_text for o in outputs],
            [o.finish_reason for o in outputs],
            [o.error for o in outputs],
        )
    own = pool is None
    workers = pool or WorkerPool()
    try:
        scorer = TaskScorer(prepared, workers, cache=cache, judge=judge)
        results = scorer.score(its, outputs)
        control = control_marks(prepared.task.spec, [i.row for i in its])
        keep = [k for k, c in enumerate(control) if not c]  # controls are run, never in the metrics
        tally = Tally(scorer.plan)
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
    return _task_score(prepared, scorer, results, metrics, problems, control)


def score_builtin_task(
    prepared: PreparedTask,
    items: Sequence[Item],
    texts: Sequence[str | None],
    finish_reasons: Sequence[str | None],
    errors: Sequence[str | None],
) -> TaskScore:
    """:func:`score_suite_task` of a task whose graders are all built in, its stored outputs
    given as columns aligned with ``items`` (see :meth:`TaskScorer.score_columns`): re-scoring
    stored answers makes no :class:`SampleOutput` per answer, and no worker pool."""
    scorer = TaskScorer(prepared, WorkerPool())  # built-in graders start no worker: nothing to close
    results, control, tally = scorer.score_columns(items, texts, finish_reasons, errors)
    metrics, problems, _ = scorer.metrics_of(tally)
    metrics.update(tally.groups())
    metrics.update(tally.controls())
    return _task_score(prepared, scorer, results, metrics, problems, control)


def _task_score(
    prepared: PreparedTask,
    scorer: TaskScorer,
    results: Sequence[SampleResult],
    metrics: dict[str, Any],
    problems: Sequence[str],
    control: Sequence[bool],
) -> TaskScore:
    return TaskScore(
        task_id=prepared.task.id,
        task_hash=prepared.task_hash,
        primary=scorer.plan.primary,
        higher_is_better=scorer.plan.higher_is_better,
        results=tuple(results),
        metrics=metrics,
        problems=tuple(problems),
        control=tuple(control) if any(control) else (),
    )
