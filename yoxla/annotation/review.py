"""Agreement with gold (Cohen's κ), resolutions of disagreements, and review status per task.

The review rule (docs/annotation.md): a row is *reviewed* when its current text (``input_sha``)
and gold are confirmed by a person (an agreeing annotation and no person's doubt) or settled by
a line of ``resolutions.csv``; else it is *open* or not annotated. Model annotations never
confirm a row and never open one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yoxla.annotation.sheets import (
    ID_FIELD,
    MODEL,
    PERSON,
    RESOLUTIONS,
    Annotation,
    RowsByTask,
    SheetError,
    Task,
    Tasks,
    annotatable,
    input_sha,
    read_annotations,
    read_sheet_rows,
    rows_index,
)
from yoxla.contract.benchmark import gold_field, parse_answer
from yoxla.safe.text import one_line

RESOLUTION_COLUMNS = ("task", "id", "input_sha", "gold", "decided_by", "reason")


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's κ = (p_o − p_e) / (1 − p_e) of two raters over the same items.

    p_o is the share of items on which they agree, p_e = Σ_k (n_a(k)/n)(n_b(k)/n) the
    agreement expected from their label frequencies. Computed in integers (exact). None when
    it is undefined: no items, or p_e = 1 (both raters gave one and the same label throughout).
    """
    if len(a) != len(b):
        raise ValueError("the raters must label the same items")
    n = len(a)
    if n == 0:
        return None
    agree = sum(x == y for x, y in zip(a, b, strict=True))
    ca, cb = Counter(a), Counter(b)
    chance = sum(ca[k] * cb[k] for k in ca)
    if chance == n * n:
        return None
    return (agree * n - chance) / (n * n - chance)


def _gold(task: Task, row: Mapping[str, Any]) -> str | None:
    value = row.get(gold_field(task.id))
    return None if value is None else str(value)


# Comparing one sheet with gold ----------------------------------------------------------------


@dataclass(frozen=True)
class Disagreement:
    task: str
    id: str
    given: str  # the annotator's label, or "?" when unsure
    gold: str
    note: str


@dataclass(frozen=True)
class Agreement:
    """One task's (or all tasks', ``task == "all"``) agreement of an annotator with gold."""

    task: str
    labelled: int  # rows with a definite label (the items of κ)
    unsure: int
    agree: int
    agreement: float | None
    kappa: float | None
    not_natural: int
    stale: int  # annotations of a text that has changed since (not compared)


@dataclass(frozen=True)
class Comparison:
    annotator: str
    kind: str
    tasks: tuple[Agreement, ...]
    overall: Agreement
    disagreements: tuple[Disagreement, ...]
    unsure: tuple[Disagreement, ...]
    not_natural: tuple[Annotation, ...]


def _agreement(task_id: str, items: list[tuple[Annotation, str]], stale: int) -> Agreement:
    labelled = [(a, g) for a, g in items if a.label is not None]
    given = [(a.task, a.label) for a, _ in labelled]
    gold = [(a.task, g) for a, g in labelled]
    agree = sum(x == y for x, y in zip(given, gold, strict=True))
    return Agreement(
        task=task_id,
        labelled=len(labelled),
        unsure=sum(a.unsure for a, _ in items),
        agree=agree,
        agreement=agree / len(labelled) if labelled else None,
        kappa=cohen_kappa(given, gold),
        not_natural=sum(a.not_natural for a, _ in items),
        stale=stale,
    )


def compare(
    annotations: Sequence[Annotation],
    tasks: Tasks,
    rows_by_task: RowsByTask,
) -> Comparison:
    """Agreement with gold per task and over all tasks (κ pooled over (task, label) pairs)."""
    if not annotations:
        raise SheetError("the sheet has no annotations yet")
    index = rows_index(tasks, rows_by_task)
    per_task: dict[str, list[tuple[Annotation, str]]] = {}
    stale: Counter[str] = Counter()
    for a in annotations:
        row = index[(a.task, a.id)]
        if a.input_sha != input_sha(tasks[a.task], row):
            stale[a.task] += 1
            continue
        gold = _gold(tasks[a.task], row)
        if gold is not None:
            per_task.setdefault(a.task, []).append((a, gold))
    order = [tid for tid in tasks if tid in per_task or tid in stale]
    every = [item for tid in order for item in per_task.get(tid, [])]
    disagreements = tuple(
        Disagreement(a.task, a.id, a.label, g, a.note)
        for a, g in every
        if a.label is not None and a.label != g
    )
    unsure = tuple(Disagreement(a.task, a.id, "?", g, a.note) for a, g in every if a.unsure)
    return Comparison(
        annotator=annotations[0].annotator,
        kind=annotations[0].kind,
        tasks=tuple(_agreement(tid, per_task.get(tid, []), stale[tid]) for tid in order),
        overall=_agreement("all", every, sum(stale.values())),
        disagreements=disagreements,
        unsure=unsure,
        not_natural=tuple(a for a, _ in every if a.not_natural),
    )


# Resolutions -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Resolution:
    task: str
    id: str
    input_sha: str
    gold: str
    decided_by: str
    reason: str


