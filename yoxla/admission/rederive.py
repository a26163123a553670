"""Checks 4 to 6 (docs/leaderboard.md, docs/suites.md) of a suite result file (``yoxla-result``
3, ``yoxla-suite-result`` 1), after the shared checks of :func:`yoxla.admission.rules.check_document`.

The suite the file names must be committed here (:class:`~yoxla.admission.committed.CommittedSuites`);
nothing of the file is used to score it but its stored answers and judge calls (no path, no
code), re-scored through :func:`yoxla.record.derive.derive_suite_task` (stored judge calls
replayed, never sent). A task with a judge call that has no stored answer is incomplete.
A file of a package benchmark suite (``yoxla-sample``, ``yoxla-v1``) goes on its edition's
board: YOXLA, block and task scores, each task record with its block.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from yoxla.admission.verdict import ADMITTED, NOT_RECHECKED, TaskRecord, Verdict, _differs, _fmt_ids
from yoxla.contract.registry import edition_of
from yoxla.record.base import first_difference
from yoxla.record.derive import derive_suite_task, scores_of
from yoxla.record.result import ResultFile, TaskHashes, TaskResult
from yoxla.safe.text import one_line
from yoxla.score.calibration.metrics import Case
from yoxla.score.calibration.stored import pooled_calibration, suite_cases
from yoxla.score.judge import unanswered_calls

if TYPE_CHECKING:
    from yoxla.admission.committed import CommittedSuite
    from yoxla.admission.gold import DataSource


@dataclass(frozen=True)
class _FrozenTask:
    """A committed task as its frozen hash file states it (its Hub data unreadable here): what
    :func:`_check_task_hashes` compares, in the shape of a prepared task."""

    task: Any  # SuiteTask
    task_hash: str
    fingerprints: dict[str, str]
    commits: dict[str, dict[str, str]]
    items: int | None  # the frozen item count; None: an older hash file records none


def _frozen_tasks(rec: ResultFile, suite: CommittedSuite, v: Verdict) -> dict[str, _FrozenTask]:
    """The committed tasks from the manifest and its frozen hashes (no data read): the file's
    commits are taken as stated (provenance); its fingerprints must be the frozen ones."""
    from yoxla.contract.hashing import read_hash_file

    try:
        frozen = read_hash_file(suite.hash_file)
    except Exception as exc:  # the committed suite's own file: one reason, never a traceback
        v.reasons.append(one_line(f"the frozen hashes of suite {suite.id!r} cannot be read: {exc}", 400))
        return {}
    out: dict[str, _FrozenTask] = {}
    for tid, task in suite.manifest.tasks.items():
        h = frozen.get(tid)
        if h is None or h.definition != task.definition_hash:
            v.reasons.append(
                f"task {tid} of the committed suite {suite.id!r} is not frozen as it is "
                f"(`yoxla suite check {suite.repo_path}` fails)"
            )
            continue
        stored = rec.suite.tasks.get(tid)
        commits = {str(role): dict(c) for role, c in stored.commits.items()} if stored else {}
        out[tid] = _FrozenTask(task, h.hash, dict(h.data), commits, h.items)
    return out


def _check_suite(rec: ResultFile, suite: CommittedSuite, committed: dict[str, Any], v: Verdict) -> None:
    """Check 4: the file's suite, tasks, hashes and conditions against the committed suite
    (``committed``: its prepared tasks, or its frozen ones when the data cannot be read)."""
    from yoxla.contract.hashing import aggregation, analysis_hash, declared_aggregation, suite_hash

    if rec.suite.path != suite.repo_path:
        v.notes.append(
            f"the file names the manifest {one_line(rec.suite.path, 120)}; the committed one is {suite.repo_path}"
        )
    missing = [t for t in committed if t not in rec.tasks]
    if missing:
        v.reasons.append(
            f"incomplete run: task(s) missing: {', '.join(missing)} (partial runs are never shown)"
        )
    extra = [t for t in rec.tasks if t not in committed]
    if extra:
        v.reasons.append(f"task(s) not part of suite {suite.id}: {one_line(', '.join(extra), 200)}")
    for tid in rec.tasks:
        if tid not in committed:
            continue
        stored = rec.suite.tasks.get(tid)
        p = committed[tid]
        if stored is None:
            v.reasons.append(f"task {tid}: the file's suite block has no hashes for it")
        else:
            _check_task_hashes(tid, stored, p, v)
    hashes = {tid: committed[tid].task_hash for tid in rec.tasks if tid in committed}
    if not missing and not extra and rec.suite.suite_hash != suite_hash(hashes, aggregation(suite.manifest)):
        v.reasons.append(f"suite hash {rec.suite.suite_hash[:23]}… differs from the committed suite's")
    declared = declared_aggregation(suite.manifest)
    if rec.suite.model_dump(mode="json", include={"groups", "headline"}, exclude_unset=True) != declared:
        v.reasons.append("the file's groups or headline differ from the committed suite's")
    if rec.suite.analysis_hash != analysis_hash(suite.manifest):
        v.reasons.append(
            "the file was scored with another analysis section (breakdowns, controls, gate, ranking) "
            "than the committed suite's; re-score it with `yoxla rescore`"
        )
    cond = rec.run.conditions
    if cond.limit is not None or cond.tasks is not None or cond.filters:
        v.reasons.append(
            "a partial run (limit, a task or row filter in run.conditions): partial runs are never shown"
        )


def _check_task_hashes(tid: str, stored: TaskHashes, p: Any, v: Verdict) -> None:
    """Every stored hash and fingerprint of a task against the committed task's: one reason
    per difference (the task hash alone would let a forged definition or fingerprint pass)."""
    if stored.hash != p.task_hash:
        v.reasons.append(
            f"task {tid}: task hash differs from the committed suite's; "
            "the file was made with another version of the suite"
        )
    if stored.definition != p.task.definition_hash:
        v.reasons.append(
            f"task {tid}: definition hash differs from the committed task's (templates, extraction, "
            "metrics or graders of another version)"
        )
    committed = p.fingerprints
    for role in sorted(set(stored.data) | set(committed)):
        got, want = stored.data.get(role), committed.get(role)
        if got == want:
            continue
        if got is None:
            v.reasons.append(
                f"task {tid}: no fingerprint is stored for its {role}, which the committed task reads"
            )
        elif want is None:
            v.reasons.append(
                f"task {tid}: a fingerprint is stored for a {role} the committed task does not read"
            )
        else:
            v.reasons.append(
                f"task {tid}: the fingerprint of its {role} differs from the committed task's "
                "(other rows were read)"
            )
    commits = p.commits
    for role, repos in sorted(stored.commits.items()):
        if role not in commits:
            v.reasons.append(
                f"task {tid}: a Hugging Face commit is stored for its {role}, which the committed task "
                "does not read from the Hub"
            )
        elif repos != commits[role]:
            v.notes.append(f"task {tid}: its {role} was read at another Hugging Face commit (same rows)")


def id_problems(
    tid: str, ids: list[str], expected: Sequence[str], noun: str, within: str, order: str
) -> list[str]:
    """Why ``ids`` (none twice) are not exactly ``expected`` in order: ids missing, ids extra, or the order."""
    got, want = set(ids), set(expected)
    out = []
    if want - got:
        missing = _fmt_ids(i for i in expected if i not in got)
        out.append(f"task {tid}: {noun} ids missing from the predictions: {missing}")
    if got - want:
        out.append(f"task {tid}: {noun} ids not in {within}: {_fmt_ids(i for i in ids if i not in want)}")
    return out or [f"task {tid}: predictions are not in {order} order"]


def _check_coverage(tid: str, t: TaskResult, expected: list[str], v: Verdict) -> bool:
    """Check 5: the predictions are the task's items, each once, in item order."""
    ids = [p.id for p in t.predictions]
    if ids == expected and t.rows == len(ids) and t.items == len(expected):
        return True
    if len(set(ids)) != len(ids):
        v.reasons.append(f"task {tid}: item ids predicted more than once")
    elif ids != expected:
        v.reasons.extend(id_problems(tid, ids, expected, "item", "the task", "item"))
    else:
        v.reasons.append(
            f"task {tid}: rows/items say {t.rows}/{t.items} but there are {len(ids)} predictions of {len(expected)} items"
        )
    return False


