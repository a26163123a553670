"""Validation of benchmark rows before any model is called.

The rules come from the benchmark's package suite (``yoxla/editions/yoxla-<edition>.yaml``,
read by task id through :mod:`yoxla.suites.benchmark`): the columns a task's templates,
graders, answer space and breakdown read (:func:`read_columns`), plus the descriptive columns
its published rows carry (:data:`DESCRIPTIVE_COLUMNS`); the gold checked by its graders' own
row checks (:mod:`yoxla.suites.rowchecks`, in their strict form: a gold span occurs exactly
once in its passage).

Errors refuse a run; each names the row id and the rule it breaks. Warnings (a fingerprint
that differs from the manifest, a broken distribution invariant) are reported but do not
refuse: they mean results are not comparable with published runs.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from yoxla.editions import Edition, ManifestEntry, fingerprint, load_rows
from yoxla.record_v2 import LEGACY_BREAKDOWNS
from yoxla.suites.benchmark import benchmark_task, gold_field, strict_rule, task_ids
from yoxla.suites.errors import SuiteError
from yoxla.suites.loader import SuiteTask
from yoxla.suites.rowchecks import declared_checks, first_problem
from yoxla.suites.space import item_space
from yoxla.suites.spec_grading import BuiltinGrader
from yoxla.suites.templates import Numbered, TemplateError, lookup

ID_FIELD = "id"  # the row field a suite item's id is read from (yoxla.suites.prepare)

# Columns of the published rows that no field of the package suite's task reads (they describe
# a row: its source, its bucket, the words of a pair): required all the same, so that a damaged
# copy of an edition is refused before a run, not published.
DESCRIPTIVE_COLUMNS: dict[str, tuple[str, ...]] = {
    "extractive_qa_v1": ("title", "source_id"),
    "qa_abstention_v1": ("title", "source_id"),
    "nli_v1": ("source_id",),
    "sts_v1": ("scaled_score", "source_id"),
    "sentiment_v1": ("source_id",),
    "intent_v1": ("source_id",),
    "minimal_pairs_v1": ("target_correct", "target_corrupted", "source_id"),
    "az_tr_interference_v1": ("azerbaijani_word", "turkish_word", "az_count", "tr_count"),
    "knowledge_choice_v1": ("answer", "subject", "subject_qid", "sitelinks", "source_id"),
    "rag_verification_v1": ("subject", "subject_qid", "source_id"),
    "rag_selection_v1": ("answer", "subject", "subject_qid"),
}


@dataclass(frozen=True)
class Problem:
    task: str
    row: str | None
    rule: str
    message: str

    def __str__(self) -> str:
        where = f"{self.task} row {self.row}" if self.row is not None else self.task
        return f"{where}: [{self.rule}] {self.message}"


@dataclass
class TaskReport:
    task: str
    rows: int
    expected_rows: int
    fingerprint: str
    expected_fingerprint: str
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    @property
    def fingerprint_ok(self) -> bool:
        return self.fingerprint == self.expected_fingerprint

    @property
    def ok(self) -> bool:
        return not self.errors


def _task(task_id: str) -> SuiteTask:
    try:
        return benchmark_task(task_id)
    except KeyError:
        raise SuiteError(f"unknown task {task_id!r}; known tasks: {', '.join(sorted(task_ids()))}") from None


def breakdown_field(task_id: str) -> str | None:
    """The row field a benchmark task's scores are broken down by in its result record (its A/B
    balance is checked within each value), else its package suite's first breakdown."""
    declared = benchmark_task(task_id).spec.breakdowns
    return LEGACY_BREAKDOWNS.get(task_id) or (declared[0] if declared else None)


def list_inputs(task: SuiteTask) -> tuple[str, ...]:
    """Row fields read as lists: the prompt's ``| numbered`` fields and the answer space's options."""
    names = [".".join(p.path) for p in task.prompt.parts if isinstance(p, Numbered)]
    space = task.spec.answer_space
    if space is not None and space.options_field:
        names.append(space.options_field)
    return tuple(dict.fromkeys(names))


def read_columns(task_id: str) -> tuple[str, ...]:
    """The row fields the package suite's task reads: the item id, its prompt and target templates'
    fields, its answer space's options, its graders' passage and (a span grader's) answer start,
    its breakdowns. (An abstention grader reads its answer start only where a row has one.)"""
    task = _task(task_id)
    cols = [ID_FIELD, *(".".join(p) for p in task.prompt.fields), *(".".join(p) for p in task.target.fields)]
    cols += list_inputs(task)
    for g in task.graders:
        if isinstance(g, BuiltinGrader):
            cols += [g.passage_field or ""]
            if g.name == "span":  # an abstention item without an answer has no start
                cols += [g.answer_start_field or ""]
    cols = [c for c in cols if c]
    breakdown = breakdown_field(task_id)
    cols += [*([breakdown] if breakdown else []), *task.spec.breakdowns]
    return tuple(dict.fromkeys(cols))


def required_columns(task_id: str) -> tuple[str, ...]:
    """Every column a row of the task must have: what the task reads, then its descriptive columns."""
    return tuple(dict.fromkeys((*read_columns(task_id), *DESCRIPTIVE_COLUMNS.get(task_id, ()))))


