"""Annotation sheets: where they live, how they are written (blind, shuffled) and read back.

A sheet is a UTF-8 CSV (with a byte-order mark, so spreadsheet programs show Azerbaijani
letters) with the columns of :data:`COLUMNS`. The annotator fills only ``label`` (a value of
the answer space as the strict parser accepts it, or ``?`` when unsure), ``not_natural``
(``1``/``x``/``bəli`` when the text is not natural Azerbaijani) and ``note``.

A task is read from the benchmark's package suite by its id (:mod:`yoxla.contract.benchmark`):
the text shown is the user message the suite renders for the row, the answers are the row's
own answer space, and a label is read as the task's strict extractor reads an answer.
"""

from __future__ import annotations

import csv
import hashlib
import io
import random
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from yoxla.contract.benchmark import benchmark_task, choice_space, parse_answer, prepare_rows, strict_rule
from yoxla.contract.canonical import canonical_json
from yoxla.extract.text import az_key
from yoxla.safe.csvcells import safe_row, unescape_cell
from yoxla.safe.text import one_line


class Task(Protocol):
    """A benchmark task as annotation reads it: by its id, from the package suite."""

    @property
    def id(self) -> str: ...


Tasks = Mapping[str, Task]  # the edition's tasks by id
RowsByTask = Mapping[str, Sequence[Mapping[str, Any]]]  # each task's rows, in dataset order

COLUMNS = ("n", "task", "id", "input_sha", "text", "answers", "label", "not_natural", "note")
UNSURE = "?"
PERSON, MODEL = "person", "model"
RESOLUTIONS = "resolutions.csv"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
_YES = {"1", "x", "+", "yes", "y", "true", "bəli", "hə"}
_NO = {"", "0", "-", "no", "n", "false", "xeyr", "yox"}
MAX_SHEET_BYTES = 20 * 1024 * 1024  # a sheet or resolutions file read back
MAX_FIELD_CHARS = 100_000  # one cell
_BOM = "\ufeff"
ID_FIELD = "id"  # a benchmark row's id


class SheetError(ValueError):
    """A sheet cannot be written or read as asked (one line, for the command line)."""


def annotatable(task: Task) -> bool:
    """Only closed answer spaces are annotated this way (span and STS tasks are not)."""
    return strict_rule(task.id).mode == "choice"


def annotations_dir(edition: str, folder: str | Path | None = None) -> Path:
    """The edition's annotations folder: ``folder`` when given, else ``annotations/<edition>``
    under the current directory (the repository root), never inside the installed package."""
    return Path(folder) if folder is not None else Path("annotations") / edition


def check_name(name: str) -> str:
    if not _NAME.match(name) or name.removesuffix(".csv") + ".csv" == RESOLUTIONS:
        raise SheetError(
            f"annotator name {name!r} must be 1-64 letters, digits, '_', '.' or '-' (and not 'resolutions')"
        )
    return name


def sheet_path(folder: Path, annotator: str, kind: str = PERSON) -> Path:
    check_name(annotator)
    base = folder / "model" if kind == MODEL else folder
    return base / f"{annotator}.csv"


@lru_cache(maxsize=64)
def input_fields(task_id: str) -> tuple[str, ...]:
    """The row fields a task shows (those its prompt template names), never the gold."""
    return tuple(dict.fromkeys(path[0] for path in benchmark_task(task_id).prompt.fields))


def rows_index(tasks: Tasks, rows_by_task: RowsByTask) -> dict[tuple[str, str], Mapping[str, Any]]:
    """(task id, row id) -> the row, for the rows of ``tasks``."""
    return {
        (tid, str(row[ID_FIELD])): row for tid, rows in rows_by_task.items() if tid in tasks for row in rows
    }


def input_sha(task: Task, row: Mapping[str, Any]) -> str:
    """A short hash of what the annotator reads: the task's input fields (never the gold)."""
    seen = {f: row.get(f) for f in input_fields(task.id)}
    return hashlib.sha256(canonical_json(seen).encode("utf-8")).hexdigest()[:16]


