"""``yoxla suite validate | render | floors | check``: work with a suite manifest before any model call.

What each subcommand checks and prints is in docs/suites.md. ``render`` and ``check`` run none of a
manifest's Python unless ``--run-code`` is given (they are what a reviewer runs on a pull request).
Exit status: 0 ok, 1 a problem found, 2 a manifest that cannot be read or a row that breaks
its graders' rules (one line each, no traceback).
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

FIRST_ROWS = 3
Command = Callable[[argparse.Namespace], int]


def _judge_stub(request: dict[str, Any]) -> Any:
    from yoxla.score.judge import JudgeResponse

    return JudgeResponse(output_text="", model="validate-stub")


def cmd_validate(args: argparse.Namespace) -> int:
    from yoxla.contract.hashing import aggregation, suite_hash
    from yoxla.contract.registry import is_file
    from yoxla.contract.spec_data import HubDataset
    from yoxla.data.rowchecks import RowProblem
    from yoxla.data.validate import validate_prepared
    from yoxla.prompt.prepare import prepare_task
    from yoxla.prompt.templates import lookup
    from yoxla.score.replay import score_suite_task
    from yoxla.score.samples import SampleOutput
    from yoxla.score.worker import WorkerPool

    manifest = _load_listing_problems(args.file)
    print(f"{args.file}: schema {manifest.schema_version}, {len(manifest.tasks)} task(s)")
    problems: list[str] = []
    hashes: dict[str, str] = {}
    frozen = _frozen(manifest.path)
    with WorkerPool() as pool:
        prepared_tasks = {tid: prepare_task(task, pool) for tid, task in manifest.tasks.items()}
        reports = {tid: validate_prepared(p, frozen.get(tid)) for tid, p in prepared_tasks.items()}
        _refuse_bad_rows(
            RowProblem(tid, p.row or "", p.message) for tid, r in reports.items() for p in r.errors
        )
        for tid, task in manifest.tasks.items():
            prepared = prepared_tasks[tid]
            hashes[tid] = prepared.task_hash
            print(f"task {tid}: {len(prepared.items)} items")
            for role, ds in prepared.datasets.items():
                print(f"  {role}: {ds.describe()}")
            for warning in reports[tid].warnings:
                print(f"  warning: {warning.message}")
            for role, ds_spec in (
                ("dataset", task.spec.dataset),
                ("fewshot", getattr(task.spec.fewshot, "dataset", None)),
            ):
                if isinstance(ds_spec, HubDataset) and not (ds_spec.revision and len(ds_spec.revision) == 40):
                    print(f"  warning: the {role} is not pinned to a commit (revision); its rows may change")
            first = [i.row for i in prepared.items[:FIRST_ROWS]]
            for name, template in (("prompt_template", task.prompt), ("target_template", task.target)):
                for missing in template.missing_fields(
                    first, ("answer_space",) if task.spec.answer_space else ()
                ):
                    print(f"  warning: {name} uses {{{{{missing}}}}}, which none of the first rows has")
            for fld in task.spec.breakdowns:
                if all(lookup(i.row, fld.split(".")) is None for i in prepared.items):
                    print(f"  warning: metadata.breakdowns names {fld}, which no row has")
            fs = task.spec.fewshot_settings
            if fs is not None:
                short = [i.id for i in prepared.items if len(i.fewshot) < fs.count]
                if short:
                    print(f"  warning: {len(short)} item(s) get fewer than {fs.count} few-shot examples")
            gen = task.spec.generation
            if gen is not None and gen.removed_extra_body_keys:
                print(
                    f"  warning: generation.extra_body: removed unsafe keys {', '.join(gen.removed_extra_body_keys)}"
                )
            for item in prepared.items[:FIRST_ROWS]:
                if not item.messages[-1]["content"].strip():
                    problems.append(f"task {tid}: item {item.id} renders an empty prompt")
            probe = list(prepared.items[:1])
            scored = score_suite_task(
                prepared, [SampleOutput(i.target) for i in probe], items=probe, pool=pool, judge=_judge_stub
            )
            for r in scored.results:
                if r.grader_error:
                    problems.append(f"task {tid}: the grader fails on item {r.id}: {r.grader_error}")
            problems.extend(f"task {tid}: {p}" for p in scored.problems)
            shown = ", ".join(
                f"{k}={v:.3g}"
                for k, v in scored.metrics.items()
                if k in {m.id for m in task.metrics} and isinstance(v, int | float)
            )
            print(f"  graders answer (the target as the answer): {shown or 'ok'}")
            print(f"  task hash {prepared.task_hash}")
    by_id = not is_file(Path(args.file))  # a committed suite named by its id: no absolute paths shown
    for p in problems:
        print(f"error: {_quoted(p, manifest.path) if by_id else p}")
    if problems:
        print(f"validation failed: {len(problems)} problem(s)")
        return 1
    print(f"ok: suite hash {suite_hash(hashes, aggregation(manifest))}")
    return 0


def _frozen(path: Path) -> dict[str, Any]:
    """The hashes frozen next to the manifest ({}: none, or a hash file that does not read,
    which ``yoxla suite check`` reports)."""
    from yoxla.contract.errors import ManifestError
    from yoxla.contract.hashing import hash_file_path, read_hash_file

    try:
        return read_hash_file(hash_file_path(path)) if hash_file_path(path).is_file() else {}
    except ManifestError:
        return {}


def _refuse_bad_rows(problems: Iterable[Any]) -> None:
    """Rows that break their graders' rules: each listed (stderr), then one error (exit 2)."""
    import sys

    from yoxla.data.rowchecks import RowCheckError, refuse

    try:
        refuse(list(problems))
    except RowCheckError as exc:
        if len(exc.problems) > 1:
            for line in exc.problems:
                print(f"error: {line}", file=sys.stderr)
        raise