def _board(rec: ResultFile, suite: CommittedSuite) -> str | None:
    """``non-standard`` when the run's generation settings are not the committed manifest's."""
    for tid, task in suite.manifest.tasks.items():
        gen = task.spec.generation
        want = gen.model_dump(mode="json", exclude_none=True, exclude={"instructions"}) if gen else {}
        got = rec.run.conditions.generation.get(tid)
        have = got.model_dump(mode="json", exclude_none=True, exclude={"instructions"}) if got else {}
        if want != have:
            return "non-standard"
    return None


def task_cases(p: Any, derived: Mapping[str, Any]) -> list[Case]:
    """The calibration cases of an admitted task (``p``: prepared), from its derived predictions."""
    from yoxla.prompt.space import calibration_inputs

    return suite_cases(p.task.id, *calibration_inputs(p.task.spec, p.items), derived["predictions"])


def correlated_values(task: Any, values: Iterable[float | None]) -> np.ndarray | None:
    """The values a task's built-in Spearman grader correlates with the targets, per prediction
    (``values``: each valid answer's number, None for an invalid one, imputed as the grader
    imputes it), for the bootstrap; None: the task has no such grader."""
    from yoxla.score.graders import Spearman

    grader = next((b for b in task.scoring.builtins if isinstance(b, Spearman)), None)
    if grader is None:
        return None
    impute = grader.impute if grader.impute is not None else float("nan")
    return np.array([impute if x is None else float(x) for x in values], dtype=float)


