"""The ``yoxla`` command line.

Every command ends with one clear line and a non-zero exit on bad input, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from yoxla.cli.common import UsageError, add_data_args, report, table, task_ids
from yoxla.contract.errors import SuiteError
from yoxla.data.editions import EDITIONS, DataUnavailable, load_edition, load_rows

__all__ = ["UsageError", "build_parser", "main", "run", "table"]


def cmd_validate(args: argparse.Namespace) -> int:
    from yoxla.data.validate import validate_edition

    edition = load_edition(args.edition)
    reports = validate_edition(edition, task_ids(args, edition.task_ids), args.data_dir, args.revision)
    print(
        table(
            ["task", "rows", "expected", "fingerprint", "errors", "warnings"],
            [
                [
                    r.task,
                    r.rows,
                    r.expected_rows,
                    "ok" if r.fingerprint_ok else "DIFFERS",
                    len(r.errors),
                    len(r.warnings),
                ]
                for r in reports
            ],
        )
    )
    problems = [p for r in reports for p in r.errors]
    for r in reports:
        for p in r.warnings:
            print(f"warning: {p}")
    for p in problems:
        print(f"error: {p}")
    total = sum(r.rows for r in reports)
    if problems:
        print(f"validation failed: {len(problems)} error(s) in {sum(not r.ok for r in reports)} task(s)")
        return 1
    print(f"ok: {len(reports)} tasks, {total} rows valid (edition {edition.name})")
    return 0


def cmd_floors(args: argparse.Namespace) -> int:
    """The cue-only floors of the edition's tasks (the suite path's strategies and built-in
    scoring, as ``yoxla suite floors yoxla-<edition>``, over rows read with --data-dir/--revision);
    --gate: the shortcut gate of the package suite's analysis section over them (:mod:`yoxla.baselines.gate`,
    the gate ``yoxla suite floors yoxla-<edition> --gate`` applies)."""
    from yoxla.baselines.strategies import STRATEGIES, benchmark_floors

    edition = load_edition(args.edition)
    ids = task_ids(args, edition.task_ids)
    rows = {tid: load_rows(edition, tid, args.data_dir, args.revision) for tid in ids}
    result = benchmark_floors(rows, edition.task_ids)
    body = []
    for tid in ids:
        scores = result[tid]
        best = max(scores, key=lambda s: scores[s])
        body.append([tid, *(scores[s] for s in STRATEGIES), f"{best} ({scores[best]:.2f})"])
    print(table(["task", *STRATEGIES, "best floor"], body))
    if args.gate:  # the shortcut gate: exit 1 when a cue-only strategy beats its threshold
        from yoxla.baselines.gate import chance_score, gate, gate_rule, report
        from yoxla.contract.loader import load_manifest
        from yoxla.contract.registry import manifest_path

        manifest = load_manifest(manifest_path(edition.name))
        chances = {tid: chance_score(tid, rows[tid]) for tid in result}
        text, status = report(gate(manifest, result, chances), edition.name, gate_rule(manifest))
        print(text)
        return status
    return 0


def cmd_tasks(args: argparse.Namespace) -> int:
    """The tasks, their contract hash and prompt hash (short, or whole with --full), the suite hash.

    All read from the package suite ``yoxla-<edition>`` (each task's metadata records its frozen
    contract and prompt hash); the rows are the counts the edition publishes."""
    from yoxla.contract.benchmark import benchmark_task, strict_rule
    from yoxla.contract.benchmark import task_ids as benchmark_ids

    edition = load_edition(args.edition)
    width = None if args.full else 19  # "sha256:" and 12 hex digits
    rows = []
    for tid in benchmark_ids():
        spec = benchmark_task(tid).spec
        rows.append(
            [
                tid,
                spec.metadata["block"],
                edition.tasks[tid].rows if tid in edition.tasks else "-",
                strict_rule(tid).mode,
                spec.metrics[0].id if spec.metrics else "-",
                spec.metadata["contract_hash"][:width],
                spec.metadata["prompt_hash"][:width],
            ]
        )
    print(table(["task", "block", "rows", "answer", "primary", "contract", "prompt"], rows))
    print(f"suite hash ({edition.name}): {edition.suite_hash()}")
    return 0


def cmd_download(args: argparse.Namespace) -> int:
    from yoxla.data.editions import download

    path = download(args.out, args.revision, args.edition)
    print(f"downloaded to {path}; use --data-dir {path}")
    return 0


def cmd_fingerprint(args: argparse.Namespace) -> int:
    """Rows and fingerprints of a data source; --write-manifest records them for a bundled edition."""
    import json
    from pathlib import Path

    from yoxla.data.editions import fingerprint

    edition = load_edition(args.edition)
    ids = task_ids(args, edition.task_ids)
    found = {tid: load_rows(edition, tid, args.data_dir, args.revision) for tid in ids}
    body = []
    for tid in ids:
        fp = fingerprint(found[tid])
        body.append([tid, len(found[tid]), fp, "ok" if fp == edition.tasks[tid].fingerprint else "DIFFERS"])
    print(table(["task", "rows", "fingerprint", "manifest"], body))
    if args.write_manifest:
        path = Path(args.write_manifest)
        data = json.loads(path.read_text(encoding="utf-8"))
        for tid in ids:
            data["tasks"][tid] = {
                "config": edition.tasks[tid].config,
                "rows": len(found[tid]),
                "fingerprint": fingerprint(found[tid]),
            }
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path}")
    return 0


# The subcommands of later stages, each module's ``register(sub)``; imported only when the parser
# is built (the runner's heavy imports happen per command).
EXTENSIONS = ("yoxla.run.commands", "yoxla.cli.verify", "yoxla.annotation.cli", "yoxla.cli.suite")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="yoxla", description="YOXLA: evaluate LLMs in Azerbaijani.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate-benchmark", help="check the rows of an edition before any model call")
    add_data_args(p)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("floors", help="scores of the cue-only baselines per task")
    add_data_args(p)
    p.add_argument("--gate", action="store_true", help="exit 1 when a cue-only strategy beats its threshold")
    p.set_defaults(func=cmd_floors)

    p = sub.add_parser("tasks", help="list the registered tasks, their contract and prompt hashes")
    p.add_argument("--edition", choices=EDITIONS, default="v1")
    p.add_argument("--full", action="store_true", help="print the whole hashes, not their first 12 digits")
    p.set_defaults(func=cmd_tasks)

    p = sub.add_parser("fingerprint", help="rows and fingerprint of each task of a data source")
    add_data_args(p)
    p.add_argument("--write-manifest", help="record the counts and fingerprints in this manifest file")
    p.set_defaults(func=cmd_fingerprint)

    p = sub.add_parser("download", help="make an offline copy of the Hub dataset (for --data-dir)")
    p.add_argument("--out", required=True)
    p.add_argument("--revision")
    p.add_argument("--edition", choices=EDITIONS, default="v1")
    p.set_defaults(func=cmd_download)

    for module in EXTENSIONS:
        importlib.import_module(module).register(sub)
    return parser


def run(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        return report(exc)
    except (SuiteError, DataUnavailable) as exc:
        return report(UsageError(str(exc)))
    except KeyboardInterrupt:
        print("yoxla: interrupted", file=sys.stderr)
        return 130


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":  # python -m yoxla.cli.main …
    main()
