"""What the runner's commands share, and the options of ``yoxla run``.

Every runner command ends a failure the user can fix with one line (:func:`guard`) and reads
keys from ./.env (:func:`load_env_file`). The ``yoxla run`` options are declared here
(:func:`add_run_args`; ``yoxla run-all`` parses the same ones) and read back into checked
values. A resumed or retried run finds its suite in run.json, so it needs no ``--suite``.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

from yoxla.cli.common import UsageError, one_line_errors
from yoxla.providers.base import ProviderError
from yoxla.providers.transport import TransportSettings
from yoxla.run.artifacts import RUN_JSON, CorruptRun
from yoxla.run.errors import RunError, ValidationFailed
from yoxla.run.model_facts import FACT_KEYS, check_facts, read_model_info

DEFAULT_EDITION = "v1"
NOT_WITH_SUITE = ("edition",)  # --edition names a suite itself; --data-dir/--revision override Hub datasets
BLOCKS = ("understanding", "language", "knowledge", "rag", "all")
# Options of `yoxla run` that are RunSettings fields of the same name (default None: "given" is visible).
RUN_OPTIONS = (
    "provider",
    "model",
    "edition",
    "data_dir",
    "revision",
    "limit",
    "thinking",
    "thinking_budget",
    "batch_size",
    "seed",
    "config",
    "base_url",
    "display_name",
    "model_card",
    "license",
    "weights",
    "params",
    "run_id",
    "runs_dir",
    "results_dir",
    "sign_key",
    *TransportSettings.names(),
    "judge_provider",
    "judge_model",
    "judge_base_url",
)
# The lowest value of each numeric option.
MINIMUM: dict[str, float] = {
    "limit": 1,
    "batch_size": 1,
    "thinking_budget": 0,
    **{f.name: f.metadata["min"] for f in fields(TransportSettings)},
}


def guard(func: Any) -> Any:
    """The runner's errors end as one line: exit 1 for failed validation, 2 for everything else."""
    return one_line_errors(RunError, ProviderError, CorruptRun)(
        one_line_errors(ValidationFailed, code=1)(func)
    )


def load_env_file() -> None:
    """Read ./.env (keys) without overriding variables already set."""
    path = Path.cwd() / ".env"
    if path.is_file():
        from dotenv import load_dotenv

        load_dotenv(path, override=False)


def add_run_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("what to run")
    g.add_argument("--provider", help="a provider of the registry (see `yoxla providers`)")
    g.add_argument("--model", help="model id for the provider (baseline: a strategy name)")
    g.add_argument("--preset", help="a named provider+model pair from the bundled presets")
    g.add_argument(
        "--display-name",
        help="name shown on the leaderboard (default: the model id; a local folder's own config, never its path)",
    )
    g = p.add_argument_group("what the leaderboard shows and filters by (stored in the result file)")
    g.add_argument("--model-card", metavar="URL", help="the model card (an https address)")
    g.add_argument("--license", metavar="ID", help="the model's licence, e.g. apache-2.0")
    g.add_argument("--weights", choices=("open", "closed"), help="are the weights public")
    g.add_argument("--params", metavar="N", help="parameter count: 8e9, 8B, 350M")
    g.add_argument(
        "--model-info",
        metavar="FILE.yaml",
        help=f"the same facts in a YAML file (keys: {', '.join(FACT_KEYS)})",
    )
    g = p.add_argument_group("what to run (continued)")
    g.add_argument(
        "--block",
        metavar="|".join(BLOCKS),
        help="one block, or all (default); with --suite: a group of the suite",
    )
    g.add_argument("--task", action="append", metavar="ID", help="only this task (repeatable)")
    g.add_argument("--edition", choices=("v1", "sample"), help="benchmark edition (default v1)")
    g.add_argument("--revision", help="pin the Hub dataset to this revision (commit SHA)")
    g.add_argument("--data-dir", help="a local copy of the dataset in the Hub layout")
    g.add_argument("--limit", type=int, help="only the first N examples of each task (a partial run)")
    g.add_argument(
        "--filter",
        action="append",
        metavar="COLUMN=VALUE",
        help="only rows whose breakdown/metadata COLUMN has VALUE (repeatable; a partial run)",
    )
    g.add_argument("--category", action="append", metavar="V", help="same as --filter category=V")
    g.add_argument("--difficulty", action="append", metavar="V", help="same as --filter difficulty=V")
    g.add_argument(
        "--scored-only",
        action="store_true",
        default=None,
        help="skip the rows declared as controls (a partial run; controls run by default)",
    )
    g.add_argument(
        "--no-probabilities",
        action="store_true",
        default=None,
        help="do not ask for answer probabilities (API logprobs, local label scoring)",
    )
    g.add_argument("--thinking", action="store_true", default=None, help="ask for reasoning (default off)")
    g.add_argument(
        "--thinking-budget", type=int, help="extra output tokens per request under --thinking (4096)"
    )
    g.add_argument("--seed", type=int, help="sampling seed sent to the provider (baseline: strategy seed)")
    g = p.add_argument_group("run folder")
    g.add_argument("--run-id", help="name of the run folder (default: time_provider__model_edition)")
    g.add_argument(
        "--resume", action="store_true", help="continue an interrupted run (--run-id, or the latest)"
    )
    g.add_argument(
        "--retry-errors",
        metavar="RUN|FILE",
        help="re-ask only the failed examples of a run (id or folder) or of a result file (.json)",
    )
    g.add_argument("--runs-dir", help="where run folders go (default ./runs)")
    g.add_argument("--results-dir", help="where result files go (default ./results)")
    g.add_argument("--sign-key", help="Ed25519 private key to sign the result file (or $YOXLA_SIGN_KEY)")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g = p.add_argument_group("connection")
    g.add_argument("--config", help="a provider registry YAML that adds to / replaces the bundled one")
    g.add_argument("--base-url", help="override the provider's base URL (e.g. a vLLM server elsewhere)")
    g.add_argument("--no-check", action="store_true", help="skip the reachability check before the run")
    add_transport_args(g)
    g = p.add_argument_group("local models (transformers)")
    g.add_argument("--batch-size", type=int, help="examples per generate call")
    g.add_argument("--dtype", help="torch dtype (auto, bfloat16, float16, float32)")
    g.add_argument("--device-map", help="device map (auto, cuda, cpu, …)")
    g.add_argument(
        "--trust-remote-code", action="store_true", default=None, help="allow the model's own code"
    )
    g = p.add_argument_group("eval suites (docs/suites.md)")
    g.add_argument("--suite", metavar="FILE", help="run an eval suite manifest instead of the benchmark")
    g.add_argument(
        "--judge-provider", help="provider of the judge model graders may ask (default: --provider)"
    )
    g.add_argument("--judge-model", help="the judge model (ctx.responses_create in graders)")
    g.add_argument("--judge-base-url", help="override the judge provider's base URL")


