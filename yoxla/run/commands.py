"""Command line of the runner: ``yoxla run | run-all | rescore``, its helpers ``yoxla providers``
(the registry and the presets), ``yoxla test`` (one request to a provider: the reply and the
latency) and ``yoxla keygen`` (a signing key pair), and :func:`register` for all of them (the
options of ``yoxla run`` are in ``yoxla.run.options``).

``python runner.py ARGS`` is ``yoxla run ARGS``. Every failure the user can fix ends with
one line and a non-zero exit; nothing here imports openai or tqdm until a command needs it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from yoxla.cli.common import UsageError, table
from yoxla.providers.base import ProviderError
from yoxla.providers.transport import TransportSettings
from yoxla.run.options import (
    add_run_args,
    add_transport_args,
    check_suite_args,
    continued_folder,
    given_options,
    guard,
    load_env_file,
    manifest_path,
    row_filters,
    run_suite,
    task_selection,
)
from yoxla.run.printing import print_summary

# yoxla run ----------------------------------------------------------------------------


def _resolve_dir(runs_dir: str, run: str) -> Path:
    path = Path(run)
    if path.is_dir():
        return path
    candidate = Path(runs_dir) / run
    if candidate.is_dir():
        return candidate
    raise UsageError(f"--retry-errors: no run {run!r} (neither a folder nor a run id in {runs_dir})")


@guard
def cmd_run(args: argparse.Namespace) -> int:
    report = execute_run(args)
    if report is not None:
        print_summary(report)
    return 0


def execute_run(args: argparse.Namespace) -> Any:
    """``yoxla run`` without the printing: the finished RunReport, or None when a result file
    given to --retry-errors has nothing to retry. ``yoxla.run`` (the library call) uses it too."""
    from yoxla.run.artifacts import refuse_builtin
    from yoxla.run.seed import retry_result_file
    from yoxla.run.session import retry_errors, start_run
    from yoxla.run.settings import SESSION, RunSettings

    load_env_file()
    given = given_options(args)
    # Every run is a suite run (--edition E: the package suite yoxla-E); a run folder the built-in
    # engine of an older version made is refused in one line, before anything else is read.
    folder = continued_folder(args, given.get("runs_dir", "runs"))
    if folder is not None:
        refuse_builtin(folder)
    check_suite_args(args)
    asked = run_suite(args)
    if asked is not None:
        given["suite"] = manifest_path(asked)
    selection = task_selection(args, given.get("suite"))
    explicit = set(given) | ({"tasks"} if selection is not None else set())
    settings = RunSettings(provider="", model="")
    for key, value in given.items():
        settings.set(key, value)
    settings.tasks = selection or []
    if not args.resume or "results_dir" in explicit:
        # Stored as an absolute path, so a resumed run writes where it started from any folder.
        settings.results_dir = str(Path(settings.results_dir).resolve())
    filters = row_filters(args)
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
            report = retry_errors(run_dir, overrides)
    else:
        report = start_run(settings, explicit=explicit)
    return report


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


@guard
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


@guard
def cmd_rescore(args: argparse.Namespace) -> int:
    from yoxla.run.finalize import rescore_run

    report = rescore_run(Path(args.run_dir), write_result_file=args.result, sign_key=args.sign_key)
    print_summary(report)
    return 0


# yoxla providers ------------------------------------------------------------------------


@guard
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


@guard
def cmd_test(args: argparse.Namespace) -> int:
    from yoxla.contract.benchmark import benchmark_task, task_ids
    from yoxla.providers.base import ProviderOptions, Request
    from yoxla.providers.registry import create_provider, get_spec, with_overrides

    load_env_file()
    spec = with_overrides(get_spec(args.provider, args.config), args.base_url)
    if spec.backend == "baseline":
        print(f"{args.provider}: offline cue-only strategies; nothing to connect to")
        return 0
    transport = TransportSettings(timeout=args.timeout, max_retries=args.max_retries, backoff_base=0.5)
    options = ProviderOptions(thinking=args.thinking, transport=transport)
    provider = create_provider(spec, args.model, options)
    task = benchmark_task(task_ids()[0])  # a provider reads only its id
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
    from yoxla.record.signing import SIGN_KEY_ENV, keygen

    out = Path(args.out).expanduser()
    if out.exists() and not args.force:
        raise UsageError(f"{out} exists; pass --force to replace it")
    priv, pub, kid = keygen(out)
    print(f"private key: {priv} (keep it secret)\npublic key: {pub}\nkey id: {kid}")
    print(f"sign results with --sign-key {priv} or export {SIGN_KEY_ENV}={priv}")
    return 0


def register(sub: Any) -> None:
    """Add the runner's subcommands to the ``yoxla`` parser (see yoxla.cli.main.EXTENSIONS)."""
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