def _needs_code(task: Any) -> bool:
    """Is the task's data shaped by its own Python (a preprocessor)?"""
    return task.preprocess_code is not None


NO_CODE = "has a Python preprocessor; {what} without running it: add --run-code (runs {where})"


def _code_note(what: str) -> str:
    from yoxla.score.sandbox import isolation

    mode = isolation()
    where = "inside bwrap" if mode.sandboxed else "with reduced isolation, see docs/suites.md"
    return NO_CODE.format(what=what, where=where)


def _load_listing_problems(file: str) -> Any:
    """The manifest; when it breaks several rules, every problem is printed (one line each,
    with its field path) before the one-line error."""
    import sys

    from yoxla.contract.errors import ManifestError
    from yoxla.contract.registry import load_suite_manifest

    try:
        return load_suite_manifest(file)
    except ManifestError as exc:
        if len(exc.problems) > 1:
            for problem in exc.problems:
                print(f"error: {problem}", file=sys.stderr)
            raise ManifestError(
                f"{file}: {len(exc.problems)} problem(s) in the manifest (listed above)"
            ) from None
        raise


def cmd_render(args: argparse.Namespace) -> int:
    from yoxla.contract.registry import load_suite_manifest
    from yoxla.prompt.prepare import messages_text, prepare_task

    manifest = load_suite_manifest(args.file)
    task = manifest.task(args.task)
    if _needs_code(task) and not args.run_code:
        print(f"task {task.id} {_code_note('its prompts cannot be shown')}")
        return 1
    prepared = prepare_task(task, limit=args.n)
    for k, item in enumerate(prepared.items, start=1):
        print(f"=== {task.id} item {item.id} ({k}/{len(prepared.items)}) ===")
        print(messages_text(item.messages))
        print(f"[target]\n{item.target}")
        print()
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from yoxla.contract.hashing import (
        aggregation,
        analysis_hash,
        compare,
        hash_file_path,
        prepared_hashes,
        read_analysis_hash,
        read_hash_file,
        write_hash_file,
    )
    from yoxla.contract.registry import load_suite_manifest
    from yoxla.data.rowchecks import row_problems
    from yoxla.prompt.prepare import prepare_task
    from yoxla.score.worker import WorkerPool

    manifest = load_suite_manifest(args.file)
    skipped = [] if args.run_code else [tid for tid, t in manifest.tasks.items() if _needs_code(t)]
    with WorkerPool() as pool:  # every item rendered, so a prompt over the size limit fails here
        prepared = {tid: prepare_task(t, pool) for tid, t in manifest.tasks.items() if tid not in skipped}
    _refuse_bad_rows(problem for p in prepared.values() for problem in row_problems(p))
    current = {tid: prepared_hashes(p) for tid, p in prepared.items()}
    path = hash_file_path(manifest.path)
    frozen = read_hash_file(path) if path.is_file() else {}
    if not path.is_file() and not args.write:
        print(f"no frozen hash file {path}; run `yoxla suite check {args.file} --write` to freeze the tasks")
        return 1
    lines = [line for line in compare(current, frozen) if line.task not in skipped]
    for tid in skipped:
        print(f"{tid}: not checked: it {_code_note('its hash cannot be computed')}")
    for line in lines:
        print(f"{line.task}: {line.status}" + (f" ({line.detail})" if line.detail else ""))
    changed = [line for line in lines if line.status == "changed"]
    for line in changed:
        print(
            f"error: task {line.task} changed in place ({line.detail}); a changed task needs a new id "
            f"(e.g. {line.task}_v2), the old one stays as it was"
        )
    if changed:
        return 1
    new = [line.task for line in lines if line.status == "new"]
    # An older hash file records no item counts: --write adds them (the hashes stay as frozen).
    uncounted = [
        line.task for line in lines if line.status == "unchanged" and frozen[line.task].items is None
    ]
    if uncounted and not args.write:
        print(
            f"note: {len(uncounted)} frozen task(s) have no recorded item count ({', '.join(uncounted)}); "
            "run with --write to record them (admission then checks coverage against them)"
        )
    analysis = analysis_hash(manifest)
    analysis_changed = path.is_file() and analysis != read_analysis_hash(path)
    if analysis_changed:
        print(
            "analysis: changed (breakdowns, controls, gate or ranking; no task hash changes, "
            "results made before need `yoxla rescore`)"
        )
    if (new or analysis_changed or uncounted) and args.write:
        keep = dict(frozen)
        keep.update({tid: current[tid] for tid in new + uncounted})
        write_hash_file(path, manifest.name, keep, aggregation(manifest), analysis)
        done = [f"froze {len(new)} new task(s)"] if new or not uncounted else []
        if uncounted:
            done.append(f"recorded the item count of {len(uncounted)} frozen task(s)")
        print(" and ".join(done) + f" in {path}" + (" and the analysis section" if analysis_changed else ""))
    elif new or analysis_changed:
        what = f"{len(new)} task(s) are not frozen yet" if new else "the analysis section is not recorded"
        print(f"error: {what}; run with --write to freeze them")
        return 1
    if skipped:
        print(f"error: {len(skipped)} task(s) not checked without --run-code: {', '.join(skipped)}")
        return 1
    print("ok: every frozen task is unchanged")
    return 0