def _null_gold_problem(task_id: str, gold: Any) -> str | None:
    mode = strict_rule(task_id).mode
    if gold is None:
        return None if mode == "text_or_abstain" else "gold is null but this task has no abstention"
    if mode in ("text", "text_or_abstain") and (not isinstance(gold, str) or not gold.strip()):
        return f"gold {gold!r} is not a non-empty string"
    return None


def _prompt_problem(task: SuiteTask, row: Mapping[str, Any]) -> str | None:
    for path in task.prompt.fields:
        if lookup(row, path) is None:
            return f"ValueError: input field {'.'.join(path)} is null"
    try:
        task.prompt.render(row)
    except TemplateError as exc:
        return f"TemplateError: {exc}"
    return None


def _row_problems(task: SuiteTask, row: dict[str, Any]) -> list[tuple[str, str]]:
    """(rule, message) for each rule one row breaks, in the order they are checked."""
    out: list[tuple[str, str]] = []
    spec, gold = task.spec, row[gold_field(task.id)]
    problem = _null_gold_problem(task.id, gold)
    if problem:
        out.append(("gold_in_answer_space", problem))
    if gold is not None or not problem:  # a null gold has nothing to check, unless it abstains
        target = "" if gold is None else task.target.render(row)
        space = item_space(spec, row) if strict_rule(task.id).mode == "choice" else ()
        found = first_problem(declared_checks(task.graders, strict=True), spec, row, target, space)
        if found is not None:
            span = found[0].name in ("span", "abstention")
            out.append(("gold_span" if span else "gold_in_answer_space", found[1]))
    if "is_answerable" in row and strict_rule(task.id).mode == "text_or_abstain":
        if bool(row["is_answerable"]) != (gold is not None):
            out.append(("abstention_gold", "is_answerable disagrees with whether the answer is null"))
    problem = _prompt_problem(task, row)
    if problem:
        out.append(("prompt", f"row does not render a prompt: {problem}"))
    return out


def validate_rows(tid: str, rows: list[dict[str, Any]], entry: ManifestEntry) -> TaskReport:
    """The report on one benchmark task's rows (``tid``: its id)."""
    suite_task, columns = _task(tid), required_columns(tid)
    report = TaskReport(tid, len(rows), entry.rows, fingerprint(rows), entry.fingerprint)
    err, warn = report.errors.append, report.warnings.append
    if len(rows) != entry.rows:
        err(Problem(tid, None, "row_count", f"expected {entry.rows} rows, found {len(rows)}"))
    present = set(rows[0]) if rows else set()
    missing = [c for c in columns if c not in present]
    if missing:
        err(Problem(tid, None, "columns", f"missing required columns: {', '.join(missing)}"))
        return report
    seen: Counter[str] = Counter(str(r[ID_FIELD]) for r in rows if ID_FIELD in r)
    for rid, count in seen.items():
        if count > 1:
            err(Problem(tid, rid, "duplicate_id", f"id occurs {count} times"))
    lists = list_inputs(suite_task)
    for index, row in enumerate(rows):
        rid = str(row.get(ID_FIELD, f"#{index + 1}"))
        lacking = [c for c in columns if c not in row]
        if lacking:
            err(Problem(tid, rid, "columns", f"row lacks columns: {', '.join(lacking)}"))
            continue
        bad_lists = [n for n in lists if not isinstance(row[n], list) or not row[n]]
        for name in bad_lists:
            err(Problem(tid, rid, "list_input", f"{name} must be a non-empty list"))
        if bad_lists:
            continue
        for rule, message in _row_problems(suite_task, row):
            err(Problem(tid, rid, rule, message))
    if not report.fingerprint_ok:
        warn(
            Problem(
                tid,
                None,
                "fingerprint",
                f"fingerprint {report.fingerprint} differs from the manifest's {entry.fingerprint}: "
                "results are not comparable with published runs",
            )
        )
    if not report.errors:
        for message in invariant_warnings(tid, rows):
            warn(Problem(tid, None, "invariant", message))
    return report


def invariant_warnings(task_id: str, rows: list[dict[str, Any]]) -> list[str]:
    """Distribution invariants of the benchmark: label coverage, A/B balance, list sizes."""
    task, gold = _task(task_id), gold_field(task_id)
    out: list[str] = []
    golds = Counter(str(r[gold]) for r in rows if r[gold] is not None)
    labels = task.spec.fixed_choices
    absent = [v for v in labels if v not in golds]
    if absent:
        out.append(f"labels never used as gold: {', '.join(absent)}")
    if set(labels) == {"A", "B"}:
        breakdown = breakdown_field(task_id)
        groups: dict[str, Counter[str]] = {}
        for r in rows:
            key = str(r.get(breakdown)) if breakdown else "all"
            groups.setdefault(key, Counter())[str(r[gold])] += 1
        for key, c in sorted(groups.items()):
            if abs(c["A"] - c["B"]) > 1:
                out.append(f"A/B position unbalanced within {key}: A={c['A']} B={c['B']}")
    for name in list_inputs(task):
        sizes = Counter(len(r[name]) for r in rows if isinstance(r[name], list))
        if len(sizes) > 1:
            out.append(f"{name} lists differ in length: {dict(sizes)}")
    return out


def validate_edition(
    edition: Edition,
    task_ids: list[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    revision: str | None = None,
) -> list[TaskReport]:
    ids = task_ids or edition.task_ids
    return [
        validate_rows(tid, load_rows(edition, tid, data_dir, revision), edition.tasks[tid]) for tid in ids
    ]