def export_sheet(
    path: Path,
    tasks: Sequence[Task],
    rows_by_task: RowsByTask,
    *,
    shuffle_key: str,
    force: bool = False,
) -> int:
    """Write a blind sheet (no gold, rows of all ``tasks`` shuffled together); returns its rows.

    The order is a fixed function of ``shuffle_key`` (edition, annotator, seed), so a lost
    sheet can be written again identically. An existing sheet is never overwritten unless
    ``force``: it may hold someone's work.
    """
    if path.exists() and not force:
        raise SheetError(f"{path} exists (it may hold annotations); pass --force to overwrite it")
    items: list[tuple[Task, Mapping[str, Any], str]] = []
    for task in tasks:
        if not annotatable(task):
            raise SheetError(f"task {task.id} has no closed answer space; it cannot be annotated this way")
        rows = rows_by_task[task.id]
        shown = prepare_rows(task.id, rows).items  # the suite's messages, one item per row in order
        items.extend((task, row, item.messages[-1]["content"]) for row, item in zip(rows, shown, strict=True))
    random.Random(shuffle_key).shuffle(items)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8-sig", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        for n, (task, row, text) in enumerate(items, start=1):
            plain = dict(row)
            answers = " | ".join(choice_space(task.id, plain) or ())
            cells = [n, task.id, plain[ID_FIELD], input_sha(task, plain), text, answers, "", "", ""]
            writer.writerow(safe_row(cells))  # a text a spreadsheet would run (=1+1) gets an apostrophe
    return len(items)