def _numbers(t: TaskResult) -> Iterator[float | None]:
    """Each prediction's number (None when invalid or none can be read)."""
    from yoxla.extract.numbers import parse_number

    for p in t.predictions:
        value = None
        if p.valid and p.extracted is not None:
            value = p.number if p.number is not None else parse_number(p.extracted)
        yield None if value is None else float(value)


def _record(tid: str, t: TaskResult, task: Any, blocks: dict[str, str], gold: Any = None) -> TaskRecord:
    """The board's record of an admitted suite task (``task``: the committed SuiteTask)."""
    return TaskRecord.from_suite(
        tid, t, gold, block=blocks.get(tid, ""), prediction=correlated_values(task, _numbers(t))
    )


def _task_groups(rec: ResultFile, tasks: dict[str, Any]) -> dict[str, str]:
    """Each task's pooling block: its first group in the suite (``""`` without groups)."""
    out = {tid: "" for tid in tasks}
    for g in reversed(rec.suite.groups or []):
        for tid in g.tasks:
            if tid in out:
                out[tid] = g.id
    return out


def check_suite_record(doc: dict[str, Any], rec: ResultFile, v: Verdict, data: DataSource) -> None:
    """Checks 4 to 6 on a suite record whose digest and signature were checked (see the module)."""
    v.source_suite = rec.suite.id
    v.edition = edition_of(rec.suite.id)
    v.suite = rec.suite.id if v.edition is None else None  # a benchmark suite's board is its edition's
    v.conditions = rec.run.conditions
    v.judge = rec.run.judge.model if rec.run.judge else None
    if v.reasons:
        return
    suite, problem = data.suites.get(rec.suite.id)
    if suite is None:
        v.reasons.append(problem or f"suite {rec.suite.id!r} is unknown")
        return
    problem = data.suites.prepare(suite)
    if problem:
        v.reasons.append(problem)
        return
    if suite.unreachable is not None:
        _check_unreachable(doc, rec, suite, v)
        return
    assert suite.prepared is not None
    _check_suite(rec, suite, suite.prepared, v)
    if v.reasons:
        return
    records: dict[str, TaskRecord] = {}
    cases: dict[str, list[Case]] = {}
    partial: dict[str, int] = {}
    blocks = _task_groups(rec, suite.prepared)
    for tid, p in suite.prepared.items():
        t = rec.tasks[tid]
        if not _check_coverage(tid, t, [i.id for i in p.items], v):
            continue
        derived = derive_suite_task(p, doc["tasks"][tid]["predictions"], pool=data.suites.pool)
        diff = first_difference(doc["tasks"][tid], derived, f"tasks.{tid}")
        if diff:
            v.reasons.append(_differs(f"task {tid}", diff))
            continue
        if _unanswered(tid, t, v):
            continue
        gold = [i.target for i in p.items] if t.calibration is not None else None
        records[tid] = _record(tid, t, p.task, blocks, gold)
        if "calibration" in derived:
            cases[tid] = task_cases(p, derived)
            partial[tid] = int(derived["calibration"]["n_partial"])
    if v.reasons:
        return
    scores = _check_totals(doc, rec, v)
    if v.reasons:
        return
    _admit(rec, suite, records, scores, v)
    if cases:  # pooled as the benchmark's blocks are, with the suite's groups for blocks
        v.calibration = pooled_calibration({tid: blocks[tid] for tid in cases}, cases, partial)
    v.rechecked = True


def _check_totals(doc: dict[str, Any], rec: ResultFile, v: Verdict) -> dict[str, Any]:
    """The summary scores and the generation-error count follow from the stored tasks."""
    # The groups and headline are the committed suite's (checked above): scores follow them.
    scores = scores_of(rec.suite, rec.tasks).model_dump(mode="json", exclude_unset=True)
    check_totals(doc, rec, scores, v)
    return scores


