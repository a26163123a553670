"""The one row validator of a suite task: its rows checked before any model is called.

``yoxla validate-benchmark`` (an edition's rows, every task of its package suite) and ``yoxla
suite validate`` (any suite's prepared items) both call it. The rules come from the task: the
columns it reads (:func:`read_columns`) and those its dataset declares (``required_columns``,
which no hash covers), the row checks of its built-in graders (:mod:`yoxla.data.rowchecks`), a
null gold only where the task abstains, a prompt that renders, unique ids, list inputs lists.

Errors refuse a run; each names the row id and the rule it breaks. Warnings (another fingerprint
than the published or frozen one, a broken distribution invariant) do not refuse: they mean
results are not comparable with published runs.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from yoxla.contract.benchmark import benchmark_task, task_ids
from yoxla.contract.errors import SuiteError
from yoxla.contract.loader import SuiteTask
from yoxla.contract.spec_grading import BuiltinGrader
from yoxla.data.editions import ID_FIELD, Edition, ManifestEntry, fingerprint, load_rows
from yoxla.data.rowchecks import declared_checks, first_problem, row_problems
from yoxla.prompt.space import item_space
from yoxla.prompt.templates import Numbered, TemplateError, lookup
from yoxla.record.v2 import LEGACY_BREAKDOWNS

NOT_COMPARABLE = "results are not comparable with published runs"

if TYPE_CHECKING:
    from yoxla.contract.hashing import FrozenHashes
    from yoxla.prompt.prepare import PreparedTask


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
    expected_rows: int | None
    fingerprint: str
    expected_fingerprint: str | None  # None: nothing to compare with
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    @property
    def fingerprint_ok(self) -> bool:
        return self.expected_fingerprint in (None, self.fingerprint)

    @property
    def ok(self) -> bool:
        return not self.errors


def gold_field(task: SuiteTask) -> str | None:
    """The row field holding the gold (the first one its target template names)."""
    fields = task.target.fields
    return ".".join(fields[0]) if fields else None


def breakdown_field(task: SuiteTask) -> str | None:
    """The row field a task's scores are broken down by in a result record of the built-in
    format (its A/B balance is checked within each value), else its first breakdown."""
    declared = task.spec.breakdowns
    return LEGACY_BREAKDOWNS.get(task.id) or (declared[0] if declared else None)


def list_inputs(task: SuiteTask) -> tuple[str, ...]:
    """Row fields read as lists: the prompt's ``| numbered`` fields and the answer space's options."""
    names = [".".join(p.path) for p in task.prompt.parts if isinstance(p, Numbered)]
    space = task.spec.answer_space
    if space is not None and space.options_field:
        names.append(space.options_field)
    return tuple(dict.fromkeys(names))


def read_columns(task: SuiteTask) -> tuple[str, ...]:
    """The row fields the task reads: the item id, its prompt and target templates' fields, its
    answer space's options, its graders' passage and (a span grader's) answer start, its
    breakdowns. (An abstention grader reads its answer start only where a row has one.)"""
    cols = [ID_FIELD, *(".".join(p) for p in task.prompt.fields), *(".".join(p) for p in task.target.fields)]
    cols += list_inputs(task)
    for g in task.graders:
        if isinstance(g, BuiltinGrader):
            cols += [g.passage_field or ""]
            if g.name == "span":  # an abstention item without an answer has no start
                cols += [g.answer_start_field or ""]
    breakdown = breakdown_field(task)
    cols += [breakdown or "", *task.spec.breakdowns]
    return tuple(dict.fromkeys(c for c in cols if c))


def declared_columns(task: SuiteTask) -> tuple[str, ...]:
    """The columns the suite declares a row must carry (its dataset's ``required_columns``)."""
    return tuple(dict.fromkeys(task.spec.dataset.required_columns or ()))


def required_columns(task: SuiteTask) -> tuple[str, ...]:
    """Every column a row of the task must have: what the task reads, then what it declares."""
    return tuple(dict.fromkeys((*read_columns(task), *declared_columns(task))))


def _null_gold_problem(task: SuiteTask, gold: Any) -> str | None:
    mode = task.spec.strict_mode
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


def _row_problems(task: SuiteTask, row: Mapping[str, Any], strict: bool) -> tuple[list[tuple[str, str]], str]:
    """(rule, message) for each rule one row breaks, in the order they are checked; its target."""
    out: list[tuple[str, str]] = []
    spec, gold_at, target, mode = task.spec, gold_field(task), "", task.spec.strict_mode
    gold = lookup(row, gold_at.split(".")) if gold_at else ""
    problem = _null_gold_problem(task, gold)
    if problem:
        out.append(("gold_in_answer_space", problem))
    if gold is not None or not problem:  # a null gold has nothing to check, unless it abstains
        target = "" if gold is None else task.target.render(row)
        space = item_space(spec, row) if mode == "choice" else ()
        found = first_problem(declared_checks(task.graders, strict=strict), spec, row, target, space)
        if found is not None:
            span = found[0].name in ("span", "abstention")
            out.append(("gold_span" if span else "gold_in_answer_space", found[1]))
    if (
        "is_answerable" in row
        and mode == "text_or_abstain"
        and bool(row["is_answerable"]) != (gold is not None)
    ):
        out.append(("abstention_gold", "is_answerable disagrees with whether the answer is null"))
    problem = _prompt_problem(task, row)
    if problem:
        out.append(("prompt", f"row does not render a prompt: {problem}"))
    return out, target


def validate_rows(
    task: SuiteTask, rows: list[dict[str, Any]], entry: ManifestEntry | None = None, *, strict: bool = True
) -> TaskReport:
    """The report on one task's rows (``entry``: the row count and fingerprint they should have;
    ``strict``: the graders' checks in their stricter form, as the frozen benchmark is held to)."""
    tid, columns = task.id, required_columns(task)
    expected = (entry.rows, entry.fingerprint) if entry is not None else (None, None)
    report = TaskReport(tid, len(rows), expected[0], fingerprint(rows), expected[1])
    err = report.errors.append
    if entry is not None and len(rows) != entry.rows:
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
    lists, items = list_inputs(task), []
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
        problems, target = _row_problems(task, row, strict)
        items.append((row, target))
        for rule, message in problems:
            err(Problem(tid, rid, rule, message))
    _warn(report, "the manifest's", [] if report.errors else items, task)
    return report


def validate_prepared(prepared: PreparedTask, frozen: FrozenHashes | None = None) -> TaskReport:
    """The report on a prepared suite task (``yoxla suite validate``): each item that lacks a
    column the task declares, or breaks a check of its graders (errors, as a run refuses them;
    the columns its templates read were read by preparing it), then the warnings: its data's
    fingerprint against the one its hash file froze (``frozen``: its FrozenHashes, None: not
    frozen), the invariants over its items."""
    task, was = prepared.task, frozen.data.get("dataset") if frozen is not None else None
    report = TaskReport(task.id, len(prepared.items), None, prepared.fingerprints.get("dataset", ""), was)
    lacking = {i.id: [c for c in declared_columns(task) if c not in i.row] for i in prepared.items}
    report.errors += [
        Problem(task.id, i, "columns", f"row lacks columns: {', '.join(c)}") for i, c in lacking.items() if c
    ]
    report.errors += [Problem(task.id, p.item, "graders", p.rule) for p in row_problems(prepared)]
    items = [] if report.errors else [(i.row, i.target) for i in prepared.items]
    _warn(report, "the frozen", items, task)
    return report


def _warn(
    report: TaskReport, against: str, items: Sequence[tuple[Mapping[str, Any], str]], task: SuiteTask
) -> None:
    """The warnings: a fingerprint other than ``against``'s, then the invariants over ``items``
    (none when a row has an error)."""
    if not report.fingerprint_ok:
        message = f"fingerprint {report.fingerprint} differs from {against} {report.expected_fingerprint}"
        report.warnings.append(Problem(task.id, None, "fingerprint", f"{message}: {NOT_COMPARABLE}"))
    for message in invariant_warnings(task, items):
        report.warnings.append(Problem(task.id, None, "invariant", message))


def invariant_warnings(task: SuiteTask, items: Sequence[tuple[Mapping[str, Any], str]]) -> list[str]:
    """Distribution invariants over (row, target) pairs: label coverage, A/B balance, list sizes."""
    out: list[str] = []
    golds = Counter(target for _, target in items if target)
    labels = task.spec.fixed_choices
    absent = [v for v in labels if v not in golds]
    if items and absent:
        out.append(f"labels never used as gold: {', '.join(absent)}")
    if set(labels) == {"A", "B"}:
        breakdown = breakdown_field(task)
        groups: dict[str, Counter[str]] = {}
        for row, target in items:
            key = str(lookup(row, breakdown.split("."))) if breakdown else "all"
            groups.setdefault(key, Counter())[target] += 1
        for key, c in sorted(groups.items()):
            if abs(c["A"] - c["B"]) > 1:
                out.append(f"A/B position unbalanced within {key}: A={c['A']} B={c['B']}")
    for name in list_inputs(task):
        sizes = Counter(len(v) for row, _ in items if isinstance(v := lookup(row, name.split(".")), list))
        if len(sizes) > 1:
            out.append(f"{name} lists differ in length: {dict(sizes)}")
    return out


def known_task(task_id: str) -> SuiteTask:
    """A benchmark task by id (one SuiteError naming the known ones for an unknown id)."""
    try:
        return benchmark_task(task_id)
    except KeyError:
        raise SuiteError(f"unknown task {task_id!r}; known tasks: {', '.join(sorted(task_ids()))}") from None


def validate_edition(
    edition: Edition,
    task_ids: list[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    revision: str | None = None,
) -> list[TaskReport]:
    """The reports on an edition's rows, each task held to its package suite's rules (strictly)."""
    ids = task_ids or edition.task_ids
    return [
        validate_rows(known_task(tid), load_rows(edition, tid, data_dir, revision), edition.tasks[tid])
        for tid in ids
    ]