def read_sheet_rows(path: Path, needed: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """(line, record) of every row of an annotation CSV (a sheet or resolutions.csv), each cell
    with :func:`yoxla.safe.csvcells.safe_cell`'s apostrophe undone. ``line`` counts records as a
    spreadsheet counts rows (the header is line 1; a cell may hold several lines of text).

    The file is hostile until read: at most :data:`MAX_SHEET_BYTES`, UTF-8 with at most one
    byte-order mark at its very start, no NUL, cells of at most :data:`MAX_FIELD_CHARS`
    characters, a header with every column of ``needed`` and no column twice. Anything else is
    a :class:`SheetError` naming the file, the line and the problem, in one line.
    """
    if not path.is_file():
        raise SheetError(f"no sheet at {path}")
    name = one_line(str(path), 200)
    try:
        size = path.stat().st_size
        if size > MAX_SHEET_BYTES:
            raise SheetError(f"{name}: {size:,} bytes, more than the {MAX_SHEET_BYTES:,} a sheet may have")
        data = path.read_bytes()
    except OSError as exc:
        raise SheetError(f"{name}: cannot be read ({one_line(exc.strerror or str(exc), 100)})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SheetError(
            f"{name} line {line}: not UTF-8 text (byte {exc.start}); save the sheet as CSV UTF-8"
        ) from None
    text = text.removeprefix(_BOM)
    for bad, what in ((_BOM, "a byte-order mark (only the file's very start may have one)"), ("\0", "a NUL")):
        at = text.find(bad)
        if at >= 0:
            raise SheetError(f"{name} line {text.count(chr(10), 0, at) + 1}: {what}")
    # strict: an unclosed quote is an error, never a cell that swallows the rows after it
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    out: list[tuple[int, dict[str, str]]] = []
    too_long = f"a cell longer than {MAX_FIELD_CHARS:,} characters"
    try:  # the csv module's own field limit is process-wide; the cell limit is checked here
        header = next(reader, None)
        if header is None:
            raise SheetError(f"{name}: empty file (the first row is the header)")
        twice = sorted(h for h, n in Counter(header).items() if n > 1)
        if twice:
            raise SheetError(f"{name} line 1: column(s) {one_line(', '.join(twice), 200)} appear twice")
        missing = [c for c in needed if c not in header]
        if missing:
            raise SheetError(f"{name}: missing column(s) {', '.join(missing)}")
        for values in reader:
            line = len(out) + 2
            if any(len(v) > MAX_FIELD_CHARS for v in values):
                raise SheetError(f"{name} line {line}: {too_long}")
            if not values or (len(values) == 1 and not values[0].strip()):
                continue
            if len(values) > len(header) and any(v.strip() for v in values[len(header) :]):
                raise SheetError(f"{name} line {line}: {len(values)} cells, the header has {len(header)}")
            cells = [unescape_cell(v) for v in values[: len(header)]]
            out.append((line, dict(zip(header, cells, strict=False))))
    except csv.Error as exc:
        why = too_long if "field limit" in str(exc) else str(exc)
        raise SheetError(f"{name} line {len(out) + 2}: {why}") from None
    return out


def write_instructions(folder: Path, tasks: Sequence[Task]) -> Path:
    """``instructions.md``: each task's system prompt, the instruction the rows were written for."""
    path = folder / "instructions.md"
    parts = [
        "# Annotation instructions",
        "",
        "Fill `label` with one of the row's `answers` (or `?` when unsure), `not_natural` with `1` when the",
        "text is not natural Azerbaijani, and `note` with anything worth saying. Each task's instruction:",
    ]
    for task in tasks:
        suite = benchmark_task(task.id)
        parts += ["", f"## {task.id}: {suite.spec.name}", "", "```text", suite.instructions or "", "```"]
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return path


@dataclass(frozen=True)
class Annotation:
    """One filled row of a sheet, its label read as the strict parser reads an answer."""

    annotator: str
    kind: str  # person | model
    task: str
    id: str
    input_sha: str
    label: str | None  # the canonical label; None when empty, unsure or invalid
    unsure: bool
    not_natural: bool
    note: str


def _flag(value: str) -> bool | None:
    key = az_key(value)
    return True if key in _YES else False if key in _NO else None


def read_annotations(
    path: Path,
    annotator: str,
    kind: str,
    tasks: Tasks,
    rows_by_task: RowsByTask,
    skip_tasks: Collection[str] = (),
) -> tuple[list[Annotation], list[str]]:
    """(annotations, problems) of one sheet. Rows left empty are skipped, and so are rows of
    ``skip_tasks`` (tasks of the edition left out with ``--task``); rows naming an unknown task
    or id, a row twice, a label outside the answer space or an unreadable flag are problems.
    A sheet that cannot be read as a whole is a :class:`SheetError` (:func:`read_sheet_rows`)."""
    columns = ("task", "id", "input_sha", "label", "not_natural", "note")
    records = read_sheet_rows(path, columns)
    index = rows_index(tasks, rows_by_task)
    out: list[Annotation] = []
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    for line, rec in records:
        tid, rid, sha, raw, natural, note = ((rec.get(k) or "").strip() for k in columns)
        where = one_line(f"{path.name} line {line} ({tid} {rid})", 200)
        if tid in skip_tasks:
            continue  # a task of the edition that this command was not asked about (--task)
        if (tid, rid) not in index:
            problems.append(f"{where}: no such row in this edition")
            continue
        if (tid, rid) in seen:
            problems.append(f"{where}: the row appears twice")
            continue
        seen.add((tid, rid))
        flag = _flag(natural)
        if flag is None:
            problems.append(f"{where}: not_natural {natural!r} is neither yes (1, x, bəli) nor no (empty, 0)")
            continue
        if not raw and not flag and not note:
            continue  # not annotated yet
        task, row = tasks[tid], index[(tid, rid)]
        label: str | None = None
        unsure = raw == UNSURE
        if raw and not unsure:
            parsed = parse_answer(task.id, raw, row)
            if not parsed.valid:
                problems.append(f"{where}: label {raw!r} is not in the answer space")
                continue
            label = str(parsed.value)
        out.append(Annotation(annotator, kind, tid, rid, sha, label, unsure, flag, note))
    return out, problems