def cmd_floors(args: argparse.Namespace) -> int:
    """Cue-only floors of every task; ``--gate``: the shortcut gate (:mod:`yoxla.baselines.gate`), exit 1
    when a gated strategy scores above its threshold."""
    from yoxla.baselines.gate import gate, gate_rule, notes, suite_chances
    from yoxla.baselines.strategies import SUITE_STRATEGIES, floor_scores
    from yoxla.cli.common import table
    from yoxla.contract.registry import load_suite_manifest
    from yoxla.score.worker import WorkerPool

    manifest = load_suite_manifest(args.file)
    with WorkerPool() as pool:
        floors = floor_scores(manifest, pool)
        chances = suite_chances(manifest, pool)
    verdicts = gate(manifest, floors, chances, args.margin)
    rows = []
    for v in verdicts:
        shown = [
            f"{floors[v.task][s]:.2f}" if floors[v.task][s] is not None else "-" for s in SUITE_STRATEGIES
        ]
        rows.append([v.task, f"{v.chance:.2f}", f"{v.threshold:.2f}", *shown, "ok" if v.passed else "FAILS"])
    print(table(["task", "chance", "threshold", *SUITE_STRATEGIES, "gate"], rows))
    if not args.gate:
        return 0
    rule = gate_rule(manifest, args.margin)
    lines, status = notes(verdicts, rule)
    print("\n".join(lines))
    print(
        f"(gated: {', '.join(rule.strategies)}; threshold: chance + {rule.margin:g} "
        "unless a task declares gate_threshold)"
    )
    return status


