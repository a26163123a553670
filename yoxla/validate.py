"""Validation of benchmark rows before any model is called.

Errors refuse a run; each names the row id and the rule it breaks. Warnings (a fingerprint
that differs from the manifest, a broken distribution invariant) are reported but do not
refuse: they mean results are not comparable with published runs.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from yoxla.editions import Edition, ManifestEntry, fingerprint, load_rows
from yoxla.spans import occurrences
from yoxla.suite import Task, load_suite
from yoxla.text import flatten


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


def _gold_problem(task: Task, row: dict[str, Any]) -> str | None:
    gold = row[task.gold]
    a = task.answer
    if a.mode == "choice":
        values = a.values_for(row)
        if gold is None or str(gold) not in values:
            return f"gold {gold!r} is not in the answer space ({', '.join(values[:8])}{'…' if len(values) > 8 else ''})"
    elif a.mode == "numeric":
        assert a.range is not None
        try:
            value = float(gold)
        except (TypeError, ValueError):
            return f"gold {gold!r} is not a number"
        if not a.range[0] <= value <= a.range[1]:
            return f"gold {value} is outside {a.range[0]}–{a.range[1]}"
    elif gold is None:
        if a.mode != "text_or_abstain":
            return "gold is null but this task has no abstention"
    elif not isinstance(gold, str) or not gold.strip():
        return f"gold {gold!r} is not a non-empty string"
    return None


def _span_problem(task: Task, row: dict[str, Any]) -> str | None:
    gold = row[task.gold]
    if gold is None:
        return None
    context = row[task.inputs[0]]
    hits = occurrences(flatten(context), flatten(gold))
    if len(hits) != 1:
        where = "not found" if not hits else f"found {len(hits)} times"
        return f"gold span {gold!r} must occur exactly once in the {task.inputs[0]} (NFC, collapsed white space); {where}"
    start = row.get("answer_start")
    if start is not None and context[start : start + len(gold)] != gold:
        return f"answer_start {start} does not point at the gold span {gold!r}"
    return None


def validate_rows(task: Task, rows: list[dict[str, Any]], entry: ManifestEntry) -> TaskReport:
    report = TaskReport(task.id, len(rows), entry.rows, fingerprint(rows), entry.fingerprint)
    err, warn = report.errors.append, report.warnings.append
    if len(rows) != entry.rows:
        err(Problem(task.id, None, "row_count", f"expected {entry.rows} rows, found {len(rows)}"))
    present = set(rows[0]) if rows else set()
    missing = [c for c in task.columns if c not in present]
    if missing:
        err(Problem(task.id, None, "columns", f"missing required columns: {', '.join(missing)}"))
        return report
    seen: Counter[str] = Counter(str(r[task.id_field]) for r in rows if task.id_field in r)
    for rid, count in seen.items():
        if count > 1:
            err(Problem(task.id, rid, "duplicate_id", f"id occurs {count} times"))
    for index, row in enumerate(rows):
        rid = str(row.get(task.id_field, f"#{index + 1}"))
        lacking = [c for c in task.columns if c not in row]
        if lacking:
            err(Problem(task.id, rid, "columns", f"row lacks columns: {', '.join(lacking)}"))
            continue
        bad_lists = [n for n in task.list_inputs if not isinstance(row[n], list) or not row[n]]
        for name in bad_lists:
            err(Problem(task.id, rid, "list_input", f"{name} must be a non-empty list"))
        if bad_lists:
            continue
        problem = _gold_problem(task, row)
        if problem:
            err(Problem(task.id, rid, "gold_in_answer_space", problem))
        if task.evaluator in ("span", "abstention"):
            problem = _span_problem(task, row)
            if problem:
                err(Problem(task.id, rid, "gold_span", problem))
        if "is_answerable" in row and task.answer.mode == "text_or_abstain":
            if bool(row["is_answerable"]) != (row[task.gold] is not None):
                err(
                    Problem(
                        task.id,
                        rid,
                        "abstention_gold",
                        "is_answerable disagrees with whether the answer is null",
                    )
                )
        try:
            task.messages(row)
        except (KeyError, TypeError, ValueError) as exc:
            err(Problem(task.id, rid, "prompt", f"row does not render a prompt: {type(exc).__name__}: {exc}"))
    if not report.fingerprint_ok:
        warn(
            Problem(
                task.id,
                None,
                "fingerprint",
                f"fingerprint {report.fingerprint} differs from the manifest's {entry.fingerprint}: "
                "results are not comparable with published runs",
            )
        )
    if not report.errors:
        for message in invariant_warnings(task, rows):
            warn(Problem(task.id, None, "invariant", message))
    return report


def invariant_warnings(task: Task, rows: list[dict[str, Any]]) -> list[str]:
    """Distribution invariants of the benchmark: label coverage, A/B balance, list sizes."""
    out: list[str] = []
    golds = Counter(str(r[task.gold]) for r in rows if r[task.gold] is not None)
    labels = task.answer.label_values
    absent = [v for v in labels if v not in golds]
    if absent:
        out.append(f"labels never used as gold: {', '.join(absent)}")
    if set(labels) == {"A", "B"}:
        groups: dict[str, Counter[str]] = {}
        for r in rows:
            key = str(r.get(task.breakdown)) if task.breakdown else "all"
            groups.setdefault(key, Counter())[str(r[task.gold])] += 1
        for key, c in sorted(groups.items()):
            if abs(c["A"] - c["B"]) > 1:
                out.append(f"A/B position unbalanced within {key}: A={c['A']} B={c['B']}")
    for name in task.list_inputs:
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
    suite = load_suite()
    ids = task_ids or edition.task_ids
    return [
        validate_rows(suite.task(tid), load_rows(edition, tid, data_dir, revision), edition.tasks[tid])
        for tid in ids
    ]
