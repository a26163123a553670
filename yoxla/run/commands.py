"""Command line of the runner: ``yoxla run | rescore | providers | test | keygen``.

``python runner.py ARGS`` is ``yoxla run ARGS``. Every failure the user can fix ends with
one line and a non-zero exit; nothing here imports openai or tqdm until a command needs it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shlex
import sys
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

from yoxla.cli_common import UsageError, one_line_errors, table
from yoxla.providers.base import ProviderError
from yoxla.providers.transport import TransportSettings
from yoxla.run.artifacts import CorruptRun
from yoxla.run.errors import RunError, ValidationFailed
from yoxla.run.model_facts import FACT_KEYS, check_facts, read_model_info
from yoxla.run.printing import color, print_footer, print_probabilities
from yoxla.run.printing import figure as figure
from yoxla.run.printing import probabilities_line as probabilities_line

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


def _guard(func: Any) -> Any:
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


# yoxla run ----------------------------------------------------------------------------


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
    g.add_argument("--block", metavar="|".join(BLOCKS), help="one block, or all (default)")
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
    from yoxla.run.suite_cli import add_suite_args

    add_suite_args(p)


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


def _task_selection(args: argparse.Namespace) -> list[str] | None:
    from yoxla.suite import load_suite

    if args.block and args.block not in BLOCKS:
        raise UsageError(f"unknown block {args.block!r}; use one of: {', '.join(BLOCKS)}")
    if args.block and args.task:
        raise UsageError("give --block or --task, not both")
    if args.task:
        suite = load_suite()
        for tid in args.task:
            suite.task(tid)
        return list(dict.fromkeys(args.task))
    if args.block and args.block != "all":
        return [t.id for t in load_suite().tasks.values() if t.block == args.block]
    return None


FILTER_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def _filters(args: argparse.Namespace) -> dict[str, list[str]]:
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


def _resolve_dir(runs_dir: str, run: str) -> Path:
    path = Path(run)
    if path.is_dir():
        return path
    candidate = Path(runs_dir) / run
    if candidate.is_dir():
        return candidate
    raise UsageError(f"--retry-errors: no run {run!r} (neither a folder nor a run id in {runs_dir})")


def _given(args: argparse.Namespace) -> dict[str, Any]:
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


@_guard
def cmd_run(args: argparse.Namespace) -> int:
    report = execute_run(args)
    if report is not None:
        print_summary(report)
    return 0


def execute_run(args: argparse.Namespace) -> Any:
    """``yoxla run`` without the printing: the finished RunReport, or None when a result file
    given to --retry-errors has nothing to retry. ``yoxla.run`` (the library call) uses it too."""
    from yoxla.run.engine import retry_errors, retry_result_file, start_run
    from yoxla.run.settings import SESSION, RunSettings
    from yoxla.run.suite_cli import check_suite_args, is_suite_command, suite_path
    from yoxla.run.suite_engine import retry_suite_errors, start_suite_run

    load_env_file()
    given = _given(args)
    suite = is_suite_command(args, given.get("runs_dir", "runs"))
    if suite:
        check_suite_args(args)
        if args.suite:
            given["suite"] = suite_path(args.suite)
        selection = list(dict.fromkeys(args.task)) if args.task else None
    else:
        selection = _task_selection(args)
    explicit = set(given) | ({"tasks"} if selection is not None else set())
    settings = RunSettings(provider="", model="")
    for key, value in given.items():
        settings.set(key, value)
    settings.tasks = selection or []
    if not args.resume or "results_dir" in explicit:
        # Stored as an absolute path, so a resumed run writes where it started from any folder.
        settings.results_dir = str(Path(settings.results_dir).resolve())
    filters = _filters(args)
    if filters:
        settings.filters = filters
        explicit.add("filters")
    if args.scored_only:
        settings.scored_only = True
        explicit.add("scored_only")
    if args.no_probabilities:
        settings.probabilities = False
        explicit.add("probabilities")
    settings.provider_settings = {
        k: v
        for k, v in (
            ("dtype", args.dtype),
            ("device_map", args.device_map),
            ("trust_remote_code", args.trust_remote_code),
        )
        if v is not None
    }
    settings.progress = not args.no_progress
    settings.check_connection = not args.no_check
    settings.command = getattr(args, "command_line", None) or shlex.join(
        [Path(sys.argv[0]).name, *sys.argv[1:]]
    )
    settings.resume = bool(args.resume)

    if args.retry_errors:
        if args.resume:
            raise UsageError("give --resume or --retry-errors, not both")
        identity = (
            "provider",
            "model",
            "edition",
            "limit",
            "tasks",
            "filters",
            "scored_only",
            "probabilities",
        )
        clash = [k for k in identity if k in explicit]
        if clash:
            raise UsageError(
                f"--retry-errors re-uses the run's own settings; drop --{clash[0].replace('_', '-')}"
            )
        overrides = {k: settings.get(k) for k in SESSION if k in explicit}
        overrides.update(
            progress=settings.progress, check_connection=settings.check_connection, command=settings.command
        )
        target = Path(args.retry_errors)
        if target.suffix == ".json" and not target.is_dir():
            if not target.is_file():
                raise UsageError(f"--retry-errors: no result file {args.retry_errors!r}")
            found = retry_result_file(target, settings.runs_dir, overrides)
            if found is None:
                return None
            report = found
        else:
            run_dir = _resolve_dir(settings.runs_dir, args.retry_errors)
            report = (retry_suite_errors if suite else retry_errors)(run_dir, overrides)
    else:
        report = (start_suite_run if suite else start_run)(settings, explicit=explicit)
    return report


def print_summary(report: Any) -> None:
    from yoxla.suite import load_suite

    s = report.summary
    if "suite" in s:
        from yoxla.run.suite_cli import print_suite_summary

        print_suite_summary(report)
        return
    suite = load_suite()
    rows = []
    for tid, t in s["tasks"].items():
        inv = t["invalid_output_rate"]
        rows.append(
            [
                tid,
                t["block"],
                f"{t['score']:.2f}" if t["score"] is not None else "-",
                f"{100 * inv:.1f}%" if inv is not None else "-",
                f"{t['rows']}/{t['expected']}",
                t["generation_errors"],
            ]
        )
    print()
    print(table(["task", "block", "score", "invalid", "examples", "gen. errors"], rows))
    print()
    print(
        table(
            ["block", "score"], [[f"{b} ({suite.block_names.get(b, b)})", v] for b, v in s["blocks"].items()]
        )
    )
    print_probabilities(s)
    print()
    yoxla = s["yoxla"]
    print(f"YOXLA: {yoxla:.2f}" if yoxla is not None else "YOXLA: -")
    n_err = s["generation_errors"]
    if n_err:
        print(
            color(
                f"generation errors: {n_err} (scored as wrong; re-ask them with --retry-errors {s['run_id']})",
                "1;31",
            )
        )
        for e in s["generation_error_examples"][:10]:
            print(color(f"  {e['task']} {e['id']}: {e['error']}", "31"))
        if n_err > 10:
            print(color(f"  … and {n_err - 10} more (summary.json lists them all)", "31"))
    else:
        print("generation errors: 0")
    print_footer(report)


# yoxla run-all --------------------------------------------------------------------------

# Flags run-all sets itself, per preset, or that make no sense across several runs.
RUN_ALL_OWN = ("provider", "model", "preset", "display_name", "run_id", "resume", "retry_errors")


def _split_items(items: list[str]) -> tuple[list[str], list[str]]:
    """(preset names, runner flags): the flags are what follows ``--``."""
    if "--" in items:
        i = items.index("--")
        return items[:i], items[i + 1 :]
    flags = [x for x in items if x.startswith("-")]
    if flags:
        raise UsageError(f"runner flags go after --: yoxla run-all [PRESET…] -- {' '.join(flags)}")
    return items, []


def skip_reason(preset: dict[str, Any], named: bool, config: str | None) -> str | None:
    """Why run-all does not run a preset (None: it runs): a missing key, or a local model not named."""
    from yoxla.providers.registry import get_spec

    try:
        spec = get_spec(str(preset.get("provider")), config)
    except ProviderError as exc:
        return str(exc)
    if spec.backend == "transformers":
        if not named:
            return "a local model: name the preset to run it (it loads the weights on this machine)"
        import importlib.util

        if importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None:
            return "the local extras are not installed (pip install -r requirements-local.txt)"
    env = spec.api_key_env
    if env and spec.settings.get("api_key_required", True) and not os.environ.get(env, "").strip():
        return f"no key: {env} is not set (environment or ./.env)"
    return None


def _run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="yoxla run-all [PRESET…] --", add_help=False)
    add_run_args(parser)
    return parser


@_guard
def cmd_run_all(args: argparse.Namespace) -> int:
    """Every preset whose key is available, one run each; says which it skipped and why."""
    from yoxla.providers.registry import load_presets

    load_env_file()
    names, flags = _split_items(list(args.items or []))
    presets = load_presets()
    unknown = [n for n in names if n not in presets]
    if unknown:
        raise UsageError(f"unknown preset {unknown[0]!r}; known presets: {', '.join(presets)}")
    parser = _run_parser()
    try:
        given, rest = parser.parse_known_args(flags)
    except SystemExit:
        raise UsageError(f"cannot read the runner flags after --: {' '.join(flags)}") from None
    if rest:
        raise UsageError(f"unknown runner flag(s): {' '.join(rest)}")
    own = [k for k in RUN_ALL_OWN if getattr(given, k) not in (None, False)]
    if own:
        raise UsageError(f"run-all sets --{own[0].replace('_', '-')} itself (per preset); drop it")
    outcome: list[list[Any]] = []
    for name in list(dict.fromkeys(names)) or list(presets):
        why = skip_reason(presets[name], bool(names), given.config)
        if why is not None:
            print(f"skipped {name}: {why}")
            outcome.append([name, "skipped", why])
            continue
        print(f"\n=== {name} ===")
        run_args = parser.parse_args(["--preset", name, *flags])
        run_args.command_line = shlex.join(["yoxla", "run", "--preset", name, *flags])
        try:
            cmd_run(run_args)
        except UsageError as exc:
            print(f"yoxla: error: {name}: {exc}", file=sys.stderr)
            outcome.append([name, "failed", str(exc)[:200]])
            continue
        outcome.append([name, "ran", ""])
    print()
    print(table(["preset", "status", "why"], outcome))
    failed = sum(row[1] == "failed" for row in outcome)
    ran = sum(row[1] == "ran" for row in outcome)
    print(f"run-all: {ran} ran, {failed} failed, {len(outcome) - ran - failed} skipped")
    return 1 if failed else 0


# yoxla rescore --------------------------------------------------------------------------


@_guard
def cmd_rescore(args: argparse.Namespace) -> int:
    from yoxla.run.artifacts import is_suite_run

    if is_suite_run(Path(args.run_dir)):
        from yoxla.run.suite_finalize import rescore_suite_run as rescore
    else:
        from yoxla.run.finalize import rescore_run as rescore
    report = rescore(Path(args.run_dir), write_result_file=args.result, sign_key=args.sign_key)
    print_summary(report)
    return 0


# yoxla providers ------------------------------------------------------------------------


@_guard
def cmd_providers(args: argparse.Namespace) -> int:
    from yoxla.providers.registry import load_presets, load_registry

    load_env_file()
    specs = load_registry(args.config)
    rows = []
    for spec in specs.values():
        if spec.api_key_env:
            key = f"{spec.api_key_env} ({'set' if os.environ.get(spec.api_key_env) else 'not set'})"
        else:
            key = "-"
        reasoning = "yes" if spec.reasoning else "-"
        if spec.backend == "transformers":
            probs = "label scoring" if spec.settings.get("label_scoring", True) else "-"
        else:
            probs = f"logprobs (top {spec.top_logprobs})" if spec.logprobs else "-"
        rows.append([spec.name, spec.backend, spec.base_url or "-", key, reasoning, probs])
    print(table(["provider", "backend", "base url", "key", "reasoning control", "probabilities"], rows))
    print()
    presets = load_presets()
    print(
        table(
            ["preset", "provider", "model"],
            [[n, p.get("provider"), p.get("model")] for n, p in presets.items()],
        )
    )
    return 0


# yoxla test -----------------------------------------------------------------------------

TEST_SYSTEM = "Qısa cavab ver."
TEST_USER = "Azərbaycanın paytaxtı hansı şəhərdir? Yalnız bir sözlə cavab ver."


@_guard
def cmd_test(args: argparse.Namespace) -> int:
    from yoxla.providers.base import ProviderOptions, Request
    from yoxla.providers.registry import create_provider, get_spec, with_overrides
    from yoxla.suite import load_suite

    load_env_file()
    spec = with_overrides(get_spec(args.provider, args.config), args.base_url)
    if spec.backend == "baseline":
        print(f"{args.provider}: offline cue-only strategies; nothing to connect to")
        return 0
    transport = TransportSettings(timeout=args.timeout, max_retries=args.max_retries, backoff_base=0.5)
    options = ProviderOptions(thinking=args.thinking, transport=transport)
    provider = create_provider(spec, args.model, options)
    task = next(iter(load_suite().tasks.values()))
    messages = [{"role": "system", "content": TEST_SYSTEM}, {"role": "user", "content": TEST_USER}]
    request = Request(
        task=task,
        row={},
        example_id="connection-test",
        messages=messages,
        max_tokens=args.max_tokens + (4096 if args.thinking else 0),
        thinking=args.thinking,
    )
    start = time.perf_counter()
    plain = None
    try:
        comp = provider.generate(request)
        latency = time.perf_counter() - start
        if (
            args.thinking
            and "chat_template_kwargs" in ((spec.reasoning or {}).get("on") or {})
            and not comp.error
        ):
            # the same request with the switch off: did the server's chat template read it at all?
            plain = provider.generate(dataclasses.replace(request, thinking=False))
    finally:
        provider.close()
    if comp.error:
        print(f"yoxla: error: {args.provider}/{args.model}: {comp.error}", file=sys.stderr)
        return 1
    print(f"provider: {args.provider} ({spec.backend})  model: {args.model}  reported: {comp.model or '-'}")
    print(f"prompt: {TEST_USER}")
    if comp.reasoning:
        print(f"reasoning: {comp.reasoning.strip()[:500]}")
    print(f"reply: {comp.text!r}")
    print(f"finish reason: {comp.finish_reason}  attempts: {comp.attempts}  usage: {comp.usage or '-'}")
    print(f"latency: {latency:.2f} s")
    if plain is not None:
        print(thinking_switch_line(comp, plain))
    return 0


def thinking_switch_line(on: Any, off: Any) -> str:
    """Whether the thinking switch changed what the server reports: the prompt's token count
    (a chat template that reads the switch renders a different prompt) with it and without."""
    with_it, without = on.usage.get("prompt_tokens"), off.usage.get("prompt_tokens")
    if off.error:
        return f"thinking switch: cannot tell (the request without it failed: {off.error})"
    if with_it is None or without is None:
        return "thinking switch: cannot tell (the server reports no prompt token count)"
    if with_it != without:
        return f"thinking switch: changed the prompt ({with_it} prompt tokens with it, {without} without)"
    return (
        f"thinking switch: no effect on the prompt ({with_it} prompt tokens with it and without); "
        "this server may read template options only at model load (llama-cpp-python does; "
        "see docs/running.md)"
    )


# yoxla keygen ---------------------------------------------------------------------------


def cmd_keygen(args: argparse.Namespace) -> int:
    from yoxla.results import SIGN_KEY_ENV, keygen

    out = Path(args.out).expanduser()
    if out.exists() and not args.force:
        raise UsageError(f"{out} exists; pass --force to replace it")
    priv, pub, kid = keygen(out)
    print(f"private key: {priv} (keep it secret)\npublic key: {pub}\nkey id: {kid}")
    print(f"sign results with --sign-key {priv} or export {SIGN_KEY_ENV}={priv}")
    return 0


def register(sub: Any) -> None:
    """Add the runner's subcommands to the ``yoxla`` parser (see yoxla.cli.EXTENSIONS)."""
    p = sub.add_parser("run", help="evaluate a model on the benchmark (same as python runner.py)")
    add_run_args(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "run-all",
        help="run every preset whose key is available (yoxla run-all [PRESET…] [-- runner flags])",
        description="Runs every preset (or the named ones) one after the other; a preset whose "
        "key is not set is skipped with the reason, and so is a local model unless it is named. "
        "Flags after -- go to every run (e.g. -- --edition sample --limit 5).",
    )
    p.add_argument("items", nargs=argparse.REMAINDER, metavar="[PRESET…] [-- FLAGS]")
    p.set_defaults(func=cmd_run_all)

    p = sub.add_parser("rescore", help="re-score a run folder from its stored raw outputs")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--result", action="store_true", help="also rewrite the run's result file")
    p.add_argument("--sign-key", help="sign the rewritten result file with this Ed25519 key")
    p.set_defaults(func=cmd_rescore)

    p = sub.add_parser("providers", help="list the providers of the registry and the presets")
    p.add_argument("--config", help="a provider registry YAML that adds to the bundled one")
    p.set_defaults(func=cmd_providers)

    p = sub.add_parser("test", help="one request to a provider: prints the reply and the latency")
    p.add_argument("--provider", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--config")
    p.add_argument("--base-url")
    p.add_argument("--thinking", action="store_true")
    add_transport_args(p, ("timeout", "max_retries"), {"timeout": 60.0, "max_retries": 2})
    p.add_argument("--max-tokens", type=int, default=32)
    p.set_defaults(func=cmd_test)

    p = sub.add_parser("keygen", help="write an Ed25519 key pair for signing result files")
    p.add_argument(
        "--out", default="~/.config/yoxla/signing-key.pem", help="private key path (public: PATH.pub)"
    )
    p.add_argument("--force", action="store_true")
    p.set_defaults(func=cmd_keygen)
