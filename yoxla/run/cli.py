"""The suite part of the runner's command line: which suite a run asks, and the judge options.

Every new run is a suite run: ``python runner.py --suite FILE|ID --provider P --model M`` runs
an eval suite, and ``--edition sample|v1`` (default ``v1``) names the package suite
``yoxla-sample``/``yoxla-v1``, with every runner feature (workers, resume, ``--retry-errors``,
``rescore``, signing); ``--task ID`` picks tasks of the suite, ``--block G`` the tasks of its
group G. A resumed or retried run, and ``yoxla rescore``, find out from run.json which suite it
ran, so they need no ``--suite``; a folder the built-in engine of older versions made is refused.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from yoxla.cli_common import UsageError, table
from yoxla.run.printing import print_footer, print_generation_errors, print_probabilities

SUITE_OPTIONS = ("judge_provider", "judge_model", "judge_base_url")
DEFAULT_EDITION = "v1"
NOT_WITH_SUITE = ("edition",)  # --edition names a suite itself; --data-dir/--revision override Hub datasets


def add_suite_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("eval suites (docs/suites.md)")
    g.add_argument("--suite", metavar="FILE", help="run an eval suite manifest instead of the benchmark")
    g.add_argument(
        "--judge-provider", help="provider of the judge model graders may ask (default: --provider)"
    )
    g.add_argument("--judge-model", help="the judge model (ctx.responses_create in graders)")
    g.add_argument("--judge-base-url", help="override the judge provider's base URL")


def check_suite_args(args: argparse.Namespace) -> None:
    """Options that name another suite than --suite are refused, not ignored."""
    for name in NOT_WITH_SUITE:
        if args.suite and getattr(args, name, None) is not None:
            raise UsageError(f"--{name.replace('_', '-')} is for the benchmark; a suite names its own tasks")
    if args.judge_provider and not args.judge_model:
        raise UsageError("--judge-provider needs --judge-model")


def suite_selection(args: argparse.Namespace, path: str | None) -> list[str] | None:
    """The tasks a suite run asks: ``--task ID`` (repeatable), or ``--block G``, the tasks of
    the suite's group G (the benchmark's blocks are the groups of ``yoxla-sample``/``yoxla-v1``);
    None: every task (``--block all`` too)."""
    if args.block and args.task:
        raise UsageError("give --block or --task, not both")
    if args.task:
        return list(dict.fromkeys(args.task))
    if not args.block:
        return None
    if path is None:
        raise UsageError("--block picks a group of the suite given with --suite")
    from yoxla.run.errors import RunError
    from yoxla.run.plan import load_suite_manifest
    from yoxla.suites.registry import shown_ref

    try:
        manifest = load_suite_manifest(path)
    except RunError as exc:
        raise UsageError(str(exc)) from None
    groups = {g.id: list(g.tasks) for g in manifest.groups}
    name = shown_ref(args.suite or manifest.name)
    if args.block == "all":
        return None
    if not groups:
        raise UsageError(
            f"--block {shown_ref(args.block)}: suite {name} declares no groups; pick tasks with --task"
        )
    if args.block not in groups:
        raise UsageError(
            f"--block {shown_ref(args.block)}: not a group of suite {name} "
            f"(groups: {', '.join([*groups, 'all'])})"
        )
    return [tid for tid in manifest.tasks if tid in groups[args.block]]


def run_suite(args: argparse.Namespace) -> str | None:
    """The suite a ``run`` command asks (a manifest path or a committed suite's id): ``--suite``,
    else the package suite of ``--edition`` (default ``v1``); None when the command continues a
    run folder (``--retry-errors``, ``--resume --run-id``), whose run.json names its suite."""
    if args.suite:
        return str(args.suite)
    if args.retry_errors or (args.resume and args.run_id):
        return None
    return f"yoxla-{args.edition or DEFAULT_EDITION}"


def continued_folder(args: argparse.Namespace, runs_dir: str) -> Path | None:
    """The run folder this ``run`` command continues (``--resume --run-id ID``, ``--retry-errors
    RUN``), if there is one with a run.json; None for anything else (a new run, a result file)."""
    from yoxla.run.artifacts import RUN_JSON
    from yoxla.suites.registry import is_dir, is_file, shown_ref

    try:
        if args.retry_errors:
            path = Path(args.retry_errors)
            if is_file(path):  # a result file: --retry-errors FILE.json
                return None
            folder = path if is_dir(path) else Path(runs_dir) / args.retry_errors
        elif args.resume and args.run_id:
            folder = Path(runs_dir) / args.run_id
        else:
            return None
        # unguarded: a name that cannot be a path here raises, and is said so below
        return folder if (folder / RUN_JSON).is_file() else None
    except (OSError, ValueError) as exc:  # a name that cannot be a path here (too long, …)
        option, name = (
            ("--retry-errors", args.retry_errors) if args.retry_errors else ("--run-id", args.run_id)
        )
        why = getattr(exc, "strerror", None) or type(exc).__name__
        raise UsageError(f"{option} {shown_ref(name)}: no such run folder or result file ({why})") from None


def suite_path(value: str) -> str:
    """The manifest as run.json keeps it: an absolute path, so the run resumes from anywhere
    (``value`` is a file, or the id of a committed suite, e.g. ``yoxla-sample``)."""
    from yoxla.suites.registry import resolve_suite, resolved, unknown_ref

    path = resolve_suite(value)
    if path is None:
        raise UsageError(f"--suite {unknown_ref(value)}")
    return str(resolved(path))


def print_suite_summary(report: Any) -> None:
    s = report.summary
    grouped = any("group" in t for t in s["tasks"].values())  # a column only where groups are declared
    rows = []
    for tid, t in s["tasks"].items():
        inv = t["invalid_output_rate"]
        value = t["primary_value"]
        rows.append(
            [
                tid,
                *([t.get("group") or "-"] if grouped else []),
                f"{t['score']:.2f}" if t["score"] is not None else "-",
                f"{t['primary']}={value:.4g}" if isinstance(value, int | float) else (t["primary"] or "-"),
                f"{100 * inv:.1f}%" if inv is not None else "-",
                f"{t['rows']}/{t['expected']}",
                t["generation_errors"],
                t["grader_errors"],
                "yes" if t["judge_scored"] else "-",
            ]
        )
    print()
    print(
        table(
            [
                "task",
                *(["group"] if grouped else []),
                *("score", "primary", "invalid", "items", "gen. errors", "grader errors", "judged"),
            ],
            rows,
        )
    )
    for tid, t in s["tasks"].items():
        for problem in t["problems"]:
            print(f"problem: {tid}: {problem}")
        if t.get("judge_unanswered"):
            print(
                f"incomplete: {tid}: {t['judge_unanswered']} grader call(s) lack a judge's answer; "
                "resume the run with its judge to ask again"
            )
    if s.get("groups"):  # the benchmark's blocks: the groups a suite declares
        names = s.get("group_names") or {}
        print()
        print(table(["group", "score"], [[f"{g} ({names.get(g, g)})", v] for g, v in s["groups"].items()]))
    counts = s.get("probabilities") or {}
    if counts.get("asked") or any(t.get("calibration") for t in s["tasks"].values()):
        print_probabilities(s)  # only a run that asked: an open suite's summary stays as it was
    print()
    score = s["suite_score"]
    shown = f"{score:.2f}" if score is not None else "-"
    if s.get("headline"):  # a named headline (YOXLA): printed as the benchmark prints it
        print(f"suite: {s['suite']}")
        print(f"{s['headline']}: {shown}")
    else:
        print(f"suite {s['suite']}: {shown}")
    if s.get("judge"):
        print(f"judge: {s['judge']['provider']}/{s['judge']['model']}")
    print_generation_errors(s)
    print_footer(report)