def add_transport_args(
    g: Any, names: tuple[str, ...] | None = None, defaults: dict[str, float] | None = None
) -> None:
    """One option per field of TransportSettings (or of ``names``), with its help and default.

    Without ``defaults`` an option's value is None unless given, so a resumed run can tell
    what the user changed; the dataclass default applies.
    """
    defaults = defaults or {}
    for f in fields(TransportSettings):
        if names is not None and f.name not in names:
            continue
        kind = type(f.default)
        g.add_argument(
            "--" + f.name.replace("_", "-"),
            type=kind,
            default=defaults.get(f.name),
            metavar="N" if kind is int else "S",
            help=f"{f.metadata['help']} (default {defaults.get(f.name, f.default):g})",
        )


FILTER_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def row_filters(args: argparse.Namespace) -> dict[str, list[str]]:
    """Row filters from --filter COLUMN=VALUE, --category V and --difficulty V."""
    pairs: list[tuple[str, str]] = []
    for item in getattr(args, "filter", None) or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise UsageError(f"--filter takes COLUMN=VALUE, got {item!r}")
        pairs.append((name.strip(), value.strip()))
    for name in ("category", "difficulty"):
        pairs.extend((name, v.strip()) for v in getattr(args, name, None) or [])
    out: dict[str, list[str]] = {}
    for name, value in pairs:
        if not FILTER_NAME.match(name):
            raise UsageError(f"--filter: {name!r} is not a column name")
        if not value:
            raise UsageError(f"--filter: an empty value for {name}")
        values = out.setdefault(name, [])
        if value not in values:
            values.append(value)
    return out


def given_options(args: argparse.Namespace) -> dict[str, Any]:
    """The run options given on the command line (or by --preset), checked against their minimum."""
    given = {name: getattr(args, name) for name in RUN_OPTIONS if getattr(args, name) is not None}
    if getattr(args, "model_info", None):  # the file's facts; a flag given beside it wins
        given = {**read_model_info(args.model_info), **given}
    given.update(check_facts({k: given[k] for k in FACT_KEYS if k in given}))
    if args.preset:
        from yoxla.providers.registry import load_presets

        presets = load_presets()
        if args.preset not in presets:
            raise UsageError(f"unknown preset {args.preset!r}; known presets: {', '.join(presets)}")
        for key in ("provider", "model", "display_name", "thinking"):
            if key in presets[args.preset] and key not in given:
                given[key] = presets[args.preset][key]
    for name, lowest in MINIMUM.items():
        if name in given and given[name] < lowest:
            raise UsageError(f"--{name.replace('_', '-')} must be ≥ {lowest:g}")
    return given


def check_suite_args(args: argparse.Namespace) -> None:
    """Options that name another suite than --suite are refused, not ignored."""
    for name in NOT_WITH_SUITE:
        if args.suite and getattr(args, name, None) is not None:
            raise UsageError(f"--{name.replace('_', '-')} is for the benchmark; a suite names its own tasks")
    if args.judge_provider and not args.judge_model:
        raise UsageError("--judge-provider needs --judge-model")


def task_selection(args: argparse.Namespace, path: str | None) -> list[str] | None:
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
    from yoxla.contract.registry import shown_ref
    from yoxla.run.plan import read_manifest

    try:
        manifest = read_manifest(path)
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
    from yoxla.contract.registry import is_dir, is_file, shown_ref

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


def manifest_path(value: str) -> str:
    """The manifest as run.json keeps it: an absolute path, so the run resumes from anywhere
    (``value`` is a file, or the id of a committed suite, e.g. ``yoxla-sample``)."""
    from yoxla.contract.registry import resolve_suite, resolved, unknown_ref

    path = resolve_suite(value)
    if path is None:
        raise UsageError(f"--suite {unknown_ref(value)}")
    return str(resolved(path))
