"""``yoxla annotate export | compare | status``: the blind-annotation workflow on the command line.

Registered through ``yoxla.cli.main.EXTENSIONS``. A sheet that cannot be read ends with one line and
exit status 2; problems inside a sheet or resolutions file (unknown ids, a row twice, labels
outside the answer space) are listed and exit 1 (docs/annotation.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, NoReturn

from yoxla.annotation.review import compare, review_status
from yoxla.annotation.sheets import (
    MODEL,
    PERSON,
    SheetError,
    annotatable,
    annotations_dir,
    export_sheet,
    read_annotations,
    sheet_path,
    write_instructions,
)
from yoxla.cli.common import UsageError, add_data_args, table, task_ids


def register(sub: Any) -> None:
    p = sub.add_parser("annotate", help="blind annotation: export sheets, compare with gold, review status")
    steps = p.add_subparsers(dest="step", required=True)

    e = steps.add_parser("export", help="write a shuffled sheet without gold labels")
    add_data_args(e)
    _sheet_args(e)
    e.add_argument("--seed", default="0", help="changes the shuffled order (default 0)")
    e.add_argument("--force", action="store_true", help="overwrite an existing sheet")
    e.set_defaults(func=cmd_export)

    c = steps.add_parser("compare", help="agreement with gold, Cohen's kappa and every disagreement")
    add_data_args(c)
    _sheet_args(c)
    c.set_defaults(func=cmd_compare)

    s = steps.add_parser("status", help="how many rows of each task a person has reviewed")
    add_data_args(s)
    s.add_argument("--dir", help="the edition's annotations folder (default: annotations/<edition>)")
    s.set_defaults(func=cmd_status)


def _sheet_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--annotator", required=True, help="the annotator's name (the sheet is <name>.csv)")
    p.add_argument(
        "--model", action="store_true", help="the annotator is a model (its sheet never reviews a row)"
    )
    p.add_argument("--dir", help="the edition's annotations folder (default: annotations/<edition>)")


def _load(
    args: argparse.Namespace, only_annotatable: bool
) -> tuple[Any, dict[str, Any], dict[str, list[Any]]]:
    from yoxla.contract.benchmark import benchmark_task
    from yoxla.data.editions import load_edition, load_rows

    edition = load_edition(args.edition)
    asked = bool(getattr(args, "task", None))
    ids = task_ids(args, edition.task_ids)
    if only_annotatable:
        for tid in ids:
            if asked and not annotatable(benchmark_task(tid)):
                raise UsageError(f"task {tid} has no closed answer space; only choice tasks are annotated")
        ids = [tid for tid in ids if annotatable(benchmark_task(tid))]
    tasks = {tid: benchmark_task(tid) for tid in ids}
    rows = {tid: load_rows(edition, tid, args.data_dir, args.revision) for tid in ids}
    return edition, tasks, rows


def _usage(exc: SheetError) -> NoReturn:
    """A sheet problem the user has to fix first: one line, exit status 2."""
    raise UsageError(str(exc)) from None


def _sheet(args: argparse.Namespace) -> tuple[Any, dict[str, Any], dict[str, list[Any]], Path, str, Path]:
    """(edition, tasks, rows, annotations folder, annotator kind, sheet path) for export and compare."""
    edition, tasks, rows = _load(args, only_annotatable=True)
    folder = annotations_dir(edition.name, args.dir)
    kind = MODEL if args.model else PERSON
    try:
        return edition, tasks, rows, folder, kind, sheet_path(folder, args.annotator, kind)
    except SheetError as exc:
        _usage(exc)


def _left_out(edition: Any, tasks: dict[str, Any]) -> set[str]:
    """The edition's tasks this command was not asked about (``--task``): their rows in a sheet
    are skipped, never "no such row"."""
    return set(edition.task_ids) - set(tasks)


def cmd_export(args: argparse.Namespace) -> int:
    edition, tasks, rows, folder, _, path = _sheet(args)
    try:
        n = export_sheet(
            path,
            list(tasks.values()),
            rows,
            shuffle_key=f"{edition.name}:{args.annotator}:{args.seed}",
            force=args.force,
        )
    except SheetError as exc:
        _usage(exc)
    write_instructions(folder, list(tasks.values()))
    print(f"wrote {path}: {n} rows of {len(tasks)} task(s), shuffled, without gold labels")
    print(f"instructions: {folder / 'instructions.md'}; fill label (? when unsure), not_natural, note")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    edition, tasks, rows, _, kind, path = _sheet(args)
    try:
        skip = _left_out(edition, tasks)
        annotations, problems = read_annotations(path, args.annotator, kind, tasks, rows, skip)
        result = compare(annotations, tasks, rows) if annotations else None
    except SheetError as exc:
        _usage(exc)
    print(f"{args.annotator} ({kind}), edition {edition.name}, {path}")
    if result is not None:

        def line(a: Any) -> list[Any]:
            kappa = "-" if a.kappa is None else f"{a.kappa:.3f}"
            share = "-" if a.agreement is None else f"{100 * a.agreement:.1f}%"
            return [a.task, a.labelled, a.agree, share, kappa, a.unsure, a.not_natural, a.stale]

        headers = ["task", "labelled", "agree", "agreement", "kappa", "unsure", "not natural", "stale"]
        print(table(headers, [line(a) for a in (*result.tasks, result.overall)]))
        for d in result.disagreements:
            print(
                f"disagreement: {d.id} ({d.task}): {args.annotator} wrote {d.given}, gold is {d.gold}"
                + _note(d.note)
            )
        for d in result.unsure:
            print(f"unsure: {d.id} ({d.task}): gold is {d.gold}" + _note(d.note))
        for a in result.not_natural:
            print(f"not natural: {a.id} ({a.task})" + _note(a.note))
        if kind == MODEL:
            print("a model's annotations are reported but never mark a row reviewed")
    else:
        print("no annotations yet")
    for p in problems:
        print(f"problem: {p}")
    return 1 if problems else 0


def _note(note: str) -> str:
    return f" — {note}" if note else ""


def cmd_status(args: argparse.Namespace) -> int:
    edition, tasks, rows = _load(args, only_annotatable=False)
    folder = annotations_dir(edition.name, args.dir)
    try:
        status, problems = review_status(Path(folder), tasks, rows, _left_out(edition, tasks))
    except SheetError as exc:
        _usage(exc)

    def cells(s: Any) -> list[Any]:
        counts = [s.reviewed, s.by_agreement, s.by_resolution, s.open, s.not_annotated]
        return [s.task, s.rows, *(counts if s.annotatable else ["-"] * 4 + ["not annotatable"])]

    body = [[*cells(s), ", ".join(s.people) or "-"] for s in status.values()]
    print(f"review status, edition {edition.name}, annotations in {folder}")
    headers = ["task", "rows", "reviewed", "by agreement", "by resolution", "open", "not annotated", "people"]
    print(table(headers, body))
    for p in problems:
        print(f"problem: {p}")
    return 1 if problems else 0