def _quoted(message: str, path: Path) -> str:
    """``message`` with the manifest ``path`` and its folder (where its files are looked up)
    shown as :func:`yoxla.run.errors.shown_path` shows them."""
    from yoxla.run.errors import quoting

    for full in (path, path.resolve().parent, path.parent):
        message = quoting(message, full)
    return message


def _quoting_manifest(cmd: Command) -> Command:
    """``cmd`` whose one-line error quotes a committed suite named by its id (loaded from an
    absolute path: the package's or ``$YOXLA_SUITES_DIR``'s) and its folder relative to the
    working directory when under it, else by name; a manifest given as a path is quoted as given."""

    @functools.wraps(cmd)
    def run(args: argparse.Namespace) -> int:
        from yoxla.contract.errors import ManifestError
        from yoxla.contract.registry import is_file, resolve_suite

        try:
            return cmd(args)
        except ManifestError as exc:
            path = None if is_file(Path(args.file)) else resolve_suite(args.file)
            if path is not None:
                exc.args = (_quoted(str(exc), path),)
                exc.problems = tuple(_quoted(p, path) for p in exc.problems)
            raise

    return run


def register(sub: Any) -> None:
    """Add ``yoxla suite …`` to the command line (called from yoxla.cli.main's EXTENSIONS)."""
    p = sub.add_parser("suite", help="eval suites as manifests: validate, render, check")
    commands = p.add_subparsers(dest="suite_command", required=True)

    v = commands.add_parser("validate", help="check a manifest, its data, templates and graders")
    v.add_argument("file")
    v.set_defaults(func=_quoting_manifest(cmd_validate))

    r = commands.add_parser("render", help="the exact messages a model will see")
    r.add_argument("file")
    r.add_argument("--task", required=True)
    r.add_argument("-n", type=int, default=3, help="how many items (default 3)")
    r.add_argument("--run-code", action="store_true", help="run the task's Python preprocessor (sandboxed)")
    r.set_defaults(func=_quoting_manifest(cmd_render))

    c = commands.add_parser("check", help="refuse a task changed without a new id (frozen hashes)")
    c.add_argument("file")
    c.add_argument("--write", action="store_true", help="freeze new tasks in <stem>.hashes.json")
    c.add_argument("--run-code", action="store_true", help="run Python preprocessors to hash their tasks")
    c.set_defaults(func=_quoting_manifest(cmd_check))

    f = commands.add_parser("floors", help="scores of the cue-only strategies per task (the shortcut gate)")
    f.add_argument("file")
    f.add_argument("--gate", action="store_true", help="exit 1 when a cue-only strategy beats its threshold")
    f.add_argument(
        "--margin",
        type=float,
        default=None,
        help="points above chance a cue may score (default: the analysis section's gate.margin, else 15)",
    )
    f.set_defaults(func=_quoting_manifest(cmd_floors))
