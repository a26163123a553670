"""The runner's helper commands: ``yoxla providers`` (the registry and the presets), ``yoxla test``
(one request to a provider: the reply and the latency) and ``yoxla keygen`` (a signing key pair).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import Any

from yoxla.cli_common import UsageError, table
from yoxla.providers.transport import TransportSettings
from yoxla.run.options import guard, load_env_file

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
    from yoxla.providers.base import ProviderOptions, Request
    from yoxla.providers.registry import create_provider, get_spec, with_overrides
    from yoxla.suites.benchmark import benchmark_task, task_ids

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
    from yoxla.results import SIGN_KEY_ENV, keygen

    out = Path(args.out).expanduser()
    if out.exists() and not args.force:
        raise UsageError(f"{out} exists; pass --force to replace it")
    priv, pub, kid = keygen(out)
    print(f"private key: {priv} (keep it secret)\npublic key: {pub}\nkey id: {kid}")
    print(f"sign results with --sign-key {priv} or export {SIGN_KEY_ENV}={priv}")
    return 0