def read_resolutions(
    folder: Path, tasks: Tasks, rows_by_task: RowsByTask, skip_tasks: Collection[str] = ()
) -> tuple[list[Resolution], list[str]]:
    """(resolutions, problems) from ``folder/resolutions.csv``; none when the file is absent."""
    path = folder / RESOLUTIONS
    if not path.is_file():
        return [], []
    records = read_sheet_rows(path, RESOLUTION_COLUMNS)
    index = rows_index(tasks, rows_by_task)
    out, problems = [], []
    seen: set[tuple[str, str, str]] = set()
    for line, rec in records:
        values = {k: (rec.get(k) or "").strip() for k in RESOLUTION_COLUMNS}
        where = one_line(f"{RESOLUTIONS} line {line} ({values['task']} {values['id']})", 200)
        if values["task"] in skip_tasks:
            continue
        key = (values["task"], values["id"])
        if (*key, values["input_sha"]) in seen:
            problems.append(f"{where}: the row's text is resolved twice")
            continue
        seen.add((*key, values["input_sha"]))
        row = index.get(key)
        if row is None:
            problems.append(f"{where}: no such row in this edition")
            continue
        empty = [k for k in ("input_sha", "gold", "decided_by", "reason") if not values[k]]
        if empty:
            problems.append(f"{where}: {', '.join(empty)} must be filled in")
            continue
        parsed = parse_answer(tasks[values["task"]].id, values["gold"], row)
        if not parsed.valid:
            problems.append(f"{where}: gold {values['gold']!r} is not in the answer space")
            continue
        out.append(Resolution(**{**values, "gold": str(parsed.value)}))
    return out, problems


# Review status ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskReview:
    """How much of one task a person has checked (see the module docstring for the rule)."""

    task: str
    annotatable: bool
    rows: int
    reviewed: int = 0
    by_agreement: int = 0
    by_resolution: int = 0
    open: int = 0  # disagreement, "?" or flag, not settled
    not_annotated: int = 0  # no person has annotated the current text
    people: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    row_status: Mapping[str, str] = field(default_factory=dict)  # id → reviewed | open | not_annotated


def load_all_annotations(
    folder: Path, tasks: Tasks, rows_by_task: RowsByTask, skip_tasks: Collection[str] = ()
) -> tuple[list[Annotation], list[str]]:
    """Every sheet of the folder: people's at the top, models' under ``model/``. A sheet that
    cannot be read is one problem and leaves the other sheets counted."""
    found: list[Annotation] = []
    problems: list[str] = []
    for kind, base in ((PERSON, folder), (MODEL, folder / "model")):
        for path in sorted(base.glob("*.csv")) if base.is_dir() else []:
            if kind == PERSON and path.name == RESOLUTIONS:
                continue
            try:
                got, bad = read_annotations(path, path.stem, kind, tasks, rows_by_task, skip_tasks)
            except SheetError as exc:
                problems.append(f"{exc} (the sheet is left out)")
                continue
            found.extend(got)
            problems.extend(bad)
    return found, problems


def review_status(
    folder: Path, tasks: Tasks, rows_by_task: RowsByTask, skip_tasks: Collection[str] = ()
) -> tuple[dict[str, TaskReview], list[str]]:
    """Review status of every task in ``rows_by_task`` (for ``yoxla annotate status`` and the app).

    Unreadable files are problems (the app's review table lists them), never an exception."""
    annotations, problems = load_all_annotations(folder, tasks, rows_by_task, skip_tasks)
    try:
        resolutions, bad = read_resolutions(folder, tasks, rows_by_task, skip_tasks)
    except SheetError as exc:
        resolutions, bad = [], [f"{exc} (no resolution is counted)"]
    problems.extend(bad)
    out: dict[str, TaskReview] = {}
    for tid, rows in rows_by_task.items():
        task = tasks[tid]
        if not annotatable(task):
            out[tid] = TaskReview(tid, False, len(rows), not_annotated=len(rows))
            continue
        mine = [a for a in annotations if a.task == tid]
        settled = {(r.id, r.input_sha, r.gold) for r in resolutions if r.task == tid}
        status: dict[str, str] = {}
        counts: Counter[str] = Counter()
        for row in rows:
            rid, sha, gold = str(row[ID_FIELD]), input_sha(task, row), _gold(task, row)
            people = [a for a in mine if a.id == rid and a.kind == PERSON and a.input_sha == sha]
            agreed = any(a.label == gold and not a.not_natural for a in people)
            doubted = any(
                a.not_natural or a.unsure or (a.label is not None and a.label != gold) for a in people
            )
            if (rid, sha, gold) in settled:
                status[rid], how = "reviewed", "by_resolution"
            elif agreed and not doubted:
                status[rid], how = "reviewed", "by_agreement"
            elif people:
                status[rid] = how = "open"
            else:
                status[rid] = how = "not_annotated"
            counts[how] += 1
        out[tid] = TaskReview(
            task=tid,
            annotatable=True,
            rows=len(rows),
            reviewed=counts["by_agreement"] + counts["by_resolution"],
            by_agreement=counts["by_agreement"],
            by_resolution=counts["by_resolution"],
            open=counts["open"],
            not_annotated=counts["not_annotated"],
            people=tuple(sorted({a.annotator for a in mine if a.kind == PERSON})),
            models=tuple(sorted({a.annotator for a in mine if a.kind == MODEL})),
            row_status=status,
        )
    return out, problems