def check_totals(doc: dict[str, Any], rec: Any, scores: dict[str, Any], v: Verdict) -> None:
    """The stored summary scores are ``scores`` (derived from the stored tasks) and the stored
    generation-error count is the predictions' (a suite record or a v2 one)."""
    diff = first_difference(doc["scores"], scores, "scores")
    if diff:
        v.reasons.append(_differs("summary scores", diff))
    errors = sum(p.error is not None for t in rec.tasks.values() for p in t.predictions)
    if rec.generation_errors != errors:
        v.reasons.append(
            f"generation_errors is stored as {rec.generation_errors} but the predictions hold {errors}"
        )


def _unanswered(tid: str, t: TaskResult, v: Verdict) -> bool:
    """A task with grader calls that lack a judge's answer is incomplete (a reason; True)."""
    missing = unanswered_calls((p.grader_error for p in t.predictions), t.problems)
    if missing:
        v.reasons.append(
            f"task {tid}: {missing} grader call(s) lack a judge's answer (the judge failed or was not "
            "given); the task is incomplete"
        )
    return bool(missing)


def _check_unreachable(doc: dict[str, Any], rec: ResultFile, suite: CommittedSuite, v: Verdict) -> None:
    """A suite whose Hugging Face data cannot be read here: every check that needs no rows (the
    hashes and fingerprints against the frozen ones, conditions, coverage by count against the
    frozen item counts, totals); an
    admitted file is listed as not re-checked, never ranked (as the benchmark's files are)."""
    committed = _frozen_tasks(rec, suite, v)
    if v.reasons:
        return
    _check_suite(rec, suite, committed, v)
    if v.reasons:
        return
    records: dict[str, TaskRecord] = {}
    blocks = _task_groups(rec, committed)
    for tid, t in rec.tasks.items():
        ids = [p.id for p in t.predictions]
        frozen_items = committed[tid].items
        if len(set(ids)) != len(ids):
            v.reasons.append(f"task {tid}: item ids predicted more than once")
        elif frozen_items is not None and len(ids) != frozen_items:
            v.reasons.append(
                f"task {tid}: {len(ids)} predictions but the frozen suite has {frozen_items} items "
                "(a complete run covers every item)"
            )
        elif t.rows != len(ids) or t.items != len(ids):
            v.reasons.append(
                f"task {tid}: rows/items say {t.rows}/{t.items} but there are {len(ids)} predictions"
            )
        elif not _unanswered(tid, t, v):
            records[tid] = _record(tid, t, committed[tid].task, blocks)
    if v.reasons:
        return
    scores = _check_totals(doc, rec, v)
    if v.reasons:
        return
    v.notes.append(f"{NOT_RECHECKED}: {suite.unreachable}")
    uncounted = [tid for tid in rec.tasks if committed[tid].items is None]
    if uncounted:
        v.notes.append(
            f"coverage not checked against the freeze: the frozen hashes record no item count for "
            f"{one_line(', '.join(uncounted), 200)} (`yoxla suite check {suite.repo_path} --write` records them)"
        )
    _admit(rec, suite, records, scores, v)


def _admit(
    rec: ResultFile, suite: CommittedSuite, records: dict[str, Any], scores: dict[str, Any], v: Verdict
) -> None:
    v.board = _board(rec, suite)
    if v.board == "non-standard":
        v.notes.append("generation settings differ from the committed manifest's: ranked apart")
    if rec.run.conditions.thinking:
        v.notes.append("reasoning was on (thinking): ranked only among thinking runs")
    if v.generation_errors:
        v.notes.append(
            f"{v.generation_errors} generation error(s): they can move a score for reasons outside the model"
        )
    if any(r.judge_scored for r in records.values()):
        v.notes.append(f"judge-scored (judge: {v.judge or 'unknown'}); stored judgements were replayed")
    v.tasks = records
    v.scores = scores
    if v.edition is not None:  # the edition's board: YOXLA, its blocks and the tasks, in its order
        from yoxla.data.editions import load_edition

        order = [tid for tid in load_edition(v.edition).tasks if tid in records]
        tasks = scores.get("tasks") or {}
        v.tasks = {tid: records[tid] for tid in order} | records
        v.scores = {
            "yoxla": scores.get("suite"),
            "blocks": dict(scores.get("groups") or {}),
            "tasks": {tid: tasks[tid] for tid in order if tid in tasks} | dict(tasks),
        }
    v.status = ADMITTED
